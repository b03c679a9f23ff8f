"""The poller: wait for restores cheaply and hand over each group the moment it is back.

Restore time does not depend on size or count, so all groups of a batch are
polled together, in bulk (one listing answers up to 1,000 objects), on a
tier-aware schedule: sparse early, denser near the expected completion. A
notification source (S3 event notifications fed through a queue, or a user
callback) can replace most polls: keys it reports are checked at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Protocol

from archivefs.errors import ObjectNotFoundError, RestoreTimeoutError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Sequence

    from archivefs.model import ObjectState
    from archivefs.restore.journal import Journal
    from archivefs.restore.notify import NotificationSource
    from archivefs.restore.schedule import PollSchedule
    from archivefs.stores.base import ColdStore


class Revival(Protocol):
    """Restores the poller's caller may still have to send while it waits: groups another
    host claimed whose claim may be taken over once its lease ends (bucket claims)."""

    def due(self, keys: Iterable[str]) -> float | None:
        """When (``time.monotonic()``) the first of ``keys`` is to be looked at again."""
        ...

    async def revive(self, states: Sequence[ObjectState]) -> None:
        """Look at the groups of ``states`` (found not readable) whose time has come."""
        ...


class Poller:
    """Polls pending groups in bulk until each one is readable."""

    def __init__(
        self,
        store: ColdStore,
        schedule_for: Callable[[ObjectState], PollSchedule],
        *,
        journal: Journal | None = None,
        notifications: NotificationSource | None = None,
        on_round: Callable[[dict[str, ObjectState]], None] | None = None,
        on_wait: Callable[[float], None] | None = None,
        revival: Revival | None = None,
    ) -> None:
        self.store = store
        self.revival = revival  # after each round: send what another host left unsent
        self.schedule_for = schedule_for
        self.journal = journal
        self.notifications = notifications
        self.on_round = on_round
        self.on_wait = on_wait  # hears the seconds until the next check, before each wait
        self.rounds = 0

    async def as_ready(
        self,
        states: Sequence[ObjectState],
        *,
        timeout: float | None = None,
        started: float | None = None,
    ) -> AsyncIterator[ObjectState]:
        """Yield each state once its object reads; readable ones first, at once."""
        started = time.monotonic() if started is None else started
        deadline = None if timeout is None else time.monotonic() + timeout
        pending: dict[str, ObjectState] = {}
        for state in states:
            if state.readable:
                yield state
            else:
                pending[state.path] = state
        polls = 0
        while pending:
            delay = min(
                self.schedule_for(s).next_delay(time.monotonic() - started, polls)
                for s in _one_per_schedule(pending.values())
            )
            due = None if self.revival is None else self.revival.due(pending)
            if due is not None:  # a claim's lease ends sooner: look at it then
                delay = max(0.0, min(delay, due - time.monotonic()))
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise timed_out(sorted(pending), timeout)
                delay = min(delay, remaining)
            if self.on_wait is not None:
                self.on_wait(delay)
            keys = await self._wait(delay, pending)
            if due is not None and due <= time.monotonic():
                keys = list(pending)  # every group, the one whose lease has ended among them
            probed = await self.store.probe(keys)
            polls += 1
            self.rounds += 1
            fresh: dict[str, ObjectState] = {}
            for key, probed_state in probed.items():
                if probed_state is None:
                    raise ObjectNotFoundError(
                        "the object disappeared while its restore was awaited.",
                        path=key,
                        fix="check whether it was deleted or moved; restore the new location.",
                    )
                fresh[key] = probed_state
            if self.on_round is not None:
                self.on_round(fresh)
            for key, state in fresh.items():
                if state.readable:
                    del pending[key]
                    if self.journal is not None:
                        await asyncio.to_thread(
                            self.journal.record_restored, key, expiry=state.restore_expiry
                        )
                    yield state
                else:
                    pending[key] = state
            if self.revival is not None:
                await self.revival.revive([s for s in fresh.values() if not s.readable])

    async def _wait(self, delay: float, pending: dict[str, ObjectState]) -> list[str]:
        """Sleep until the next poll, or until a notification names pending keys."""
        if self.notifications is None:
            await asyncio.sleep(delay)
            return list(pending)
        ready = await asyncio.to_thread(self.notifications.poll_ready, delay)
        notified = [k for k in ready if k in pending]
        return notified or list(pending)


def _one_per_schedule(states: Iterable[ObjectState]) -> list[ObjectState]:
    seen: dict[tuple[object, ...], ObjectState] = {}
    for state in states:
        seen.setdefault((state.storage_class, state.archive_access), state)
    return list(seen.values())


def timed_out(names: list[str], timeout: float | None) -> RestoreTimeoutError:
    """The error of a wait for ``names`` that ended after ``timeout`` seconds."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return RestoreTimeoutError(
        f"{len(names)} restore(s) not finished after {timeout or 0:.0f} s: {shown}.",
        path=names[0],
        fix="call again later or raise the timeout; restores that were requested keep running "
        "at the store (nothing is re-requested: the journal remembers them).",
        pending=tuple(names),
    )
