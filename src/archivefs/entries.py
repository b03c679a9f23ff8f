"""The one info-dict schema: fsspec ``info()`` entries of files, members, directories.

Every info dict archivefs returns is made here: a plain object's (:func:`file_entry`),
a bundle member's (:func:`member_entry`, and :class:`MemberEntry` for the catalog's
column-wise listings), a hot object a catalog lists (:func:`plain_entry`) and a
directory's (:func:`directory_entry`); :func:`with_state` gives members their bundle's
probed state, and :func:`state_from_entry` reads an entry back as an ``ObjectState``.
An entry is the target filesystem's own entry plus archivefs's keys
(:data:`ARCHIVE_KEYS`): on S3 s3fs's (``Key``, ``Size``, ``ETag``, ``LastModified``,
``StorageClass``), elsewhere the one the target made from the same answer
(:attr:`ObjectState.entry`: adlfs's ``etag``, ``last_modified``, ``metadata``, ...;
gcsfs's ``generation``, ``contentType``, ...). Read what differs between targets (the
ETag, the modification time) through :func:`etag_of` and :func:`modified_of`.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from archivefs.model import ArchiveAccessTier, ObjectState, RestoreState, StorageClass
from archivefs.providers import PROVIDERS

# the keys archivefs adds to every file entry, whatever the target
ARCHIVE_KEYS = (
    "storage_class",
    "provider",
    "access",
    "restore",
    "restore_expiry",
    "archive_access",
)


def archive_fields(state: ObjectState) -> dict[str, Any]:
    """archivefs's keys (:data:`ARCHIVE_KEYS`) of an object in ``state``."""
    return {
        "storage_class": state.storage_class.value,
        "provider": state.storage_class.provider,  # whose spelling (Oracle's "Archive"...)
        "access": state.access.value,  # provider-neutral: immediate | retrieval_fee | restore
        "restore": state.restore.value,
        "restore_expiry": state.restore_expiry,
        "archive_access": state.archive_access.value if state.archive_access else None,
    }


def file_entry(state: ObjectState) -> dict[str, Any]:
    """An fsspec info dict with the archive fields added: the target's own entry
    (:attr:`ObjectState.entry`) where its store made one, else s3fs's keys."""
    if state.entry is not None:
        own = {k: v for k, v in state.entry.items() if k not in ARCHIVE_KEYS}
        if own.get("type") == "directory":  # a folder marker (ADLS hdi_isfolder): a folder
            return {**own, "name": state.path}
        return {**own, "name": state.path, "size": state.size, "type": "file"} | archive_fields(
            state
        )
    return {
        "name": state.path,
        "size": state.size,
        "type": "file",
        "StorageClass": state.storage_class.value,
        "ETag": state.etag,
        "LastModified": state.last_modified,
        "storage_class": state.storage_class.value,
        "provider": state.storage_class.provider,  # whose spelling (Oracle's "Archive"...)
        "access": state.access.value,  # provider-neutral: immediate | retrieval_fee | restore
        "restore": state.restore.value,
        "restore_expiry": state.restore_expiry,
        "archive_access": state.archive_access.value if state.archive_access else None,
    }


class MemberEntry:
    """Makes a member's info dict: the ``__dict__`` of an instance, which is a plain
    ``dict`` that shares its key table with every other one (PEP 412), and so do its
    copies.

    Each entry holds its values only, not a key table of its own, so a
    ``find(detail=True)`` of many members stays small. What callers get is an
    ordinary ``dict`` (add, remove, copy, pickle and compare as any other).
    """

    def __init__(
        self,
        name: str,
        size: int,
        klass: str,
        access: str,
        restore: str,
        bundle: str,
        crc32: int,
        mtime: float,
        restore_expiry: datetime | None = None,
        provider: str = "s3",
    ) -> None:
        # the order of these assignments is the order of the dict's keys
        self.name = name
        self.size = size
        self.type = "file"
        self.StorageClass = klass
        self.storage_class = klass
        self.provider = provider
        self.access = access
        self.restore = restore
        self.restore_expiry = restore_expiry
        self.archive_access = None
        self.bundle = bundle
        self.crc32 = crc32
        self.mtime = mtime
        # then the keys of the target's own entry of an object (the provider's), as a real
        # object's entry has them: the class under the target's name for it, s3fs's Key
        # and Size the member's; what a member has no value for (its ETag, the target's
        # times and fields) None. The order is the provider's, so entries still share keys
        for key in _target_keys(provider):
            if key not in self.__dict__:
                setattr(self, key, _target_value(key, name, size, klass))


