"""The tier advisor: monthly cost against read frequency, and the break-even points.

Every option costs ``monthly + a * per_access`` at ``a`` reads per month, so
two options cross at most once: ``a* = (monthly_b - monthly_a) / (per_access_a
- per_access_b)``. The lifecycle option keeps data in a first class for N days
and then moves it; it is linear in ``a`` too (see :func:`lifecycle_option`).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from archivefs.model import RestoreTier, StorageClass
from archivefs.pricing.amounts import format_amount
from archivefs.pricing.comparison import ComparisonSheet, with_storage_prices
from archivefs.pricing.estimate import DAYS_PER_MONTH, Workload, estimate
from archivefs.pricing.sheet import sheet_provider
from archivefs.providers import Access

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from archivefs.pricing.sheet import ClassPrice, PriceSheet

DEFAULT_GRID = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
DEFAULT_CLASSES = (
    StorageClass.STANDARD,
    StorageClass.STANDARD_IA,
    StorageClass.GLACIER_IR,
    StorageClass.GLACIER,
    StorageClass.DEEP_ARCHIVE,
)
DEFAULT_HORIZON_DAYS = 360.0


def break_even(
    per_access_a: float, monthly_a: float, per_access_b: float, monthly_b: float
) -> float | None:
    """The reads per month at which A and B cost the same, or ``None`` if one always wins.

    Solves ``monthly_a + a * per_access_a == monthly_b + a * per_access_b``;
    ``None`` when the lines are parallel or cross only at ``a <= 0``.
    """
    if per_access_a == per_access_b:
        return None
    point = (monthly_b - monthly_a) / (per_access_a - per_access_b)
    return point if 0 < point < math.inf else None  # lines too near parallel never cross


class Option(BaseModel):
    """One way to store the workload: its fixed monthly cost and its cost per access."""

    model_config = ConfigDict(frozen=True)

    name: str
    monthly: float
    per_access: float
    storage_class: StorageClass | None = None
    tier: RestoreTier | None = None

    def cost(self, reads_per_month: float) -> float:
        """Monthly cost at ``reads_per_month`` full reads per month."""
        return self.monthly + reads_per_month * self.per_access


class BreakEven(BaseModel):
    """Where two options cost the same (the one with lower storage wins below it)."""

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
        """The option with the lowest monthly cost at ``reads_per_month`` (ties: cheaper reads)."""
        return min(self.options, key=lambda o: (o.cost(reads_per_month), o.per_access))

    def costs(self) -> dict[str, list[float]]:
        """Monthly cost of each option at every grid point (for plots)."""
        return {o.name: [o.cost(a) for a in self.grid] for o in self.options}

    def table(self) -> list[list[str]]:
        """Rows for a text table: option, monthly, per access, cost at each grid point."""
        header = ["option", "per month", "per access"] + [f"{a:g}/mo" for a in self.grid]
        rows = [header]
        for option in self.options:
            rows.append(
                [option.name, format_amount(option.monthly), format_amount(option.per_access)]
                + [format_amount(option.cost(a)) for a in self.grid]
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
    read_amplification: float = 1.0,
) -> Option:
    """The workload stored in ``storage_class``: monthly storage and the cost of one full read
    (fetching ``read_amplification`` bytes per byte needed, as ``estimate`` prices it)."""
    moved = workload.model_copy(update={"storage_class": storage_class})
    one = estimate(
        moved, sheet, tier=tier, reads=1, egress=egress, read_amplification=read_amplification
    )
    name = storage_class.value
    if storage_class.needs_restore:
        name = f"{name} ({tier.value} restore)"
    return Option(
        name=name,
        monthly=one.components["storage_per_month"],
        per_access=one.total,
        storage_class=storage_class,
        tier=tier if storage_class.needs_restore else None,
    )


def lifecycle_option(
    first: Option,
    then: Option,
    *,
    after_days: float,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    transition: float = 0.0,
    first_min_days: float = 0.0,
    then_min_days: float = 0.0,
) -> Option:
    """Store in ``first`` for ``after_days``, then in ``then``, for ``horizon_days`` in all.

    Averaged over the horizon: ``first`` is billed ``max(after_days,
    first_min_days)`` days (moving early pays its minimum), ``then`` is billed
    ``max(horizon - after_days, then_min_days)`` days, and the one-off
    ``transition`` fee is spread over the horizon. Reads are spread evenly over
    the horizon, so one access costs the time-weighted mix of both options.
    """
    if not 0 <= after_days <= horizon_days:
        raise ValueError(
            f"lifecycle after {after_days:g} days does not fit a {horizon_days:g}-day horizon; "
            "use 0 <= after_days <= horizon_days."
        )
    later = horizon_days - after_days
    first_days = max(after_days, first_min_days)
    then_days = max(later, then_min_days) if later > 0 else 0.0
    monthly = (
        first.monthly * first_days + then.monthly * then_days + transition * DAYS_PER_MONTH
    ) / horizon_days
    return Option(
        name=f"{first.name} -> {then.name} after {after_days:g} d",
        monthly=monthly,
        per_access=(first.per_access * after_days + then.per_access * later) / horizon_days,
    )


def _parse_class(name: StorageClass | str, provider: str) -> StorageClass:
    if isinstance(name, StorageClass) or provider == "s3":
        return StorageClass.parse(str(name) if not isinstance(name, StorageClass) else name)
    return StorageClass.parse(str(name), provider=provider)


def advise(
    workload: Workload,
    sheet: PriceSheet,
    classes: Sequence[StorageClass | str] | None = None,
    *,
    tier: RestoreTier | str | Sequence[RestoreTier | str] = RestoreTier.STANDARD,
    egress: str = "same_region",
    lifecycle_after_days: float | None = None,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    reads_per_month: Sequence[float] = DEFAULT_GRID,
    read_amplification: float = 1.0,
) -> Advice:
    """Compare storage classes for a workload: monthly cost against reads per month.

    ``read_amplification`` is the bytes a read fetches per byte it needs (a FUSE mount's
    block reads: the case study measured 1.103), priced as ``estimate`` prices it.

    Archive classes get one option per restore ``tier`` (one tier or several), in
    the provider's names (Azure: rehydrate priority). ``classes`` defaults to S3's
    five usual classes on an S3 sheet, and to all of a sheet's classes otherwise.
    With ``lifecycle_after_days``, one more option stores the data in the first
    class and moves it to the last one after that many days (see
    :func:`lifecycle_option`).
    """
    provider = sheet_provider(sheet)
    if classes is None:  # S3's usual five, or every class another provider's sheet prices
        classes = DEFAULT_CLASSES if provider == "s3" else list(sheet.classes)
    names = [tier] if isinstance(tier, str) else list(tier)
    options: list[Option] = []
    for name in classes:
        klass = _parse_class(name, provider)
        # tiers in the class's provider's names (Azure's Standard is not S3's Standard)
        tiers = [RestoreTier.parse(str(t), provider=klass.provider) for t in names]
        for restore_tier in tiers if klass.needs_restore else tiers[:1]:
            options.append(
                option_for(
                    workload,
                    sheet,
                    klass,
                    tier=restore_tier,
                    egress=egress,
                    read_amplification=read_amplification,
                )
            )
    if lifecycle_after_days is not None and len(options) >= 2:
        first, then = options[0], options[-1]
        first_class = first.storage_class or StorageClass.STANDARD
        then_class = then.storage_class or StorageClass.STANDARD
        then_price = sheet.price(then_class)
        options.append(
            lifecycle_option(
                first,
                then,
                after_days=lifecycle_after_days,
                horizon_days=horizon_days,
                transition=workload.objects * then_price.transition_in_per_1000 / 1000,
                first_min_days=sheet.price(first_class).min_storage_days,
                then_min_days=then_price.min_storage_days,
            )
        )
    return compare(options, reads_per_month)


# -- across providers ------------------------------------------------------------------------


class ProviderOption(BaseModel):
    """One provider's class for the workload: monthly storage, cost per full read, and whence."""

    model_config = ConfigDict(frozen=True)

    name: str  # "provider:Class", plus " (Tier restore)" for classes that need a restore
    provider: str
    storage_class: str
    label: str
    access: Access
    min_storage_days: int
    tier: str | None
    monthly: float
    per_access: float
    priced_by: str  # the sheet(s) the figures come from
    reads_priced: bool = True  # False: storage only, the cost of reading is not included

    def cost(self, reads_per_month: float) -> float:
        """Monthly cost at ``reads_per_month`` full reads per month."""
        return self.monthly + reads_per_month * self.per_access


