"""Hooks users plug in: see or veto an estimate before anything is paid, cap the cost,
follow progress. The filesystem, the engine, notebooks and the CLI share them.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.errors import BudgetExceededError
from archivefs.ledger import (
    ClusterLedger,
    Ledger,
    LocalLedger,
    Tally,
    cluster_client,
    local_ledger,
)
from archivefs.model import RestoreState
from archivefs.providers import provider_named

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.plans import Plan
    from archivefs.pricing.estimate import Estimate

    Pricer = Callable[[Plan], Estimate]

logger = logging.getLogger("archivefs.hooks")


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a batch restore stands: groups and bytes by state, requests sent, ETA."""

    archived: int = 0
    restoring: int = 0
    restored: int = 0
    hot: int = 0
    failed: int = 0
    archived_bytes: int = 0
    restoring_bytes: int = 0
    restored_bytes: int = 0
    hot_bytes: int = 0
    failed_bytes: int = 0
    requests_sent: int = 0
    eta_seconds: float | None = None
    done: bool = False

    @classmethod
    def from_plan(
        cls,
        plan: Plan,
        *,
        requests_sent: int = 0,
        failed: frozenset[str] = frozenset(),
        eta_seconds: float | None = None,
    ) -> Progress:
        """Count a plan's groups by state; groups whose key is in ``failed`` count as failed."""
        counts = dict.fromkeys(("archived", "restoring", "restored", "hot", "failed"), 0)
        sizes = dict.fromkeys(counts, 0)
        for group in plan.groups:
            state = "failed" if group.key in failed else group.state.restore.value
            counts[state] += 1
            sizes[state] += group.size
        unfinished = counts[RestoreState.ARCHIVED.value] + counts[RestoreState.RESTORING.value]
        return cls(
            archived=counts["archived"],
            restoring=counts["restoring"],
            restored=counts["restored"],
            hot=counts["hot"],
            failed=counts["failed"],
            archived_bytes=sizes["archived"],
            restoring_bytes=sizes["restoring"],
            restored_bytes=sizes["restored"],
            hot_bytes=sizes["hot"],
            failed_bytes=sizes["failed"],
            requests_sent=requests_sent,
            eta_seconds=eta_seconds,
            done=unfinished == 0,
        )

    @property
    def groups(self) -> int:
        return self.archived + self.restoring + self.restored + self.hot + self.failed

    @property
    def ready(self) -> int:
        """Groups that can be read now."""
        return self.restored + self.hot


