"""What a provider is: its storage classes, its restore verb and options, its windows.

Pure data, no I/O and no SDK imports: the model, the poll schedule and the
price sheets read these descriptions; only ``stores/`` talks to a service.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from archivefs.errors import NotArchivedError


class Access(StrEnum):
    """How an object of a storage class can be read: the provider-neutral meaning."""

    IMMEDIATE = "immediate"  # reads at once, no per-GB retrieval fee
    RETRIEVAL_FEE = "retrieval_fee"  # reads at once, billed per GB read
    RESTORE = "restore"  # must be restored (S3) or rehydrated (Azure) before a read


@dataclass(frozen=True, slots=True)
class ClassSpec:
    """One storage class, in the provider's own spelling."""

    name: str
    access: Access
    min_storage_days: int = 0
    min_billable_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Window:
    """The documented completion window of a restore, in seconds ("within X" is (0, X))."""

    min_s: float
    max_s: float


@dataclass(frozen=True, slots=True)
class CommandLineOptions:
    """How the ``archivefs`` command's store options (``endpoint_url``, ``profile``,
    ``account_name``: --endpoint-url, --profile, --account-name) apply to a provider.

    ``takes`` maps each option the provider uses to where it goes in the store library's
    fsspec options (a key path: ``("client_kwargs", "endpoint_url")``); ``refused`` are
    the options that are a usage error for it, ``refusal`` the message then (it names the
    provider's own way). An option in neither is ignored."""

    takes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    refused: tuple[str, ...] = ()
    refusal: str = ""


RestoreCheck = Callable[..., "int | None"]
"""A provider's pre-send rules: ``(class_name, speed_name, days, *, path, **state)`` ->
the days to send (``None``: the verb takes none); raises ``InvalidRestoreRequestError``."""