@functools.cache
def member_entry_class(provider: str) -> type[MemberEntry]:
    """:class:`MemberEntry` for ``provider``'s members: a class of its own, since a class's
    instances share one key table only while they all set the same keys in the same order,
    and each provider's entries end in their target's keys."""
    return type(f"{provider.capitalize()}MemberEntry", (MemberEntry,), {"__slots__": ()})


def _target_keys(provider: str) -> tuple[str, ...]:
    """The keys of the provider's fsspec library's entries (``ProviderSpec.entry_keys``)."""
    spec = PROVIDERS.get(provider)
    return spec.entry_keys if spec is not None else ()


def _target_value(key: str, name: str, size: int, klass: str) -> Any:
    """A member's value for the target's entry key ``key`` (``None``: a member has none)."""
    if key in CLASS_KEYS:
        return klass
    return {"Key": name, "Size": size}.get(key)


def bundle_template(key: str, klass: StorageClass, probed: ObjectState | None) -> dict[str, Any]:
    """The info dict every member of bundle ``key`` (in ``klass``) starts as: with its
    ``probed`` state when the store was asked, else the state its class implies.

    A listing inside a catalog root asks the cold store nothing: without a probe,
    the state follows the bundle's class.
    """
    values: tuple[str, str, str, datetime | None]
    if probed is None:
        state = RestoreState.ARCHIVED if klass.needs_restore else RestoreState.HOT
        values = (klass.value, klass.access.value, state.value, None)
    else:
        klass = probed.storage_class
        values = (klass.value, probed.access.value, probed.restore.value, probed.restore_expiry)
    name, access, restore, expiry = values
    entry_class = member_entry_class(klass.provider)
    shared = entry_class("", 0, name, access, restore, key, 0, 0.0, expiry, klass.provider).__dict__
    # past 29 keys (gcsfs's entries) CPython stops sharing: a compact copy then copies best
    own = dict(shared)
    return shared if sys.getsizeof(shared) <= sys.getsizeof(own) else own


class MemberFields(Protocol):
    """What a member entry is made of (``archivefs.catalog.index.MemberInfo`` has it)."""

    @property
    def path(self) -> str: ...
    @property
    def length(self) -> int: ...
    @property
    def bundle(self) -> str: ...
    @property
    def crc32(self) -> int: ...
    @property
    def mtime(self) -> float: ...


def member_entry(
    member: MemberFields,
    bundle_class: StorageClass,
    restore: RestoreState | None = None,
    expiry: datetime | None = None,
) -> dict[str, Any]:
    """A bundle member's info dict (``info()``): class and state its bundle's (``restore``,
    else the state ``bundle_class`` implies); ``access`` is the class's."""
    state = restore or (RestoreState.ARCHIVED if bundle_class.needs_restore else RestoreState.HOT)
    entry = member_entry_class(bundle_class.provider)(
        member.path,
        member.length,
        bundle_class.value,
        bundle_class.access.value,
        state.value,
        member.bundle,
        member.crc32,
        member.mtime,
        expiry,
        bundle_class.provider,
    )
    return dict(entry.__dict__)


def with_state(entry: dict[str, Any], state: ObjectState) -> None:
    """Give a member's ``entry`` its bundle's probed ``state`` (in place)."""
    entry["restore"] = state.restore.value
    entry["restore_expiry"] = state.restore_expiry
    for key in CLASS_KEYS:  # archivefs's, s3fs's and the target's own name for the class
        if key in entry:
            entry[key] = state.storage_class.value
    entry["storage_class"] = entry["StorageClass"] = state.storage_class.value
    entry["access"] = state.access.value


def plain_entry(path: str, size: int, klass: StorageClass) -> dict[str, Any]:
    """A hot object listed by a catalog (e.g. zarr metadata kept out of bundles), in
    ``klass``: the catalog's :attr:`~archivefs.catalog.index.Catalog.hot_class`."""
    return {
        "name": path,
        "size": size,
        "type": "file",
        "StorageClass": klass.value,
        "storage_class": klass.value,
        "provider": klass.provider,
        "access": klass.access.value,
        "restore": RestoreState.HOT.value,
        "restore_expiry": None,
        "archive_access": None,
    }


# keys only a single-object description (HEAD) has, as in s3fs's info(); never in listings
DESCRIBED_ONLY = ("ContentType", "VersionId")


def listed_file(state: ObjectState) -> dict[str, Any]:
    """A listing's entry of a file: the target's own entry where its store made one, else
    s3fs's listing keys (:func:`listed_entry`)."""
    if state.entry is not None:
        return file_entry(state)
    return listed_entry(file_entry(state))


