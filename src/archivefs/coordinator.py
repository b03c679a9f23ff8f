"""One poller for a whole Dask computation, releasing readers one poll round at a time.

Without it, a restore-aware graph polls every group from the task that waits for
it: 10,000 groups cost 10,000 HEADs per round, spread over the workers. With a
``distributed`` client, :func:`start_coordinator` runs one *coordinator* task instead. It
polls every group of the plan in bulk (one listing per 1,000 keys under a prefix)
on the tier-aware schedule and publishes each round's newly readable groups as
one *batch*: a :class:`distributed.Variable` holding their names, then a
:class:`distributed.Event` saying it is there. In each worker process, one
listener thread (:class:`_Board`) waits for the next batch's event and wakes the
ready tasks of the groups it names; a group's ready task waits on that board,
seceded from the worker's thread pool, so a wait holds no slot that a read could
use and sends no request to the store or to the scheduler. The scheduler sees a
few messages per poll round and worker, however many groups wait.

(The first version set one event per group, and each waiting task waited on its
own event, re-asking the scheduler every ``check_interval``: with 1,000 groups
the scheduler handled over a thousand waits a second, and the coordinator's
1,000 one-by-one ``Event.set`` calls released the readers long after the last poll
had found every group back, so the first result came later than with per-group
HEAD polling. ``benchmarks/cluster_coordination.py`` measures it.)

Why a long-running task, of the three ways ``distributed`` offers:

- ``distributed``'s docs describe ``secede`` for tasks that run long and wait on
  others, and the scheduler re-runs a task whose worker dies. The coordinator
  is kept by ``fire_and_forget``, so a killed worker costs one fresh bulk probe
  on another worker, never a restore: the coordinator only polls (submission
  happened once, on the client, through the journal and the bucket's claims).
  A re-run coordinator numbers its batches on from the last one published, so
  the listeners miss nothing.
- An actor lives on one worker and is lost with it: the docs say actors have no
  resilience to worker failure.
- A scheduler plugin would run storage I/O inside the scheduler's event loop and
  need archivefs and the store's credentials on the scheduler host.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError, RestoreTimeoutError

if TYPE_CHECKING:
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.model import ObjectState
    from archivefs.plans import Plan

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

    @property
    def started_name(self) -> str:
        """The ``distributed.Event`` set once the coordinator has published its progress."""
        return f"{self.key}-started"

    def batch_name(self, number: int) -> str:
        """The Variable (the groups' names) and Event (it is there) of batch ``number``."""
        return f"{self.key}-batch-{number}"


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
    client: Any,
    fs: ArchiveFileSystem,
    plan: Plan,
    timeout: float | None,
    submitted_at: float | None = None,
) -> Coordination:
    """Start the coordinator for ``plan`` on the cluster; it runs until every group reads.

    ``submitted_at``: when the plan's restores were sent (``time.time()``; default:
    now). The poll schedule counts from it, not from the moment the coordinator
    starts on a worker, which may be much later (a large submission, a busy cluster).
    """
    coordination = Coordination(uuid.uuid4().hex, fs.store_scope)
    notifications = fs.notifications if isinstance(fs.notifications, ClusterNotifications) else None
    future = client.submit(
        _coordinate,
        fs,  # pickled as every chunk task's copy is (a hook in its options has no JSON form)
        plan,
        coordination,
        timeout,
        notifications,
        time.time() if submitted_at is None else submitted_at,
        key=coordination.key,
        pure=False,
    )
    _distributed().fire_and_forget(future)
    return coordination


def stats(coordination: Coordination, client: Any | None = None) -> dict[str, int]:
    """What the coordinator has done so far: ``groups``, ``ready``, ``rounds``, ``batches``
    (batches published; once done, the last of them is the empty one that ends them)."""
    variable = _distributed().Variable(coordination.stats_name, client=client)
    published: dict[str, int] = variable.get(timeout=60)
    return published


