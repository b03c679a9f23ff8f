"""Approval before anything is paid: the price sheet, estimates, the budget and hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archivefs.access.parts import Parts
from archivefs.model import ObjectState
from archivefs.plans import Plan

if TYPE_CHECKING:
    from archivefs.pricing import Estimate, PriceSheet


class Approval:
    """Shows restores and fee-charging reads to ``max_cost`` and ``on_estimate`` first."""

    def __init__(self, parts: Parts, price_sheet_name: str, egress: str) -> None:
        self.parts = parts
        self.price_sheet_name = price_sheet_name
        self.egress = egress
        self._price_sheet: PriceSheet | None = None

    @property
    def price_sheet(self) -> PriceSheet:
        """The price sheet estimates use (loaded on first use)."""
        if self._price_sheet is None:
            from archivefs.pricing import load_price_sheet

            self._price_sheet = load_price_sheet(self.price_sheet_name)
        return self._price_sheet

    def approve(self, plan: Plan) -> None:
        """The engine calls this before any paid request: budget and estimate hooks.

        The estimate of a plan with restores covers the whole job: its restores and
        the reads of every group, fee-charging ones included.
        """
        if self.parts.hooks.wants_estimate and plan.to_restore:
            self.parts.hooks.approve(plan, self.estimate_plan)

    def approve_reads(self, plan: Plan) -> None:
        """Show the fee-charging reads of ``plan`` to the budget and estimate hooks.

        Raises :class:`BudgetExceededError` if ``max_cost`` or an ``on_estimate``
        hook refuses them; does nothing without fee-charging reads or without hooks.
        Bulk reads (``cat``/``get`` of many paths), ``plan_dataset`` and ``prefetch``
        call it before the first byte; restores are approved when they are sent.
        What was approved before (by any call on this filesystem) is not counted
        again: ``max_cost`` bounds the running total (docs/cost-model.md).
        """
        if self.parts.hooks.wants_estimate and plan.fee_reads:
            self.parts.hooks.approve(plan.only(plan.fee_reads), self.estimate_plan)

    def approve_read(self, state: ObjectState) -> None:
        """Approve the read of one object whose state is known (a retrieval fee, if any)."""
        if (
            self.parts.hooks.wants_estimate
            and state.readable
            and state.storage_class.has_retrieval_fee
        ):
            plan = self.parts.engine.plan_known(
                {state.path: state}, tier=self.parts.tier, days=self.parts.days
            )
            self.approve_reads(plan)

    def estimate_plan(self, plan: Plan, **kwargs: Any) -> Estimate:
        """The cost and latency of a plan with this filesystem's price sheet and egress path.

        Unless ``read_amplification`` is given, the amplification this
        filesystem has measured on its own reads so far is used (1.0 before any).
        """
        kwargs.setdefault("egress", self.egress)
        if getattr(self.parts.store, "copies", False):  # Azure, rehydrate="copy"
            kwargs.setdefault("rehydrate_by_copy", True)
        if kwargs.get("read_amplification") is None:
            kwargs["read_amplification"] = self.parts.read_stats.amplification or 1.0
        from archivefs.pricing import estimate

        return estimate(plan, self.price_sheet, **kwargs)
