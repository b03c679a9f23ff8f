"""Hooks users plug in: see or veto an estimate before anything is paid, cap the cost,
follow progress. The filesystem, the engine, notebooks and the CLI share them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.errors import BudgetExceededError

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.model import Plan
    from archivefs.pricing.estimate import Estimate

logger = logging.getLogger("archivefs.hooks")

@dataclass
class Hooks:
    """Callbacks around a restore.

    ``on_estimate`` hooks see every plan's estimate before any paid request;
    returning ``False`` vetoes it (raising works too). ``max_cost`` refuses
    plans whose estimated total is above it. ``on_progress`` hooks receive
    restore progress; an exception in one is logged, never fatal.
    """

    on_estimate: list[Callable[[Plan, Estimate], bool | None]] = field(default_factory=list)
    max_cost: float | None = None
    on_progress: list[Callable[[Any], None]] = field(default_factory=list)
    _warned: set[int] = field(default_factory=set, repr=False)

    @property
    def wants_estimate(self) -> bool:
        return self.max_cost is not None or bool(self.on_estimate)

    def approve(self, plan: Plan, estimate: Estimate) -> None:
        """Raise :class:`BudgetExceededError` if the budget or a hook refuses the plan."""
        total = estimate.total
        if self.max_cost is not None and total > self.max_cost:
            raise BudgetExceededError(
                f"the estimated cost {total:.4f} {estimate.currency} of restoring and reading "
                f"{len(plan)} group(s) ({len(plan.to_restore)} restore requests) is above the "
                f"budget of {self.max_cost:.4f} {estimate.currency}; nothing was requested.",
                fix="raise the budget (max_cost= on the filesystem, --max-cost on the command "
                "line), choose a cheaper tier (Bulk), or restore fewer objects.",
                estimate=total,
                budget=self.max_cost,
            )
        for hook in self.on_estimate:
            if hook(plan, estimate) is False:
                name = getattr(hook, "__qualname__", repr(hook))
                raise BudgetExceededError(
                    f"the on_estimate hook {name} refused the plan "
                    f"(estimated {total:.4f} {estimate.currency}); nothing was requested.",
                    fix="change what the hook accepts, or remove it.",
                    estimate=total,
                    budget=self.max_cost,
                )

    def emit(self, progress: Any) -> None:
        """Call every progress hook; a failing hook is logged once and skipped."""
        for hook in self.on_progress:
            try:
                hook(progress)
            except Exception:
                if id(hook) not in self._warned:
                    self._warned.add(id(hook))
                    logger.warning("progress hook %r failed; it is skipped", hook, exc_info=True)
