"""Claims in the bucket: one restore per group across hosts that share no journal.

Before a restore is sent, its group is claimed by creating a small object under the
bucket's (or Azure container's) reserved prefix with a conditional write (S3
``PutObject``, Azure ``Put Blob``, with ``If-None-Match: *``): exactly one writer
succeeds, on any machine, and only it sends the request. Everyone else reads the claim
and waits instead of paying. The bucket is the one place every host already looks, so
no server of our own is needed.

A claim is one PUT per group for the winner; a loser pays one GET (of at most
:data:`MAX_CLAIM_BYTES`). A claim is taken over (with ``If-Match`` on the ETag read, so
again by exactly one host) when its lease is over by the store's clock (its
``Last-Modified`` against the ``Date`` of the answer that read it) while the group is
still archived: its claimer died before sending, the request failed, or the restored
copy has expired since. A caller waiting on a group another host claimed looks again
when that lease ends. A claim that cannot be read is not an absent one: its group is
not sent. Claims carry the tier, days, requester (host and process; never credentials),
the time and the expected ready time, so ``archivefs status`` can say who asked for
what, and a random claimer id, so a writer whose answer was lost knows its own claim.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import math
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from archivefs.catalog.layout import RESERVED
from archivefs.errors import ArchiveError
from archivefs.model import RestoreState
from archivefs.restore.journal import process_alive

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from archivefs.model import PlannedGroup
    from archivefs.stores.base import ColdStore, Tagged

logger = logging.getLogger(__name__)

CLAIM_VERSION = 1
MAX_CLAIM_BYTES = 64 * 1024  # a claim is a few hundred bytes; a larger object is damaged
DEFAULT_LEASE_S = 900.0  # a claimer that has not sent within this long is presumed dead


def claim_path(group_key: str) -> str:
    """``bucket/.archivefs/claims/<sha256 of the key>.json``: where a group's claim lives."""
    bucket, _, key = group_key.partition("/")
    digest = hashlib.sha256(key.encode()).hexdigest()
    return f"{bucket}/{RESERVED}/claims/{digest}.json"


@dataclass(frozen=True, slots=True)
class Claim:
    """What a claim object says."""

    key: str
    tier: str
    days: int | None
    requester: str
    claimed_at: float
    expected_ready_at: float | None
    lease_s: float | None = None  # the claimer's lease (readers cap it at their own)
    claim_id: str = ""  # its writer's random id (kept in memory): it knows its own claims

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "version": CLAIM_VERSION,
                "key": self.key,
                "tier": self.tier,
                "days": self.days,
                "requester": self.requester,
                "claimed_at": self.claimed_at,
                "expected_ready_at": self.expected_ready_at,
                "lease_s": self.lease_s,
                "id": self.claim_id,
            },
            sort_keys=True,
        ).encode()

    @classmethod
    def parse(cls, data: bytes) -> Claim | None:
        """The claim in ``data``, or ``None`` when it is not one this version reads (a
        damaged one included: times that are not finite numbers, a lease not above 0)."""
        try:
            raw: dict[str, Any] = json.loads(data)
            ready = raw.get("expected_ready_at")
            lease = raw.get("lease_s")
            claim = cls(
                key=str(raw["key"]),
                tier=str(raw["tier"]),
                days=None if raw.get("days") is None else int(raw["days"]),
                requester=str(raw["requester"]),
                claimed_at=float(raw["claimed_at"]),
                expected_ready_at=None if ready is None else float(ready),
                lease_s=None if lease is None else float(lease),
                claim_id=str(raw.get("id") or ""),
            )
        except (ValueError, KeyError, TypeError, OverflowError):
            return None
        times = [claim.claimed_at, claim.expected_ready_at, claim.lease_s]
        if not all(math.isfinite(t) for t in times if t is not None):
            return None  # NaN or Infinity: no claim this or any version writes
        if claim.lease_s is not None and claim.lease_s <= 0:
            return None
        return claim

    @property
    def claimed(self) -> datetime:
        return datetime.fromtimestamp(self.claimed_at, UTC)


def _parse(found: Tagged) -> Claim | None:
    """The claim read, or ``None`` when it is damaged (larger than a claim can be
    included: only its first :data:`MAX_CLAIM_BYTES` were read) or of another format."""
    return Claim.parse(found.data) if found.whole else None


def _claimer_gone(requester: str) -> bool:
    """The claimer is a process of this host that is no longer running."""
    host, _, pid = requester.rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and not process_alive(int(pid))


