"""Restore-aware graphs: each chunk read waits for its own group, on a cluster coordinated."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from archivefs.coordinator import Coordination, await_group, default_client, start_coordinator
from archivefs.coordinator import stats as coordinator_stats
from archivefs.errors import ArchiveError
from archivefs.filesystem import ArchiveFileSystem
from archivefs.hints import note_readable
from archivefs.model import ObjectState

if TYPE_CHECKING:
    pass
from archivefs.datasets.ahead import _nothing_to_plan
from archivefs.datasets.graph import (
    _SOURCES,
    _ArrayLayout,
    _dask_arrays,
    _layout_of,
    _ReferencedLayout,
    _task_window,
    chunk_paths,
    whole_file_reads,
)

# -- a restore-aware graph -------------------------------------------------------------------


def restore_aware(
    obj: Any,
    *,
    timeout: float | None = None,
    poll_interval: float | None = None,
    coordinate: bool | None = None,
) -> Any:
    """The same lazy object, with every chunk read waiting for its own group's restore.

    The selection's plan is submitted once, here (one restore request per group
    that needs one, deduplicated by the journal and, if enabled, the bucket's
    claims); then each chunk read task depends on a "ready" task for its group.
    A computation therefore starts on the groups that come back first instead
    of waiting for the last one.

    With a ``distributed`` client, one coordinator task polls all groups in
    bulk and releases each group's ready task by an event: no worker polls the
    store (:mod:`archivefs.coordinator`). Without one, each ready task polls its
    own group on the tier-aware schedule of its class (the filesystem's
    ``restore_time_scale`` applied), or every ``poll_interval`` seconds if given;
    with one, ``poll_interval`` (default 60) is how often a waiting task checks
    that the coordinator is still healthy.
    ``coordinate=False`` keeps per-group polling even with a client;
    ``coordinate=True`` fails without one.

    Example::

        gated = ads.restore_aware(ds["t2m"].isel(time=slice(0, 90)), poll_interval=600)
        client.compute(gated.mean("time"))    # starts on the first bundles back
    """
    per_fs = chunk_paths(obj)
    if not per_fs:
        raise _nothing_to_plan()
    client = default_client() if coordinate is not False else None
    if coordinate and client is None:
        raise ArchiveError(
            "coordinate=True needs a distributed client, and none is running.",
            fix="create one first (`distributed.Client(...)`), or leave coordinate unset.",
        )
    group_of: dict[str, tuple[ArchiveFileSystem, ObjectState]] = {}
    coordinations: dict[int, Coordination] = {}
    submitted: dict[int, float] = {}
    for fs, paths in per_fs.items():
        # the hooks see what plan_dataset shows: the files read whole, not chunk by chunk
        plan = fs.plan(paths, read_whole=whole_file_reads(obj, fs))
        submitted_at = submitted[id(fs)] = time.time()
        fs.submit(plan)
        if client is not None:
            coordinations[id(fs)] = start_coordinator(client, fs, plan, timeout, submitted_at)
        for group in plan.groups:
            for path in group.paths:
                group_of[path] = (fs, group.state)
    return _rewire(obj, group_of, timeout, poll_interval, coordinations, submitted)


def coordination_stats(obj: Any) -> list[dict[str, int]]:
    """Progress of the coordinators of a restore-aware object: groups, ready, poll rounds."""
    from dask._task_spec import DataNode

    found: dict[str, Coordination] = {}
    for array in _dask_arrays(obj):
        for task in array.__dask_graph__().values():
            if getattr(task, "func", None) is not await_group:
                continue
            first = task.args[0]
            value = first.value if isinstance(first, DataNode) else first
            found[value.token] = value
    return [coordinator_stats(c) for c in found.values()]


def _rewire(
    obj: Any,
    group_of: dict[str, tuple[ArchiveFileSystem, ObjectState]],
    timeout: float | None,
    poll_interval: float | None,
    coordinations: dict[int, Coordination],
    submitted: dict[int, float],
) -> Any:
    import dask.array as da
    from dask._task_spec import Task, TaskRef

    layouts: dict[tuple[int, str, str], _ArrayLayout | _ReferencedLayout] = {}

    def rewired(array: Any) -> Any:
        graph = dict(array.__dask_graph__())
        ready_tasks: dict[Any, Any] = {}
        for key, task in list(graph.items()):
            if not (isinstance(key, tuple) and isinstance(key[0], str) and key[0] in _SOURCES):
                continue
            window = _task_window(task)
            if window is None:
                continue
            source = _SOURCES[key[0]]
            if source.array is None:
                paths = [source.path]
            else:
                paths = list(_layout_of(source, layouts).keys_for(window))
            refs = []
            for path in paths:
                if path not in group_of:
                    continue  # an absent chunk (fill value): nothing to wait for
                fs, group = group_of[path]
                ready_key = ("archivefs-ready", group.path)
                if ready_key not in ready_tasks:
                    ready_tasks[ready_key] = _ready_task(
                        ready_key,
                        fs,
                        group,
                        coordinations.get(id(fs)),
                        timeout,
                        poll_interval,
                        submitted[id(fs)],
                    )
                refs.append(TaskRef(ready_key))
            if refs:  # remember the groups first: arguments are evaluated in order
                remember = Task(("archivefs-remember", *key), _remember_ready, *refs)
                graph[key] = Task(key, _after, remember, task)
        graph.update(ready_tasks)
        return da.Array(  # type: ignore[no-untyped-call]
            graph, array.name, array.chunks, array.dtype, meta=array._meta
        )

    if hasattr(obj, "data_vars"):
        out = obj.copy()
        for name, variable in obj.variables.items():
            if hasattr(variable.data, "__dask_graph__"):
                out[name] = variable.copy(data=rewired(variable.data))
        return out
    return obj.copy(data=rewired(obj.data))


COORDINATOR_HEALTH_INTERVAL = 60.0
"""Seconds between a waiting task's checks that its coordinator is alive (``poll_interval``)."""


