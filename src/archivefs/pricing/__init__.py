"""Cost and latency: price sheets, estimates of plans and workloads, the tier advisor."""

from __future__ import annotations

from archivefs.pricing.advise import Advice, BreakEven, Option, advise, break_even, compare
from archivefs.pricing.estimate import COMPONENTS, Estimate, Workload, estimate
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
    "EgressTier",
    "Estimate",
    "Option",
    "PriceSheet",
    "RestorePrice",
    "Workload",
    "advise",
    "available_price_sheets",
    "break_even",
    "compare",
    "estimate",
    "load_price_sheet",
    "parse_price_sheet",
]