def requester_token() -> str:
    """``host:pid`` of this process: who a claim belongs to (never credentials)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class BucketClaims:
    """Claims groups in their bucket before their restores are sent.

    Parameters
    ----------
    store:
        The cold store (claims live beside the objects, under ``.archivefs/claims/``).
    lease_seconds:
        How long a claimer may take to send before its claim can be taken over.
    """

    def __init__(
        self,
        store: ColdStore,
        *,
        lease_seconds: float = DEFAULT_LEASE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.lease_seconds = lease_seconds
        self._clock = clock
        # random, in memory only: this filesystem's claims, even after a lost answer
        self.claimer_id = secrets.token_hex(16)
        self._unwritable: set[str] = set()  # buckets where claims cannot be written
        # claims whose store gave no age: (path, etag) -> time.monotonic() first seen
        self._first_seen: dict[tuple[str, str], float] = {}
        # groups lost to a live claim -> time.monotonic() when its lease ends
        self.lease_ends: dict[str, float] = {}

    async def claim(
        self,
        groups: Sequence[PlannedGroup],
        *,
        tier: str,
        days: int | None,
        expected_ready: Callable[[PlannedGroup], datetime] | None = None,
        concurrency: int = 64,
    ) -> ClaimOutcome:
        """Claim each group: won (send these), lost (another host is on them) or failed
        (the claim could not be written or read: send nothing, the error says why)."""
        semaphore = asyncio.Semaphore(concurrency)
        provider = getattr(self.store, "provider", None)
        if provider is not None and not provider.takes_days:
            days = None  # Azure's rehydrations take no days: the claim says none
        outcome = ClaimOutcome()

        async def one(group: PlannedGroup) -> None:
            async with semaphore:
                ready = expected_ready(group).timestamp() if expected_ready else None
                claim = Claim(
                    group.key,
                    tier,
                    days,
                    requester_token(),
                    self._clock(),
                    ready,
                    lease_s=self.lease_seconds,
                    claim_id=self.claimer_id,
                )
                try:
                    won = await self._claim_one(group, claim)
                except ArchiveError as error:
                    self.lease_ends.pop(group.key, None)
                    outcome.failed[group.key] = error
                    return
                if won:
                    self.lease_ends.pop(group.key, None)
                    outcome.won.append(group.key)
                else:
                    outcome.lost.append(group.key)

        await asyncio.gather(*(one(g) for g in groups))
        return outcome

    async def read(self, group_key: str) -> Claim | None:
        """The claim on a group, if any (``archivefs status`` shows who restored what)."""
        found = await self.store.read_tagged(claim_path(group_key), limit=MAX_CLAIM_BYTES)
        return None if found is None else _parse(found)

    async def read_many(
        self, group_keys: Sequence[str], *, concurrency: int = 64
    ) -> dict[str, Claim | None]:
        """The claims on many groups: one GET each, ``concurrency`` at a time."""
        semaphore = asyncio.Semaphore(concurrency)

        async def one(key: str) -> tuple[str, Claim | None]:
            async with semaphore:
                return key, await self.read(key)

        return dict(await asyncio.gather(*(one(k) for k in group_keys)))

    async def _claim_one(self, group: PlannedGroup, claim: Claim) -> bool:
        """Whether this caller won ``group``'s claim; raises (an :class:`ArchiveError`
        naming the claim object) when its claim can be neither written nor read."""
        bucket = group.key.partition("/")[0]
        path = claim_path(group.key)
        if bucket not in self._unwritable:
            try:
                if await self._write(group.key, path, claim, None):
                    return True
            except PermissionError as error:
                if bucket not in self._unwritable:  # once per bucket, however many groups
                    self._unwritable.add(bucket)
                    logger.warning(
                        "%s: cannot write restore claims under %s/%s/claims/ (%s); reading "
                        "the claims of other hosts but writing none: hosts that share no "
                        "journal and find no claim may each send this bucket's restores.",
                        group.key,
                        bucket,
                        RESERVED,
                        type(error).__name__,
                    )
        found = await self._read_tagged(group.key, path)
        if bucket in self._unwritable:  # no claim of ours can be written: respect theirs
            return found is None or await self._stale(group, path, found)
        if found is None:  # released meanwhile: try once more
            return await self._write(group.key, path, claim, None)
        existing = _parse(found)
        if existing is not None and existing.claim_id == self.claimer_id:
            return True  # ours: an earlier call that did not send it, or a lost answer
        if not await self._stale(group, path, found):
            return False
        return await self._write(group.key, path, claim, found.etag)

    async def _write(self, group_key: str, path: str, claim: Claim, etag: str | None) -> bool:
        """Create the claim (``etag`` None) or replace the version ``etag``; whether this
        caller holds the claim now. A write the store refused outright (403) raises
        ``PermissionError``; any other failure raises an error naming the claim (nothing
        is sent for it).

        A write whose answer was lost may have landed (and a client's retry of it then
        fails its own condition): the claim is read again, and one carrying this
        caller's claim id is this caller's.
        """
        failure: ArchiveError | None = None
        try:
            if etag is None:
                return await self.store.create_exclusive(path, claim.to_bytes())
            if await self.store.replace_if_unchanged(path, claim.to_bytes(), etag):
                return True
        except PermissionError:
            raise
        except ArchiveError as error:
            failure = error
        found = await self._read_tagged(group_key, path)
        existing = None if found is None else _parse(found)
        if existing is not None and existing.claim_id == self.claimer_id:
            return True  # it landed: the answer, or the condition of a retry, said otherwise
        if failure is not None and (found is None or found.etag == etag):
            raise unwritable_claim(group_key, path, failure) from failure  # did not land
        return False  # another claim is there: its writer's

    async def _read_tagged(self, group_key: str, path: str) -> Tagged | None:
        """The claim object at ``path``; a claim that cannot be read is not an absent one:
        its group is not restored (a live claim of another host may be behind it)."""
        try:
            return await self.store.read_tagged(path, limit=MAX_CLAIM_BYTES)
        except ArchiveError as error:
            raise unreadable_claim(group_key, path, error) from error

    def _age(self, path: str, found: Tagged) -> float:
        """How long the claim object has existed: by the store's clock (its Last-Modified
        against the response's Date), never by the claimer's; where the store said
        neither, since this process first saw this version of it."""
        if found.age is not None:
            return found.age
        now = time.monotonic()
        return now - self._first_seen.setdefault((path, found.etag), now)

    async def _stale(self, group: PlannedGroup, path: str, found: Tagged) -> bool:
        """Whether a claim found in the bucket may be taken over: its lease is over by the
        store's clock (or its claimer is a dead process of this host) and the group is
        still archived (so no request of its is in flight and no restored copy is left).

        The lease is the claimer's own, capped at this caller's; a claim this version
        cannot read (damaged, or of a newer format) has this caller's lease. The times a
        claim states are its claimer's clock and decide nothing.
        """
        existing = _parse(found)
        lease = self.lease_seconds
        if existing is not None and existing.lease_s is not None:
            lease = min(lease, existing.lease_s)
        left = lease - self._age(path, found)
        gone = existing is not None and _claimer_gone(existing.requester)
        if left > 0 and not gone:
            self.lease_ends[group.key] = time.monotonic() + left
            return False  # its claimer may be sending right now
        try:
            state = await self.store.head(group.key)
        except ArchiveError:
            return False  # cannot tell: leave it to its claimer
        return state.restore is RestoreState.ARCHIVED


@dataclass(slots=True)
class ClaimOutcome:
    """What :meth:`BucketClaims.claim` found, per group key."""

    won: list[str] = field(default_factory=list)  # send these
    lost: list[str] = field(default_factory=list)  # another host's live claim: wait
    failed: dict[str, ArchiveError] = field(default_factory=dict)  # send nothing: why


def unreadable_claim(group_key: str, path: str, error: ArchiveError) -> ArchiveError:
    """``error`` (of its own class, e.g. access denied) restated for the group's claim."""
    return _restated(
        error,
        group_key,
        f"its restore claim {path} could not be read ({error.problem.rstrip('.')}); not "
        "restored, since another host's claim may be behind it and its restore would be "
        "paid twice.",
        f"let this identity read {path.partition('/')[0]}/{RESERVED}/claims/ "
        "(s3:GetObject on S3; Get Blob on Azure; storage.objects.get on GCS) and run the "
        "same restore again, or leave bucket_claims off if no other host restores from "
        "this bucket.",
    )