def _ready_task(
    key: Any,
    fs: ArchiveFileSystem,
    group: ObjectState,
    coordination: Coordination | None,
    timeout: float | None,
    poll_interval: float | None,
    submitted_at: float,
) -> Any:
    """The task a group's chunk reads wait for: the coordinator's event, or its own polls."""
    from dask._task_spec import DataNode, Task

    if coordination is None:
        polling = DataNode(None, fs), DataNode(None, group)
        wait = DataNode(None, timeout), DataNode(None, poll_interval)
        return Task(key, _wait_until_readable, *polling, *wait, DataNode(None, submitted_at))
    health = COORDINATOR_HEALTH_INTERVAL if poll_interval is None else poll_interval
    wait = DataNode(None, timeout), DataNode(None, health)
    return Task(key, await_group, DataNode(None, coordination), DataNode(None, group), *wait)


def _remember_ready(*ready: tuple[str, ObjectState]) -> None:
    """On the worker about to read: these groups read now (one GET per read, no HEAD)."""
    for scope, state in ready:
        note_readable(scope, state)


def _after(*values: Any) -> Any:
    """Return the last value once every earlier dependency (a ready task) is done."""
    return values[-1]


def _wait_until_readable(
    fs: ArchiveFileSystem,
    group: ObjectState,
    timeout: float | None,
    poll_interval: float | None,
    submitted_at: float,
) -> tuple[str, ObjectState]:
    """Poll one group until it reads (runs as a task, on a worker): every ``poll_interval``
    seconds, or on its class's tier-aware schedule counted from ``submitted_at``
    (``time.time()``)."""
    import time

    schedule = fs.engine.schedule_for(fs.tier)(group) if poll_interval is None else None
    deadline = None if timeout is None else time.monotonic() + timeout
    polls = 0
    while True:
        state = fs.state(group.path)
        polls += 1
        if state.readable:
            return fs.store_scope, state
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            from archivefs.errors import RestoreTimeoutError

            raise RestoreTimeoutError(
                f"the restore was not finished after {timeout:.0f} s.",
                path=group.path,
                fix="the restore keeps running at the store; compute again later.",
            )
        if schedule is None:
            assert poll_interval is not None
            delay = poll_interval
        else:
            delay = schedule.next_delay(time.time() - submitted_at, polls)
        if deadline is not None:
            delay = min(delay, deadline - now)
        time.sleep(delay)
