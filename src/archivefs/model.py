"""Core value types: storage classes, restore tiers and states, objects, groups.

These are plain, slotted, frozen dataclasses rather than pydantic models because
plans hold up to millions of them and must be built in well under a second;
pydantic is used where data crosses a boundary (price sheets, journal, JSON).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, NoReturn

from archivefs.errors import (
    InvalidRestoreRequestError,
    UnknownStorageClassError,
)
from archivefs.providers import PROVIDERS, RESTORE_CHECKS, Access, ClassSpec, provider_named
from archivefs.providers.base import not_archived


class _Registry(type):
    """Iterating the class yields S3's values in their historic order, as the enum did;
    ``every()`` yields every provider's (S3's first, in that same order)."""

    _known: dict[tuple[str, str], Any]

    def __iter__(cls) -> Iterator[Any]:
        return iter([v for (provider, _), v in cls._known.items() if provider == "s3"])

    def every(cls) -> list[Any]:
        return list(cls._known.values())


class _ProviderValue(str, metaclass=_Registry):
    """A name in one provider's spelling: a ``str`` equal to it that knows its provider.

    Instances are unique per (provider, name), made once by ``_register``; pickling,
    copying and pydantic keep that identity.
    """

    _known: ClassVar[dict[tuple[str, str], Any]]
    _kind: ClassVar[str]
    provider: str

    def __new__(cls, value: str, provider: str = "s3") -> Any:
        found = cls._known.get((provider, str(value)))
        if found is None:
            raise ValueError(f"{value!r} is not a {provider} {cls._kind}")
        return found

    @classmethod
    def _made(cls, provider: str, name: str) -> Any:
        made = str.__new__(cls, name)
        made.provider = provider
        cls._known[(provider, name)] = made
        return made

    @property
    def value(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r}, provider={self.provider!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (str(self), self.provider)

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            _parse_for_pydantic(cls),
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )


class StorageClass(_ProviderValue):
    """A storage class in its provider's own spelling (S3 ``GLACIER``, Azure ``Archive``).

    A ``str`` (equal to its name, so JSON, price sheets and comparisons with
    plain strings work) that also knows its provider and what it means:
    :attr:`access` (reads at once / for a retrieval fee / needs a restore),
    minimum storage days and minimum billable size. Instances are unique per
    (provider, name): ``StorageClass.GLACIER is StorageClass.parse("glacier")``.
    """

    _known: ClassVar[dict[tuple[str, str], StorageClass]] = {}
    _kind = "storage class"
    spec: ClassSpec

    STANDARD: ClassVar[StorageClass]
    REDUCED_REDUNDANCY: ClassVar[StorageClass]
    STANDARD_IA: ClassVar[StorageClass]
    ONEZONE_IA: ClassVar[StorageClass]
    INTELLIGENT_TIERING: ClassVar[StorageClass]
    GLACIER_IR: ClassVar[StorageClass]
    GLACIER: ClassVar[StorageClass]
    DEEP_ARCHIVE: ClassVar[StorageClass]
    EXPRESS_ONEZONE: ClassVar[StorageClass]
    OUTPOSTS: ClassVar[StorageClass]
    SNOW: ClassVar[StorageClass]

    def __new__(cls, value: str, provider: str = "s3") -> StorageClass:
        found: StorageClass = super().__new__(cls, value, provider)
        return found

    @classmethod
    def _register(cls, provider: str, spec: ClassSpec) -> StorageClass:
        made: StorageClass = cls._made(provider, spec.name)
        made.spec = spec
        return made

    @classmethod
    def parse(cls, name: str | None, provider: str | None = None) -> StorageClass:
        """Parse a storage-class name, case-insensitively, in ``provider``'s names.

        Without a provider: S3's names, case-insensitively (``None``/empty means
        ``STANDARD``, which S3 omits), then another provider's name spelled
        exactly as that provider spells it (``"COLDLINE"`` is Google's). A name two
        providers spell alike goes to the one listed first in ``PROVIDERS``
        (``"Archive"`` is Azure's; Oracle's needs ``provider="oracle"``).
        """
        if isinstance(name, StorageClass) and provider in (None, name.provider):
            return name
        if provider is not None:
            spec = provider_named(provider)
            found = spec.find_class(str(name or spec.default_class))
            if found is None:
                known = ", ".join(c.name for c in spec.classes)
                raise UnknownStorageClassError(
                    f"unknown {spec.name} storage class {name!r}.",
                    fix=f"use one of: {known}.",
                )
            return cls._known[(spec.name, found.name)]
        if not name:
            return cls.STANDARD
        text = str(name)
        s3 = cls._known.get(("s3", text.upper()))
        if s3 is not None:
            return s3
        exact = [c for c in cls._known.values() if str.__eq__(c, text)]
        if exact:  # several providers: the first in PROVIDERS (append-only) keeps the name
            return exact[0]
        known = ", ".join(c.name for c in PROVIDERS["s3"].classes)
        others = "; ".join(
            f"{p.name}: " + ", ".join(c.name for c in p.classes)
            for p in PROVIDERS.values()
            if p.name != "s3"
        )
        raise UnknownStorageClassError(
            f"unknown storage class {name!r}.",
            fix=f"use one of: {known} (or another provider's: {others}).",
        )

    @property
    def name(self) -> str:
        return str(self)

    @property
    def access(self) -> Access:
        """What reading an object of this class takes, in provider-neutral terms."""
        return self.spec.access

    @property
    def needs_restore(self) -> bool:
        """Objects of this class cannot be read until restored."""
        return self.spec.access is Access.RESTORE

    @property
    def has_retrieval_fee(self) -> bool:
        """Objects of this class read at once but bill a per-GB retrieval fee."""
        return self.spec.access is Access.RETRIEVAL_FEE

    @property
    def min_storage_days(self) -> int:
        return self.spec.min_storage_days

    @property
    def min_billable_bytes(self) -> int:
        return self.spec.min_billable_bytes


for _provider in PROVIDERS.values():
    for _spec in _provider.classes:
        StorageClass._register(_provider.name, _spec)
for _spec in PROVIDERS["s3"].classes:
    setattr(StorageClass, _spec.name, StorageClass(_spec.name))


class ArchiveAccessTier(StrEnum):
    """Intelligent-Tiering archive tiers (``x-amz-archive-status``); these need a restore."""

    ARCHIVE_ACCESS = "ARCHIVE_ACCESS"
    DEEP_ARCHIVE_ACCESS = "DEEP_ARCHIVE_ACCESS"


class RestoreTier(_ProviderValue):
    """A restore speed in its provider's spelling (S3 tiers; Azure rehydrate priorities).

    A ``str`` equal to its name; ``RestoreTier.parse("High")`` is Azure's,
    ``RestoreTier.parse("Standard")`` S3's unless ``provider="azure"`` is given.
    """

    _known: ClassVar[dict[tuple[str, str], RestoreTier]] = {}
    _kind = "restore speed"

    EXPEDITED: ClassVar[RestoreTier]
    STANDARD: ClassVar[RestoreTier]
    BULK: ClassVar[RestoreTier]

    def __new__(cls, value: str, provider: str = "s3") -> RestoreTier:
        found: RestoreTier = super().__new__(cls, value, provider)
        return found

    @classmethod
    def _register(cls, provider: str, name: str) -> RestoreTier:
        made: RestoreTier = cls._made(provider, name)
        return made

    @classmethod
    def parse(cls, name: str | RestoreTier, provider: str | None = None) -> RestoreTier:
        """Parse a tier name case-insensitively in ``provider``'s names: the one parse of a
        tier, where it enters (constructor, method argument, CLI option).

        A provider without restores (GCS) takes S3's names, never sent. Without
        ``provider``, any provider's name (S3's first), for data that names no provider.
        """
        if provider is not None and not provider_named(provider).speeds:
            provider = "s3"  # nothing to restore (GCS): S3's names stand in, never sent
        if isinstance(name, RestoreTier) and provider in (None, name.provider):
            return name
        providers = [provider_named(provider)] if provider else list(PROVIDERS.values())
        for spec in providers:
            found = spec.find_speed(str(name))
            if found is not None:
                return cls._known[(spec.name, found)]
        if provider is not None and provider != "s3":
            spec = providers[0]
            raise InvalidRestoreRequestError(
                spec.unknown_speed(str(name)),
                fix=f"use one of: {', '.join(spec.speeds) or '(none)'}.",
            )
        raise InvalidRestoreRequestError(
            f"unknown restore tier {name!r}.",
            fix="use one of: Expedited, Standard, Bulk.",
        )

    @property
    def name(self) -> str:
        return str(self).upper()


for _provider in PROVIDERS.values():
    for _speed in _provider.speeds:
        RestoreTier._register(_provider.name, _speed)
RestoreTier.EXPEDITED = RestoreTier("Expedited")
RestoreTier.STANDARD = RestoreTier("Standard")
RestoreTier.BULK = RestoreTier("Bulk")


def _parse_for_pydantic(kind: _Registry) -> Callable[[Any], Any]:
    """Data files (price sheets) spell names exactly as their provider does; S3's first."""

    def validate(value: Any) -> Any:
        if isinstance(value, kind):
            return value
        if not isinstance(value, str):
            raise ValueError(f"expected a name, got {type(value).__name__}")
        for known in kind.every():
            if str.__eq__(known, value):
                return known
        names = sorted({str(k) for k in kind.every()})
        raise ValueError(f"unknown name {value!r}; use one of: {', '.join(names)}")

    return validate


