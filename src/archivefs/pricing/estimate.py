"""Estimates: what a plan (or a what-if workload) will cost and how long it will take.

Pure arithmetic over a :class:`PriceSheet`; every formula is in
docs/cost-model.md. Amounts are in the sheet's currency, GB are
``sheet.bytes_per_gb`` bytes, a month is 30 days.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from archivefs.errors import PriceSheetError
from archivefs.model import Action, RestoreTier, StorageClass, parse_days
from archivefs.plans import ACTIONS, Plan, PlanTable
from archivefs.pricing.copy_days import CopyBasis, copy_days
from archivefs.pricing.sheet import PriceSheet, sheet_provider

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
    """A what-if: ``objects`` objects of ``total_bytes`` in ``storage_class``.

    Give the size as ``total_bytes`` (spread evenly), ``object_size`` (each), or
    ``size_distribution`` (object sizes in bytes, cycled over ``objects``), so
    that minimum billable sizes bite where they should. ``age_days`` is how long
    the objects have been stored; with ``delete_after_read`` it prices early deletion.
    """

    model_config = ConfigDict(frozen=True)

    objects: Annotated[int, Field(ge=0)]
    storage_class: StorageClass
    total_bytes: Annotated[int, Field(ge=0)] = 0
    object_size: Annotated[int, Field(ge=0)] | None = None
    size_distribution: list[Annotated[int, Field(ge=0)]] | None = None
    age_days: Annotated[float, Field(ge=0)] | None = None
    delete_after_read: bool = False

    @model_validator(mode="before")
    @classmethod
    def _derive_total(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "total_bytes" in data:
            return data
        objects, size = data.get("objects"), data.get("object_size")
        dist = data.get("size_distribution")
        if not isinstance(objects, int):
            return data
        if isinstance(size, int):
            return {**data, "total_bytes": size * objects}
        if dist and all(isinstance(s, int) for s in dist):
            return {**data, "total_bytes": sum(s * n for s, n in _cycle_counts(dist, objects))}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        given = {"total_bytes", "object_size", "size_distribution"} & self.model_fields_set
        if self.objects and not given:
            raise ValueError("give the size: total_bytes, object_size or size_distribution")
        if self.object_size is not None and self.total_bytes != self.object_size * self.objects:
            raise ValueError(
                f"total_bytes {self.total_bytes} is not objects x object_size "
                f"({self.objects} x {self.object_size}); give only one of them"
            )
        if self.size_distribution is not None:
            if not self.size_distribution:
                raise ValueError("size_distribution is empty; give object sizes or leave it out")
            total = sum(s * n for s, n in _cycle_counts(self.size_distribution, self.objects))
            if total != self.total_bytes:
                raise ValueError(
                    f"total_bytes {self.total_bytes} disagrees with size_distribution cycled over "
                    f"{self.objects} objects ({total} bytes); give only one of them"
                )
        elif self.objects == 0 and self.total_bytes:
            raise ValueError(f"{self.total_bytes} bytes in 0 objects; set objects")
        return self

    def size_counts(self) -> list[tuple[int, int]]:
        """``(object size, number of objects)`` pairs, without listing every object."""
        if self.objects == 0:
            return []
        if self.object_size is not None:
            return [(self.object_size, self.objects)]
        if self.size_distribution:
            return _cycle_counts(self.size_distribution, self.objects)
        base, extra = divmod(self.total_bytes, self.objects)
        pairs = [(base + 1, extra), (base, self.objects - extra)]
        return [(size, n) for size, n in pairs if n]

    def sizes(self) -> list[int]:
        """Sizes of every object (uniform unless a distribution is given)."""
        return [size for size, n in self.size_counts() for _ in range(n)]


def _cycle_counts(dist: list[int], objects: int) -> list[tuple[int, int]]:
    full, rest = divmod(objects, len(dist))
    counts: Counter[int] = Counter()
    for i, size in enumerate(dist):
        counts[size] += full + (1 if i < rest else 0)
    return [(size, n) for size, n in counts.items() if n]


class RestoredCopy(BaseModel):
    """Restored-copy storage at its expected and its largest billed days (see copy_days)."""

    model_config = ConfigDict(frozen=True)

    expected: float
    bound: float
    totalled: CopyBasis


class Estimate(BaseModel):
    """The cost breakdown and latency of a plan or workload (JSON-ready)."""

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
    restored_copy: RestoredCopy | None = None
    warnings: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> float:
        """Everything this job pays, excluding the ongoing ``storage_per_month``."""
        return sum(v for k, v in self.components.items() if k != "storage_per_month")

    def table(self) -> list[tuple[str, float]]:
        """``(component, amount)`` rows in the fixed order, then ``("total", total)``."""
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
        self.copy = {"expected": 0.0, "bound": 0.0}
        self.below_minimum: Counter[StorageClass] = Counter()
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
    rehydrate_by_copy: bool = False,
    copy_basis: CopyBasis = "bound",
) -> Estimate:
    """Estimate a plan (what will really be done) or a workload (what-if).

    Parameters
    ----------
    tier, days:
        Restore tier and restored-copy days; default to the plan's (or Standard, 1).
    egress:
        The network path the bytes take (a key of ``sheet.egress``).
    reads:
        How many times the data is read. Each read pays GETs, retrieval and
        egress; in a workload each read of archived data also restores it again.
    read_amplification:
        Bytes fetched per byte needed (1.0: exact reads).
    throughput_bytes_per_s:
        Transfer rate for ``transfer_seconds``.
    rehydrate_by_copy:
        Azure's copy-to-rehydrate (``store_options={"rehydrate": "copy"}``): each
        rehydration also writes its copy (one write operation at the copy's class);
        the copy's storage is priced for ``days``, the originals stay archived, so no
        early deletion is due for them.
    copy_basis:
        Which billed days of restored copies ``restored_copy_storage`` totals:
        ``"bound"`` (``days + 1``, never below the bill: for budgets) or
        ``"expected"`` (the average over request times; see
        :func:`archivefs.pricing.copy_days.copy_days`). ``restored_copy`` gives both.
    """
    _check_parameters(sheet, reads, read_amplification, throughput_bytes_per_s)
    chosen = _chosen_tier(tier, sheet)
    if isinstance(plan_or_workload, Plan):
        restore_tier = chosen or plan_or_workload.tier
        restore_days = parse_days(days) if days is not None else plan_or_workload.days
        tally = _tally_plans(
            [plan_or_workload], sheet, restore_tier, restore_days, reads, read_amplification
        )
    else:
        restore_tier = chosen or RestoreTier.STANDARD
        restore_days = parse_days(days) if days is not None else 1
        tally = _tally_workload(
            plan_or_workload, sheet, restore_tier, restore_days, reads, read_amplification
        )
        if chosen is None and tally.restore_requests:
            tally.warnings.append(
                f"{plan_or_workload.storage_class.value} needs a restore and no tier was given; "
                "estimated with the Standard tier (pass tier='Bulk' or 'Expedited' to compare)."
            )
    return _finish(
        tally,
        sheet,
        restore_tier,
        restore_days,
        egress,
        read_amplification,
        throughput_bytes_per_s,
        rehydrate_by_copy,
        copy_basis,
    )


def estimate_batches(
    plans: Iterable[Plan],
    sheet: PriceSheet,
    *,
    tier: RestoreTier | str | None = None,
    days: int | None = None,
    egress: str = "same_region",
    reads: int = 1,
    read_amplification: float = 1.0,
    throughput_bytes_per_s: float = DEFAULT_THROUGHPUT,
    rehydrate_by_copy: bool = False,
    copy_basis: CopyBasis = "bound",
) -> Estimate:
    """The estimate of several plans taken together, one plan in memory at a time.

    Equal to :func:`estimate` of one plan holding all their groups (the sums are
    made per class and action over every batch before any price is applied), so a
    selection too large for memory can be planned and priced batch by batch.
    ``tier`` and ``days`` default to the first plan's; the other parameters are
    :func:`estimate`'s.
    """
    _check_parameters(sheet, reads, read_amplification, throughput_bytes_per_s)
    chosen = _chosen_tier(tier, sheet)
    batches = iter(plans)
    first = next(batches, None)
    restore_tier = chosen or (first.tier if first is not None else RestoreTier.STANDARD)
    restore_days = (
        parse_days(days) if days is not None else (first.days if first is not None else 1)
    )
    every = itertools.chain([first] if first is not None else [], batches)
    tally = _tally_plans(every, sheet, restore_tier, restore_days, reads, read_amplification)
    return _finish(
        tally,
        sheet,
        restore_tier,
        restore_days,
        egress,
        read_amplification,
        throughput_bytes_per_s,
        rehydrate_by_copy,
        copy_basis,
    )


def _chosen_tier(tier: RestoreTier | str | None, sheet: PriceSheet) -> RestoreTier | None:
    """``tier`` parsed in the names of the provider the sheet prices (Azure's ``High`` is
    no S3 tier); a typed tier as it is."""
    if tier is None or isinstance(tier, RestoreTier):
        return tier
    return RestoreTier.parse(tier, sheet_provider(sheet))


def _check_parameters(
    sheet: PriceSheet, reads: int, read_amplification: float, throughput_bytes_per_s: float
) -> None:
    if reads < 0 or read_amplification < 1.0 or throughput_bytes_per_s <= 0:
        raise PriceSheetError(
            f"cannot estimate with reads={reads}, read_amplification={read_amplification}, "
            f"throughput_bytes_per_s={throughput_bytes_per_s}.",
            path=sheet.name,
            fix="use reads >= 0, read_amplification >= 1.0 and a positive throughput.",
        )


def _finish(
    tally: _Tally,
    sheet: PriceSheet,
    restore_tier: RestoreTier,
    restore_days: int,
    egress: str,
    read_amplification: float,
    throughput_bytes_per_s: float,
    rehydrate_by_copy: bool,
    copy_basis: CopyBasis,
) -> Estimate:
    """The estimate from a finished tally: copies, egress, warnings, latency."""
    copy = None
    if tally.restore_requests and any(tally.copy.values()):
        copy = RestoredCopy(**tally.copy, totalled=copy_basis)
        tally.parts["restored_copy_storage"] = tally.copy[copy_basis]
    if rehydrate_by_copy and tally.restore_requests:
        copy_class = sheet.price(sheet.restored_copy_class)
        tally.parts["requests"] += tally.restore_requests * copy_class.put_per_1000 / 1000
        tally.warnings.append(
            f"copy-to-rehydrate: {tally.restore_requests} copies are written in "
            f"{sheet.restored_copy_class} and stay (billed) until deleted; restored_copy_storage "
            f"counts {restore_days} day(s) of them. The originals stay archived: no early "
            "deletion."
        )
    tally.parts["egress"] = sheet.egress_cost(tally.egress_gb, egress)
    _warn(tally, sheet, read_amplification)
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
        bytes_read=round(tally.bytes_read),
        restored_copy=copy,
        warnings=tally.warnings,
    )


def _warn(tally: _Tally, sheet: PriceSheet, amplification: float) -> None:
    if amplification > 1.0 and (tally.parts["egress"] > 0 or tally.parts["retrieval"] > 0):
        tally.warnings.append(
            f"read amplification {amplification:g} multiplies egress and retrieval: "
            f"{tally.bytes_read / amplification / sheet.bytes_per_gb:.3f} GB needed, "
            f"{tally.bytes_read / sheet.bytes_per_gb:.3f} GB fetched."
        )
    for klass, count in sorted(tally.below_minimum.items()):
        minimum = sheet.price(klass).min_billable_object_bytes
        tally.warnings.append(
            f"{count} object(s) in {klass.value} are below its {minimum}-byte minimum billable "
            "size and are billed as that size; bundling them would cut storage and requests."
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
    if klass.needs_restore:  # Intelligent-Tiering objects move back; no temporary copy
        copy_price = sheet.price(sheet.restored_copy_class).storage_per_gb_month
        billed = copy_days(days, price.hours)
        for basis in ("expected", "bound"):
            billed_days = getattr(billed, basis)
            tally.copy[basis] += gb * copy_price * billed_days / DAYS_PER_MONTH
    tally.hours.append(price.hours)
    tally.restore_requests += requests
    tally.bytes_restored += nbytes


def _read(
    tally: _Tally,
    sheet: PriceSheet,
    klass: StorageClass,
    read_bytes: float,
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


def _monthly_storage(sheet: PriceSheet, klass: StorageClass, size: int, count: int = 1) -> float:
    """Storage per month of ``count`` objects holding ``size`` billable bytes in all.

    ``size`` must already be raised to the class's minimum billable size per
    object; the per-object overheads are added here.
    """
    price = sheet.price(klass)
    cost = (size + count * price.overhead_bytes_at_class) * price.storage_per_gb_month
    if price.overhead_bytes_at_standard:
        standard = sheet.price(StorageClass.STANDARD).storage_per_gb_month
        cost += count * price.overhead_bytes_at_standard * standard
    return cost / sheet.bytes_per_gb


class _Bucket:
    """Sums over the plan's groups that are priced alike."""

    __slots__ = ("billable", "count", "read_bytes", "read_requests", "size")

    def __init__(self) -> None:
        self.count = self.size = self.billable = self.read_bytes = self.read_requests = 0


def _tally_plans(
    plans: Iterable[Plan],
    sheet: PriceSheet,
    tier: RestoreTier,
    days: int,
    reads: int,
    amplification: float,
) -> _Tally:
    tally = _Tally()
    buckets: dict[tuple[StorageClass, Action, bool], _Bucket] = {}
    for plan in plans:
        _add_to_buckets(plan.table, sheet, buckets, tally)
    for (klass, action, restored), b in buckets.items():
        if action in (Action.RESTORE, Action.RENEW, Action.UPGRADE):
            _restore(tally, sheet, klass, tier, b.size, days, requests=b.count)
        elif action is Action.WAIT and tier in sheet.price(klass).restore:
            tally.hours.append((0.0, sheet.price(klass).restore[tier].hours[1]))  # under way
        _read(
            tally,
            sheet,
            klass,
            b.read_bytes,
            b.read_requests,
            reads,
            amplification,
            restored=restored,
        )
        tally.parts["storage_per_month"] += _monthly_storage(sheet, klass, b.billable, b.count)
    return tally


def _add_to_buckets(
    table: PlanTable,
    sheet: PriceSheet,
    buckets: dict[tuple[StorageClass, Action, bool], _Bucket],
    tally: _Tally,
) -> None:
    """Sum a plan's columns per (class, action, restored), in order of first appearance."""
    if not len(table):
        return
    codes = np.flatnonzero(np.bincount(table.klass)).tolist()  # linear: no sort of N rows
    first = {code: int(np.argmax(table.klass == code)) for code in codes}
    minimum = np.zeros(len(table.classes), dtype=np.int64)
    restores = np.zeros(len(table.classes), dtype=bool)
    for code, row in sorted(first.items(), key=lambda c: c[1]):
        klass = table.classes[code]  # the first group of each class names it in errors
        minimum[code] = sheet.price(klass, path=table.keys[row]).min_billable_object_bytes
        restores[code] = klass.needs_restore
    restored = restores[table.klass]
    for row, state in table.extra.items():
        restored[row] |= state.archive_access is not None
    floor = minimum[table.klass]
    below = table.size < floor
    billable = np.where(below, floor, table.size)
    for code, count in enumerate(np.bincount(table.klass[below]).tolist()):
        if count:
            tally.below_minimum[table.classes[code]] += count
    key = (table.klass.astype(np.int64) * len(ACTIONS) + table.action) * 2 + restored
    # a handful of (class, action) buckets: one linear pass per bucket, no sort of N keys
    present = np.flatnonzero(np.bincount(key)).tolist()
    firsts = {k: int(np.argmax(key == k)) for k in present}
    for k in sorted(present, key=firsts.__getitem__):  # in order of first appearance
        rows = key == k
        code, restored_flag = divmod(k, 2)
        klass_code, action_code = divmod(code, len(ACTIONS))
        bucket_key = (table.classes[klass_code], ACTIONS[action_code], bool(restored_flag))
        bucket = buckets.get(bucket_key)
        if bucket is None:
            bucket = buckets[bucket_key] = _Bucket()
        bucket.count += int(np.count_nonzero(rows))
        bucket.size += int(table.size[rows].sum())
        bucket.billable += int(billable[rows].sum())
        bucket.read_bytes += int(table.read_bytes[rows].sum())
        bucket.read_requests += int(table.read_requests[rows].sum())


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
    counts = workload.size_counts()
    total, objects = workload.total_bytes, workload.objects
    if klass.needs_restore and reads and objects:  # every read restores the data again
        _restore(tally, sheet, klass, tier, total * reads, days, requests=objects * reads)
    _read(tally, sheet, klass, total, objects, reads, amplification, restored=klass.needs_restore)
    floor = price.min_billable_object_bytes
    billable = sum(n * max(s, floor) for s, n in counts)
    tally.parts["storage_per_month"] = _monthly_storage(sheet, klass, billable, objects)
    below = sum(n for s, n in counts if s < floor)
    if below:
        tally.below_minimum[klass] = below
    if workload.delete_after_read:
        age = workload.age_days
        if age is None:
            age = 0.0
            tally.warnings.append(
                "delete_after_read without age_days: assumed the objects were just stored "
                "(the largest early-deletion charge); pass age_days for an exact figure."
            )
        remaining = max(0.0, price.min_storage_days - age)
        tally.parts["early_deletion"] = (
            tally.parts["storage_per_month"] * remaining / DAYS_PER_MONTH
        )
    return tally


class WriteCost(BaseModel):
    """What writing one object of ``size`` bytes into ``storage_class`` costs: its PUT
    request(s) now and its storage every month (from the sheet's class prices)."""

    model_config = ConfigDict(frozen=True)

    currency: str
    sheet: str
    storage_class: StorageClass
    size: int
    put_requests: int
    requests: float  # the PUT request(s)
    storage_per_month: float  # minimum billable size and per-object overheads included
    min_storage_days: int  # deleting or replacing it sooner bills the rest of these days


def write_cost(
    sheet: PriceSheet, storage_class: StorageClass, size: int, *, put_requests: int = 1
) -> WriteCost:
    """The cost of writing one object of ``size`` bytes into ``storage_class``."""
    price = sheet.price(storage_class)
    stored = estimate(
        Workload(objects=1, storage_class=storage_class, object_size=size), sheet, reads=0
    )
    return WriteCost(
        currency=sheet.currency,
        sheet=sheet.name,
        storage_class=storage_class,
        size=size,
        put_requests=put_requests,
        requests=put_requests * price.put_per_1000 / 1000,
        storage_per_month=stored.components["storage_per_month"],
        min_storage_days=price.min_storage_days,
    )


def early_deletion_cost(
    sheet: PriceSheet, storage_class: StorageClass, size: int, age_days: float
) -> float:
    """What deleting (or replacing) an object of ``size`` bytes in ``storage_class`` after
    ``age_days`` bills for the rest of the class's minimum storage days (0: none)."""
    deleted = estimate(
        Workload(
            objects=1,
            storage_class=storage_class,
            object_size=size,
            age_days=max(0.0, age_days),
            delete_after_read=True,
        ),
        sheet,
        reads=0,
    )
    return deleted.components["early_deletion"]