# where a file attribute (ProviderSpec.file_attributes) comes from besides the info entry
PATH_BUCKET = "<bucket>"
PATH_KEY = "<key>"


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """A provider's description, in its own names.

    ``speeds`` are the restore speeds (S3: tiers; Azure: rehydrate priorities),
    ``speed_word`` what the provider calls them; ``targets`` the tiers a restore
    may bring an object back to (empty: a temporary copy for ``days``, S3);
    ``windows`` the documented window per (class, speed); ``duration_unit`` what
    the verb's duration counts (S3: ``Days``; Oracle: ``hours``, sent as ``days * 24``
    unless the store is given hours); ``price_sheet`` the shipped sheet estimates
    use unless the caller names another.

    ``secret_options`` are the names of the fsspec options (at any depth: ocifs's
    ``config`` is a dict) whose values are credentials: they never leave the process
    in a pickle or ``to_json()`` (``stores.credentials``). ``credential_modes`` are the
    values of such an option that name a way to find credentials rather than hold
    one (gcsfs's ``token="anon"``): those travel. ``secret_headers`` are the HTTP
    headers that carry a credential, and ``sdk_loggers`` the client library's loggers
    that print options or headers at DEBUG: archivefs scrubs both from those records.
    ``bare_namespace``: the journal
    namespace is the endpoint URL alone (or the provider's name), as journals
    written before namespaces named providers have it (S3).
    """

    name: str
    protocols: tuple[str, ...]
    classes: tuple[ClassSpec, ...]
    default_class: str
    speeds: tuple[str, ...]
    speed_word: str
    restore_verb: str
    takes_days: bool
    targets: tuple[str, ...] = ()
    default_target: str | None = None
    windows: Mapping[tuple[str, str], Window] = field(default_factory=dict)
    duration_unit: str = "days"
    secret_options: frozenset[str] = frozenset()
    credential_modes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    secret_headers: frozenset[str] = frozenset()
    sdk_loggers: tuple[str, ...] = ()
    bare_namespace: bool = False
    # the path form of its objects: what a bucket is called (Azure: "container"), the forms
    # an error names as the fix, and whether the bucket part may carry "@namespace" (Oracle)
    container_word: str = "bucket"
    path_forms: tuple[str, ...] = ()
    bucket_namespace: bool = False
    # the shipped price sheet (archivefs/pricing/sheets/) that prices this provider's
    # objects when the caller names none: the filesystem and the CLI both use it
    price_sheet: str = field(kw_only=True)
    # what the command line's --endpoint-url, --profile and --account-name mean here
    command_line: CommandLineOptions = field(kw_only=True, default=CommandLineOptions())
    # the speed that restores for the least (S3: Bulk; Azure: Standard): what a refused
    # budget suggests; None where there is one speed or none
    cheapest_speed: str | None = field(kw_only=True, default=None)
    # how its fsspec library answers listings: the paths its ls takes for the store's root
    # besides "" (adlfs: "." and "*"), and whether its find(folder, withdirs=True) lists
    # the folder itself (s3fs: yes; adlfs: no), and whether its find of a missing bucket
    # finds nothing (adlfs: []) rather than raising
    root_aliases: tuple[str, ...] = field(kw_only=True, default=())
    find_lists_folder: bool = field(kw_only=True, default=True)
    find_missing_bucket_empty: bool = field(kw_only=True, default=False)
    # what a file its fsspec library opens for reading carries that code written for it
    # reads: attribute -> (where the value comes from, the value when that says nothing):
    # a key of the file's info entry, or PATH_BUCKET / PATH_KEY (the parts of its path).
    # A method of the same name on archivefs's file (s3fs's metadata()) is then shadowed
    # by the value (adlfs's and gcsfs's metadata is the blob's dict)
    file_attributes: Mapping[str, tuple[str, Any]] = field(kw_only=True, default_factory=dict)
    # the keys of its fsspec library's entry of an object (a listing's and info's): a
    # bundle member's entry carries them too, as a real object's would (archivefs.entries)
    entry_keys: tuple[str, ...] = field(kw_only=True, default=())

    def find_class(self, name: str) -> ClassSpec | None:
        """The class called ``name`` (exact spelling first, then ignoring case)."""
        for spec in self.classes:
            if spec.name == name:
                return spec
        lowered = name.lower()
        for spec in self.classes:
            if spec.name.lower() == lowered:
                return spec
        return None

    def find_speed(self, name: str) -> str | None:
        """The restore speed called ``name`` in this provider's spelling (case ignored)."""
        lowered = name.lower()
        return next((s for s in self.speeds if s.lower() == lowered), None)

    def cheaper_speed(self, speed: str) -> str | None:
        """This provider's cheapest speed when ``speed`` is another (a budget's advice)."""
        cheapest = self.cheapest_speed
        return cheapest if cheapest and self.find_speed(speed) != cheapest else None

    def unknown_speed(self, name: str) -> str:
        """The problem of a speed this provider lacks, in its own words."""
        if len(self.speeds) == 1:
            return f"{self.name} has one {self.speed_word}, {self.speeds[0]!r}; not {name!r}."
        return f"{self.name} has no {self.speed_word} {name!r}."

    def find_target(self, name: str) -> str | None:
        lowered = name.lower()
        return next((t for t in self.targets if t.lower() == lowered), None)

    def window(self, class_name: str, speed: str) -> Window | None:
        return self.windows.get((class_name, speed))

    def journal_namespace(self, *, account: str | None = None, endpoint: str | None = None) -> str:
        """The journal's name for one store of this provider: never a secret.

        ``provider:account:endpoint`` (``azure:myaccount:https://myaccount.blob.core.windows.net``;
        an Oracle tenancy OCID is its account), with the endpoint's user info, query (an
        Azure SAS) and fragment stripped. A ``bare_namespace`` provider (S3) is named by
        its endpoint URL alone, or by its name on the default endpoint.
        """
        if self.bare_namespace:  # as given: the journal strips user info and query itself
            return str(endpoint or self.name)
        url = _plain_url(str(endpoint)) if endpoint else ""
        return f"{self.name}:{account or ''}:{url}"


def _plain_url(endpoint: str) -> str:
    """``endpoint`` without user info, query and fragment (they may hold credentials)."""
    parts = urlsplit(endpoint.strip())
    if not parts.scheme or not parts.netloc:
        return endpoint.strip().split("?", 1)[0].split("#", 1)[0]
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), "", ""))


def not_archived(path: str | None, class_name: str) -> NotArchivedError:
    """The error for a restore asked of an object whose class reads at once."""
    return NotArchivedError(
        f"object is in {class_name}, which reads at once; there is nothing to restore.",
        path=path,
        fix="read it directly, or leave it out of the restore.",
    )
