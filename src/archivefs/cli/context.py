"""What every command shares: the global options, the store they name, and the paths.

:class:`Context` holds the global options (given before or after a command's name) and
opens the archive filesystem over the store the URLs name. Provider knowledge (URL
schemes, tier spellings, default price sheets) comes from ``archivefs.providers``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from archivefs.errors import ArchiveError
from archivefs.providers import PROVIDERS, provider_for_protocol, provider_for_url, url_protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.model import RestoreTier

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_BUDGET, EXIT_WAITING = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C


class Context:
    """Options shared by every command (set before or after the command's name)."""

    def __init__(self) -> None:
        self.endpoint_url: str | None = None
        self.profile: str | None = None
        self.account_name: str | None = None
        self.raw_options: str | None = None
        self.journal: str | None = None
        self.as_json = False
        self.debug = False
        self.restore_time_scale = 1.0
        self.bucket_claims = False

    def storage_options(self, protocol: str = "s3") -> dict[str, Any]:
        """The cold store's options: s3fs's for s3://, adlfs's for az:// (abfs://), ocifs's
        for oci://, gcsfs's for gs://; the global options each provider takes, as
        ``archivefs.providers`` declares them (the others are refused or left out)."""
        opts: dict[str, Any] = {}
        if self.raw_options:
            try:
                opts = json.loads(self.raw_options)
            except json.JSONDecodeError as error:
                raise click.UsageError(
                    f"--storage-options is not valid JSON ({error.msg}); "
                    "pass e.g. '{\"anon\": false}'."
                ) from None
            if not isinstance(opts, dict):
                raise click.UsageError("--storage-options must be a JSON object.")
            from archivefs.stores import before_connect
            from archivefs.stores.options import check_storage_options

            # before anything imports the store's library (checking options does; and
            # catalog and bundle connect without a filesystem)
            before_connect(protocol, opts)
            try:
                check_storage_options(opts, protocol=protocol)
            except ValueError as error:
                raise click.UsageError(str(error)) from None
        given = {
            "endpoint_url": self.endpoint_url,
            "profile": self.profile,
            "account_name": self.account_name,
        }
        spec = provider_for_protocol(protocol).command_line
        if any(given[name] for name in spec.refused):
            raise click.UsageError(spec.refusal)
        for name, where in spec.takes.items():  # in the provider's order
            if given[name]:
                place = opts
                for key in where[:-1]:
                    place = place.setdefault(key, {})
                place[where[-1]] = given[name]
        return opts

    def filesystem(self, urls: Iterable[str] = (), **kwargs: Any) -> ArchiveFileSystem:
        """The archive filesystem over the store the URLs name (S3 unless they say az://)."""
        from archivefs.filesystem import ArchiveFileSystem

        urls = list(urls)
        refuse_local_paths(urls)
        protocol = target_protocol(urls)
        if kwargs.get("tier") is not None:  # --tier: a usage error if the provider lacks it
            kwargs["tier"] = parse_tier(kwargs["tier"], provider_for_protocol(protocol).name)
        journal: Any = self.journal
        return ArchiveFileSystem(
            target_protocol=protocol,
            target_options=self.storage_options(protocol),
            journal=journal,
            restore_time_scale=self.restore_time_scale,
            skip_instance_cache=True,
            bucket_claims=self.bucket_claims,
            **kwargs,
        )


def is_local_path(url: str) -> bool:
    """``url`` names this machine's files: ``file://``, or no scheme and a path that is
    relative (``./``, ``../``), home-relative (``~``), or absolute and existing here. A
    bucket's name starts with a letter or digit, so ``bucket/key`` stays a store path."""
    if "://" in url:
        return url.split("://", 1)[0] == "file"
    if url.startswith("/"):
        return os.path.exists(url)
    return url.startswith(("./", "../", "~")) or url in (".", "..")


def refuse_local_paths(urls: Iterable[str]) -> None:
    """A usage error naming the first local path among the store URLs of a command."""
    for url in urls:
        if is_local_path(url):
            raise click.UsageError(
                f"{url} is a local path; this command reads an object store: give its URL "
                "(s3://bucket/prefix/, az://container/prefix/, gs://bucket/prefix/, "
                f"oci://bucket/prefix/). To pack local files into bundles: archivefs bundle "
                f"{url} s3://bucket/prefix."
            )


def target_protocol(urls: Iterable[str]) -> str:
    """``s3`` or ``az`` (``abfs``...) from the URLs' scheme; one provider per command."""
    found: dict[str, str] = {}
    for url in urls:
        scheme = url_protocol(url)
        if scheme == "file":
            continue  # a local path: the command reports it
        try:
            provider = provider_for_url(url).name
        except ArchiveError:
            schemes = ", ".join(f"{p}://" for spec in PROVIDERS.values() for p in spec.protocols)
            raise click.UsageError(
                f"{url}: archivefs does not read {scheme}:// URLs; give a store URL ({schemes}"
                "), e.g. s3://bucket/key. For an S3-compatible server at an http(s) address, "
                "give s3://bucket/key with --endpoint-url http://HOST:PORT."
            ) from None
        found.setdefault(provider, scheme)
    if len(found) > 1:
        raise click.UsageError(
            f"the URLs name {' and '.join(sorted(found))} at once; give one provider's URLs "
            "per command (e.g. all s3:// or all az://)."
        )
    return next(iter(found.values()), "s3")


def parse_tier(tier: str | None, provider: str) -> RestoreTier | None:
    """``--tier`` in ``provider``'s spelling, parsed by the one parse the filesystem uses
    (:meth:`RestoreTier.parse`); a name the provider does not have is a usage error
    (exit 2), refused before any request."""
    from archivefs.model import RestoreTier

    if tier is None:
        return None
    try:
        parsed = RestoreTier.parse(tier, provider=provider)
    except ArchiveError as error:
        raise click.BadParameter(
            f"{error.problem} Fix: {error.fix}" if error.fix else error.problem,
            param_hint="'--tier'",
        ) from None
    return parsed


def read_paths(urls: Iterable[str], from_file: str | None) -> list[str]:
    """URLs from arguments, a ``--from-file`` list (``-`` for stdin), one per line."""
    paths = list(urls)
    if from_file:
        stream = sys.stdin if from_file == "-" else open(from_file, encoding="utf-8")  # noqa: SIM115
        with stream:
            for number, line in enumerate(stream, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if any(c in line for c in "\0\r") or " " in line.split("://", 1)[-1][:1]:
                    raise click.UsageError(
                        f"{from_file}:{number}: not a path: {line!r}; give one s3:// URL per line."
                    )
                paths.append(line)
    if not paths:
        raise click.UsageError("no paths given; pass URLs or --from-file FILE (- for stdin).")
    return paths


def check_endpoint_url(url: str) -> str:
    """``url`` if it is a usable S3 endpoint (scheme, host, port); else exit 2 with one line."""
    from urllib.parse import urlsplit

    problem = None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        parts, port, problem = None, None, f"is not a URL ({error})"
    if parts is not None and problem is None:
        if parts.scheme not in ("http", "https"):
            guess = url if "://" not in url else url.split("://", 1)[1]
            problem = f"has no http:// or https:// scheme (did you mean http://{guess} ?)"
        elif not parts.hostname:
            problem = "names no host"
        elif port == 0:
            problem = "has port 0"
    if problem:
        fail(
            f"--endpoint-url {url!r} {problem}; "
            "write it as http(s)://HOST[:PORT], e.g. http://127.0.0.1:9000.",
            EXIT_USAGE,
        )
    return url


def set_global(name: str) -> Any:
    """An option callback that stores the value on the shared :class:`Context`."""

    def callback(click_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None or value is False:
            return value  # not given here: keep what was given elsewhere
        source = click_ctx.get_parameter_source(param.name or "")
        if click_ctx.parent is not None and source is click.core.ParameterSource.ENVIRONMENT:
            return value  # the environment is read once, by the top command
        if name == "endpoint_url":
            value = check_endpoint_url(value)
        setattr(click_ctx.ensure_object(Context), name, value)
        return value

    return callback


GLOBAL_OPTIONS = [
    click.option(
        "--endpoint-url",
        envvar=["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"],
        callback=set_global("endpoint_url"),
        expose_value=False,
        help="S3 endpoint (Ceph RGW, MinIO, `archivefs serve`). "
        "[env: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL]",
    ),
    click.option(
        "--profile",
        callback=set_global("profile"),
        expose_value=False,
        help="AWS profile name (for oci:// URLs: a profile of the OCI config).",
    ),
    click.option(
        "--account-name",
        envvar="AZURE_STORAGE_ACCOUNT_NAME",
        callback=set_global("account_name"),
        expose_value=False,
        help="Azure storage account (az:// URLs; the key or token from the environment, as "
        "adlfs reads it). [env: AZURE_STORAGE_ACCOUNT_NAME]",
    ),
    click.option(
        "--storage-options",
        callback=set_global("raw_options"),
        expose_value=False,
        help="JSON object of s3fs options (adlfs options for az://, gcsfs options for gs://, "
        "ocifs options for oci://).",
    ),
    click.option(
        "--journal",
        callback=set_global("journal"),
        expose_value=False,
        help="Restore journal file (default: the user cache).",
    ),
    click.option(
        "--restore-time-scale",
        type=float,
        envvar="ARCHIVEFS_RESTORE_TIME_SCALE",
        callback=set_global("restore_time_scale"),
        expose_value=False,
        help="Scale expected restore times when polling (emulators; `archivefs serve` "
        "prints the value). [env: ARCHIVEFS_RESTORE_TIME_SCALE]",
    ),
    click.option(
        "--bucket-claims",
        is_flag=True,
        callback=set_global("bucket_claims"),
        expose_value=False,
        help="Claim each restore in its bucket first, so hosts that share no journal "
        "never pay for the same group twice (one PUT per group; docs/guarantees.md).",
    ),
    click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=set_global("as_json"),
        expose_value=False,
        help="Machine-readable output.",
    ),
    click.option(
        "--debug",
        is_flag=True,
        callback=set_global("debug"),
        expose_value=False,
        help="Show tracebacks.",
    ),
]


def global_options(command: Any) -> Any:
    """Accept the global options after a command's name too (as the AWS CLI and rclone do)."""
    for option in reversed(GLOBAL_OPTIONS):
        command = option(command)
    return command


def fail(message: str, code: int = EXIT_ERROR, error: BaseException | None = None) -> NoReturn:
    """Say ``message`` in one line on standard error (with ``--json``, also as a JSON error
    object on standard output) and exit with ``code``."""
    click.echo(f"archivefs: error: {message}", err=True)
    echo_json_error(message, code, error)
    sys.exit(code)


def echo_json_error(
    message: str, code: int, error: BaseException | None = None, fix: str | None = None
) -> None:
    """With ``--json``: the error as ``{"error": {message, problem, path, fix, exit_code}}``
    on standard output, so a script reading it gets JSON on failure too."""
    click_ctx = click.get_current_context(silent=True)
    ctx = click_ctx.find_object(Context) if click_ctx is not None else None
    if ctx is None or not ctx.as_json:
        return
    known = error if isinstance(error, ArchiveError) else None
    payload = {
        "message": message,
        "problem": known.problem if known else message,
        "path": known.path if known else None,
        "fix": known.fix if known else fix,
        "exit_code": code,
    }
    click.echo(json.dumps({"error": payload}))
