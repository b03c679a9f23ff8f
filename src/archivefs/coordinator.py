"""One poller for a whole Dask computation, releasing each group's readers by an event.

Without it, a restore-aware graph polls every group from the task that waits for
it: 10,000 groups cost 10,000 HEADs per round, spread over the workers. With a
``distributed`` client, :func:`start_coordinator` runs one *coordinator* task instead. It
polls every group of the plan in bulk (one listing per 1,000 keys under a prefix)
on the tier-aware schedule, and sets one :class:`distributed.Event` per group as
it comes back. Each group's ready task waits on its event, seceded from the
worker's thread pool, so a wait holds no slot that a read could use, and sends
no request to the store.

Why a long-running task, of the three ways ``distributed`` offers:

- ``distributed``'s docs describe ``secede`` for tasks that run long and wait on
  others, and the scheduler re-runs a task whose worker dies. The coordinator
  is kept by ``fire_and_forget``, so a killed worker costs one fresh bulk probe
  on another worker, never a restore: the coordinator only polls (submission
  happened once, on the client, through the journal and the bucket's claims).
- An actor lives on one worker and is lost with it: the docs say actors have no
  resilience to worker failure.
- A scheduler plugin would run storage I/O inside the scheduler's event loop and
  need archivefs and the store's credentials on the scheduler host.
"""

from __future__ import annotations

import hashlib
import importlib
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError, RestoreTimeoutError

if TYPE_CHECKING:
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.model import ObjectState, Plan

KEY_PREFIX = "archivefs-coordinator"


@dataclass(frozen=True, slots=True)
class Coordination:
    """The names one coordinated computation uses on the scheduler."""

    token: str
    scope: str  # the store read hints are for (ArchiveFileSystem.store_scope)

    @property
    def key(self) -> str:
        """The coordinator task's key."""
        return f"{KEY_PREFIX}-{self.token}"

    @property
    def stats_name(self) -> str:
        """The ``distributed.Variable`` the coordinator publishes its progress in."""
        return f"{self.key}-stats"

    def event_name(self, group: str) -> str:
        """The event set when ``group`` reads."""
        return f"{self.key}-{hashlib.sha256(group.encode()).hexdigest()[:32]}"


class ClusterNotifications:
    """Restore notifications fed into a named ``distributed.Queue``, read by the coordinator.

    The coordinator runs on some worker, so a source in the client's memory cannot
    reach it. Whatever receives the store's events (an SQS consumer, a webhook)
    calls :meth:`put` with each message, from any process connected to the
    cluster; the coordinator checks the keys named at once and polls the store
    only as a fallback, on its schedule. Messages are what
    :func:`archivefs.restore.notify.restored_keys` reads: S3 event notifications
    (one record or many), SNS envelopes, EventBridge events, ``"bucket/key"``.

    Example::

        notes = ClusterNotifications()
        fs = ArchiveFileSystem(target_protocol="s3", notifications=notes)
        ...  # in the SQS consumer: notes.put(message["Body"])
    """

    def __init__(self, name: str = "archivefs-restored") -> None:
        self.name = name
        self.ignored = 0  # messages that named no restored object

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name,))

    def put(self, message: Any) -> None:
        """Feed one message to the coordinator (from the client or any worker)."""
        _distributed().Queue(self.name).put(message)

    def poll_ready(self, timeout: float) -> set[str]:
        """Wait up to ``timeout`` s for the first message, then take what else is queued."""
        from archivefs.restore.notify import restored_keys

        queue = _distributed().Queue(self.name)
        ready: set[str] = set()
        try:
            messages = [queue.get(timeout=max(0.001, timeout))]
        except TimeoutError:
            return ready
        waiting = queue.qsize()
        if waiting:
            messages.extend(queue.get(batch=waiting))
        for message in messages:
            keys = restored_keys(message)
            self.ignored += not keys
            ready.update(keys)
        return ready


def _distributed() -> Any:
    """The ``distributed`` module, typed loosely (it ships no type hints)."""
    return importlib.import_module("distributed")


