"""Restoring: plan, approve, submit, wait; ``prefetch`` (optionally into a local directory)."""

from __future__ import annotations

import asyncio
import os
import queue
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsspec.asyn import sync

from archivefs.access import synced
from archivefs.access.approval import Approval
from archivefs.access.copies import LocalCopies, local_targets
from archivefs.access.parts import Parts
from archivefs.access.promote import Promotion
from archivefs.access.resolve import GLOB_CHARS, Resolver
from archivefs.model import ObjectState, RestoreState, RestoreTier, parse_days, raise_not_archived
from archivefs.plans import Plan
from archivefs.stores.s3 import restores_not_implemented

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from archivefs.access.settings import Settings
    from archivefs.model import PlannedGroup
    from archivefs.pricing import Estimate
    from archivefs.restore.claims import ClaimSummary
    from archivefs.restore.engine import RestoreEngine, RestoreProgress, RestoreResult
    from archivefs.restore.submitter import SubmitReport
    from archivefs.stores.base import ColdStore


class Restoring:
    """The restore API over the engine: ``plan``, ``estimate``, ``restore``, ``prefetch``."""

    def __init__(
        self,
        parts: Parts,
        resolver: Resolver,
        approval: Approval,
        promotion: Promotion,
        copies: LocalCopies,
    ) -> None:
        self.parts = parts
        self.resolver = resolver
        self.approval = approval
        self.promotion = promotion
        self.copies = copies

    async def approve_bulk_read(self, paths: Any) -> None:
        """Plan a bulk read (states from listings) and approve what it will pay for.

        Its fee-charging reads; and, when the read policy restores (``"wait"``,
        ``"restore"``), the restores the read will send, as one job, so a read of
        many archived objects is refused as a whole, as ``restore`` of them is.
        Only with a budget or an estimate hook: otherwise a bulk read sends no
        request beyond its reads.
        """
        if not self.parts.hooks.wants_estimate:
            return
        plan = await self.plan(paths)
        if self.parts.on_archived != "raise" and plan.to_restore:
            self.parts.hooks.approve(plan.replace(missing=()), self.approval.estimate_plan)
        else:
            self.approval.approve_reads(plan)

    async def estimate(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        **kwargs: Any,
    ) -> Estimate:
        """What restoring and reading ``paths`` once would cost. Sends no restore."""
        plan = await self.plan(paths, tier=tier, days=days)
        return self.approval.estimate_plan(plan, **kwargs)

    async def plan(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        needed_until: datetime | None = None,
        upgrade: bool = False,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> Plan:
        """What restoring ``paths`` involves: groups, states, actions. Sends no restore.

        The contract is documented on ``ArchiveFileSystem.plan``.
        """
        # parsed here, in the filesystem's provider's names, before any request
        chosen = RestoreTier.parse(tier, self.parts.provider.name) if tier else self.parts.tier
        resolved = await self.resolver.resolve(paths)
        plan = self.parts.engine.plan_known(
            resolved.groups,
            tier=chosen,
            days=self.parts.days if days is None else parse_days(days),
            needed_until=needed_until,
            # plain objects only: each is its own group, planned straight into columns
            placements=resolved.placements() if resolved.members else None,
            missing=resolved.missing,
            upgrade=upgrade,
        )
        return plan.replace(read_whole=read_whole) if read_whole else plan

    async def restore(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = False,
        timeout: float | None = None,
        promote: bool = False,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        upgrade: bool = False,
        on_missing: Callable[[Plan], None] | None = None,
    ) -> RestoreResult:
        """Restore every archived object in ``paths`` (paths, globs, directories) in one batch.

        One request per object that needs it, deduplicated through the journal;
        objects that are hot, restored or already restoring cost nothing. With
        ``wait=True``, returns once all of them read (or raises
        :class:`RestoreTimeoutError` after ``timeout`` seconds). With
        ``promote=True``, waits and then copies everything into the hot store
        so it outlives the restored copies' expiry. Paths that match nothing make it
        refuse before anything is sent, unless ``on_missing`` is given: it is called
        with the plan (``plan.missing`` names them) and the rest is restored.
        """
        plan = _leave_out_missing(
            await self.plan(paths, tier=tier, days=days, upgrade=upgrade), on_missing
        )
        if getattr(self.parts.store, "implements_restores", None) is False:
            for g in plan.groups:  # Ceph RGW: GLACIER is a placement that reads at once
                if g.state.storage_class.needs_restore:
                    raise restores_not_implemented(g.state)
        named_paths = _named_paths(paths, self.parts.strip)
        online = [
            g.state
            for g in plan.groups
            if g.key in named_paths
            and not g.state.storage_class.needs_restore
            and g.state.archive_access is None
        ]
        if online and self.parts.provider.targets and self.parts.engine.journal is not None:
            # Azure: a finished rehydration leaves the blob Hot, like one never archived;
            # the journal tells them apart, so running the same restore again is no error
            done = {r.key for r in self.parts.engine.journal.records([s.path for s in online])}
            online = [s for s in online if s.path not in done]
        for state in online:
            raise_not_archived(state.path, state.storage_class)
        result = await self.parts.engine.restore(
            plan, wait=wait or promote, timeout=timeout, on_progress=on_progress
        )
        for key in result.submitted.sent:
            self.parts.invalidate_cache(key)
        if promote:
            await self.promotion.promote([g.key for g in plan.groups])
        return result

    async def prefetch(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        to: str | os.PathLike[str] | None = None,
        on_missing: Callable[[Plan], None] | None = None,
        force: bool = False,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> RestoreResult:
        """Make everything ``paths`` read ready: restore what must be, approve the rest;
        with ``to``, wait and write each requested file below that directory.

        Unlike ``restore``, objects that already read at once are no error: they are
        part of the job. Restores and fee-charging reads are shown to the budget and
        estimate hooks together, once, before any request (docs/cost-model.md).
        With ``to``, objects whose files an earlier run wrote there, unchanged since on
        both sides, are left out before anything is priced or requested
        (:mod:`archivefs.access.synced`), unless ``force``.
        """
        planned = await self.plan(paths, tier=tier, days=days, read_whole=read_whole)
        plan = _leave_out_missing(planned, on_missing)
        directory = None if to is None else os.fspath(to).removeprefix("file://")
        ids: dict[str, str] = {}
        skipped: list[str] = []
        if directory is not None:
            # hostile keys: refused before anything is paid or written
            targets = local_targets(directory, plan.paths)
            ids = synced.identities(plan)
            if not force:
                plan, skipped = _leave_out_synced(plan, Path(directory), targets, ids)
        if not plan.to_restore:  # with restores, the engine approves the whole job at once
            self.approval.approve_reads(plan)
        result = await self.parts.engine.restore(
            plan, wait=wait or directory is not None, timeout=timeout, on_progress=on_progress
        )
        for key in result.submitted.sent:
            self.parts.invalidate_cache(key)
        if directory is not None:
            # plain objects as the plan's probe saw them: size and ETag (restores keep both)
            known = {g.key: g.state for g in plan.groups if g.paths == (g.key,) and g.state.etag}
            result.copied = await self.copies.to_directory(
                plan.paths, directory, known=known, ids=ids
            )
            result.copied.skipped = sorted(targets[path] for path in skipped)
        return result

    async def prefetch_to_hot_store(
        self,
        paths: str | list[str],
        tier: str | None,
        days: int | None,
        timeout: float | None,
        on_progress: Callable[[RestoreProgress], None] | None,
        on_missing: Callable[[Plan], None] | None,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> RestoreResult:
        """:meth:`prefetch` (waiting), then promote every group it made ready."""
        result = await self.prefetch(
            paths, tier, days, timeout=timeout, on_progress=on_progress, on_missing=on_missing,
            read_whole=read_whole,
        )  # fmt: skip
        await self.promotion.promote([g.key for g in result.plan.groups])
        return result

    async def submit(self, plan: Plan) -> SubmitReport:
        """Approve and send a plan's restore requests (no waiting)."""
        report = await self.parts.engine.submit(plan)
        for key in report.sent:
            self.parts.invalidate_cache(key)
        return report

    def as_ready(
        self,
        plan: Plan,
        timeout: float | None = None,
        *,
        on_round: Callable[[dict[str, ObjectState]], None] | None = None,
        started: float | None = None,
    ) -> Iterator[PlannedGroup]:
        """Yield each planned group as soon as it reads (blocking iterator).

        The contract is documented on ``ArchiveFileSystem.as_ready``.
        """
        ready: queue.Queue[PlannedGroup | BaseException | None] = queue.Queue()

        async def pump() -> None:
            try:
                polled = self.parts.engine.as_ready(
                    plan, timeout=timeout, on_round=on_round, started=started
                )
                async for group in polled:
                    self.parts.note_readable(group.state)
                    ready.put(group)
            except Exception as error:  # handed to the caller, raised there
                ready.put(error)
            ready.put(None)

        polling = asyncio.run_coroutine_threadsafe(pump(), self.parts.loop)
        try:
            while (item := ready.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            polling.cancel()  # the caller stopped early: stop polling

    def eta(self, plan: Plan) -> datetime | None:
        """When the plan's restores in flight are expected to be done, from the journal
        (None without a journal, with nothing restoring, or with no expected time)."""
        journal = self.parts.engine.journal
        restoring = _restoring_keys(plan)
        if journal is None or not restoring:
            return None
        times = [r.expected_ready_at for r in journal.records(restoring) if r.expected_ready_at]
        return max(times) if times else None

    def claims(self, plan: Plan) -> tuple[list[ClaimSummary], list[str]]:
        """The bucket's claims on the plan's restoring groups, summarized
        (:func:`~archivefs.restore.claim_records.summarize_claims`): one GET per group."""
        from archivefs.restore.claims import BucketClaims, summarize_claims

        found = sync(
            self.parts.loop, BucketClaims(self.parts.store).read_many, _restoring_keys(plan)
        )
        return summarize_claims(found)


def _restoring_keys(plan: Plan) -> list[str]:
    """The keys of the plan's groups whose restore is in flight."""
    return [g.key for g in plan.groups if g.state.restore is RestoreState.RESTORING]


def _leave_out_missing(plan: Plan, on_missing: Callable[[Plan], None] | None) -> Plan:
    """``plan`` without its paths that match nothing, once ``on_missing`` has been told of
    them; as it is without ``on_missing``, or when nothing matched (the engine refuses)."""
    if not plan.missing or on_missing is None:
        return plan
    on_missing(plan)
    return plan.replace(missing=()) if len(plan) else plan


def _named_paths(paths: str | list[str], strip: Callable[[Any], Any]) -> set[str]:
    """The plain (non-glob) paths a caller named explicitly."""
    names = [paths] if isinstance(paths, str) else paths
    return {strip(p) for p in names if not GLOB_CHARS & set(p)}


def make_engine(
    store: ColdStore, settings: Settings, approve: Callable[[Plan], None]
) -> RestoreEngine:
    """A restore engine over ``store``: its journal (``settings.journal``; ``False``: none;
    ``None``: the user cache), namespaced by the store; with ``bucket_claims``, claims in
    the bucket."""
    from archivefs.restore.claims import DEFAULT_LEASE_S, BucketClaims
    from archivefs.restore.engine import RestoreEngine as Engine  # on first use: `ls` light
    from archivefs.restore.journal import Journal

    claims = None
    if settings.bucket_claims:
        claims = BucketClaims(store, lease_seconds=settings.claim_lease or DEFAULT_LEASE_S)
    journal = settings.journal
    return Engine(
        store,
        journal=None if journal is False else Journal(journal, namespace=store.namespace),
        approve=approve,
        notifications=settings.notifications,
        time_scale=settings.restore_time_scale,
        concurrency=settings.concurrency,
        claims=claims,
    )


def _leave_out_synced(
    plan: Plan, directory: Path, targets: dict[str, Path], ids: dict[str, str]
) -> tuple[Plan, list[str]]:
    """``plan`` without the groups whose every requested file is already in ``directory``
    as an earlier prefetch wrote it, and those files' paths."""
    fresh = synced.up_to_date(directory, targets, ids)
    if not fresh:
        return plan, []
    keep: list[int] = []
    skipped: list[str] = []
    for row, group in enumerate(plan.groups):
        if all(path in fresh for path in group.paths):
            skipped += group.paths
        else:
            keep.append(row)
    return (plan if len(keep) == len(plan) else plan.take(keep)), skipped
