"""Approval before anything is paid: the price sheet, estimates, the budget and hooks."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from archivefs.access.parts import Parts
from archivefs.model import ObjectState
from archivefs.plans import Plan

if TYPE_CHECKING:
    from archivefs.model import StorageClass
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

        The contract is documented on ``ArchiveFileSystem.approve_reads``.
        """
        if self.parts.hooks.wants_estimate and plan.fee_reads:
            self.parts.hooks.approve(plan.only(plan.fee_reads), self.estimate_plan)

    def bills_reads(self, state: ObjectState) -> bool:
        """Whether every GET of this readable object bills a retrieval fee, and the
        budget or an estimate hook watches what is spent."""
        return (
            self.parts.hooks.wants_estimate
            and state.readable
            and state.storage_class.has_retrieval_fee
        )

    def charge_read(self, state: ObjectState, nbytes: int) -> float:
        """Reserve one GET of ``nbytes`` of ``state``'s object as the provider bills it (its
        request and retrieval fee, this filesystem's egress): from what an approved plan
        holds for reads first, else counted anew; :class:`BudgetExceededError` when it
        does not fit. Returns the amount reserved. Blocking (on a cluster it asks the
        scheduler's ledger)."""
        if self.parts.hooks.on_estimate:  # shown the object's read once, as a plan
            self.approve_reads(
                self.parts.engine.plan_known(
                    {state.path: state}, tier=self.parts.tier, days=self.parts.days
                )
            )
        cost = self.read_price(state, nbytes)
        what = f"a GET of {nbytes} bytes of this {state.storage_class.value} object"
        self.parts.hooks.charge(cost, what, state.path)
        return cost

    def charge_upload(self, storage_class: StorageClass, size: int, path: str) -> None:
        """Reserve one upload of ``size`` bytes into ``storage_class`` (its PUT request,
        as the price sheet bills it) from the budget: :class:`BudgetExceededError` when
        it does not fit, and nothing is sent. Blocking (a cluster's ledger)."""
        from archivefs.pricing.estimate import write_cost

        cost = write_cost(self.price_sheet, storage_class, size)
        what = f"an upload of {size} bytes into {storage_class.value}"
        self.parts.hooks.charge(cost.requests, what, path)

    def refund_read(self, state: ObjectState, asked: int, got: int, reserved: float) -> None:
        """Give back what a GET reserved for ``asked`` bytes and did not spend: the bytes it
        did not fetch (all of them when it failed; its request fee stays counted)."""
        if got < asked:
            self.parts.hooks.refund(reserved - self.read_price(state, got))

    def read_price(self, state: ObjectState, nbytes: int) -> float:
        """What one GET of ``nbytes`` of ``state``'s object costs (the one estimate)."""
        one = replace(state, size=nbytes)
        plan = self.parts.engine.plan_known(
            {state.path: one}, tier=self.parts.tier, days=self.parts.days
        )
        return self.estimate_plan(plan, read_amplification=1.0).total

    def estimate_plan(self, plan: Plan, **kwargs: Any) -> Estimate:
        """The cost and latency of a plan with this filesystem's price sheet and egress path.

        The contract is documented on ``ArchiveFileSystem.estimate_plan``.
        """
        kwargs.setdefault("egress", self.egress)
        if getattr(self.parts.store, "copies", False):  # Azure, rehydrate="copy"
            kwargs.setdefault("rehydrate_by_copy", True)
        if kwargs.get("read_amplification") is None:
            kwargs["read_amplification"] = self.parts.read_stats.amplification or 1.0
        from archivefs.pricing import estimate

        return estimate(plan, self.price_sheet, **kwargs)