class ProviderAdvice(BaseModel):
    """Every (provider, class) ranked by monthly cost at the workload's reads per month."""

    model_config = ConfigDict(frozen=True)

    reads_per_month: float
    options: list[ProviderOption]  # cheapest first at reads_per_month
    grid: list[float]
    break_evens: list[BreakEven]
    notes: list[str]

    @property
    def cheapest(self) -> ProviderOption:
        """The cheapest class and provider at the workload's reads per month."""
        return self.options[0]

    def ranked(self, reads_per_month: float) -> list[ProviderOption]:
        """The options cheapest first at ``reads_per_month`` (ties: cheaper reads, then name)."""
        return sorted(self.options, key=lambda o: (o.cost(reads_per_month), o.per_access, o.name))

    def costs(self) -> dict[str, list[float]]:
        """Monthly cost of each option at every grid point (for plots)."""
        return {o.name: [o.cost(a) for a in self.grid] for o in self.options}

    def table(self) -> list[list[str]]:
        """Rows for a text table, cheapest first: rank, option, minimum days, the costs."""
        rows = [
            ["#", "option", "min days", "per month", "per read", f"at {self.reads_per_month:g}/mo"]
        ]
        for rank, o in enumerate(self.options, 1):
            rows.append(
                [
                    str(rank),
                    o.name if o.name.startswith(o.label) else f"{o.name} [{o.label}]",
                    str(o.min_storage_days),
                    format_amount(o.monthly),
                    format_amount(o.per_access) if o.reads_priced else "not incl.",
                    format_amount(o.cost(self.reads_per_month)),
                ]
            )
        return rows


