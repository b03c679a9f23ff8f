"""Where a budget's running total is kept: in this process, or on a Dask cluster's scheduler.

A :class:`Tally` is the running total of one budget: ``spent`` (everything counted
against ``max_cost``: paid, reserved for a request in flight, or approved ahead)
and ``held`` (the part of ``spent`` approved ahead for fee-charging reads that no
request has drawn yet). Every change is a pure function of the tally, applied
atomically by a ledger:

- :class:`LocalLedger`: a lock in this process;
- :class:`ClusterLedger`: a ``distributed.Lock`` and a ``distributed.Variable`` named
  after the budget, on the scheduler, so the filesystem on the client and its
  pickled copies in every worker process share one total. The scheduler only keeps
  two numbers; no storage I/O and no archivefs code runs there.
"""

from __future__ import annotations

import importlib
import sys
import threading
import uuid
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

LEDGER_PREFIX = "archivefs-budget"
_CLUSTER_TIMEOUT = 60.0  # seconds to wait for the scheduler's lock or answer


@dataclass(frozen=True, slots=True)
class Tally:
    """A budget's running total: ``spent`` against ``max_cost``, ``held`` of it for
    fee-charging reads approved ahead and not yet sent."""

    spent: float = 0.0
    held: float = 0.0

    def approved(self, cost: float, hold: float, max_cost: float | None) -> Tally | None:
        """``cost`` more spent, ``hold`` of it held for reads; ``None`` if over budget."""
        spent = self.spent + cost
        if max_cost is not None and spent > max_cost:
            return None
        return Tally(spent, self.held + min(hold, cost))

    def drawn(self, cost: float, max_cost: float | None) -> Tally | None:
        """One request of ``cost`` reserved: from what is held first, then counted anew;
        ``None`` if the new part takes ``spent`` over budget."""
        taken = min(self.held, cost)
        spent = self.spent + cost - taken
        if max_cost is not None and cost > taken and spent > max_cost:
            return None
        return Tally(spent, self.held - taken)

    def withdrawn(self, cost: float, hold: float) -> Tally:
        """An approval of ``cost`` (``hold`` of it held) taken back whole."""
        return Tally(max(0.0, self.spent - cost), max(0.0, self.held - min(hold, cost)))

    def released(self, amount: float) -> Tally:
        """``amount`` reserved and not spent given back."""
        return Tally(max(0.0, self.spent - amount), self.held)


class Ledger(Protocol):
    """Applies changes to one tally atomically."""

    def update(self, change: Callable[[Tally], Tally | None]) -> tuple[Tally, Tally | None]:
        """Apply ``change`` atomically: ``(before, after)``; ``after`` is ``None`` (and
        nothing changes) when ``change`` refuses."""

    def read(self) -> Tally:
        """The tally now."""


class LocalLedger:
    """A tally in this process, changed under a lock."""

    def __init__(self, tally: Tally | None = None) -> None:
        self._tally = tally or Tally()
        self._lock = threading.Lock()

    def update(self, change: Callable[[Tally], Tally | None]) -> tuple[Tally, Tally | None]:
        with self._lock:
            before = self._tally
            after = change(before)
            if after is not None:
                self._tally = after
            return before, after

    def read(self) -> Tally:
        with self._lock:
            return self._tally


_local_lock = threading.Lock()
_local_ledgers: weakref.WeakValueDictionary[str, LocalLedger] = weakref.WeakValueDictionary()


def local_ledger(name: str | None, seed: Tally) -> LocalLedger:
    """This process's ledger named ``name`` (made from ``seed`` if there is none yet), so a
    filesystem and its copies here (zarr's asynchronous copy made from ``to_json()``)
    count together; a ledger of its own without a name."""
    if name is None:
        return LocalLedger(seed)
    with _local_lock:
        ledger = _local_ledgers.get(name)
        if ledger is None:
            ledger = _local_ledgers[name] = LocalLedger(seed)
        return ledger


class ClusterLedger:
    """A tally on a ``distributed`` scheduler, shared by every process of the cluster.

    Each change holds the ledger's ``distributed.Lock`` while it reads the tally's
    ``distributed.Variable`` and sets the new one (four scheduler round trips). The
    first process to use the ledger sets it to ``seed`` (what the client had counted
    before the filesystem travelled); the Variable lives until the cluster closes.
    """

    def __init__(self, name: str, client: Any, seed: Tally) -> None:
        self.name = name
        self.client = client
        self.seed = seed
        self._here = threading.Lock()  # this process's threads queue here, not at the scheduler
        self._lock = _distributed().Lock(
            f"{name}-lock", scheduler_rpc=client.scheduler, loop=client.loop
        )

    def update(self, change: Callable[[Tally], Tally | None]) -> tuple[Tally, Tally | None]:
        distributed = _distributed()
        with self._here:
            if not self._lock.acquire(timeout=_CLUSTER_TIMEOUT):
                raise TimeoutError(
                    f"the budget ledger {self.name} on the Dask scheduler was not free within "
                    f"{_CLUSTER_TIMEOUT:.0f} s; nothing was requested."
                )
            try:
                before = self._get(distributed)
                after = change(before)
                if after is not None:
                    variable = distributed.Variable(self.name, client=self.client)
                    variable.set([after.spent, after.held])
                return before, after
            finally:
                self._lock.release()

    def read(self) -> Tally:
        return self._get(_distributed())

    def _get(self, distributed: Any) -> Tally:
        variable = distributed.Variable(self.name, client=self.client)
        try:
            spent, held = variable.get(timeout=0)
        except TimeoutError:  # nobody has used this ledger yet
            return self.seed
        return Tally(float(spent), float(held))


def new_ledger_name(max_cost: float | None) -> str | None:
    """A fresh ledger's name for a budget (none without one)."""
    return None if max_cost is None else f"{LEDGER_PREFIX}-{uuid.uuid4().hex}"


def cluster_client() -> Any | None:
    """The ``distributed`` client this process reaches its cluster with, or ``None``.

    In a worker process: the worker's own client (from any thread, also fsspec's I/O
    thread where ``get_worker`` does not answer); elsewhere the current client of
    this thread, if any. A process that has not imported ``distributed`` reaches no
    cluster: it is not imported here (a command line with ``--max-cost`` stays light).
    """
    if "distributed" not in sys.modules:
        return None
    distributed = _distributed()
    try:
        return distributed.get_client()
    except ValueError:
        pass
    from distributed.worker import _global_workers

    for worker in list(_global_workers):
        if getattr(worker, "status", None) is not None and worker.scheduler is not None:
            return worker._get_client()
    return None


def _distributed() -> Any:
    return importlib.import_module("distributed")