def _coordinate(
    given: ArchiveFileSystem,
    plan: Plan,
    coordination: Coordination,
    timeout: float | None,
    notifications: ClusterNotifications | None,
    submitted_at: float,
) -> dict[str, int]:
    """The coordinator task: poll the plan's groups in bulk, publish each round's batch."""

    # The schedule counts from the submission. This host's clock may differ from the
    # client's: one that runs behind would put the submission in the future, so at
    # worst the schedule counts from now (as if the restores were just sent).
    started = time.monotonic() - max(0.0, time.time() - submitted_at)

    distributed = _distributed()
    client = distributed.get_client()  # this task's client, usable from the polling thread
    distributed.secede()  # long-running: give the thread slot back to the worker's reads
    # the cluster's notification source is given at construction: a filesystem's settings
    # (the engine's among them) are fixed when it is made
    fs = type(given)(
        *given.storage_args, **{**given.storage_options, "notifications": notifications}
    )
    published = distributed.Variable(coordination.stats_name, client=client)
    progress = {"groups": len(plan.groups), "ready": 0, "rounds": 0, "batches": 0}
    started_once = distributed.Event(coordination.started_name, client=client)
    if started_once.is_set():  # a re-run (its worker died): number the batches on
        progress["batches"] = int(published.get(timeout=60).get("batches", 0))
        # (a batch signalled just before the death, its count not yet published)
        while distributed.Event(
            coordination.batch_name(progress["batches"] + 1), client=client
        ).is_set():
            progress["batches"] += 1
    published.set(dict(progress))
    started_once.set()
    released: set[str] = set()

    def release(groups: list[str]) -> None:
        released.update(groups)
        progress["batches"] += 1
        name = coordination.batch_name(progress["batches"])
        distributed.Variable(name, client=client).set(groups)  # first the names,
        distributed.Event(name, client=client).set()  # then the signal,
        progress["ready"] = len(released)
        published.set(dict(progress))  # then the count a re-run starts from

    def round_done(states: dict[str, ObjectState]) -> None:
        progress["rounds"] += 1
        back = sorted(k for k, s in states.items() if s.readable and k not in released)
        if back:
            release(back)  # one batch per round: a few messages, however many groups
        else:
            published.set(dict(progress))

    polled = fs.as_ready(plan, timeout=timeout, on_round=round_done, started=started)
    yielded = [group.key for group in polled]
    late = sorted(set(yielded) - released)  # readable without a poll round (none today)
    if late:
        release(late)
    release([])  # the end: an empty batch tells every board that no more will come
    return progress


def await_group(
    coordination: Coordination, group: ObjectState, timeout: float | None, check_interval: float
) -> tuple[str, ObjectState]:
    """A group's ready task: wait until a batch names the group, sending no request.

    The waiting is local: this worker process's board (one listener thread per
    coordination) hears each batch once and wakes the tasks it names. Every
    ``check_interval`` seconds without a batch, the listener looks at the
    coordinator: if that failed (a time-out, an error from the store), this task
    fails with the same error. Returns the store's scope and the group's state,
    which the reading task remembers so that its reads of the group are one GET each.
    """
    board = _board(coordination, check_interval)
    if not board.released(group.path):  # already released: no secede, no wait
        _secede(_distributed().secede)
        # No ``rejoin`` after the wait: all that is left is to return, and rejoining
        # would queue every released task for a thread slot behind the reads (in no
        # particular order), delaying the reads that wait for it.
        board.wait(group.path, timeout)
    return coordination.scope, group


_BOARDS_KEPT = 64  # coordinations remembered per worker process (finished ones go first)
_boards_lock = threading.Lock()
_boards: OrderedDict[str, _Board] = OrderedDict()


