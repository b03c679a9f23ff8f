"""The restore engine: plan, approve, submit all at once, yield groups as they return.

This is the one object the filesystem, the dataset helpers and the CLI drive.
It owns no policy about *when* to restore (that is the caller's), only *how*:
probe in bulk, make a pure plan, let hooks see or veto it, claim and send one
request per group, and poll the batch on a tier-aware schedule.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from archivefs.errors import (
    ObjectNotFoundError,
    RestoreFailedError,
    RestoresNotImplementedError,
    RestoreTimeoutError,
)
from archivefs.model import Action, PlannedGroup, RestoreTier, check_restore_request
from archivefs.plans import Plan
from archivefs.restore.planner import (
    PathInGroup,
    PathsInGroup,
    make_plan,
    plan_objects,
)
from archivefs.restore.poller import Poller, timed_out
from archivefs.restore.schedule import PollSchedule
from archivefs.restore.submitter import DEFAULT_CONCURRENCY, RetryPolicy, SubmitReport, Submitter

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
    from datetime import datetime
    from typing import Any

    from archivefs.model import ObjectState
    from archivefs.restore.claims import BucketClaims
    from archivefs.restore.journal import Journal
    from archivefs.restore.notify import NotificationSource
    from archivefs.stores.base import ColdStore

Approver = Callable[[Plan], None]
"""Sees a plan before any paid request; raises (e.g. BudgetExceededError) to refuse it."""


@dataclass
class RestoreProgress:
    """Where a batch restore stands: groups and bytes ready, requests sent, ETA."""

    groups: int
    bytes_total: int
    requests_sent: int
    started: float
    ready: int = 0
    bytes_ready: int = 0
    restoring: int = 0
    elapsed_s: float = 0.0
    expected_s: tuple[float, float] | None = None  # window of this run's restores (scaled)
    next_check_at: float | None = None  # time.monotonic() of the next status check

    @property
    def next_check_in(self) -> float | None:
        """Seconds until the next status check (``None`` when none is planned)."""
        if self.next_check_at is None or self.done:
            return None
        return max(0.0, self.next_check_at - time.monotonic())

    @classmethod
    def start(cls, plan: Plan, requests_sent: int, started: float) -> RestoreProgress:
        return cls(
            groups=len(plan),
            bytes_total=sum(g.size for g in plan.groups),
            requests_sent=requests_sent,
            started=started,
            restoring=len(plan.to_restore) + len(plan.with_action(Action.WAIT)),  # incl. upgrades
        )

    def tick(self) -> RestoreProgress:
        self.elapsed_s = time.monotonic() - self.started
        return self

    @property
    def done(self) -> bool:
        return self.ready >= self.groups


@dataclass
class RestoreResult:
    """What :meth:`RestoreEngine.restore` did."""

    plan: Plan
    submitted: SubmitReport
    ready: list[str] = field(default_factory=list)
    # what prefetch(to=DIR) wrote there (an archivefs.access.copies.CopyReport), else None
    copied: Any = None

    @property
    def requests_sent(self) -> int:
        return self.submitted.requests_sent


class RestoreEngine:
    """Plans, submits and awaits restores against one cold store.

    Parameters
    ----------
    store:
        The cold store adapter.
    journal:
        Shared record of requests (dedup across threads/processes, resume after crashes).
    approve:
        Called with every plan before any paid request (estimates, budgets, vetoes).
    time_scale:
        Multiplies the expected restore times the poll schedule uses (tests, emulators).
    schedule:
        A fixed poll schedule instead of the tier-aware default.
    claims:
        Claims in the bucket, so that hosts sharing no journal pay each restore once.
    """

    def __init__(
        self,
        store: ColdStore,
        *,
        journal: Journal | None = None,
        approve: Approver | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetryPolicy | None = None,
        time_scale: float = 1.0,
        schedule: PollSchedule | None = None,
        notifications: NotificationSource | None = None,
        request_extra: dict[str, Any] | None = None,
        claims: BucketClaims | None = None,
    ) -> None:
        self.store = store
        self.journal = journal
        self.approve = approve
        self.time_scale = time_scale
        self.schedule = schedule
        self.notifications = notifications
        self.poll_rounds = 0  # bulk status probes made while waiting, over this engine's life
        self.submitter = Submitter(
            store,
            journal,
            concurrency=concurrency,
            retry=retry,
            request_extra=request_extra,
            claims=claims,
        )

    # -- planning ----------------------------------------------------------------------

    async def plan(
        self,
        paths: Iterable[str],
        *,
        tier: RestoreTier = RestoreTier.STANDARD,
        days: int = 1,
        needed_until: datetime | None = None,
        known: Mapping[str, ObjectState | None] | None = None,
    ) -> Plan:
        """Probe the states of ``paths`` in bulk (unless ``known``) and plan."""
        wanted = list(dict.fromkeys(paths))
        states: dict[str, ObjectState | None] = dict(known or {})
        unknown = [p for p in wanted if p not in states]
        if unknown:
            states.update(await self.store.probe(unknown))
        states = {p: states.get(p) for p in wanted}
        return self.plan_known(states, tier=tier, days=days, needed_until=needed_until)

    def plan_known(
        self,
        states: Mapping[str, ObjectState | None],
        *,
        tier: RestoreTier = RestoreTier.STANDARD,
        days: int = 1,
        needed_until: datetime | None = None,
        placements: Iterable[PathInGroup | PathsInGroup] | None = None,
        missing: Iterable[str] = (),
        upgrade: bool = False,
    ) -> Plan:
        """Plan from states already known (pure, no requests).

        ``tier`` is parsed already, in the store's provider's names (where it entered:
        the filesystem's constructor or method argument); the engine parses nothing.

        Without ``placements`` every state is its own group, read whole; ``upgrade``
        requests ``tier`` for groups already restoring (a faster tier speeds them up).
        """
        if placements is None:  # every state its own group: straight into columns
            return plan_objects(
                states,
                tier=tier,
                days=days,
                needed_until=needed_until,
                upgrade=upgrade,
            )
        return make_plan(
            placements,
            states,
            tier=tier,
            days=days,
            needed_until=needed_until,
            missing=missing,
            upgrade=upgrade,
        )

    def plan_batches(
        self,
        batches: Iterable[Mapping[str, ObjectState | None]],
        *,
        tier: RestoreTier = RestoreTier.STANDARD,
        days: int = 1,
        needed_until: datetime | None = None,
        upgrade: bool = False,
    ) -> Iterator[Plan]:
        """Plan a selection too large for memory a batch of known states at a time (e.g. a
        listing page by page): one plan per batch, made as the caller asks for it.

        Price them together with :func:`archivefs.pricing.estimate_batches` and send
        them with :meth:`submit_batches`; the estimate and the requests are those of one
        plan of everything.
        """
        for states in batches:
            yield self.plan_known(
                states, tier=tier, days=days, needed_until=needed_until, upgrade=upgrade
            )

    # -- submitting and waiting ----------------------------------------------------------

    async def submit_batches(self, plans: Iterable[Plan]) -> SubmitReport:
        """:meth:`submit` plan after plan (one in memory at a time); one report for all.

        Each plan passes the approval hook on its own (check the whole selection's
        estimate first, with :func:`archivefs.pricing.estimate_batches`).
        """
        total = SubmitReport()
        for plan in plans:
            report = await self.submit(plan)
            total.sent.update(report.sent)
            total.skipped += report.skipped
            total.failed.update(report.failed)
            total.not_sent += report.not_sent
        return total

    async def submit(self, plan: Plan) -> SubmitReport:
        """Approve the plan, then send one restore request per group that needs one."""
        if plan.missing:
            first = plan.missing[0]
            raise ObjectNotFoundError(
                f"{len(plan.missing)} requested object(s) do not exist "
                f"(first: {first}); nothing was restored.",
                path=first,
                fix="check the paths (fs.ls() shows what exists) and leave out missing ones.",
            )
        for group in plan.to_restore:  # the provider's rules, before anything is claimed or paid
            state = group.state
            check_restore_request(
                state.storage_class,
                plan.tier,
                plan.days,
                archive_access=state.archive_access,
                path=state.path,
                pending_tier=state.pending_tier,
                pending_target=state.pending_target,
            )
        if self.approve is not None:
            self.approve(plan)
        return await self.submitter.submit(
            plan.to_restore,
            tier=plan.tier,
            days=plan.days,
            expected_ready=self.expected_ready(plan.tier),
        )

    def schedule_for(self, tier: RestoreTier) -> Callable[[ObjectState], PollSchedule]:
        def pick(state: ObjectState) -> PollSchedule:
            if self.schedule is not None:
                return self.schedule
            return PollSchedule.for_restore(
                state.storage_class,
                tier,
                archive_access=state.archive_access,
                time_scale=self.time_scale,
            )

        return pick

    def _window(self, plan: Plan) -> tuple[float, float] | None:
        """When this plan's pending restores are expected back (seconds, time scale applied)."""
        pick = self.schedule_for(plan.tier)
        schedules = [
            pick(g.state)
            for g in plan.with_action(Action.RESTORE, Action.RENEW, Action.WAIT)
            if g.state.storage_class.needs_restore or g.state.archive_access is not None
        ]
        if not schedules:
            return None
        return (
            min(s.expected_min_s for s in schedules),
            max(s.expected_max_s for s in schedules),
        )

    def expected_ready(self, tier: RestoreTier) -> Callable[[PlannedGroup], datetime]:
        """When a group restored at ``tier`` from now is expected back: the end of its
        class's window at that tier (time scale applied)."""
        from datetime import UTC, datetime, timedelta

        pick = self.schedule_for(tier)

        def ready(group: PlannedGroup) -> datetime:
            schedule = pick(group.state)
            return datetime.now(UTC) + timedelta(seconds=schedule.expected_max_s)

        return ready

    async def as_ready(
        self,
        plan: Plan,
        *,
        timeout: float | None = None,
        on_round: Callable[[dict[str, ObjectState]], None] | None = None,
        on_wait: Callable[[float], None] | None = None,
        started: float | None = None,
    ) -> AsyncIterator[PlannedGroup]:
        """Yield each planned group the moment its object reads (readable ones first).

        ``on_wait`` hears how many seconds the poller will wait before its next check.
        ``started``: when the restores were sent (``time.monotonic()``; default: now),
        which the tier-aware schedule counts from.
        """

        def counted(states: dict[str, ObjectState]) -> None:
            self.poll_rounds += 1
            if on_round is not None:
                on_round(states)

        claims = self.submitter.claims
        poller = Poller(
            self.store,
            self.schedule_for(plan.tier),
            journal=self.journal,
            notifications=self.notifications,
            on_round=counted,
            on_wait=on_wait,
            revival=None if claims is None else _TakeOver(self, plan, claims),
        )
        states = [g.state for g in plan.groups]
        # Groups just submitted are restoring now, whatever the probe said before.
        async for state in poller.as_ready(
            [_pending(g) for g in plan.groups] if states else [], timeout=timeout, started=started
        ):
            yield plan.group(state.path)

    async def restore(
        self,
        plan: Plan,
        *,
        wait: bool = False,
        timeout: float | None = None,
        raise_on_failure: bool = True,
        on_progress: Callable[[RestoreProgress], None] | None = None,
    ) -> RestoreResult:
        """Submit the plan; with ``wait``, return once every group reads.

        ``on_progress`` is called after submission, after every poll round and
        whenever a group becomes readable.
        """
        started = time.monotonic()
        report = await self.submit(plan)
        if report.failed and raise_on_failure:
            for error in report.failed.values():
                if isinstance(error, RestoresNotImplementedError):
                    raise error  # the server has no restores at all (501): one clear answer
            raise _failed(report)
        result = RestoreResult(plan=plan, submitted=report)
        progress = RestoreProgress.start(plan, report.requests_sent, started)
        progress.expected_s = self._window(plan)
        if on_progress is not None:
            on_progress(progress)
        if wait:
            remaining = (
                None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
            )

            def round_done(states: dict[str, ObjectState]) -> None:
                progress.restoring = sum(1 for s in states.values() if not s.readable)
                if on_progress is not None:
                    on_progress(progress.tick())

            def waiting(delay: float) -> None:
                progress.next_check_at = time.monotonic() + delay
                if on_progress is not None:
                    on_progress(progress.tick())

            try:
                async for group in self.as_ready(
                    plan, timeout=remaining, on_round=round_done, on_wait=waiting
                ):
                    result.ready.append(group.key)
                    progress.ready += 1
                    progress.bytes_ready += group.size
                    if on_progress is not None:
                        on_progress(progress.tick())
            except RestoreTimeoutError as error:
                raise self._timed_out(error, report, timeout) from error
        return result

    def _timed_out(
        self, error: RestoreTimeoutError, report: SubmitReport, timeout: float | None
    ) -> RestoreTimeoutError:
        """The timeout (after the caller's ``timeout``, submission included), saying for
        the groups not ready what was and was not sent, and by whom: this call's requests,
        restores already in flight, claims another caller holds, requests that failed
        (from the submission's report and the journal)."""
        pending = error.pending
        if not pending:
            return error
        failed = [k for k in pending if k in report.failed]
        skipped = set(report.skipped)
        claimed_elsewhere: set[str] = set()
        if self.journal is not None and skipped:
            from archivefs.restore.journal_states import RecordState

            records = self.journal.records([k for k in pending if k in skipped])
            claimed_elsewhere = {r.key for r in records if r.state is RecordState.CLAIMED}
            if self.submitter.claims is not None:  # skipped with no record: a bucket claim
                recorded = {r.key for r in records}
                claimed_elsewhere |= {k for k in pending if k in skipped and k not in recorded}
        elif self.submitter.claims is not None:
            claimed_elsewhere = {k for k in pending if k in skipped}
        sent = sum(1 for k in pending if k in report.sent)
        held = sum(1 for k in pending if k in claimed_elsewhere)
        running = len(pending) - sent - held - len(failed)  # in flight before this call
        said = [f"this call sent {sent} of their restore requests"]
        fixes = []
        if running:
            said.append(
                f"{running} were restoring already (requested earlier, or by another caller)"
            )
        if held:
            said.append(
                f"{held} are claimed by another caller that has not reported sending them, "
                "so nothing was sent for them here"
            )
            fixes.append(
                "the claimed ones are sent by their claimer; if it stopped, call again once "
                "its claim lapses (a few minutes) and this call sends them"
            )
        if failed:
            said.append(f"{len(failed)} were not sent: their requests failed")
            fixes.append("call again to send the failed ones (only what was not accepted is sent)")
        if sent or running:
            fixes.insert(
                0,
                f"the {sent + running} requested restore(s) keep running at the store: call "
                "again later (nothing is re-requested: the journal remembers them) or raise "
                "the timeout",
            )
        elif not fixes:
            fixes.append("call again: nothing was requested for them yet")
        return RestoreTimeoutError(
            f"{timed_out(list(pending), timeout).problem} Of these, {'; '.join(said)}.",
            path=error.path,
            fix="; ".join(fixes) + ".",
            pending=pending,
        )


class _TakeOver:
    """Groups of a plan that another host claimed, for a caller waiting on them.

    When the lease of such a claim ends (by the store's clock) and the group is still
    archived, its claimer died or failed before sending: the waiting caller submits the
    group again, which takes the claim over (a conditional replace, so one host wins)
    and sends its one restore. Each such group was in the plan the caller approved.
    """

    def __init__(self, engine: RestoreEngine, plan: Plan, claims: BucketClaims) -> None:
        self.engine = engine
        self.plan = plan
        self.claims = claims

    def due(self, keys: Iterable[str]) -> float | None:
        """The next lease end still ahead (one already past is looked at in every round
        that finds its group archived, at the schedule's pace)."""
        now = time.monotonic()
        ends = self.claims.lease_ends
        times = [ends[k] for k in keys if k in ends and ends[k] > now]
        return min(times) if times else None

    async def revive(self, states: Sequence[ObjectState]) -> None:
        from dataclasses import replace

        from archivefs.model import RestoreState

        now = time.monotonic()
        ends = self.claims.lease_ends
        due = [
            s
            for s in states
            if s.restore is RestoreState.ARCHIVED and s.path in ends and ends[s.path] <= now
        ]
        if not due:
            return
        groups = [replace(self.plan.group(s.path), action=Action.RESTORE, state=s) for s in due]
        report = await self.engine.submitter.submit(
            groups,
            tier=self.plan.tier,
            days=self.plan.days,
            expected_ready=self.engine.expected_ready(self.plan.tier),
        )
        if report.failed:
            raise _failed(report)


def _pending(group: PlannedGroup) -> ObjectState:
    from dataclasses import replace

    from archivefs.model import RestoreState

    if group.action in (Action.RESTORE, Action.RENEW, Action.WAIT, Action.UPGRADE):
        return replace(group.state, restore=RestoreState.RESTORING)
    return group.state


def _failed(report: SubmitReport) -> RestoreFailedError:
    failures = {k: str(e) for k, e in report.failed.items()}
    first = next(iter(failures))
    return RestoreFailedError(
        f"{len(failures)} restore request(s) failed; {len(report.sent)} succeeded. "
        f"First failure: {failures[first]}",
        path=first,
        fix="fix the cause shown and run the same restore again: requests that succeeded "
        "are not sent twice.",
        failures=failures,
    )