class RestoreState(StrEnum):
    """Whether an object can be read now, and if not, why."""

    HOT = "hot"
    ARCHIVED = "archived"
    RESTORING = "restoring"
    RESTORED = "restored"

    @property
    def readable(self) -> bool:
        """Objects in this state can be read at once."""
        return self in (RestoreState.HOT, RestoreState.RESTORED)


def parse_days(days: object) -> int:
    """A restored copy's lifetime as given by a caller: a whole number of days, 1 or more.

    Checked once where it enters (the constructor, a method argument, a price estimate);
    each provider's own bounds are checked with the request (:func:`check_restore_request`).
    """
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise InvalidRestoreRequestError(
            f"days must be a whole number of days, 1 or more; got {days!r}.",
            fix="pass days=1 (or more) for how long the restored copy should stay readable.",
        )
    return days


def check_restore_request(
    storage_class: StorageClass,
    tier: RestoreTier,
    days: int | None,
    *,
    archive_access: ArchiveAccessTier | None = None,
    path: str | None = None,
    target: str | None = None,
    pending_tier: str | None = None,
    pending_target: str | None = None,
) -> int | None:
    """Validate a restore request against its provider's rules (``providers/``) before
    anything is sent.

    Returns what the provider's verb is sent: S3 the ``Days`` (``None`` for
    Intelligent-Tiering archive tiers, which restore into the frequent tier and take no
    days), Oracle the hours, Azure nothing (a rehydrated blob stays online).
    ``target``, ``pending_tier`` and ``pending_target`` matter to Azure only: the tier to
    rehydrate to, and the priority and target of a rehydration already pending.
    """
    check = RESTORE_CHECKS.get(storage_class.provider)
    if check is None:
        raise_not_archived(path, storage_class)
    state: dict[str, Any] = {"archive_access": archive_access} if archive_access else {}
    return check(
        storage_class.value,
        str(tier),
        days,
        path=path,
        target=target,
        pending_priority=pending_tier,
        pending_target=pending_target,
        **state,
    )


