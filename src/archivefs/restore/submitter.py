"""The batch submitter: one restore request per group, all at once, each paid once.

Every group is *claimed* in the journal before its request is sent, and its
outcome recorded after, so threads, processes and Dask workers sharing a
journal never send the same restore twice, and a crashed run knows exactly
which requests might have gone out. ``RestoreAlreadyInProgress`` counts as
success; permanent errors are reported per group without stopping the rest.

Retries are layered once: the client's own (botocore's standard mode, see
``stores/s3.py``; tenacity in ``stores/retry.py`` for Azure and Oracle) retries each
request, each after its own back-off, so a batch is never serialised behind one
throttled request; the submitter never sends a request
again. What it adds is shared by the requests in flight to one bucket (S3 throttles
per bucket prefix): a bucket that still throttles after the client's retries pauses
all further sends to it (a pause that grows while throttling lasts and ends with
the first success), and after ``give_up_after`` groups of it in a row fail that
way, the rest of it are not sent at all (reported as failed, nothing paid; the same
call run later sends them). Other buckets of the batch go on.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError, StoreUnavailableError
from archivefs.model import Action, RestoreState
from archivefs.restore.journal import Outcome, OutcomeRecord
from archivefs.restore.journal_states import RecordState
from archivefs.stores.base import RestoreOutcome

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from archivefs.model import PlannedGroup, RestoreTier
    from archivefs.restore.claims import BucketClaims
    from archivefs.restore.journal import Journal
    from archivefs.stores.base import ColdStore

logger = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 64  # S3 sustains thousands of requests/s per prefix; stay polite

# Records that say a restored copy exists or a request is in flight.
_LIVE_RECORD = frozenset({RecordState.RESTORED, RecordState.ACCEPTED, RecordState.IN_PROGRESS})

_JOURNAL_OUTCOME = {
    RestoreOutcome.ACCEPTED: Outcome.ACCEPTED,
    RestoreOutcome.IN_PROGRESS: Outcome.IN_PROGRESS,
    RestoreOutcome.RESTORED: Outcome.RESTORED,
}


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """What the submitter does when the store keeps throttling after the client's retries."""

    give_up_after: int = 3  # consecutive throttled groups before the rest are not sent
    rounds: int = 2  # tries of one group (each: the client's attempts) while not given up
    pause: float = 1.0  # first shared pause after a throttled group (seconds)
    max_pause: float = 30.0


class _Throttle:
    """One state for the requests in flight to one bucket: pause after throttling, give
    up when it persists.

    A throttled group tries again only once every request sent before its failure
    has answered (:meth:`settle`): their failures count towards giving up first, so
    how many requests a persistently throttling store receives does not depend on
    which answer arrives first.
    """

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.failures = 0
        self.resume_at = 0.0
        self._issued = 0  # tickets handed out: one per request sent
        self._in_flight: list[int] = []  # a heap of tickets, answered ones removed lazily
        self._answered: set[int] = set()
        self._changed = asyncio.Condition()

    def sending(self) -> int:
        """A ticket for a request about to be sent."""
        ticket = self._issued
        self._issued += 1
        heapq.heappush(self._in_flight, ticket)
        return ticket

    async def answered(self, ticket: int) -> None:
        """The request of ``ticket`` has its answer."""
        self._answered.add(ticket)
        while self._in_flight and self._in_flight[0] in self._answered:
            self._answered.discard(heapq.heappop(self._in_flight))
        async with self._changed:
            self._changed.notify_all()

    async def settle(self) -> None:
        """Wait until every request sent so far has answered."""
        horizon = self._issued
        async with self._changed:
            await self._changed.wait_for(
                lambda: not self._in_flight or self._in_flight[0] >= horizon
            )

    @property
    def paused(self) -> bool:
        return time.monotonic() < self.resume_at

    @property
    def given_up(self) -> bool:
        return self.failures >= self.policy.give_up_after

    async def wait(self) -> None:
        delay = self.resume_at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    def throttled(self) -> None:
        self.failures += 1
        pause = min(self.policy.max_pause, self.policy.pause * 2 ** (self.failures - 1))
        self.resume_at = max(self.resume_at, time.monotonic() + pause)

    def succeeded(self) -> None:
        self.failures = 0
        self.resume_at = 0.0


@dataclass
class SubmitReport:
    """What one submission did."""

    sent: dict[str, RestoreOutcome] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # claimed or done by someone else
    failed: dict[str, ArchiveError] = field(default_factory=dict)
    not_sent: list[str] = field(default_factory=list)  # failed without a request (gave up)

    @property
    def requests_sent(self) -> int:
        return len(self.sent) + len(self.failed) - len(self.not_sent)


