"""Core value types: storage classes, restore tiers and states, objects, groups, plans.

These are plain, slotted, frozen dataclasses rather than pydantic models because
plans hold up to millions of them and must be built in well under a second;
pydantic is used where data crosses a boundary (price sheets, journal, JSON).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from archivefs.errors import (
    InvalidRestoreRequestError,
    NotArchivedError,
    UnknownStorageClassError,
)


class StorageClass(StrEnum):
    """S3 storage classes (the names S3 uses in ``x-amz-storage-class``)."""

    STANDARD = "STANDARD"
    REDUCED_REDUNDANCY = "REDUCED_REDUNDANCY"
    STANDARD_IA = "STANDARD_IA"
    ONEZONE_IA = "ONEZONE_IA"
    INTELLIGENT_TIERING = "INTELLIGENT_TIERING"
    GLACIER_IR = "GLACIER_IR"
    GLACIER = "GLACIER"
    DEEP_ARCHIVE = "DEEP_ARCHIVE"
    EXPRESS_ONEZONE = "EXPRESS_ONEZONE"
    OUTPOSTS = "OUTPOSTS"
    SNOW = "SNOW"

    @classmethod
    def parse(cls, name: str | None) -> StorageClass:
        """Parse a storage-class name; ``None``/empty means ``STANDARD`` (S3 omits it)."""
        if not name:
            return cls.STANDARD
        try:
            return cls(str(name).upper())
        except ValueError:
            known = ", ".join(c.value for c in cls)
            raise UnknownStorageClassError(
                f"unknown storage class {name!r}.",
                fix=f"use one of: {known}.",
            ) from None

    @property
    def needs_restore(self) -> bool:
        """Objects of this class cannot be read until restored."""
        return self in _ARCHIVE_CLASSES

    @property
    def has_retrieval_fee(self) -> bool:
        """Objects of this class read at once but bill a per-GB retrieval fee."""
        return self in _RETRIEVAL_FEE_CLASSES


_ARCHIVE_CLASSES = frozenset({StorageClass.GLACIER, StorageClass.DEEP_ARCHIVE})
_RETRIEVAL_FEE_CLASSES = frozenset(
    {StorageClass.STANDARD_IA, StorageClass.ONEZONE_IA, StorageClass.GLACIER_IR}
)


class ArchiveAccessTier(StrEnum):
    """Intelligent-Tiering archive tiers (``x-amz-archive-status``); these need a restore."""

    ARCHIVE_ACCESS = "ARCHIVE_ACCESS"
    DEEP_ARCHIVE_ACCESS = "DEEP_ARCHIVE_ACCESS"


class RestoreTier(StrEnum):
    """Restore speed tiers, as S3 names them in ``RestoreRequest.GlacierJobParameters``."""

    EXPEDITED = "Expedited"
    STANDARD = "Standard"
    BULK = "Bulk"

    @classmethod
    def parse(cls, name: str | RestoreTier) -> RestoreTier:
        """Parse a tier name case-insensitively."""
        for tier in cls:
            if str(name).lower() == tier.value.lower():
                return tier
        raise InvalidRestoreRequestError(
            f"unknown restore tier {name!r}.",
            fix="use one of: Expedited, Standard, Bulk.",
        )


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


MAX_RESTORE_DAYS = 2_147_483_647  # S3 accepts any positive 32-bit integer of days


def check_restore_request(
    storage_class: StorageClass,
    tier: RestoreTier,
    days: int | None,
    *,
    archive_access: ArchiveAccessTier | None = None,
    path: str | None = None,
) -> int | None:
    """Validate a restore request against S3's rules before anything is sent.

    Returns the ``Days`` to send (``None`` for Intelligent-Tiering archive tiers,
    which restore into the frequent tier and take no days).
    """
    if storage_class is StorageClass.INTELLIGENT_TIERING and archive_access is not None:
        deep = archive_access is ArchiveAccessTier.DEEP_ARCHIVE_ACCESS
        if tier is RestoreTier.EXPEDITED and deep:
            raise InvalidRestoreRequestError(
                "the Expedited tier is not available for the Deep Archive Access tier.",
                path=path,
                fix="use tier='Standard' or tier='Bulk'.",
            )
        return None
    if not storage_class.needs_restore:
        raise_not_archived(path, storage_class)
    if tier is RestoreTier.EXPEDITED and storage_class is StorageClass.DEEP_ARCHIVE:
        raise InvalidRestoreRequestError(
            "the Expedited tier is not available for DEEP_ARCHIVE objects.",
            path=path,
            fix="use tier='Standard' (within 12 hours) or tier='Bulk' (within 48 hours).",
        )
    if days is None or isinstance(days, bool) or not isinstance(days, int):
        raise InvalidRestoreRequestError(
            f"days must be a whole number of days, got {days!r}.",
            path=path,
            fix="pass days=1 (or more) for how long the restored copy should stay readable.",
        )
    if not 1 <= days <= MAX_RESTORE_DAYS:
        raise InvalidRestoreRequestError(
            f"days must be between 1 and {MAX_RESTORE_DAYS}, got {days}.",
            path=path,
            fix="pass days=1 (or more) for how long the restored copy should stay readable.",
        )
    return days


def raise_not_archived(path: str | None, storage_class: StorageClass) -> None:
    """Raise :class:`NotArchivedError` for an object that reads at once."""
    raise NotArchivedError(
        f"object is in {storage_class.value}, which reads at once; there is nothing to restore.",
        path=path,
        fix="read it directly, or leave it out of the restore.",
    )


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

    @property
    def readable(self) -> bool:
        return self.restore.readable


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


@dataclass(frozen=True, slots=True)
class Plan:
    """What a job needs: every group, its state, and what will be done about it."""

    groups: tuple[PlannedGroup, ...]
    tier: RestoreTier = RestoreTier.STANDARD
    days: int = 1
    created: datetime | None = None
    missing: tuple[str, ...] = ()
    _index: dict[str, PlannedGroup] = field(default_factory=dict, repr=False, compare=False)

    def __iter__(self) -> Iterator[PlannedGroup]:
        return iter(self.groups)

    def __len__(self) -> int:
        return len(self.groups)

    def group(self, key: str) -> PlannedGroup:
        """The planned group whose cold object is ``key``."""
        if not self._index:
            self._index.update((g.key, g) for g in self.groups)
        return self._index[key]

    def with_action(self, *actions: Action) -> list[PlannedGroup]:
        return [g for g in self.groups if g.action in actions]

    @property
    def to_restore(self) -> list[PlannedGroup]:
        """Groups that need a paid restore request."""
        return [g for g in self.groups if g.needs_request]

    @property
    def paths(self) -> list[str]:
        return [p for g in self.groups for p in g.paths]

    def counts(self) -> dict[str, int]:
        """Number of groups per restore state."""
        out = {state.value: 0 for state in RestoreState}
        for g in self.groups:
            out[g.state.restore.value] += 1
        return out

    def bytes_by_state(self) -> dict[str, int]:
        out = {state.value: 0 for state in RestoreState}
        for g in self.groups:
            out[g.state.restore.value] += g.size
        return out


def total_size(states: Iterable[ObjectState]) -> int:
    return sum(s.size for s in states)
