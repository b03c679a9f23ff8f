"""A placement's cost over a year, by component, from one provider's price sheet.

Pure arithmetic (docs/cost-model.md, "Planning a whole archive", gives every
formula): a month is 30 days, a year 12 months, GB are ``sheet.bytes_per_gb``
bytes. Recurring components are priced per month and multiplied by 12;
transitions and early deletion are paid once, in the year the rule moves the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, computed_field

from archivefs.errors import WorkloadError
from archivefs.model import StorageClass
from archivefs.pricing.copy_days import copy_days
from archivefs.pricing.estimate import DAYS_PER_MONTH
from archivefs.pricing.workload_file import ON_PREMISES, tier_of

if TYPE_CHECKING:
    from archivefs.pricing.sheet import ClassPrice, PriceSheet
    from archivefs.pricing.workload_file import ArchiveWorkload, Placement

COMPONENTS = (
    "storage",  # in the cloud's classes
    "on_premises",  # the on-premises share's storage, when its price is given
    "requests",
    "retrieval",
    "restores",
    "restored_copies",
    "egress",
    "transitions",
    "early_deletion",
    "fixed",
)
MONTHS_PER_YEAR = 12
HOURS_PER_MONTH = 24 * DAYS_PER_MONTH
TIB = 2**40


class PlacementCost(BaseModel):
    """One placement's year: the components, the bound of its copies, what it assumed."""

    model_config = ConfigDict(frozen=True)

    name: str
    annual: dict[str, float]
    restored_copies_bound: float  # the year's copies at days + 1; ``annual`` holds the mean
    per_tib_read: float  # monthly cost added by each TiB read a month
    notes: list[str]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def annual_total(self) -> float:
        """Everything the placement costs in a year."""
        return sum(self.annual.values())

    @computed_field  # type: ignore[prop-decorator]
    @property
    def monthly_total(self) -> float:
        """The annual total over 12 months (one-off charges spread over the year)."""
        return self.annual_total / MONTHS_PER_YEAR

    @computed_field  # type: ignore[prop-decorator]
    @property
    def monthly(self) -> dict[str, float]:
        """Each component over 12 months."""
        return {k: v / MONTHS_PER_YEAR for k, v in self.annual.items()}


def _parse(name: str, provider: str) -> StorageClass:
    return StorageClass.parse(name, provider=provider)


def _billable_ratio(workload: ArchiveWorkload, floor: int) -> float:
    """Billable bytes per stored byte for a class that bills at least ``floor`` per object."""
    data = workload.data
    if data.size_distribution is not None:
        sizes = data.size_distribution
        return sum(max(s, floor) for s in sizes) / sum(sizes)
    mean = data.mean_object_size
    return max(mean, floor) / mean


def _storage(
    workload: ArchiveWorkload, sheet: PriceSheet, klass: StorageClass, nbytes: int
) -> float:
    price = sheet.price(klass)
    objects = nbytes / workload.data.mean_object_size
    billable = nbytes * _billable_ratio(workload, price.min_billable_object_bytes)
    cost = (billable + objects * price.overhead_bytes_at_class) * price.storage_per_gb_month
    if price.overhead_bytes_at_standard:
        standard = sheet.price(StorageClass.STANDARD).storage_per_gb_month
        cost += objects * price.overhead_bytes_at_standard * standard
    return cost / sheet.bytes_per_gb