def _pick_tier(price: ClassPrice, wanted: Sequence[str]) -> RestoreTier | None:
    """The restore tier to price: the first wanted one the class has, else Standard, else any."""
    if not price.restore:
        return None
    by_name = {str(t).lower(): t for t in price.restore}
    for name in [*wanted, "standard"]:
        if name.lower() in by_name:
            return by_name[name.lower()]
    return next(iter(price.restore))


def _sheet_options(
    workload: Workload,
    sheet: PriceSheet,
    keys: Sequence[str],
    *,
    labels: Mapping[str, str],
    days: Mapping[str, int],
    tiers: Sequence[str],
    egress: str,
    priced_by: str,
    read_amplification: float = 1.0,
) -> list[ProviderOption]:
    """Options for the classes ``keys`` (``provider:Class``) of one provider's sheet."""
    options = []
    for key in keys:
        provider, _, name = key.partition(":")
        klass = next(k for k in sheet.classes if str(k) == name)
        price = sheet.classes[klass]
        tier = _pick_tier(price, tiers) if klass.needs_restore else None
        line = option_for(
            workload,
            sheet,
            klass,
            tier=tier or RestoreTier.STANDARD,
            egress=egress,
            read_amplification=read_amplification,
        )
        options.append(
            ProviderOption(
                name=f"{key} ({tier} restore)" if tier is not None else key,
                provider=provider,
                storage_class=name,
                label=labels.get(key, key),
                access=klass.access,
                min_storage_days=days.get(key, price.min_storage_days),
                tier=str(tier) if tier is not None else None,
                monthly=line.monthly,
                per_access=line.per_access,
                priced_by=priced_by,
            )
        )
    return options


def _comparison_options(
    workload: Workload,
    comparison: ComparisonSheet,
    access_sheets: Mapping[str, PriceSheet],
    *,
    tiers: Sequence[str],
    egress: str,
    notes: list[tuple[str, str]],
    read_amplification: float = 1.0,
) -> list[ProviderOption]:
    options: list[ProviderOption] = []
    labels = {k: e.label for k, e in comparison.classes.items()}
    days = {k: e.min_storage_days for k, e in comparison.classes.items()}
    for provider in comparison.providers:
        keys = [k for k in comparison.classes if comparison.split(k)[0] == provider]
        sheet = access_sheets.get(provider)
        priced = [k for k in keys if sheet is not None and comparison.split(k)[1] in sheet.classes]
        if sheet is not None and priced:
            hybrid = with_storage_prices(sheet, comparison, provider)
            options += _sheet_options(
                workload,
                hybrid,
                priced,
                labels=labels,
                days=days,
                tiers=tiers,
                egress=egress,
                priced_by=hybrid.name,
                read_amplification=read_amplification,
            )
            text = (
                f"{provider}: storage prices and minimum days from {comparison.name} "
                f"({comparison.source}); requests, retrieval, restores and egress from "
                f"{sheet.name} (today's list prices, not {comparison.date}'s)."
            )
            notes.append((provider, text))
        for key in keys:
            if key in priced:
                continue
            entry = comparison.classes[key]
            options.append(
                ProviderOption(
                    name=key,
                    provider=provider,
                    storage_class=comparison.split(key)[1],
                    label=entry.label,
                    access=entry.access,
                    min_storage_days=entry.min_storage_days,
                    tier=None,
                    monthly=workload.total_bytes
                    / comparison.bytes_per_gb
                    * entry.storage_per_gb_month,
                    per_access=0.0,
                    priced_by=f"{comparison.name} (storage only)",
                    reads_priced=False,
                )
            )
    return options


