"""Hooks users plug in: see or veto an estimate before anything is paid, cap the cost,
follow progress. The filesystem, the engine, notebooks and the CLI share them.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from archivefs.errors import BudgetExceededError
from archivefs.model import RestoreState

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.model import Plan
    from archivefs.pricing.estimate import Estimate

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
    """Callbacks around a restore.

    ``on_estimate`` hooks see every plan's estimate before any paid request;
    returning ``False`` vetoes it (an exception propagates). ``max_cost``
    refuses plans whose estimated total is above it. ``on_progress`` hooks
    receive :class:`Progress`; an exception in one is logged, never fatal.
    """

    on_estimate: list[Callable[[Plan, Estimate], bool | None]] = field(default_factory=list)
    max_cost: float | None = None
    on_progress: list[Callable[[Progress], None]] = field(default_factory=list)
    _warned: set[int] = field(default_factory=set, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_cost is not None and not (math.isfinite(self.max_cost) and self.max_cost >= 0):
            raise ValueError(
                f"max_cost must be a finite amount >= 0, got {self.max_cost!r}; "
                "pass max_cost=None for no budget."
            )

    @property
    def wants_estimate(self) -> bool:
        """Whether :meth:`approve` would look at an estimate at all."""
        return self.max_cost is not None or bool(self.on_estimate)

    def approve(self, plan: Plan, estimate: Estimate) -> None:
        """Raise :class:`BudgetExceededError` if the budget or a hook refuses the plan.

        The budget is checked first, so nobody is asked to approve what it refuses.
        """
        from archivefs.pricing.amounts import format_amount

        total = estimate.total
        if self.max_cost is not None and total > self.max_cost:
            fees = estimate.components.get("retrieval", 0.0)
            restores = len(plan.to_restore)
            what = (
                f"restoring and reading {len(plan)} group(s) ({restores} restore requests)"
                if restores
                else f"reading {len(plan)} object(s) that bill a retrieval fee"
            )
            fee_note = f", {format_amount(fees)} of it retrieval fees," if fees else ""
            raise BudgetExceededError(
                f"the estimated cost {format_amount(total, estimate.currency)} of "
                f"{what}{fee_note} is above the budget of "
                f"{format_amount(self.max_cost, estimate.currency)}; nothing was "
                "requested.",
                fix="raise the budget (max_cost= on the filesystem, --max-cost on the command "
                "line), "
                + (
                    "choose a cheaper tier (Bulk), or restore fewer objects."
                    if restores
                    else "or read fewer objects."
                ),
                estimate=total,
                budget=self.max_cost,
            )
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
