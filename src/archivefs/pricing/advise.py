"""The tier advisor: monthly cost against read frequency, and the break-even points.

Every option costs ``monthly + a * per_access`` at ``a`` reads per month, so
two options cross at most once: ``a* = (monthly_b - monthly_a) / (per_access_a
- per_access_b)``. The lifecycle option keeps data in a first class for N days
and then moves it (see docs/cost-model.md for the model).
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from archivefs.model import RestoreTier, StorageClass
from archivefs.pricing.estimate import DAYS_PER_MONTH, Workload, estimate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from archivefs.pricing.sheet import PriceSheet

DEFAULT_GRID = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def break_even(
    per_access_a: float, monthly_a: float, per_access_b: float, monthly_b: float
) -> float | None:
    """Reads per month above which A is cheaper than B... or below; ``None``: one always wins."""
    if per_access_a == per_access_b:
        return None
    point = (monthly_b - monthly_a) / (per_access_a - per_access_b)
    return point if point > 0 else None


class Option(BaseModel):
    """One way to store the workload: its fixed monthly cost and its cost per access."""

    model_config = ConfigDict(frozen=True)

    name: str
    monthly: float
    per_access: float

    def cost(self, reads_per_month: float) -> float:
        return self.monthly + reads_per_month * self.per_access


class BreakEven(BaseModel):
    model_config = ConfigDict(frozen=True)

    cheaper_when_rare: str
    cheaper_when_frequent: str
    reads_per_month: float | None  # None: the first is cheaper at every frequency
    always_cheaper: str | None = None


class Advice(BaseModel):
    """Monthly costs per option over a grid of read frequencies, and where they cross."""

    model_config = ConfigDict(frozen=True)

    options: list[Option]
    grid: list[float]
    break_evens: list[BreakEven]

    def cheapest(self, reads_per_month: float) -> Option:
        return min(self.options, key=lambda o: o.cost(reads_per_month))

    def table(self) -> list[list[str]]:
        """Rows for a text table: option, monthly, per access, cost at each grid point."""
        header = ["option", "per month", "per access"] + [f"{a:g}/mo" for a in self.grid]
        rows = [header]
        for option in self.options:
            rows.append(
                [option.name, f"{option.monthly:.4f}", f"{option.per_access:.4f}"]
                + [f"{option.cost(a):.4f}" for a in self.grid]
            )
        return rows


def compare(options: Sequence[Option], grid: Sequence[float] = DEFAULT_GRID) -> Advice:
    """Break-even points between every pair of options."""
    points = []
    for a, b in combinations(options, 2):
        rare, frequent = (a, b) if a.monthly <= b.monthly else (b, a)
        point = break_even(rare.per_access, rare.monthly, frequent.per_access, frequent.monthly)
        always = None
        if point is None:
            always = min((a, b), key=lambda o: (o.monthly, o.per_access)).name
        points.append(
            BreakEven(
                cheaper_when_rare=rare.name,
                cheaper_when_frequent=frequent.name,
                reads_per_month=point,
                always_cheaper=always,
            )
        )
    return Advice(options=list(options), grid=list(grid), break_evens=points)


def option_for(
    workload: Workload,
    sheet: PriceSheet,
    storage_class: StorageClass,
    *,
    tier: RestoreTier = RestoreTier.STANDARD,
    egress: str = "same_region",
) -> Option:
    """The workload stored in ``storage_class``: monthly storage and the cost of one full read."""
    moved = workload.model_copy(update={"storage_class": storage_class})
    one = estimate(moved, sheet, tier=tier, reads=1, egress=egress)
    name = storage_class.value
    if storage_class.needs_restore:
        name = f"{name} ({tier.value} restore)"
    return Option(name=name, monthly=one.components["storage_per_month"], per_access=one.total)


def lifecycle_option(
    first: Option, then: Option, *, after_days: float, horizon_months: float = 12.0
) -> Option:
    """Keep data in ``first`` for ``after_days``, then in ``then``, over ``horizon_months``.

    Storage is averaged over the horizon; reads are assumed to be spread evenly
    over it, so each access costs the time-weighted mix of both classes' prices.
    """
    early = min(after_days / DAYS_PER_MONTH, horizon_months) / horizon_months
    return Option(
        name=f"{first.name} -> {then.name} after {after_days:g} d",
        monthly=early * first.monthly + (1 - early) * then.monthly,
        per_access=early * first.per_access + (1 - early) * then.per_access,
    )


def advise(
    workload: Workload,
    sheet: PriceSheet,
    classes: Sequence[StorageClass | str] = (
        StorageClass.STANDARD,
        StorageClass.STANDARD_IA,
        StorageClass.GLACIER_IR,
        StorageClass.GLACIER,
        StorageClass.DEEP_ARCHIVE,
    ),
    *,
    tier: RestoreTier | str = RestoreTier.STANDARD,
    egress: str = "same_region",
    lifecycle_after_days: float | None = None,
    reads_per_month: Sequence[float] = DEFAULT_GRID,
) -> Advice:
    """Compare storage classes for a workload: monthly cost vs reads per month."""
    restore_tier = RestoreTier.parse(tier)
    options = [
        option_for(workload, sheet, StorageClass.parse(str(c)), tier=restore_tier, egress=egress)
        for c in classes
    ]
    if lifecycle_after_days is not None and len(options) >= 2:
        options.append(lifecycle_option(options[0], options[-1], after_days=lifecycle_after_days))
    return compare(options, reads_per_month)