def default_client() -> Any | None:
    """The current ``distributed`` client, or ``None`` (no distributed, or no client)."""
    try:
        distributed = _distributed()
    except ImportError:
        return None
    try:
        return distributed.default_client()
    except ValueError:
        return None


def start_coordinator(
    client: Any, fs: ArchiveFileSystem, plan: Plan, timeout: float | None
) -> Coordination:
    """Start the coordinator for ``plan`` on the cluster; it runs until every group reads."""
    coordination = Coordination(uuid.uuid4().hex, fs.store_scope)
    notifications = fs.notifications if isinstance(fs.notifications, ClusterNotifications) else None
    future = client.submit(
        _coordinate,
        fs.to_json(),
        plan,
        coordination,
        timeout,
        notifications,
        key=coordination.key,
        pure=False,
    )
    _distributed().fire_and_forget(future)
    return coordination


def stats(coordination: Coordination, client: Any | None = None) -> dict[str, int]:
    """What the coordinator has done so far: ``groups``, ``ready``, ``rounds``."""
    variable = _distributed().Variable(coordination.stats_name, client=client)
    published: dict[str, int] = variable.get(timeout=60)
    return published


def _coordinate(
    fs_json: str,
    plan: Plan,
    coordination: Coordination,
    timeout: float | None,
    notifications: ClusterNotifications | None,
) -> dict[str, int]:
    """The coordinator task: poll the plan's groups in bulk, set each group's event."""
    import fsspec

    distributed = _distributed()
    distributed.secede()  # long-running: give the thread slot back to the worker's reads
    fs: ArchiveFileSystem = fsspec.AbstractFileSystem.from_json(fs_json)
    fs.notifications = notifications  # before the engine is made, on first use
    progress = {"groups": len(plan.groups), "ready": 0, "rounds": 0}
    published = distributed.Variable(coordination.stats_name)
    published.set(dict(progress))

    def round_done(_: dict[str, ObjectState]) -> None:
        progress["rounds"] += 1
        published.set(dict(progress))

    for group in fs.as_ready(plan, timeout=timeout, on_round=round_done):
        distributed.Event(coordination.event_name(group.key)).set()
        progress["ready"] += 1
    published.set(dict(progress))
    return progress


def await_group(
    coordination: Coordination, group: ObjectState, timeout: float | None, check_interval: float
) -> tuple[str, ObjectState]:
    """A group's ready task: wait for the coordinator's event, sending no request.

    Every ``check_interval`` seconds it looks at the coordinator: if that failed
    (a time-out, an error from the store), this task fails with the same error.
    Returns the store's scope and the group's state, which the reading task
    remembers so that its reads of the group are one GET each.
    """
    _wait(coordination, group.path, timeout, check_interval)
    return coordination.scope, group


def _wait(
    coordination: Coordination, group: str, timeout: float | None, check_interval: float
) -> None:
    distributed = _distributed()
    event = distributed.Event(coordination.event_name(group))
    seceded = _secede(distributed.secede)
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        coordinator = distributed.Future(coordination.key, client=distributed.get_client())
        while True:
            wait = check_interval
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            if event.wait(timeout=wait):
                return
            _raise_if_coordinator_failed(coordinator, event, group)
            if deadline is not None and time.monotonic() >= deadline:
                raise RestoreTimeoutError(
                    f"the restore was not finished after {timeout:.0f} s.",
                    path=group,
                    fix="the restore keeps running at the store; compute again later.",
                )
    finally:
        if seceded:
            distributed.rejoin()


def _secede(secede: Any) -> bool:
    """Secede when running on a worker; elsewhere (a local scheduler) just wait."""
    try:
        secede()
    except ValueError:
        return False
    return True


def _raise_if_coordinator_failed(coordinator: Any, event: Any, group: str) -> None:
    if coordinator.status == "error":
        raise coordinator.exception(timeout=60)
    if coordinator.status == "finished" and not event.is_set():
        raise ArchiveError(
            "the restore coordinator finished without releasing this group.",
            path=group,
            fix="compute again: the restore is already requested, so nothing is paid twice.",
        )