def _board(coordination: Coordination, check_interval: float) -> _Board:
    """This process's board for ``coordination`` (made, and its listener started, once)."""
    with _boards_lock:
        board = _boards.get(coordination.token)
        if board is None:
            board = _Board(coordination, _distributed().get_client(), check_interval)
            _boards[coordination.token] = board
            board.start()
            finished = [t for t, b in _boards.items() if b.finished]  # oldest first
            while len(_boards) > _BOARDS_KEPT and finished:
                del _boards[finished.pop(0)]
        return board


class _Board:
    """One worker process's view of a coordination: the groups released so far.

    A daemon thread waits for batch 1, 2, ... in turn (one scheduler wait at a
    time, timing out every ``check_interval`` s to look at the coordinator), adds
    each batch's names and wakes the waiting tasks. The coordinator's last batch is
    empty: the thread ends on it, leaving no wait behind on the scheduler (one cut
    off by the cluster closing is logged there as an error).
    """

    def __init__(self, coordination: Coordination, client: Any, check_interval: float) -> None:
        self.coordination = coordination
        self.client = client
        self.check_interval = max(0.01, check_interval)
        self._released: set[str] = set()
        self._failure: BaseException | None = None
        self._over = False  # the coordinator finished and every batch it published was read
        self._changed = threading.Condition()

    @property
    def finished(self) -> bool:
        with self._changed:
            return self._over or self._failure is not None

    def start(self) -> None:
        name = f"archivefs-board-{self.coordination.token[:8]}"
        threading.Thread(target=self._listen, name=name, daemon=True).start()

    def released(self, group: str) -> bool:
        with self._changed:
            return group in self._released

    def wait(self, group: str, timeout: float | None) -> None:
        """Return once a batch names ``group``; raise the coordinator's failure or a time-out."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while group not in self._released:
                if self._failure is not None:
                    raise self._failure
                if self._over:
                    raise ArchiveError(
                        "the restore coordinator finished without releasing this group.",
                        path=group,
                        fix="compute again: the restore is already requested, "
                        "so nothing is paid twice.",
                    )
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise RestoreTimeoutError(
                        f"the restore was not finished after {timeout:.0f} s.",
                        path=group,
                        fix="the restore keeps running at the store; compute again later.",
                    )
                self._changed.wait(timeout=left)

    def _listen(self) -> None:
        distributed = _distributed()
        coordination, client = self.coordination, self.client
        try:
            coordinator = distributed.Future(coordination.key, client=client)
            number = 1
            while True:
                name = coordination.batch_name(number)
                event = distributed.Event(name, client=client)
                if event.wait(timeout=self.check_interval):
                    groups = distributed.Variable(name, client=client).get(timeout=60)
                    if not groups:  # the coordinator's last batch: stop listening now
                        self._end()
                        return
                    with self._changed:
                        self._released.update(groups)
                        self._changed.notify_all()
                    number += 1
                    continue
                failure = _coordinator_failure(coordinator)
                if failure is not None:
                    self._end(failure=failure)
                    return
                if coordinator.status == "finished" and not event.is_set():
                    self._end()
                    return
        except Exception as error:  # the cluster went away: the waiting tasks say so
            self._end(failure=error)

    def _end(self, failure: BaseException | None = None) -> None:
        with self._changed:
            self._failure = failure
            self._over = True
            self._changed.notify_all()


def _secede(secede: Any) -> None:
    """Secede when running on a worker; elsewhere (a local scheduler) just wait."""
    with contextlib.suppress(ValueError):
        secede()


def _coordinator_failure(coordinator: Any) -> BaseException | None:
    """The coordinator's error, if it failed or was cancelled."""
    if coordinator.status == "error":
        error: BaseException = coordinator.exception(timeout=60)
        return error
    if coordinator.status == "cancelled":  # ("lost": the scheduler computes it again)
        return ArchiveError(
            "the restore coordinator was cancelled before every group was back.",
            path=coordinator.key,
            fix="compute again: the restores are already requested, so nothing is paid twice.",
        )
    return None