def check_tier(
    storage_class: StorageClass,
    tier: RestoreTier,
    *,
    archive_access: ArchiveAccessTier | None = None,
    path: str | None = None,
) -> None:
    """Refuse a restore speed that ``storage_class`` does not offer, in its provider's words.

    The one check of "does this class restore at this speed" that restores and
    estimates share (each provider's restore check, speeds only); a price sheet lacking
    a price for a speed the class does offer is the sheet's problem and is reported by
    the sheet. Classes that read at once have no speeds to refuse here.
    """
    check = RESTORE_CHECKS.get(storage_class.provider)
    if check is None or not (storage_class.needs_restore or archive_access is not None):
        return
    state: dict[str, Any] = {"archive_access": archive_access} if archive_access else {}
    check(storage_class.value, str(tier), None, path=path, speed_only=True, **state)


def raise_not_archived(path: str | None, storage_class: StorageClass) -> NoReturn:
    """Raise :class:`NotArchivedError` for an object that reads at once."""
    raise not_archived(path, storage_class.value)


@dataclass(frozen=True, slots=True)
class ObjectState:
    """What the store says about one object: size, class, restore state.

    ``path`` is ``bucket/key`` (the cold store's own path form).
    """

    path: str
    size: int
    storage_class: StorageClass = StorageClass.STANDARD
    restore: RestoreState = RestoreState.HOT
    restore_expiry: datetime | None = None
    etag: str | None = None
    last_modified: datetime | None = None
    archive_access: ArchiveAccessTier | None = None
    pending_tier: str | None = None  # Azure: the rehydrate priority of a pending rehydration
    pending_target: str | None = None  # Azure: the tier a pending rehydration goes to
    content_type: str | None = None  # from a single-object read of the metadata (HEAD)
    version_id: str | None = None  # the version a HEAD described (versioned buckets)
    # the target filesystem's own info dict of the object (adlfs's, gcsfs's), where its
    # store made one from the same answer; None: S3's, made from the fields above
    entry: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def readable(self) -> bool:
        return self.restore.readable

    @property
    def access(self) -> Access:
        """Provider-neutral: reads at once, reads for a retrieval fee, or needs a restore."""
        if self.archive_access is not None:
            return Access.RESTORE
        if self.storage_class.needs_restore and self.restore is RestoreState.HOT:
            return Access.IMMEDIATE  # a server without restores (Ceph RGW) reads it at once
        return self.storage_class.access


