"""The planner: logical paths -> restorable groups -> what to do with each.

Pure: it takes what is already known (which group each path lives in, and the
state of each group) and decides; all I/O happens before (probing) and after
(submitting). Planning 10^5 paths is a dictionary pass, well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from archivefs.model import Action, ObjectState, Plan, PlannedGroup, RestoreState, RestoreTier

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


@dataclass(frozen=True, slots=True)
class PathInGroup:
    """Where a logical path lives: its group's cold object, and the bytes a read fetches."""

    path: str
    group: str
    read_bytes: int
    read_requests: int = 1


def single_object_groups(states: Mapping[str, ObjectState | None]) -> list[PathInGroup]:
    """The trivial grouping: every object is its own group, read whole with one GET."""
    return [
        PathInGroup(path, path, state.size, 1)
        for path, state in states.items()
        if state is not None
    ]


def decide(state: ObjectState, *, needed_until: datetime | None) -> Action:
    """What a plan does with a group in ``state``."""
    if state.restore is RestoreState.HOT:
        return Action.READ
    if state.restore is RestoreState.RESTORING:
        return Action.WAIT
    if state.restore is RestoreState.RESTORED:
        expiry = state.restore_expiry
        if needed_until is not None and expiry is not None and expiry < needed_until:
            return Action.RENEW
        return Action.READ
    return Action.RESTORE


def make_plan(
    placements: Iterable[PathInGroup],
    group_states: Mapping[str, ObjectState | None],
    *,
    tier: RestoreTier = RestoreTier.STANDARD,
    days: int = 1,
    needed_until: datetime | None = None,
    missing: Iterable[str] = (),
    now: datetime | None = None,
) -> Plan:
    """Build a :class:`Plan` from path placements and the states of their groups.

    Parameters
    ----------
    placements:
        Every requested path with the group that holds it.
    group_states:
        The probed state of every group's cold object (``None``: it does not exist).
    needed_until:
        When the job will still be reading; restored copies expiring earlier are renewed.
    """
    paths_by_group: dict[str, list[str]] = {}
    bytes_by_group: dict[str, int] = {}
    requests_by_group: dict[str, int] = {}
    lost = list(missing)
    for placement in placements:
        group = placement.group
        if group_states.get(group) is None:
            lost.append(placement.path)
            continue
        if group not in paths_by_group:
            paths_by_group[group] = []
            bytes_by_group[group] = 0
            requests_by_group[group] = 0
        paths_by_group[group].append(placement.path)
        bytes_by_group[group] += placement.read_bytes
        requests_by_group[group] += placement.read_requests
    groups = []
    for group, paths in paths_by_group.items():
        state = group_states[group]
        assert state is not None
        groups.append(
            PlannedGroup(
                state=state,
                action=decide(state, needed_until=needed_until),
                paths=tuple(paths),
                read_bytes=bytes_by_group[group],
                read_requests=requests_by_group[group],
            )
        )
    return Plan(
        groups=tuple(groups),
        tier=tier,
        days=days,
        created=now or datetime.now(UTC),
        missing=tuple(lost),
    )