def advise_providers(
    workload: Workload,
    sheets: Sequence[PriceSheet | ComparisonSheet],
    *,
    reads_per_month: float,
    tier: str | Sequence[str] = "Standard",
    egress: str = "same_region",
    access_sheets: Mapping[str, PriceSheet] | None = None,
    classes: Sequence[str] | None = None,
    cold_only: bool = False,
    grid: Sequence[float] = DEFAULT_GRID,
    read_amplification: float = 1.0,
) -> ProviderAdvice:
    """The cheapest class *and provider* for a workload, and every pairwise break-even.

    ``sheets`` are providers' price sheets (every class of each; S3's usual five
    on an S3 sheet) and comparison sheets (their classes' storage prices and
    minimum days, with requests, retrieval, restores and egress from
    ``access_sheets[provider]``; without one, that class is storage only and
    a note says so). ``reads_per_month`` is full reads per month, or the
    fraction of the data read each month (1% a month is 0.01). ``tier`` names
    the restore speed(s) to price for classes that need a restore, in any
    provider's spelling; a class without it is priced at its Standard speed (or
    its only one). ``classes`` keeps only those ``provider:Class`` names
    (case-insensitive); ``cold_only`` keeps only classes that do not read at
    once for free. ``read_amplification``: bytes a read fetches per byte it needs, as in
    :func:`advise`. Pure: no I/O.
    """
    if reads_per_month < 0:
        raise ValueError(f"reads_per_month must be >= 0, got {reads_per_month:g}.")
    tiers = [tier] if isinstance(tier, str) else list(tier)
    notes: list[tuple[str, str]] = []
    options: list[ProviderOption] = []
    for sheet in sheets:
        if isinstance(sheet, ComparisonSheet):
            options += _comparison_options(
                workload,
                sheet,
                access_sheets or {},
                tiers=tiers,
                egress=egress,
                notes=notes,
                read_amplification=read_amplification,
            )
            continue
        provider = sheet_provider(sheet)
        names = DEFAULT_CLASSES if provider == "s3" else list(sheet.classes)
        keys = [f"{provider}:{k}" for k in names if k in sheet.classes]
        options += _sheet_options(
            workload,
            sheet,
            keys,
            labels={},
            days={},
            tiers=tiers,
            egress=egress,
            priced_by=sheet.name,
            read_amplification=read_amplification,
        )
    if classes is not None:
        have = {f"{o.provider}:{o.storage_class}".lower() for o in options}
        unknown = [c for c in classes if c.lower() not in have]
        if unknown:
            known = ", ".join(dict.fromkeys(f"{o.provider}:{o.storage_class}" for o in options))
            raise ValueError(
                f"no sheet given prices {', '.join(unknown)}; use provider:Class names "
                f"from: {known}."
            )
        wanted = {c.lower() for c in classes}
        options = [o for o in options if f"{o.provider}:{o.storage_class}".lower() in wanted]
    if cold_only:
        options = [o for o in options if o.access is not Access.IMMEDIATE]
    twice = sorted({o.name for o in options if [p.name for p in options].count(o.name) > 1})
    if twice:
        raise ValueError(
            f"{', '.join(twice)} priced by two of the sheets given; give each provider's "
            "prices once (one sheet per provider, or a comparison sheet alone)."
        )
    if not options:
        raise ValueError("no storage class left to compare; check the sheets and --classes.")
    left = {o.provider for o in options}
    said = [text for provider, text in notes if provider in left]
    for provider in dict.fromkeys(o.provider for o in options if not o.reads_priced):
        flat = ", ".join(o.name for o in options if o.provider == provider and not o.reads_priced)
        borrowed = (access_sheets or {}).get(provider)
        why = f"{borrowed.name} prices none of them" if borrowed else f"no {provider} price sheet"
        said.append(
            f"{flat}: storage only ({why}); requests, retrieval, restores and egress are "
            "NOT included (per_access is left at 0)."
        )
    lines = compare(
        [Option(name=o.name, monthly=o.monthly, per_access=o.per_access) for o in options], grid
    )
    return ProviderAdvice(
        reads_per_month=reads_per_month,
        options=sorted(options, key=lambda o: (o.cost(reads_per_month), o.per_access, o.name)),
        grid=list(grid),
        break_evens=lines.break_evens,
        notes=list(dict.fromkeys(said)),
    )
