"""The cold store's filesystem, made from plain options, and options without secrets.

A filesystem is rebuilt in other processes (Dask workers, zarr's async
re-instantiation) from its ``storage_options``. Explicit secrets never travel
in them unless ``pickle_credentials=True``: :func:`portable_options` swaps them
for a reference valid in this process only, :func:`recovered` swaps them back
here, and elsewhere the rebuilt filesystem uses that process's own credentials
or says, at its first request, that it has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import fsspec
from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

from archivefs.errors import ArchiveError, MissingCredentialsError
from archivefs.providers import provider_for_protocol
from archivefs.stores import before_connect
from archivefs.stores.credentials import (
    deposit,
    found_by_botocore,
    has_ambient_credentials,
    recover,
    redact_library_logs,
    withhold,
)
from archivefs.stores.sessions import drop_unrunnable_finalizers
from archivefs.stores.translate import raise_translated
from archivefs.worker_logs import quiet_worker_tracebacks

if TYPE_CHECKING:
    import asyncio


@dataclass
class ColdOptions:
    """The cold store as the constructor was given it, secrets recovered where known."""

    target_protocol: str | None
    target_options: dict[str, Any] | None
    fs: Any
    hot_options: dict[str, Any] | None
    keys_withheld: bool = False  # rebuilt in another process, from options without the keys


def recovered(credentials: str | None, given: ColdOptions) -> ColdOptions:
    """``given`` with the secrets a ``credentials`` reference stands for (see
    :func:`portable_options`); in a process that does not hold them, as given."""
    if credentials is None:
        return given
    original = recover(credentials)
    if original is not None:
        if "fs" in original:
            return ColdOptions(
                None, None, original["fs"], original.get("hot_options", given.hot_options)
            )
        return ColdOptions(
            given.target_protocol,
            original.get("target_options", given.target_options),
            given.fs,
            original.get("hot_options", given.hot_options),
        )
    options = given.target_options
    if found_by_botocore(given.target_protocol):  # other libraries find theirs, or say why
        missing = _missing_worker_credentials(options, given.fs)
        if missing is not None:  # raised at the first request, never while unpickling
            options = {**(options or {}), "session": _Refusing(missing)}
    return ColdOptions(given.target_protocol, options, given.fs, given.hot_options, True)


def open_cold(
    cold: ColdOptions, *, asynchronous: bool, loop: asyncio.AbstractEventLoop | None
) -> Any:
    """The cold store's async fsspec filesystem (``fs=`` as given, else made from
    ``target_protocol``/``target_options``; a blocking one wrapped)."""
    quiet_worker_tracebacks()  # a Dask worker opens its cold store here, before any error
    fs = cold.fs
    if fs is None:
        # nested dicts copied too: ocifs writes its retry strategy into the
        # config_kwargs it is given, which would make storage_options unserialisable
        options = {
            k: dict(v) if isinstance(v, dict) else v for k, v in (cold.target_options or {}).items()
        }
        protocol = cold.target_protocol or "s3"
        provider_for_protocol(protocol)  # a clear error for a store no provider speaks
        before_connect(protocol, options)  # before the library is imported
        cls = fsspec.get_filesystem_class(protocol)
        if getattr(cls, "async_impl", False):
            options.setdefault("asynchronous", asynchronous)
            options.setdefault("loop", loop)
        redact_library_logs()  # ocifs logs its config, private key included, at DEBUG
        try:
            fs = fsspec.filesystem(protocol, **options)
            drop_unrunnable_finalizers(fs)  # adlfs's, on an asynchronous instance
        except Exception as error:
            if cold.keys_withheld:  # adlfs and ocifs refuse to start without a credential
                raise MissingCredentialsError(
                    "this filesystem was pickled without its credentials (archivefs "
                    "keeps every provider's secret options out of pickles and "
                    f"to_json()), and {protocol!r} found none of its own in this "
                    f"process: {type(error).__name__}: {error}",
                    path=f"{protocol}://",
                    fix="give this process the store's credentials (the environment "
                    "variables or config file its client library reads, a managed "
                    "identity or instance principal), or construct the filesystem with "
                    "pickle_credentials=True to send them in clear inside the pickle.",
                ) from error
            if isinstance(error, (ValueError, TypeError)):
                raise  # wrong options: the target's own message says which
            raise_translated(error, f"{protocol}://", action="connect to")  # e.g. ocifs
    return fs


def async_of(fs: Any) -> Any:
    """``fs``, wrapped to look async if it is a blocking filesystem."""
    return fs if getattr(fs, "async_impl", False) else AsyncFileSystemWrapper(fs)


def store_scope_of(storage_options: dict[str, Any]) -> str:
    """The store a filesystem of ``storage_options`` reads (protocol and endpoint, or
    account): what read hints are kept per."""
    protocol = storage_options.get("target_protocol") or "s3"
    options = storage_options.get("target_options") or {}
    endpoint = (options.get("client_kwargs") or {}).get("endpoint_url") or options.get(
        "endpoint_url", ""
    )
    return f"{protocol}|{endpoint or options.get('account_name', '')}"


def portable_options(
    storage_options: dict[str, Any], pickle_credentials: bool, reference: str | None
) -> tuple[dict[str, Any], str | None]:
    """``storage_options`` with secrets replaced by a reference valid in this process only,
    and that reference (made here when there were secrets and none was given)."""
    options = dict(storage_options)
    if pickle_credentials or options.get("credentials"):
        return options, reference
    original = dict(options)
    cold = options.pop("fs", None)
    if cold is not None:
        protocol = cold.protocol[0] if isinstance(cold.protocol, tuple) else cold.protocol
        options["target_protocol"] = protocol
        options["target_options"] = dict(getattr(cold, "storage_options", {}))
        for local in ("asynchronous", "loop"):
            options["target_options"].pop(local, None)
    removed: list[str] = []
    for name in ("target_options", "hot_options"):
        if options.get(name):
            options[name], found = withhold(options[name])
            removed += found
    if not removed:
        return dict(storage_options), reference
    if reference is None:
        reference = deposit(original)
    options["credentials"] = reference
    return options, reference


def travelling_options(
    storage_options: dict[str, Any], pickle_credentials: bool, reference: str | None, store: Any
) -> tuple[dict[str, Any], str | None]:
    """:func:`portable_options`, without a notification source and with what ``store``
    asked its server (``learned_options``), so a worker's copy does not ask again.

    A notification source lives in the process that made it (a pickled queue would
    be a dead copy); on a cluster, the coordinator is handed its own.
    """
    options, reference = portable_options(storage_options, pickle_credentials, reference)
    options.pop("notifications", None)
    learned = getattr(store, "learned_options", None)
    if learned is not None:
        options.update((k, v) for k, v in learned().items() if options.get(k) is None)
    return options, reference


def json_form(fs: Any, options: dict[str, Any], include_password: bool) -> dict[str, Any]:
    """fsspec's JSON form of ``fs`` (what ``to_json`` writes), with ``options`` as its
    storage options (``password`` left out unless ``include_password``); a function
    among them (a hook) has none: :class:`ArchiveError`."""
    from fsspec.json import FilesystemJSONEncoder

    for name, value in options.items():
        if callable(value) or (isinstance(value, list) and any(map(callable, value))):
            raise ArchiveError(
                f"to_json/to_dict: the option {name!r} holds a function, which has no JSON form.",
                fix="pickle the filesystem instead (Dask and multiprocessing do), or add "
                f"the hook after construction (fs.hooks.{name}.append(...)).",
            )
    encoder = FilesystemJSONEncoder()
    if not include_password:
        options.pop("password", None)
    return dict(
        cls=f"{type(fs).__module__}:{type(fs).__name__}",
        protocol=fs.protocol[0],
        args=encoder.make_serializable(fs.storage_args),
        **encoder.make_serializable(options),
    )


class _Refusing:
    """A botocore session stand-in that refuses to make a client: the first request of a
    filesystem that has no credentials raises the error that says why, and sends nothing.

    Raising while a pickle is loaded instead would kill a Dask worker (its task message
    cannot be deserialised) and hang the computation rather than report the error.
    """

    def __init__(self, error: MissingCredentialsError) -> None:
        self.error = error

    def create_client(self, *args: Any, **kwargs: Any) -> Any:
        # a fresh error each time: re-raising one instance can chain it to itself
        raise MissingCredentialsError(self.error.problem, path=self.error.path, fix=self.error.fix)

    def __repr__(self) -> str:
        return "<no credentials>"


def _missing_worker_credentials(
    target_options: dict[str, Any] | None, fs: Any
) -> MissingCredentialsError | None:
    """On a process that got a pickle without keys and has no other credential source: why."""
    options = target_options or {}
    if fs is not None or options.get("anon"):
        return None
    if has_ambient_credentials(options.get("profile")):
        return None
    return MissingCredentialsError(
        "this filesystem was pickled without its explicit keys (archivefs keeps key, "
        "secret and token out of pickles and to_json()), and this process has no "
        "credentials of its own.",
        path=str(options.get("client_kwargs", {}).get("endpoint_url") or "s3"),
        fix="give workers credentials (AWS_* environment variables, a profile, a "
        "credentials file, an instance role), or construct the filesystem with "
        "pickle_credentials=True to send the keys in clear inside the pickle.",
    )