class Submitter:
    """Sends restore requests for planned groups with bounded concurrency."""

    def __init__(
        self,
        store: ColdStore,
        journal: Journal | None,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetryPolicy | None = None,
        request_extra: dict[str, Any] | None = None,
        claims: BucketClaims | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.store = store
        self.journal = journal
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.request_extra = dict(request_extra or {})
        self.claims = claims

    async def submit(
        self,
        groups: Sequence[PlannedGroup],
        *,
        tier: RestoreTier,
        days: int | None,
        on_sent: Callable[[str, RestoreOutcome], None] | None = None,
        expected_ready: Callable[[PlannedGroup], datetime] | None = None,
    ) -> SubmitReport:
        """Claim and send one restore per group; return what happened to each."""
        report = SubmitReport()
        by_key = {g.key: g for g in groups}
        if self.journal is not None:
            await self._reconcile(groups)
            claimed = await asyncio.to_thread(self._claim, groups, tier, days)
        else:
            claimed = list(by_key)
        if self.claims is not None:
            try:
                claimed = await self._claim_in_bucket(
                    [by_key[k] for k in claimed], tier, days, expected_ready, report
                )
            except BaseException:  # nothing was sent: give every journal claim back
                if self.journal is not None:
                    await asyncio.to_thread(self.journal.release, claimed)
                raise
        claimed_set = set(claimed)
        report.skipped = [k for k in by_key if k not in claimed_set and k not in report.failed]
        # A store that coalesces restore calls into batches (Azure's Blob Batch: 256 per
        # request) declares restore_batch_size; keep enough calls in flight to fill its
        # batches, so ``concurrency`` still bounds the requests in flight.
        batch = max(1, int(getattr(self.store, "restore_batch_size", 1)))
        semaphore = asyncio.Semaphore(self.concurrency * batch)
        throttles: dict[str, _Throttle] = {}  # by bucket
        commit = _GroupCommit(self.journal) if self.journal is not None else None

        async def record(key: str, outcome: Outcome, **kwargs: Any) -> None:
            """Record one outcome; returns once it is on disk (written with others in flight)."""
            if commit is not None:
                await commit.record(OutcomeRecord(key, outcome, **kwargs))

        async def one(key: str) -> None:
            outcome, error, sent = await send(key)
            if outcome is None:
                assert error is not None
                report.failed[key] = error
                if not sent:
                    report.not_sent.append(key)
                await record(key, Outcome.FAILED, error=str(error))
                return
            report.sent[key] = outcome
            expected = None
            if outcome is not RestoreOutcome.RESTORED and expected_ready is not None:
                expected = expected_ready(by_key[key])
            await record(key, _JOURNAL_OUTCOME[outcome], expected_ready_at=expected)
            if on_sent is not None:
                on_sent(key, outcome)

        async def send(key: str) -> tuple[RestoreOutcome | None, ArchiveError | None, bool]:
            """The request for ``key`` (within the concurrency bound): outcome, error, sent?

            A group waits out its bucket's pause without holding a place in the bound,
            so a throttled bucket does not hold back the others."""
            group = by_key[key]
            bucket = key.split("/", 1)[0]
            throttle = throttles.get(bucket)
            if throttle is None:
                throttle = throttles[bucket] = _Throttle(self.retry)
            tried = 0  # rounds whose request was sent
            last: ArchiveError | None = None
            while tried < self.retry.rounds:
                await throttle.wait()
                if throttle.given_up:
                    break
                async with semaphore:
                    if throttle.paused or throttle.given_up:
                        continue  # throttled while this one waited for its place
                    tried += 1
                    ticket = throttle.sending()
                    try:
                        outcome = await self._send(group, tier=tier, days=days)
                    except StoreUnavailableError as error:
                        throttle.throttled()  # pauses the bucket's sends; maybe another round
                        last = error
                    except ArchiveError as error:
                        return None, error, True
                    else:
                        throttle.succeeded()
                        return outcome, None, True
                    finally:
                        await throttle.answered(ticket)
                await throttle.settle()  # what the others in flight meet counts too
            if last is None:  # given up before this group's first request
                last = StoreUnavailableError(
                    f"not sent: the store kept throttling ({throttle.failures} restore "
                    f"requests to {bucket} in a row failed after the client's retries).",
                    path=key,
                    fix="run the same restore again later; only what was not accepted "
                    "is sent, and nothing was paid for this one.",
                )
            return None, last, tried > 0

        await asyncio.gather(*(one(k) for k in claimed))
        return report

    async def _reconcile(self, groups: Sequence[PlannedGroup]) -> None:
        """Settle disagreements between the plan's probe and the journal before claiming.

        A plan may be older than the journal (another job's restore completed after
        the probe), or the journal older than the store (a restored copy expired while
        the job was down). Groups the plan wants restored whose record says restored or
        in flight are probed again, once, in bulk: the fresh state decides. Readable or
        restoring: nothing is sent (the record is brought up to date). Archived: the
        record is marked expired, so exactly one claimer requests it again.
        """
        assert self.journal is not None
        journal = self.journal
        archived = [g.key for g in groups if g.action is Action.RESTORE]
        if not archived:
            return
        records = await asyncio.to_thread(journal.records, archived)
        disputed = {r.key: r for r in records if r.state in _LIVE_RECORD}
        if not disputed:
            return
        fresh = await self.store.probe(sorted(disputed))
        for key, state in fresh.items():
            record = disputed[key]
            if state is None:
                continue  # gone: the request itself will say so
            if state.readable:
                await asyncio.to_thread(journal.record_restored, key, expiry=state.restore_expiry)
            elif state.restore is not RestoreState.RESTORING:
                logger.warning(
                    "%s: the journal says %s (%s), but the store says archived again: its "
                    "restored copy expired or the request was lost; requesting it again.",
                    key,
                    record.state.value,
                    record.updated_at.isoformat(timespec="seconds"),
                )
                await asyncio.to_thread(journal.record_expired, key)

    def _claim(
        self, groups: Sequence[PlannedGroup], tier: RestoreTier, days: int | None
    ) -> list[str]:
        """Claim in the journal; groups planned for renewal claim their unexpired copies too,
        and groups planned for a speed upgrade their requests in flight at a slower tier."""
        assert self.journal is not None
        expiries = [
            g.state.restore_expiry
            for g in groups
            if g.action is Action.RENEW and g.state.restore_expiry is not None
        ]
        renew_before = max(expiries) + timedelta(seconds=1) if expiries else None
        return self.journal.claim(
            [g.key for g in groups],
            tier=tier.value,  # the journal records the name
            days=days,
            renew_before=renew_before,
            upgrade=[g.key for g in groups if g.action is Action.UPGRADE],
        )

    async def _claim_in_bucket(
        self,
        groups: Sequence[PlannedGroup],
        tier: RestoreTier,
        days: int | None,
        expected_ready: Callable[[PlannedGroup], datetime] | None,
        report: SubmitReport,
    ) -> list[str]:
        """Keep the groups whose claim in the bucket this caller wins; give back the rest.

        Groups another host holds are given back to the journal (skipped); groups whose
        claim could be neither written nor read are given back too and reported failed,
        not sent (the same call later claims them again). Only fresh restores are claimed
        in the bucket; renewals and speed upgrades are deliberate repeats and rely on the
        journal.
        """
        assert self.claims is not None
        fresh = [g for g in groups if g.action is Action.RESTORE]
        if not fresh:
            return [g.key for g in groups]
        outcome = await self.claims.claim(
            fresh, tier=tier.value, days=days, expected_ready=expected_ready
        )
        released = [*outcome.lost, *outcome.failed]
        if released and self.journal is not None:
            await asyncio.to_thread(self.journal.release, released)
        for key, error in outcome.failed.items():
            report.failed[key] = error
            report.not_sent.append(key)
        taken = set(released)
        return [g.key for g in groups if g.key not in taken]

    async def _send(
        self, group: PlannedGroup, *, tier: RestoreTier, days: int | None
    ) -> RestoreOutcome:
        """One request; the client retries it (botocore), nothing here sends it again."""
        return await self.store.restore(group.state, tier=tier, days=days, extra=self.request_extra)


class _GroupCommit:
    """Outcomes recorded while one journal write is under way go to disk together in the next.

    Each caller of :meth:`record` returns only once its outcome is committed
    (or gets the journal's error), exactly as with one write per outcome; with
    many requests in flight, one transaction then carries a whole wave of them.
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.pending: list[tuple[OutcomeRecord, asyncio.Future[None]]] = []
        self.writer: asyncio.Task[None] | None = None
        self.transactions = 0  # journal writes so far (observability, tests)

    async def record(self, outcome: OutcomeRecord) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append((outcome, done))
        if self.writer is None or self.writer.done():
            self.writer = asyncio.ensure_future(self._drain())
        await done

    async def _drain(self) -> None:
        while self.pending:
            batch, self.pending = self.pending, []
            try:
                await asyncio.to_thread(self.journal.record_outcomes, [o for o, _ in batch])
            except BaseException as error:
                for _, done in batch:
                    if not done.done():
                        done.set_exception(error)
                if not isinstance(error, Exception):
                    raise
            else:
                self.transactions += 1
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)
