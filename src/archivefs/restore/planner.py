"""The planner: logical paths -> restorable groups -> what to do with each.

Pure: it takes what is already known (which group each path lives in, and the
state of each group) and decides; all I/O happens before (probing) and after
(submitting). Planning 10^5 paths is a dictionary pass, well under a second.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from archivefs.model import Action, ObjectState, Plan, PlannedGroup, RestoreState, RestoreTier

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping


@dataclass(frozen=True, slots=True)
class PathInGroup:
    """Where a logical path lives: its group's cold object, and the bytes a read fetches."""

    path: str
    group: str
    read_bytes: int
    read_requests: int = 1


@dataclass(frozen=True, slots=True)
class PathsInGroup:
    """Many logical paths in one group at once (bundle members picked from a catalog's
    arrays): planning them costs one step per group, not one object per path."""

    paths: tuple[str, ...]
    group: str
    read_bytes: int  # all of them together
    read_requests: int


def single_object_groups(states: Mapping[str, ObjectState | None]) -> list[PathInGroup]:
    """The trivial grouping: every object is its own group, read whole with one GET."""
    return [
        PathInGroup(path, path, state.size, 1)
        for path, state in states.items()
        if state is not None
    ]


_ACTION_BY_STATE = {
    RestoreState.HOT: Action.READ,
    RestoreState.RESTORING: Action.WAIT,
    RestoreState.ARCHIVED: Action.RESTORE,
}


def decide(state: ObjectState, *, needed_until: datetime | None, upgrade: bool = False) -> Action:
    """What a plan does with a group in ``state`` (``upgrade``: speed up restores in flight)."""
    if upgrade and state.restore is RestoreState.RESTORING:
        return Action.UPGRADE
    action = _ACTION_BY_STATE.get(state.restore)
    if action is not None:
        return action
    expiry = state.restore_expiry  # restored: renew if it expires before the job is done
    if needed_until is not None and expiry is not None and expiry < needed_until:
        return Action.RENEW
    return Action.READ


def make_plan(
    placements: Iterable[PathInGroup | PathsInGroup],
    group_states: Mapping[str, ObjectState | None],
    *,
    tier: RestoreTier = RestoreTier.STANDARD,
    days: int = 1,
    needed_until: datetime | None = None,
    missing: Iterable[str] = (),
    now: datetime | None = None,
    upgrade: bool = False,
) -> Plan:
    """Build a :class:`Plan` from path placements and the states of their groups.

    Parameters
    ----------
    placements:
        Every requested path with the group that holds it (one by one, or many at once).
    group_states:
        The probed state of every group's cold object (``None``: it does not exist).
    needed_until:
        When the job will still be reading; restored copies expiring earlier are renewed.
    upgrade:
        Request ``tier`` for groups already restoring (S3's restore speed upgrade, billed
        at the new tier); otherwise they are just waited for.
    """
    with _gc_paused():
        return _make_plan(placements, group_states, tier, days, needed_until, missing, now, upgrade)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building large acyclic structures (3x faster at 10^5)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _make_plan(
    placements: Iterable[PathInGroup | PathsInGroup],
    group_states: Mapping[str, ObjectState | None],
    tier: RestoreTier,
    days: int,
    needed_until: datetime | None,
    missing: Iterable[str],
    now: datetime | None,
    upgrade: bool = False,
) -> Plan:
    acc: dict[str, tuple[ObjectState, list[str], list[int]]] = {}
    lost = list(missing)
    for placement in placements:
        entry = acc.get(placement.group)
        if entry is None:
            state = group_states.get(placement.group)
            if state is None:
                if isinstance(placement, PathsInGroup):
                    lost.extend(placement.paths)
                else:
                    lost.append(placement.path)
                continue
            entry = acc[placement.group] = (state, [], [0, 0])
        if isinstance(placement, PathsInGroup):
            entry[1].extend(placement.paths)
        else:
            entry[1].append(placement.path)
        totals = entry[2]
        totals[0] += placement.read_bytes
        totals[1] += placement.read_requests
    groups = tuple(
        PlannedGroup(
            state,
            decide(state, needed_until=needed_until, upgrade=upgrade),
            tuple(paths),
            t[0],
            t[1],
        )
        for state, paths, t in acc.values()
    )
    return Plan(
        groups=groups,
        tier=tier,
        days=days,
        created=now or datetime.now(UTC),
        missing=tuple(lost),
    )