@dataclass
class Hooks:
    """Callbacks around a restore, and the budget's running total.

    ``on_estimate`` hooks see the estimate of everything before it is paid for;
    returning ``False`` vetoes it (an exception propagates). ``max_cost`` bounds
    the total of everything these hooks approved and charged over their life:
    each approval adds its estimate to :attr:`spent`, each request charged on its
    own (a GET of a fee-charging object, :meth:`charge`) adds its price, and
    either is refused when it would take :attr:`spent` above ``max_cost``. What a
    plan approved once (a group's restore at a tier, an object's read) is not
    shown again; the reads it approved are *held* and drawn by the GETs that make
    them, and every GET beyond them is charged anew, as the provider bills it.
    ``on_progress`` hooks receive :class:`Progress`; an exception in one is logged,
    never fatal.

    ``ledger_name``: where the total is shared on a ``distributed`` cluster (the
    filesystem names it; its pickled copies carry it, with ``seed``, the tally
    counted before it travelled): used from the first approval or charge in a
    process that reaches a cluster (:func:`archivefs.ledger.cluster_client`), so the
    client and every worker process count against one ``max_cost``.
    """

    on_estimate: list[Callable[[Plan, Estimate], bool | None]] = field(default_factory=list)
    max_cost: float | None = None
    on_progress: list[Callable[[Progress], None]] = field(default_factory=list)
    ledger_name: str | None = None
    seed: Tally = field(default_factory=Tally)
    _approved: set[tuple[str, str]] = field(
        default_factory=set, init=False, repr=False, compare=False
    )
    _lock: threading.RLock = field(
        default_factory=threading.RLock, init=False, repr=False, compare=False
    )
    _warned: set[int] = field(default_factory=set, init=False, repr=False, compare=False)
    _local: LocalLedger = field(init=False, repr=False, compare=False)
    _shared: Ledger | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_budget(self.max_cost)
        self._local = local_ledger(self.ledger_name, self.seed)  # shared by copies here

    @property
    def wants_estimate(self) -> bool:
        """Whether :meth:`approve` would look at an estimate at all."""
        return self.max_cost is not None or bool(self.on_estimate)

    @property
    def ledger(self) -> Ledger:
        """Where the total is kept: the cluster's ledger once this process reaches a
        cluster (for a budget with a ``ledger_name``), else this process's."""
        if self._shared is None and self.ledger_name is not None and self.max_cost is not None:
            client = cluster_client()
            if client is not None:
                self._shared = ClusterLedger(self.ledger_name, client, self._local.read())
        return self._shared or self._local

    @property
    def spent(self) -> float:
        """The running total against ``max_cost`` (on a cluster: the whole job's)."""
        return self.ledger.read().spent

    @property
    def held(self) -> float:
        """The part of :attr:`spent` approved for fee-charging reads not yet sent."""
        return self.ledger.read().held

    def travelling(self) -> dict[str, Any]:
        """The options that give a copy of the filesystem in another process this
        budget's ledger and what it had counted (nothing without a budget). Sends no
        request: it may run while a cluster's client pickles a graph."""
        if self.ledger_name is None or self.max_cost is None:
            return {}
        shared = self._shared
        seed = shared.seed if isinstance(shared, ClusterLedger) else self._local.read()
        return {"budget_ledger": self.ledger_name, "budget_seed": [seed.spent, seed.held]}

    def set_budget(self, max_cost: float | None, *, reset: bool = False) -> None:
        """Change the budget (``None``: no budget); ``reset=True`` also starts the running
        total again from 0 and forgets what was approved."""
        _check_budget(max_cost)
        with self._lock:
            self.max_cost = max_cost
            if reset:
                self.ledger.update(lambda _: Tally())
                self._approved.clear()

    def approve(self, plan: Plan, price: Pricer) -> None:
        """Approve what ``plan`` would pay for that was not approved before, or raise
        :class:`BudgetExceededError` (nothing is counted then).

        ``price`` estimates a plan. The groups already approved are left out of the
        plan that is priced and shown to the hooks; the budget is checked (and the
        estimate reserved) first, so nobody is asked to approve what it refuses, and
        a veto gives the reservation back. The estimate of the plan's fee-charging
        reads is held for the GETs that make them (:meth:`charge`). Approvals from
        several threads (or processes of a cluster) at once are counted one after
        the other.
        """
        with self._lock:
            fresh, items = self._fresh(plan)
            if not items:
                return  # all of it approved before: nothing more to pay
            estimate = price(fresh)
            total = estimate.total
            hold = 0.0
            if fresh.fee_reads and self.max_cost is not None:
                fees = fresh if len(fresh.fee_reads) == len(fresh) else fresh.only(fresh.fee_reads)
                hold = total if fees is fresh else price(fees).total
            before, after = self.ledger.update(lambda t: t.approved(total, hold, self.max_cost))
            if after is None:
                raise self._over_budget(fresh, estimate, before.spent)
            try:
                self._ask_hooks(fresh, estimate)
            except BaseException:
                self.ledger.update(lambda t: t.withdrawn(total, hold))  # vetoed: given back
                raise
            self._approved.update(items)

    def charge(self, cost: float, what: str, path: str) -> None:
        """Reserve ``cost`` for one request about to be sent (``what``: e.g. "a GET of
        1.0 MiB"), from what an approval holds first; :class:`BudgetExceededError` if it
        does not fit (nothing is sent then). Give back what it did not spend with
        :meth:`refund`."""
        if self.max_cost is None or cost <= 0:
            return
        max_cost = self.max_cost
        before, after = self.ledger.update(lambda t: t.drawn(cost, max_cost))
        if after is None:
            from archivefs.pricing.amounts import format_amount

            left = max(0.0, max_cost - before.spent)
            raise BudgetExceededError(
                f"{what}, billed {format_amount(cost)} (request and retrieval fee), is above "
                f"what is left ({format_amount(left)}) of the budget of "
                f"{format_amount(max_cost)}; nothing was requested.",
                path=path,
                fix="raise the budget (max_cost= on the filesystem, --max-cost on the command "
                "line, fs.hooks.set_budget() on a filesystem in use), or read less: every GET "
                "of an object that bills a retrieval fee is billed, re-reads too.",
                estimate=cost,
                budget=max_cost,
            )

    def refund(self, amount: float) -> None:
        """Give back ``amount`` reserved by :meth:`charge` that was not spent."""
        if self.max_cost is not None and amount > 0:
            self.ledger.update(lambda t: t.released(amount))

    def _fresh(self, plan: Plan) -> tuple[Plan, list[tuple[str, str]]]:
        """The part of ``plan`` not approved before, and what approving it records."""
        table = plan.table
        restore = table.needs_request().tolist()
        tier = plan.tier.value
        rows: list[int] = []
        items: list[tuple[str, str]] = []
        for row, key in enumerate(table.keys):
            # a restore's estimate covers the group's read too
            mine = [(key, "read"), (key, f"restore:{tier}")] if restore[row] else [(key, "read")]
            if any(item not in self._approved for item in mine):
                rows.append(row)
                items += mine
        return (plan if len(rows) == len(plan) else plan.take(rows)), items

    def _over_budget(self, plan: Plan, estimate: Estimate, spent: float) -> BudgetExceededError:
        from archivefs.pricing.amounts import format_amount

        assert self.max_cost is not None
        total = estimate.total
        fees = estimate.components.get("retrieval", 0.0)
        restores = len(plan.to_restore)
        what = (
            f"restoring and reading {len(plan)} group(s) ({restores} restore requests)"
            if restores
            else f"reading {len(plan)} object(s) that bill a retrieval fee"
        )
        fee_note = f", {format_amount(fees)} of it retrieval fees," if fees else ""
        budget = f"the budget of {format_amount(self.max_cost, estimate.currency)}"
        if spent:
            budget = (
                f"what is left ({format_amount(max(0.0, self.max_cost - spent))}) of "
                f"{budget}, {format_amount(spent)} of which this filesystem approved before"
            )
        return BudgetExceededError(
            f"the estimated cost {format_amount(total, estimate.currency)} of "
            f"{what}{fee_note} is above {budget}; nothing was requested.",
            fix="raise the budget (max_cost= on the filesystem, --max-cost on the command "
            "line"
            + (", fs.hooks.set_budget() on a filesystem in use" if spent else "")
            + "), "
            + (_cheaper_restores(plan) if restores else "or read fewer objects."),
            estimate=total,
            budget=self.max_cost,
        )

    def _ask_hooks(self, plan: Plan, estimate: Estimate) -> None:
        from archivefs.pricing.amounts import format_amount

        total = estimate.total
        for hook in self.on_estimate:
            if hook(plan, estimate) is False:
                name = getattr(hook, "__qualname__", repr(hook))
                raise BudgetExceededError(
                    f"the on_estimate hook {name} refused the plan "
                    f"(estimated {format_amount(total, estimate.currency)}); nothing was "
                    "requested.",
                    fix="change what the hook accepts, or remove it.",
                    estimate=total,
                    budget=self.max_cost,
                )

    def emit(self, progress: Progress) -> None:
        """Call every progress hook; a failing hook is logged (a warning once) and skipped."""
        for hook in self.on_progress:
            try:
                hook(progress)
            except Exception:
                if id(hook) in self._warned:
                    logger.debug("progress hook %r failed again", hook, exc_info=True)
                else:
                    self._warned.add(id(hook))
                    logger.warning("progress hook %r failed; it is skipped", hook, exc_info=True)


def _check_budget(max_cost: float | None) -> None:
    if max_cost is not None and not (math.isfinite(max_cost) and max_cost >= 0):
        raise ValueError(
            f"max_cost must be a finite amount >= 0, got {max_cost!r}; "
            "pass max_cost=None for no budget."
        )


def _cheaper_restores(plan: Plan) -> str:
    """A refused restore's advice: the provider's cheaper speed when it has one."""
    spec = provider_named(plan.tier.provider)
    cheaper = spec.cheaper_speed(str(plan.tier))
    speed = f"choose a cheaper {spec.speed_word} ({cheaper}), " if cheaper else ""
    return f"{speed}or restore fewer objects."