@dataclass(frozen=True, slots=True)
class Member:
    """A logical file stored inside a bundle, at ``offset`` for ``length`` bytes."""

    path: str
    bundle: str
    offset: int
    length: int
    crc32: int
    sha256: str | None = None


class Action(StrEnum):
    """What a plan will do with a group."""

    READ = "read"  # readable now (hot, or restored and not expiring too soon)
    RESTORE = "restore"  # archived: issue a restore request
    WAIT = "wait"  # a restore is already in flight: just wait for it
    RENEW = "renew"  # restored, but the copy expires before the job can use it
    UPGRADE = "upgrade"  # restoring at a slower tier: request the faster one (S3 allows it)


@dataclass(frozen=True, slots=True)
class PlannedGroup:
    """One unit of restore in a plan.

    ``state`` describes the cold object (a single object or a bundle); ``paths``
    are the logical paths the caller asked for that live in it; ``read_bytes``
    and ``read_requests`` are what reading those paths will fetch.
    """

    state: ObjectState
    action: Action
    paths: tuple[str, ...]
    read_bytes: int
    read_requests: int

    @property
    def key(self) -> str:
        return self.state.path

    @property
    def size(self) -> int:
        return self.state.size

    @property
    def needs_request(self) -> bool:
        """A paid restore request must be sent for this group."""
        return self.action in (Action.RESTORE, Action.RENEW, Action.UPGRADE)


def total_size(states: Iterable[ObjectState]) -> int:
    return sum(s.size for s in states)
