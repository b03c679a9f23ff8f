"""Estimates: what a plan (or a what-if workload) will cost and how long it will take.

Pure arithmetic over a :class:`PriceSheet`; every formula is in
docs/cost-model.md. Amounts are in the sheet's currency, GB are
``sheet.bytes_per_gb`` bytes, a month is 30 days.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from archivefs.errors import PriceSheetError
from archivefs.model import Action, Plan, RestoreTier, StorageClass
from archivefs.pricing.sheet import PriceSheet

COMPONENTS = (
    "requests",
    "retrieval",
    "restore_requests",
    "restore_data",
    "restored_copy_storage",
    "egress",
    "early_deletion",
    "storage_per_month",
)
DAYS_PER_MONTH = 30.0
DEFAULT_THROUGHPUT = 100e6  # bytes/s, a typical single-client S3 stream


class Workload(BaseModel):
    """A what-if: ``objects`` objects of ``total_bytes`` in ``storage_class``, read ``reads`` times.

    ``size_distribution`` (object sizes in bytes, cycled over ``objects``) makes
    minimum billable sizes bite where they should; ``age_days`` is how long the
    objects have been stored (early deletion when ``delete_after_read``).
    """

    model_config = ConfigDict(frozen=True)

    objects: Annotated[int, Field(ge=0)]
    total_bytes: Annotated[int, Field(ge=0)]
    storage_class: StorageClass
    size_distribution: list[Annotated[int, Field(ge=0)]] | None = None
    age_days: Annotated[float, Field(ge=0)] | None = None
    delete_after_read: bool = False

    @model_validator(mode="before")
    @classmethod
    def _object_size(cls, data: Any) -> Any:
        if isinstance(data, dict) and "object_size" in data:
            data = dict(data)
            size = data.pop("object_size")
            data.setdefault("total_bytes", int(size) * int(data.get("objects", 0)))
        return data

    def sizes(self) -> list[int]:
        """Sizes of every object (uniform unless a distribution is given)."""
        if self.objects == 0:
            return []
        if self.size_distribution:
            dist = self.size_distribution
            return [dist[i % len(dist)] for i in range(self.objects)]
        base, extra = divmod(self.total_bytes, self.objects)
        return [base + (1 if i < extra else 0) for i in range(self.objects)]


class Estimate(BaseModel):
    """The cost breakdown and latency of a plan or workload."""

    model_config = ConfigDict(frozen=True)

    currency: str
    sheet: str
    tier: RestoreTier | None
    components: dict[str, float]
    restore_hours: tuple[float, float]
    transfer_seconds: float
    restore_request_count: int
    get_request_count: int
    bytes_restored: int
    bytes_read: int
    warnings: list[str] = Field(default_factory=list)

    @property
    def total(self) -> float:
        """Everything this job pays, excluding the ongoing ``storage_per_month``."""
        return sum(v for k, v in self.components.items() if k != "storage_per_month")

    def table(self) -> list[tuple[str, float]]:
        return [(k, self.components[k]) for k in COMPONENTS] + [("total", self.total)]


class _Tally:
    """Accumulates components while walking groups or objects."""

    def __init__(self) -> None:
        self.parts = dict.fromkeys(COMPONENTS, 0.0)
        self.hours: list[tuple[float, float]] = []
        self.restore_requests = 0
        self.gets = 0
        self.bytes_restored = 0
        self.bytes_read = 0.0
        self.egress_gb = 0.0
        self.warnings: list[str] = []


def estimate(
    plan_or_workload: Plan | Workload,
    sheet: PriceSheet,
    *,
    tier: RestoreTier | str | None = None,
    days: int | None = None,
    egress: str = "same_region",
    reads: int = 1,
    read_amplification: float = 1.0,
    throughput_bytes_per_s: float = DEFAULT_THROUGHPUT,
) -> Estimate:
    """Estimate a plan (what will really be done) or a workload (what-if).

    Parameters
    ----------
    tier, days:
        Restore tier and restored-copy days; default to the plan's (or Standard, 1).
    egress:
        The network path the bytes take (a key of ``sheet.egress``).
    reads:
        How many times the data is read (each read pays GETs, retrieval, egress;
        a workload's every read also pays a restore of archived data).
    read_amplification:
        Bytes fetched per byte needed (1.0: exact reads).
    """
    if reads < 0 or read_amplification < 1.0 or throughput_bytes_per_s <= 0:
        raise PriceSheetError(
            f"bad estimate parameters: reads={reads}, read_amplification={read_amplification}, "
            f"throughput_bytes_per_s={throughput_bytes_per_s}.",
            fix="use reads >= 0, read_amplification >= 1.0 and a positive throughput.",
        )
    chosen_tier = RestoreTier.parse(tier) if tier is not None else None
    if isinstance(plan_or_workload, Plan):
        restore_tier = chosen_tier or plan_or_workload.tier
        restore_days = days if days is not None else plan_or_workload.days
        tally = _tally_plan(
            plan_or_workload, sheet, restore_tier, restore_days, reads, read_amplification
        )
    else:
        restore_tier = chosen_tier or RestoreTier.STANDARD
        restore_days = days if days is not None else 1
        if chosen_tier is None and plan_or_workload.storage_class.needs_restore:
            tally_warning = (
                f"{plan_or_workload.storage_class.value} needs a restore and no tier was given; "
                "estimated with the Standard tier."
            )
        else:
            tally_warning = None
        tally = _tally_workload(
            plan_or_workload, sheet, restore_tier, restore_days, reads, read_amplification
        )
        if tally_warning:
            tally.warnings.append(tally_warning)
    tally.parts["egress"] = sheet.egress_cost(tally.egress_gb, egress)
    if read_amplification > 1.0 and tally.parts["egress"] > 0:
        tally.warnings.append(
            f"read amplification {read_amplification:g} multiplies egress and retrieval: "
            f"{tally.bytes_read / read_amplification / sheet.bytes_per_gb:.3f} GB needed, "
            f"{tally.bytes_read / sheet.bytes_per_gb:.3f} GB fetched."
        )
    hours = (
        (max(h[0] for h in tally.hours), max(h[1] for h in tally.hours))
        if tally.hours
        else (0.0, 0.0)
    )
    return Estimate(
        currency=sheet.currency,
        sheet=sheet.name,
        tier=restore_tier if tally.restore_requests else None,
        components=tally.parts,
        restore_hours=hours,
        transfer_seconds=tally.bytes_read / throughput_bytes_per_s,
        restore_request_count=tally.restore_requests,
        get_request_count=tally.gets,
        bytes_restored=tally.bytes_restored,
        bytes_read=int(tally.bytes_read),
        warnings=tally.warnings,
    )


def _restore(
    tally: _Tally,
    sheet: PriceSheet,
    klass: StorageClass,
    tier: RestoreTier,
    nbytes: int,
    days: int,
    requests: int = 1,
) -> None:
    """``requests`` restore requests for ``nbytes`` in all: request fee, data fee, copy storage."""
    price = sheet.restore_price(klass, tier)
    gb = nbytes / sheet.bytes_per_gb
    tally.parts["restore_requests"] += requests * price.per_1000_requests / 1000
    tally.parts["restore_data"] += gb * price.per_gb
    copy_price = sheet.price(sheet.restored_copy_class).storage_per_gb_month
    if klass.needs_restore:  # Intelligent-Tiering objects move back; no temporary copy
        tally.parts["restored_copy_storage"] += gb * copy_price * days / DAYS_PER_MONTH
    tally.hours.append(price.hours)
    tally.restore_requests += requests
    tally.bytes_restored += nbytes


def _read(
    tally: _Tally,
    sheet: PriceSheet,
    klass: StorageClass,
    read_bytes: int,
    requests: int,
    reads: int,
    amplification: float,
    *,
    restored: bool,
) -> None:
    """``reads`` passes over ``read_bytes`` in ``requests`` GETs each."""
    price = sheet.price(klass)
    fetched = read_bytes * amplification * reads
    gb = fetched / sheet.bytes_per_gb
    tally.parts["requests"] += requests * reads * price.get_per_1000 / 1000
    if not restored:  # restored archive copies already paid restore_data
        tally.parts["retrieval"] += gb * price.retrieval_per_gb
    tally.gets += requests * reads
    tally.bytes_read += fetched
    tally.egress_gb += gb


def _monthly_storage(sheet: PriceSheet, klass: StorageClass, size: int) -> float:
    price = sheet.price(klass)
    billable = max(size, price.min_billable_object_bytes) + price.overhead_bytes_at_class
    standard = (
        sheet.price(StorageClass.STANDARD).storage_per_gb_month
        if (price.overhead_bytes_at_standard)
        else 0.0
    )
    return (
        billable * price.storage_per_gb_month + price.overhead_bytes_at_standard * standard
    ) / sheet.bytes_per_gb


def _tally_plan(
    plan: Plan, sheet: PriceSheet, tier: RestoreTier, days: int, reads: int, amplification: float
) -> _Tally:
    tally = _Tally()
    below_minimum = 0
    for group in plan.groups:
        state = group.state
        klass = state.storage_class
        price = sheet.price(klass, path=state.path)
        if group.action in (Action.RESTORE, Action.RENEW):
            _restore(tally, sheet, klass, tier, state.size, days)
        restored = klass.needs_restore or state.archive_access is not None
        _read(
            tally,
            sheet,
            klass,
            group.read_bytes,
            group.read_requests,
            reads,
            amplification,
            restored=restored,
        )
        tally.parts["storage_per_month"] += _monthly_storage(sheet, klass, state.size)
        if state.size < price.min_billable_object_bytes:
            below_minimum += 1
    if below_minimum:
        tally.warnings.append(
            f"{below_minimum} object(s) are below their class's minimum billable size; "
            "bundling them would cut storage and request charges."
        )
    return tally


def _tally_workload(
    workload: Workload,
    sheet: PriceSheet,
    tier: RestoreTier,
    days: int,
    reads: int,
    amplification: float,
) -> _Tally:
    tally = _Tally()
    klass = workload.storage_class
    price = sheet.price(klass)
    sizes = workload.sizes()
    total = sum(sizes)
    if klass.needs_restore and reads:  # every read of archived data restores it again
        _restore(tally, sheet, klass, tier, total * reads, days, requests=len(sizes) * reads)
    _read(
        tally, sheet, klass, total, len(sizes), reads, amplification, restored=klass.needs_restore
    )
    tally.parts["storage_per_month"] = sum(_monthly_storage(sheet, klass, s) for s in sizes)
    below = sum(1 for s in sizes if s < price.min_billable_object_bytes)
    if below:
        tally.warnings.append(
            f"{below} object(s) are below the {price.min_billable_object_bytes}-byte minimum "
            f"billable size of {klass.value}."
        )
    if workload.delete_after_read and workload.age_days is not None:
        remaining = max(0.0, price.min_storage_days - workload.age_days)
        tally.parts["early_deletion"] = (
            tally.parts["storage_per_month"] * remaining / DAYS_PER_MONTH
        )
    return tally