def placement_cost(
    workload: ArchiveWorkload,
    placement: Placement,
    sheet: PriceSheet,
    provider: str,
    *,
    read_fractions: dict[str, float],
    bytes_read_per_month: float,
) -> tuple[dict[str, float], float, list[str]]:
    """The annual components, the copies' bound and notes, at ``bytes_read_per_month``.

    ``read_fractions`` splits the reads over the placement's classes (they add to 1).
    """
    parts = dict.fromkeys(COMPONENTS, 0.0)
    notes: list[str] = []
    shares = workload.shares(placement)
    cloud = {k: v for k, v in shares.items() if k != ON_PREMISES}
    gb = float(sheet.bytes_per_gb)
    mean = workload.data.mean_object_size
    copy_bound = 0.0
    egress_bytes = 0.0
    tier = tier_of(workload, provider)
    for name, nbytes in cloud.items():
        klass = _parse(name, provider)
        price = sheet.price(klass)
        parts["storage"] += _storage(workload, sheet, klass, nbytes) * MONTHS_PER_YEAR
        read = bytes_read_per_month * read_fractions.get(name, 0.0) * MONTHS_PER_YEAR
        if not read:
            continue
        parts["requests"] += read / mean * price.get_per_1000 / 1000
        egress_bytes += read
        if klass.needs_restore:
            restore = sheet.restore_price(klass, tier)
            parts["restores"] += read / mean * restore.per_1000_requests / 1000
            parts["restores"] += read / gb * restore.per_gb
            copy_price = sheet.price(sheet.restored_copy_class).storage_per_gb_month
            days = copy_days(workload.restore.days, restore.hours, "expected")
            parts["restored_copies"] += read / gb * copy_price * days.expected / DAYS_PER_MONTH
            copy_bound += read / gb * copy_price * days.bound / DAYS_PER_MONTH
        else:
            parts["retrieval"] += read / gb * price.retrieval_per_gb
    on_prem = shares.get(ON_PREMISES, 0)
    if on_prem:
        if placement.on_premises_per_tib_month is not None:
            rate = placement.on_premises_per_tib_month
            parts["on_premises"] += on_prem / TIB * rate * MONTHS_PER_YEAR
            notes.append(f"on_premises: {on_prem / TIB:,.1f} TiB at {rate:g} a TiB-month.")
        else:
            notes.append(
                f"{on_prem / TIB:,.1f} TiB on premises, and the data read from it: excluded "
                "(give on_premises_per_tib_month to include its storage)."
            )
    for load in workload.requests:
        parts["requests"] += _request_load(
            load.per_hour, load.kind, load.storage_class, cloud, sheet, provider
        )
    parts["egress"] = _egress(workload, sheet, egress_bytes, notes)
    for rule in placement.transitions:
        moved = cloud[rule.to_class]
        target, source = (
            sheet.price(_parse(rule.to_class, provider)),
            sheet.price(_parse(rule.from_class, provider)),
        )
        parts["transitions"] += moved / mean * target.transition_in_per_1000 / 1000
        parts["early_deletion"] += _early(source, moved / gb, rule.after_days)
    parts["fixed"] = sum(workload.fixed_monthly.values()) * MONTHS_PER_YEAR
    return parts, copy_bound, notes


def _request_load(
    per_hour: float,
    kind: str,
    named: str | None,
    cloud: dict[str, int],
    sheet: PriceSheet,
    provider: str,
) -> float:
    """A year of ``per_hour`` requests, at ``named``'s price or spread over the cloud shares."""
    if named is not None:
        weights = {named: 1.0}
    else:
        total = sum(cloud.values())
        if not total:
            return 0.0
        weights = {k: v / total for k, v in cloud.items()}
    cost = 0.0
    for name, weight in weights.items():
        price = sheet.price(_parse(name, provider))
        each = price.get_per_1000 if kind == "get" else price.put_per_1000
        cost += per_hour * weight * HOURS_PER_MONTH * MONTHS_PER_YEAR * each / 1000
    return cost


def _egress(workload: ArchiveWorkload, sheet: PriceSheet, nbytes: float, notes: list[str]) -> float:
    """A year of downloads over the workload's path: its own price, or the sheet's monthly tiers."""
    egress = workload.egress
    gb = nbytes / sheet.bytes_per_gb
    if egress.per_gb is not None:
        return gb * egress.per_gb
    if egress.path not in sheet.egress:
        raise WorkloadError(
            f"egress path {egress.path!r} is not priced by {sheet.name}.",
            path=workload.name,
            fix=f"use one of {', '.join(sorted(sheet.egress))}, or give egress.per_gb.",
        )
    monthly = sheet.egress_cost(gb / MONTHS_PER_YEAR, egress.path)
    return monthly * MONTHS_PER_YEAR


def _early(source: ClassPrice, gb: float, after_days: float) -> float:
    """What leaving ``source`` after ``after_days`` pays for its remaining minimum days."""
    remaining = max(0.0, source.min_storage_days - after_days)
    return gb * source.storage_per_gb_month * remaining / DAYS_PER_MONTH
