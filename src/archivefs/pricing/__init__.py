"""Cost and latency: price sheets, estimates of plans and workloads, the tier advisor."""

from __future__ import annotations

from archivefs.pricing.advise import (
    Advice,
    BreakEven,
    Option,
    ProviderAdvice,
    ProviderOption,
    advise,
    advise_providers,
    break_even,
    compare,
)
from archivefs.pricing.annual import PlacementCost
from archivefs.pricing.comparison import (
    ComparedClass,
    ComparisonSheet,
    access_sheets_for,
    available_comparison_sheets,
    load_any_sheet,
    load_comparison_sheet,
    parse_comparison_sheet,
)
from archivefs.pricing.copy_days import CopyDays, billed_days, copy_days
from archivefs.pricing.estimate import (
    COMPONENTS,
    Estimate,
    RestoredCopy,
    Workload,
    estimate,
    estimate_batches,
)
from archivefs.pricing.plan_archive import ArchivePlan, ReadBreakEven, plan_archive, resolve_sheet
from archivefs.pricing.sheet import (
    DEFAULT_SHEET,
    ClassPrice,
    EgressTier,
    PriceSheet,
    RestorePrice,
    available_price_sheets,
    load_price_sheet,
    parse_price_sheet,
)
from archivefs.pricing.workload_file import (
    ArchiveWorkload,
    available_workloads,
    load_workload,
    parse_workload,
)

__all__ = [
    "COMPONENTS",
    "DEFAULT_SHEET",
    "Advice",
    "ArchivePlan",
    "ArchiveWorkload",
    "BreakEven",
    "ClassPrice",
    "ComparedClass",
    "ComparisonSheet",
    "CopyDays",
    "EgressTier",
    "Estimate",
    "Option",
    "PlacementCost",
    "PriceSheet",
    "ProviderAdvice",
    "ProviderOption",
    "ReadBreakEven",
    "RestorePrice",
    "RestoredCopy",
    "Workload",
    "access_sheets_for",
    "advise",
    "advise_providers",
    "available_comparison_sheets",
    "available_price_sheets",
    "available_workloads",
    "billed_days",
    "break_even",
    "compare",
    "copy_days",
    "estimate",
    "estimate_batches",
    "load_any_sheet",
    "load_comparison_sheet",
    "load_price_sheet",
    "load_workload",
    "parse_comparison_sheet",
    "parse_price_sheet",
    "parse_workload",
    "plan_archive",
    "resolve_sheet",
]