def unwritable_claim(group_key: str, path: str, error: ArchiveError) -> ArchiveError:
    """``error`` (e.g. the store still throttling after the retries) restated for the
    group's claim, which could not be written: nothing was sent for the group."""
    return _restated(
        error,
        group_key,
        f"its restore claim {path} could not be written ({error.problem.rstrip('.')}); "
        "not restored, and nothing was sent or paid for it.",
        "run the same restore again (later, if the store was throttling): the group is "
        "claimed afresh and sent once.",
    )


def _restated(error: ArchiveError, path: str, problem: str, fix: str) -> ArchiveError:
    clone = copy.copy(error)
    clone.path, clone.problem, clone.fix = path, problem, fix
    clone.args = (f"{path}: {problem} Fix: {fix}",)
    return clone


@dataclass(frozen=True, slots=True)
class ClaimSummary:
    """Claims of one requester at one tier: how many groups, since and until when."""

    requester: str
    tier: str
    groups: int
    first_claimed: datetime
    expected_ready: datetime | None


def summarize_claims(claims: dict[str, Claim | None]) -> tuple[list[ClaimSummary], list[str]]:
    """Claims grouped by requester and tier (oldest first), and the groups with no claim."""
    by: dict[tuple[str, str], list[Claim]] = {}
    unclaimed: list[str] = []
    for key, claim in sorted(claims.items()):
        if claim is None:
            unclaimed.append(key)
        else:
            by.setdefault((claim.requester, claim.tier), []).append(claim)
    summaries = []
    for (requester, tier), found in by.items():
        readies = [c.expected_ready_at for c in found if c.expected_ready_at is not None]
        summaries.append(
            ClaimSummary(
                requester=requester,
                tier=tier,
                groups=len(found),
                first_claimed=min(c.claimed for c in found),
                expected_ready=datetime.fromtimestamp(max(readies), UTC) if readies else None,
            )
        )
    return sorted(summaries, key=lambda s: s.first_claimed), unclaimed
