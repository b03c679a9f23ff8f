"""The read policy: what a read of an archived object does (``on_archived``).

``raise`` an :class:`ObjectArchivedError` that says how to restore it, ``restore``
(send the restore, raise :class:`RestoreInProgressError` with the expected time),
or ``wait`` (send it, wait, read). Every read of the cold store runs through
:meth:`ReadPolicy.guarded`, which translates the store's errors.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from archivefs.access.approval import Approval
from archivefs.access.parts import Parts
from archivefs.catalog.layout import is_reserved
from archivefs.errors import (
    InvalidRestoreRequestError,
    ObjectArchivedError,
    PriceSheetError,
    RestoreInProgressError,
)
from archivefs.model import ObjectState, RestoreState
from archivefs.restore.schedule import PollSchedule
from archivefs.stores.translate import is_archived_error, raise_translated

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


class ReadPolicy:
    """Applies ``on_archived`` to reads; makes the archived-object errors."""

    def __init__(self, parts: Parts, approval: Approval) -> None:
        self.parts = parts
        self.approval = approval

    async def guarded(self, path: str, read: Callable[[], Awaitable[Any]]) -> Any:
        """Run a read; if the object is archived, apply the ``on_archived`` policy."""
        try:
            return await read()
        except Exception as error:
            if not is_archived_error(error):
                raise_translated(error, path, action="read")
            cause = error
        await self.apply(path, cause)
        try:
            return await read()
        except Exception as error:
            raise_translated(error, path, action="read")

    async def guarded_version(
        self, path: str, version: str, read: Callable[[], Awaitable[Any]]
    ) -> Any:
        """Run a read of one version by its id; if that version is archived, refuse with what
        to do (whatever ``on_archived`` says: a restore request without the version would
        restore the current one, paid for the wrong object)."""
        try:
            return await read()
        except Exception as error:
            if not is_archived_error(error):
                raise_translated(error, path, action="read")
            bucket, _, key = path.partition("/")
            raise ObjectArchivedError(
                f"version {version} of this object is archived; archivefs restores objects, "
                "not versions named by their id, so it requests no restore for it.",
                path=path,
                fix=f"restore that version yourself (`aws s3api restore-object --bucket {bucket} "
                f"--key {key} --version-id {version} --restore-request "
                f"'Days={self.parts.days},GlacierJobParameters={{Tier={self.parts.tier.value}}}'`"
                "), then read it again once the restore is done.",
            ) from error

    async def apply(
        self, path: str, cause: BaseException | None, state: ObjectState | None = None
    ) -> None:
        """Returns once ``path`` reads (``wait``), or raises the policy's error.

        ``state``: the object's state from a HEAD just sent (else one is sent).
        """
        if state is None:
            state = await self.parts.store.head(path)
        if state.readable:  # restored in between, or a server that reads it at once (RGW)
            self.parts.invalidate_cache(path)  # the listing that said otherwise is stale
            self.parts.note_readable(state)
            return
        if self.parts.on_archived == "raise":
            raise self.archived_error(state) from cause
        plan = self.parts.engine.plan_known(
            {path: state}, tier=self.parts.tier, days=self.parts.days
        )
        result = await self.parts.engine.restore(  # with "wait", returns once it reads
            plan, wait=self.parts.on_archived == "wait", timeout=self.parts.wait_timeout
        )
        if self.parts.on_archived == "restore":
            ready_at = self.ready_at(state)
            raise RestoreInProgressError(
                f"restore {'requested' if result.requests_sent else 'already in progress'} "
                f"({self.parts.tier.value} tier); expected readable by "
                f"{ready_at:%Y-%m-%d %H:%M} UTC.",
                path=path,
                fix="read again after that time, or open the filesystem with "
                "on_archived='wait' to block until it is back.",
                ready_at=ready_at,
            ) from cause

    def expected_window(self, state: ObjectState) -> tuple[float, float]:
        schedule = PollSchedule.for_restore(
            state.storage_class,
            self.parts.tier,
            archive_access=state.archive_access,
            time_scale=1.0,
        )
        return schedule.expected_min_s, schedule.expected_max_s

    def ready_at(self, state: ObjectState) -> datetime:
        schedule = PollSchedule.for_restore(
            state.storage_class,
            self.parts.tier,
            archive_access=state.archive_access,
            time_scale=self.parts.restore_time_scale,
        )
        return datetime.now(UTC) + timedelta(seconds=schedule.expected_max_s)

    def archived_error(self, state: ObjectState) -> Exception:
        lo, hi = self.expected_window(state)
        wait = f"up to {_hours(hi)}" if lo <= 0 else f"{_hours(lo)}-{_hours(hi)}"
        klass = state.storage_class.value
        if state.archive_access is not None:
            klass = f"{klass} ({state.archive_access.value})"
        restore_call = (
            f"fs.restore({state.path!r}, tier={self.parts.tier.value!r}, days={self.parts.days})"
        )
        if state.restore is RestoreState.RESTORING:
            return RestoreInProgressError(
                f"object is in {klass} and its restore is in progress; a {self.parts.tier.value} "
                f"restore takes {wait}.",
                path=state.path,
                fix=f"read again once it is done ({self.done_shows()}), or open "
                "the filesystem with on_archived='wait' to block until it is back.",
                ready_at=self.ready_at(state),
            )
        return ObjectArchivedError(
            f"object is archived in {klass} (restore state: {state.restore.value}) and must be "
            f"restored before it can be read; a {self.parts.tier.value} restore takes {wait}"
            f"{self.cost_phrase(state)}.",
            path=state.path,
            fix=_archived_fix(state.path, restore_call, self.parts.store_protocol),
            storage_class=state.storage_class.value,
        )

    def done_shows(self) -> str:
        """How ``info()`` shows a finished restore, in this provider's terms."""
        if self.parts.provider.targets:  # Azure: the blob moves to an online tier for good
            target = (
                getattr(self.parts.store, "rehydrate_to", None)
                or self.parts.provider.default_target
            )
            return f"fs.info() shows storage_class={target!r} and restore='hot'"
        return "fs.info() shows restore='restored'"

    def cost_phrase(self, state: ObjectState) -> str:
        """', costs about X USD (sheet)' for restoring and reading one object, if priceable."""
        from archivefs.pricing.amounts import format_amount

        try:
            plan = self.parts.engine.plan_known(
                {state.path: state}, tier=self.parts.tier, days=self.parts.days
            )
            cost = self.approval.estimate_plan(plan)
        except (PriceSheetError, InvalidRestoreRequestError):
            return ""
        amount = format_amount(cost.total, cost.currency)
        return f" and costs about {amount} ({cost.sheet} prices)"


def _archived_fix(path: str, restore_call: str, protocol: str = "s3") -> str:
    """How to restore: a bundle is restored through what is read from it, never by name."""
    prefetch = (
        "for a lazy xarray/Dask selection, `archivefs.datasets.prefetch(selection)` restores "
        "everything it reads in one batch"
    )
    wait = "or open the filesystem with on_archived='wait' to restore and wait automatically."
    if is_reserved(path):  # a bundle: the caller read one of its members
        return (
            f"{prefetch}; for files, `fs.restore([their paths])` or `archivefs restore "
            f"s3://<their folder>/` restores their bundles once; then read again; {wait}"
        )
    shell = f"`archivefs restore {protocol}://{path}`"
    return f"{restore_call} (or {shell}), then read again; {prefetch}; {wait}"


def _hours(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
