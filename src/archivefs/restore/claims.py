"""Claims in the bucket: one restore per group across hosts that share no journal.

Before a restore is sent, its group is claimed in its bucket's (or Azure container's)
claims *ledger*, ``.archivefs/claims/ledger.json``: one object that lists batches of
claimed groups, written with a conditional write (S3 ``If-None-Match: *`` to create,
``If-Match`` on the ETag read to replace; Azure ETags, GCS generations, Oracle
``if-match``). Every writer replaces exactly the version it read, so of two hosts
claiming overlapping groups at once exactly one write lands; the other reads the new
version, drops the groups claimed meanwhile and writes again. Only the winner of a group
sends its request; everyone else waits instead of paying. The bucket is the one place
every host already looks, so no server of our own is needed.

A claim of up to :data:`LEDGER_BATCH` groups costs one GET and one PUT of the ledger,
plus one LIST of the claims folder per call (below): about 1.0 requests per group with
the restores. A group whose claim is live (its batch younger than its lease by the
store's clock) is another host's; one whose lease is over (its claimer died before
sending, the request failed, or the restored copy has expired since) is taken over when
the group is still archived, in the same conditional write, so again by exactly one
host. A caller waiting on a group another host claimed looks again when that lease
ends. A ledger that cannot be read (denied, damaged, of a newer format) is not an absent
one: its groups are not sent, and it is never replaced. Batches older than
:data:`LEDGER_RETAIN_S` (no restore runs that long, and the plan's probe sees any copy
they made) are dropped when the ledger is next written, which bounds its size.

Batches carry the tier, days, requester (host and process; never credentials), the
claimer's time and the expected ready time, so ``archivefs status`` can say who asked for
what, a random claimer id, so a writer whose answer was lost knows its own claim, and
their age by the store's clock (each writer adds the age of the version it read).

Versions before the ledger wrote one object per group, ``.archivefs/claims/<sha256 of
the key>.json`` (:func:`claim_path`). Such claims are still honoured: one LIST of the
claims folder per call finds them, and a group that has one is claimed, read and taken
over through that object (one GET, and a conditional replace) exactly as before, so a
restore begun by an older version and resumed by this one is paid once. Hosts of older
versions do not read the ledger: upgrade every host that restores from a bucket.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import random
import re
import secrets
import socket
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from archivefs.catalog.layout import RESERVED
from archivefs.errors import ArchiveError, StoreUnavailableError
from archivefs.model import RestoreState
from archivefs.restore.claim_records import (
    DEFAULT_LEASE_S,
    LEDGER_VERSION,
    MAX_CLAIM_BYTES,
    Batch,
    Claim,
    ClaimSummary,
    Ledger,
    claim_path,
    claims_folder,
    ledger_path,
    requester_token,
    summarize_claims,
)
from archivefs.restore.journal import process_alive

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from archivefs.model import PlannedGroup
    from archivefs.stores.base import ColdStore, Tagged

__all__ = [  # what callers import from here; the records themselves are claim_records'
    "DEFAULT_LEASE_S",
    "MAX_CLAIM_BYTES",
    "BucketClaims",
    "Claim",
    "ClaimOutcome",
    "ClaimSummary",
    "claim_path",
    "ledger_path",
    "summarize_claims",
    "unreadable_claim",
    "unwritable_claim",
]

logger = logging.getLogger(__name__)


LEDGER_BATCH = 1000  # groups claimed by one write of the ledger
MAX_LEDGER_BYTES = 32 * 1024 * 1024  # a larger ledger is damaged: read, never replaced
GONE_GRACE_S = 3.0  # a dead claimer's last request, already at the store, lands within this
LEDGER_ROUNDS = 64  # lost races in a row on one batch before its groups are given back
LEDGER_BACKOFF_S = 0.05  # the first pause after a lost race (random up to it; doubles)
LEDGER_MAX_BACKOFF_S = 2.0
_PER_GROUP_NAME = re.compile(r"[0-9a-f]{64}\.json")


def _parse(found: Tagged) -> Claim | None:
    """The claim read, or ``None`` when it is damaged (larger than a claim can be
    included: only its first :data:`MAX_CLAIM_BYTES` were read) or of another format."""
    return Claim.parse(found.data) if found.whole else None


def _claimer_gone(requester: str) -> bool:
    """The claimer is a process of this host that is no longer running."""
    host, _, pid = requester.rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and not process_alive(int(pid))


@dataclass(slots=True)
class _Round:
    """What one read of the ledger decided for a batch's groups."""

    take: list[str] = field(default_factory=list)  # free or stale: written as ours
    mine: list[str] = field(default_factory=list)  # already ours (an earlier call)
    lost: list[str] = field(default_factory=list)  # another host's live claim, or not archived
    taken: set[str] = field(default_factory=set)  # of ``take``, held by a stale batch


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
        # ledger batches -> time.monotonic() first seen (their age where none was said)
        self._batch_seen: dict[str, float] = {}
        # groups lost to a live claim -> time.monotonic() when its lease ends
        self.lease_ends: dict[str, float] = {}
        # claimers found dead (claim or batch id) -> time.monotonic() first found so
        self._gone_seen: dict[str, float] = {}

    async def _let_land(self, claim_ids: Iterable[str]) -> None:
        """Wait until :data:`GONE_GRACE_S` has passed since each claimer was first found
        dead: a request it sent just before it died may still be on its way into the
        store, and the state of its group is looked at only once it has landed."""
        now = time.monotonic()
        seen = [self._gone_seen.setdefault(c, now) for c in claim_ids]
        wait = max((t + GONE_GRACE_S - now for t in seen), default=0.0)
        if wait > 0:
            await asyncio.sleep(wait)

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
        (the claim could not be written or read: send nothing, the error says why).

        Per bucket: one LIST of the claims folder, then one GET and one PUT of the
        ledger per :data:`LEDGER_BATCH` groups (again after a lost race), a HEAD per
        group whose claim has lapsed, and per group claimed by an older version, its
        claim object's GET (and a conditional replace to take it over).
        """
        semaphore = asyncio.Semaphore(concurrency)
        provider = getattr(self.store, "provider", None)
        if provider is not None and not provider.takes_days:
            days = None  # Azure's rehydrations take no days: the claim says none
        outcome = ClaimOutcome()
        by_bucket: dict[str, list[PlannedGroup]] = {}
        for group in groups:
            by_bucket.setdefault(group.key.partition("/")[0], []).append(group)

        def new_claim(group: PlannedGroup) -> Claim:
            ready = expected_ready(group).timestamp() if expected_ready else None
            return Claim(
                group.key,
                tier,
                days,
                requester_token(),
                self._clock(),
                ready,
                lease_s=self.lease_seconds,
                claim_id=self.claimer_id,
            )

        async def per_group(group: PlannedGroup) -> None:
            async with semaphore:
                try:
                    won = await self._claim_one(group, new_claim(group))
                except ArchiveError as error:
                    self.lease_ends.pop(group.key, None)
                    outcome.failed[group.key] = error
                    return
                if won:
                    self.lease_ends.pop(group.key, None)
                    outcome.won.append(group.key)
                else:
                    outcome.lost.append(group.key)

        async def in_bucket(bucket: str, members: list[PlannedGroup]) -> None:
            # the ledger is read while the folder is listed: one round trip, not two
            prefetch = asyncio.ensure_future(self._read_ledger(bucket))
            first: asyncio.Future[Ledger] | None = prefetch
            try:
                older = await self._per_group_claims(bucket)
            except ArchiveError as error:
                await _discard(prefetch)
                folder = claims_folder(bucket) + "/"
                for group in members:
                    outcome.failed[group.key] = unreadable_claim(group.key, folder, error)
                return
            except BaseException:
                await _discard(prefetch)
                raise
            legacy = [g for g in members if claim_path(g.key).rpartition("/")[2] in older]
            fresh = [g for g in members if claim_path(g.key).rpartition("/")[2] not in older]
            await asyncio.gather(*(per_group(g) for g in legacy))
            for start in range(0, len(fresh), LEDGER_BATCH):
                chunk = fresh[start : start + LEDGER_BATCH]
                claims = [new_claim(g) for g in chunk]
                readies = [c.expected_ready_at for c in claims if c.expected_ready_at is not None]
                mine = Batch(
                    batch_id=secrets.token_hex(8),
                    claim_id=self.claimer_id,
                    requester=requester_token(),
                    tier=tier,
                    days=days,
                    lease_s=self.lease_seconds,
                    claimed_at=claims[0].claimed_at,
                    expected_ready_at=max(readies) if readies else None,
                    age=0.0,
                    keys=(),
                )
                await self._claim_batch(bucket, chunk, mine, outcome, semaphore, first)
                first = None
            if first is not None:  # no group for the ledger
                await _discard(prefetch)

        await asyncio.gather(*(in_bucket(b, m) for b, m in by_bucket.items()))
        return outcome

    async def read(self, group_key: str) -> Claim | None:
        """The claim on a group, if any (``archivefs status`` shows who restored what)."""
        return (await self.read_many([group_key]))[group_key]

    async def read_many(
        self, group_keys: Sequence[str], *, concurrency: int = 64
    ) -> dict[str, Claim | None]:
        """The claims on many groups: per bucket, one LIST of its claims folder and one
        GET of its ledger, and one GET per group claimed by an older version."""
        semaphore = asyncio.Semaphore(concurrency)
        by_bucket: dict[str, list[str]] = {}
        for key in group_keys:
            by_bucket.setdefault(key.partition("/")[0], []).append(key)
        found: dict[str, Claim | None] = {}

        async def one(key: str) -> None:
            async with semaphore:
                tagged = await self.store.read_tagged(claim_path(key), limit=MAX_CLAIM_BYTES)
                found[key] = None if tagged is None else _parse(tagged)

        async def in_bucket(bucket: str, keys: list[str]) -> None:
            older = await self._per_group_claims(bucket)
            legacy = [k for k in keys if claim_path(k).rpartition("/")[2] in older]
            rest = [k for k in keys if claim_path(k).rpartition("/")[2] not in older]
            await asyncio.gather(*(one(k) for k in legacy))
            if not rest:
                return
            held = (await self._read_ledger(bucket)).holders()
            for key in rest:
                holder = held.get(key.partition("/")[2])
                found[key] = (
                    None if holder is None else holder[0].claim(bucket, key.partition("/")[2])
                )

        await asyncio.gather(*(in_bucket(b, k) for b, k in by_bucket.items()))
        return {k: found.get(k) for k in group_keys}

    async def _per_group_claims(self, bucket: str) -> set[str]:
        """The names of the per-group claim objects older versions wrote in ``bucket``."""
        try:
            listing = await self.store.list(claims_folder(bucket))
        except FileNotFoundError:
            return set()
        names = (state.path.rpartition("/")[2] for state in listing.files)
        return {name for name in names if _PER_GROUP_NAME.fullmatch(name)}

    async def _read_ledger(self, bucket: str) -> Ledger:
        """The bucket's ledger; raises an :class:`ArchiveError` naming it when it cannot be
        read or is not one this version can read whole (never replaced then)."""
        path = ledger_path(bucket)
        found = await self.store.read_tagged(path, limit=MAX_LEDGER_BYTES)
        if found is None:
            return Ledger(bucket, None)
        problem = None
        batches: list[Batch] = []
        if not found.whole:
            problem = f"it is larger than a claims ledger can be ({MAX_LEDGER_BYTES} bytes)"
        else:
            try:
                raw = json.loads(found.data)
                version = raw["version"]
                if not isinstance(version, int) or version > LEDGER_VERSION:
                    problem = f"it is of a newer format (version {version!r})"
                else:
                    batches = [Batch.from_json(b) for b in raw["batches"]]
            except (ValueError, KeyError, TypeError, OverflowError) as error:
                problem = f"it is damaged ({type(error).__name__}: {error})"
        if problem is not None:
            raise ArchiveError(
                f"{problem}; it is neither trusted nor replaced.",
                path=path,
                fix="if no restore is in flight from any host, delete it (its claims are "
                "lost, nothing else); if it is of a newer format, upgrade archivefs.",
            )
        version_age = self._age(path, found)
        now = time.monotonic()
        aged = []
        for batch in batches:
            local = now - self._batch_seen.setdefault(batch.batch_id, now)
            aged.append((batch, max(batch.age + version_age, local)))
        return Ledger(bucket, found.etag, aged)

    async def _claim_batch(
        self,
        bucket: str,
        groups: Sequence[PlannedGroup],
        mine: Batch,
        outcome: ClaimOutcome,
        semaphore: asyncio.Semaphore,
        first: asyncio.Future[Ledger] | None = None,
    ) -> None:
        """Claim ``groups`` (of ``bucket``) in its ledger with one conditional write of
        ``mine``; after a lost race, read the new version and write again. ``first``: a
        read of the ledger already under way, for the first round."""
        path = ledger_path(bucket)
        wanted = [g.key.partition("/")[2] for g in groups]
        full = {g.key.partition("/")[2]: g.key for g in groups}
        # HEADs of groups whose claim lapsed, per (group, the batch that held it): a group
        # whose holder changed since (a take-over by another host) is looked at again
        archived: dict[tuple[str, str], bool] = {}
        previous: _Round | None = None  # the round whose write's answer said it did not land
        failure: ArchiveError | None = None

        def settle(decided: _Round, *, failed: ArchiveError | None = None) -> None:
            won = [*decided.take, *decided.mine] if failed is None else decided.mine
            for key in [*decided.take, *decided.mine]:
                self.lease_ends.pop(full[key], None)
            outcome.won.extend(full[k] for k in won)
            if failed is not None:
                for key in decided.take:
                    outcome.failed[full[key]] = unwritable_claim(full[key], path, failed)
            outcome.lost.extend(full[k] for k in decided.lost)

        for attempt in range(LEDGER_ROUNDS):
            if previous is not None and failure is None:  # lost a race: let the winner pass
                pause = min(LEDGER_MAX_BACKOFF_S, LEDGER_BACKOFF_S * 2 ** min(attempt, 16))
                await asyncio.sleep(random.uniform(0, pause))
            reading, first = first, None  # a read already under way serves one round only
            try:
                ledger = await (reading if reading is not None else self._read_ledger(bucket))
            except ArchiveError as error:
                if previous is not None and failure is not None:
                    settle(previous, failed=failure)
                    return
                for key in wanted:
                    self.lease_ends.pop(full[key], None)
                    outcome.failed[full[key]] = unreadable_claim(full[key], path, error)
                return
            if previous is not None and ledger.find(mine.batch_id) is not None:
                settle(previous)  # it landed: the answer, or a retry's condition, said not
                return
            if failure is not None:
                assert previous is not None
                settle(previous, failed=failure)  # it did not land: nothing sent for them
                return
            decided = await self._decide(ledger, wanted, full, archived, semaphore)
            if bucket in self._unwritable or not decided.take:
                settle(decided)  # nothing to write (or writable): theirs are respected
                return
            body = ledger.written(replace(mine, keys=tuple(decided.take)), decided.taken)
            try:
                if ledger.etag is None:
                    landed = await self.store.create_exclusive(path, body)
                else:
                    landed = await self.store.replace_if_unchanged(path, body, ledger.etag)
            except PermissionError as error:
                self._cannot_write(bucket, full[wanted[0]], error)
                settle(decided)  # free or lapsed: sent, as where claims cannot be written
                return
            except ArchiveError as error:
                landed, failure = False, error
            if landed:
                settle(decided)
                return
            previous = decided  # lost a race, or no answer: read again, merge, write again
        busy = StoreUnavailableError(
            f"its claims ledger changed under each of {LEDGER_ROUNDS} writes in a row.",
            path=path,
        )
        for key in wanted:
            outcome.failed[full[key]] = unwritable_claim(full[key], path, busy)

    async def _decide(
        self,
        ledger: Ledger,
        wanted: Sequence[str],
        full: dict[str, str],
        archived: dict[tuple[str, str], bool],
        semaphore: asyncio.Semaphore,
    ) -> _Round:
        """Which of ``wanted`` this caller takes, already holds or leaves to another host,
        by ``ledger``; a lapsed claim is taken over only if its group is still archived."""
        held = ledger.holders()
        decided = _Round()
        lapsed: list[tuple[str, str]] = []  # (group, the batch holding it)
        dead: set[str] = set()  # batches whose lease is not over but whose claimer died
        for key in wanted:
            holder = held.get(key)
            if holder is None:
                decided.take.append(key)
                continue
            batch, age = holder
            if batch.claim_id == self.claimer_id:
                decided.mine.append(key)
                continue
            left = min(self.lease_seconds, batch.lease_s) - age
            if left <= 0:
                lapsed.append((key, batch.batch_id))
            elif _claimer_gone(batch.requester):
                dead.add(batch.batch_id)
                lapsed.append((key, batch.batch_id))
            else:
                self.lease_ends[full[key]] = time.monotonic() + left
                decided.lost.append(key)  # its claimer may be sending right now

        async def head(held_by: tuple[str, str]) -> None:
            async with semaphore:
                try:
                    state = await self.store.head(full[held_by[0]])
                except ArchiveError:
                    archived[held_by] = False  # cannot tell: leave it to its claimer
                else:
                    archived[held_by] = state.restore is RestoreState.ARCHIVED

        await self._let_land(dead)
        await asyncio.gather(*(head(h) for h in lapsed if h not in archived))
        for held_by in lapsed:
            key = held_by[0]
            if archived[held_by]:
                decided.take.append(key)
                decided.taken.add(key)
            else:
                decided.lost.append(key)
        return decided

    def _cannot_write(self, bucket: str, group_key: str, error: BaseException) -> None:
        """Note (and say once per bucket) that claims cannot be written in ``bucket``."""
        if bucket in self._unwritable:
            return
        self._unwritable.add(bucket)
        logger.warning(
            "%s: cannot write restore claims under %s/%s/claims/ (%s); reading "
            "the claims of other hosts but writing none: hosts that share no "
            "journal and find no claim may each send this bucket's restores.",
            group_key,
            bucket,
            RESERVED,
            type(error).__name__,
        )

    async def _claim_one(self, group: PlannedGroup, claim: Claim) -> bool:
        """Whether this caller won ``group``'s per-group claim (of an older version);
        raises (an :class:`ArchiveError` naming the claim object) when it can be neither
        written nor read."""
        bucket = group.key.partition("/")[0]
        path = claim_path(group.key)
        found = await self._read_tagged(group.key, path)
        if bucket in self._unwritable:  # no claim of ours can be written: respect theirs
            return found is None or await self._stale(group, path, found)
        try:
            if found is None:  # released meanwhile: claim it there, as its claimer did
                return await self._write(group.key, path, claim, None)
            existing = _parse(found)
            if existing is not None and existing.claim_id == self.claimer_id:
                return True  # ours: an earlier call that did not send it, or a lost answer
            if not await self._stale(group, path, found):
                return False
            return await self._write(group.key, path, claim, found.etag)
        except PermissionError as error:
            self._cannot_write(bucket, group.key, error)
            return found is None or await self._stale(group, path, found)

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
        if left > 0 and existing is not None:
            await self._let_land([existing.claim_id or existing.requester])
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


async def _discard(read: asyncio.Future[Ledger]) -> None:
    """Drop a read of the ledger no longer needed (its outcome, error included, unused)."""
    read.cancel()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await read


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
