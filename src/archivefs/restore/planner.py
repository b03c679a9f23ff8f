"""The planner: logical paths -> restorable groups -> what to do with each.

Pure: it takes what is already known (which group each path lives in, and the
state of each group) and decides; all I/O happens before (probing) and after
(submitting). Planning is one dictionary pass over the paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from typing import TYPE_CHECKING, Any

from archivefs.bulk import gc_paused
from archivefs.lazy import lazy_module
from archivefs.model import Action, ObjectState, RestoreState, RestoreTier
from archivefs.plans import ACTION_CODE, RESTORE_CODE, RESTORE_STATES, Plan, PlanTable

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    import numpy as np
else:  # numpy on first use: reading a plain object never needs it
    np = lazy_module("numpy", globals(), "np")


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

    paths: Sequence[str]  # not copied: the caller hands the sequence over
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
    with gc_paused():
        return _make_plan(placements, group_states, tier, days, needed_until, missing, now, upgrade)


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
    # each group's paths as the sequences they came in: copied once, into the plan's
    # flat column (at 10^7 members every pass over the paths is a pass of cache misses)
    acc: dict[str, tuple[ObjectState, list[Sequence[str]], list[int]]] = {}
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
            entry = acc[placement.group] = (state, [], [0, 0, 0])
        totals = entry[2]  # read bytes, read requests, paths
        if isinstance(placement, PathsInGroup):
            entry[1].append(placement.paths)
            totals[2] += len(placement.paths)
        else:
            entry[1].append((placement.path,))
            totals[2] += 1
        totals[0] += placement.read_bytes
        totals[1] += placement.read_requests
    entries = list(acc.values())
    n = len(entries)
    states = [state for state, _, _ in entries]
    table = PlanTable.from_states(
        states,
        decide_all(states, needed_until=needed_until, upgrade=upgrade),
        np.fromiter((t[0] for _, _, t in entries), np.int64, n),
        np.fromiter((t[1] for _, _, t in entries), np.int64, n),
    )
    if any(t[2] != 1 or next(chain(*seqs)) != state.path for state, seqs, t in entries):
        table.paths = tuple(chain.from_iterable(chain.from_iterable(s for _, s, _ in entries)))
        table.starts = np.cumsum([0] + [t[2] for _, _, t in entries], dtype=np.int64)
    return Plan(
        tier=tier,
        days=days,
        created=now or datetime.now(UTC),
        missing=tuple(lost),
        table=table,
    )


def plan_objects(
    states: Mapping[str, ObjectState | None],
    *,
    tier: RestoreTier = RestoreTier.STANDARD,
    days: int = 1,
    needed_until: datetime | None = None,
    now: datetime | None = None,
    upgrade: bool = False,
) -> Plan:
    """:func:`make_plan` of :func:`single_object_groups`, straight into columns.

    Every object is its own group, read whole with one GET; ``None`` states are
    missing. No per-object placement or group objects are made: this is the
    planner for large listings of plain objects.
    """
    with gc_paused():
        found = [s for s in states.values() if s is not None]  # no (path, state) pairs:
        lost = tuple(p for p, s in states.items() if s is None)  # they add a tuple per object
        n = len(found)
        table = PlanTable.from_states(
            found,
            decide_all(found, needed_until=needed_until, upgrade=upgrade),
            np.fromiter((s.size for s in found), np.int64, n),
            np.ones(n, dtype=np.int64),
        )
        if any(s is not None and p != s.path for p, s in states.items()):
            table.paths = tuple(p for p, s in states.items() if s is not None)
            table.starts = np.arange(n + 1, dtype=np.int64)
        return Plan(
            tier=tier, days=days, created=now or datetime.now(UTC), missing=lost, table=table
        )


def decide_all(
    states: Sequence[ObjectState], *, needed_until: datetime | None, upgrade: bool = False
) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """:func:`decide` for every state at once, as ``ACTIONS`` codes."""
    by_state = [ACTION_CODE[_ACTION_BY_STATE.get(s, Action.READ)] for s in RESTORE_STATES]
    if upgrade:
        by_state[RESTORE_CODE[RestoreState.RESTORING]] = ACTION_CODE[Action.UPGRADE]
    table = np.array(by_state, dtype=np.uint8)
    codes = np.fromiter((RESTORE_CODE[s.restore] for s in states), np.uint8, len(states))
    actions: np.ndarray[Any, np.dtype[np.uint8]] = table[codes]
    if needed_until is not None:  # restored copies expiring too soon are renewed
        for i in np.flatnonzero(codes == RESTORE_CODE[RestoreState.RESTORED]).tolist():
            actions[i] = ACTION_CODE[decide(states[i], needed_until=needed_until)]
    return actions
