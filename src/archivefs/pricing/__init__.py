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
from archivefs.pricing.comparison import (
    ComparedClass,
    ComparisonSheet,
    access_sheets_for,
    available_comparison_sheets,
    load_any_sheet,
    load_comparison_sheet,
    parse_comparison_sheet,
)
from archivefs.pricing.estimate import COMPONENTS, Estimate, Workload, estimate, estimate_batches
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

__all__ = [
    "COMPONENTS",
    "DEFAULT_SHEET",
    "Advice",
    "BreakEven",
    "ClassPrice",
    "ComparedClass",
    "ComparisonSheet",
    "EgressTier",
    "Estimate",
    "Option",
    "PriceSheet",
    "ProviderAdvice",
    "ProviderOption",
    "RestorePrice",
    "Workload",
    "access_sheets_for",
    "advise",
    "advise_providers",
    "available_comparison_sheets",
    "available_price_sheets",
    "break_even",
    "compare",
    "estimate",
    "estimate_batches",
    "load_any_sheet",
    "load_comparison_sheet",
    "load_price_sheet",
    "parse_comparison_sheet",
    "parse_price_sheet",
]