def described_entry(state: ObjectState) -> dict[str, Any]:
    """``info()`` of one object: :func:`file_entry` with the listing's ``Key`` and ``Size``
    (``info`` answers the same keys whether a cached listing or a HEAD answers it) plus what
    s3fs's info() adds, ``ContentType`` and ``VersionId`` (``None`` where the store did not
    say). The target's own entry where its store made one (it says what it says)."""
    if state.entry is not None:
        return file_entry(state)
    entry = listed_entry(file_entry(state))
    entry["ContentType"] = state.content_type
    entry["VersionId"] = state.version_id
    return entry


def listed_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A listing's entry with the keys s3fs's listings carry (``Key``, ``Size``), without
    what only a single-object description has."""
    listed = {k: v for k, v in entry.items() if k not in DESCRIBED_ONLY}
    listed["Key"] = entry["name"]
    listed["Size"] = entry["size"]
    return listed


S3FS_KEYS = ("Key", "Size", *DESCRIBED_ONLY)


def without_s3fs_keys(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` without the keys only s3fs's answers carry (what ``archivefs ls`` shows)."""
    return {k: v for k, v in entry.items() if k not in S3FS_KEYS}


def version_entry(info: dict[str, Any]) -> dict[str, Any]:
    """The target's info of one object version (``VersionId`` and all), with the
    provider-neutral class fields every entry has."""
    entry = dict(info)
    storage_class = StorageClass.parse(class_name_of(entry))
    entry.setdefault("storage_class", storage_class.value)
    entry.setdefault("provider", storage_class.provider)
    entry.setdefault("access", storage_class.access.value)
    return entry


def root_entry() -> dict[str, Any]:
    """The store's root: a directory of every bucket."""
    return {"name": "", "size": 0, "type": "directory"}


def directory_entry(path: str, size: int | None = 0) -> dict[str, Any]:
    """A directory's entry (``size`` as the target gives it: s3fs 0, adlfs ``None``)."""
    return {"name": path, "size": size, "type": "directory"}


# where each target's entry says what it says: the ETag (GCS: the generation, which its
# reads take as a precondition; s3fs ``ETag``; adlfs, ocifs ``etag``) and when the object
# was last written (s3fs, adlfs, gcsfs, gcsfs's resource, ocifs)
ETAG_KEYS = ("generation", "ETag", "etag")
# the storage class: archivefs's key first, then s3fs's, gcsfs's, ocifs's (adlfs's
# entries name no tier)
CLASS_KEYS = ("storage_class", "StorageClass", "storageClass", "storageTier")
MODIFIED_KEYS = ("LastModified", "mtime", "last_modified", "updated", "timeModified")


def etag_of(entry: Mapping[str, Any]) -> str | None:
    """The ETag (or GCS generation) an entry of any target carries, ``None`` without one."""
    for key in ETAG_KEYS:
        value = entry.get(key)
        if value:
            return str(value)
    return None


def class_name_of(entry: Mapping[str, Any]) -> str | None:
    """The storage class an entry of any target names (as spelt there), ``None`` if none."""
    for key in CLASS_KEYS:
        value = entry.get(key)
        if value:
            return str(value)
    return None


def modified_of(entry: Mapping[str, Any]) -> Any:
    """When the object an entry of any target describes was last modified (as the target
    gives it: a ``datetime``, a timestamp or an ISO string), ``None`` without one."""
    for key in MODIFIED_KEYS:
        value = entry.get(key)
        if value is not None:
            return value
    return None


def state_from_entry(entry: dict[str, Any]) -> ObjectState:
    """The object state an info dict describes (of a file, member or plain object)."""
    access = entry.get("archive_access")
    return ObjectState(
        path=entry["name"],
        size=int(entry.get("size", 0)),
        storage_class=StorageClass.parse(
            entry.get("storage_class") or entry.get("StorageClass"), entry.get("provider")
        ),
        restore=RestoreState(entry.get("restore", "hot")),
        restore_expiry=entry.get("restore_expiry"),
        etag=etag_of(entry),
        last_modified=_as_datetime(modified_of(entry)),
        archive_access=ArchiveAccessTier(access) if access else None,
    )


def _as_datetime(value: Any) -> datetime | None:
    """A modification time as a ``datetime`` (``None`` if it is not one: an ISO string or
    a timestamp from a target that gives one is left out of the state)."""
    return value if isinstance(value, datetime) else None
