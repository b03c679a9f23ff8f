"""Sizes and shares as people write them in workload files (``40MiB``, ``1.5 TB``, ``80%``),
and the bounds every number of a sheet or workload keeps, so that every figure computed
from them is finite (docs/guarantees.md)."""

from __future__ import annotations

import math
import re
from typing import Annotated

from pydantic import Field

from archivefs.pricing.yaml_files import shown

MAX_BYTES = 2**80  # 1 YiB: a size, a count of objects or bytes
MAX_AMOUNT = 1e12  # a price, a rate, a number of days or hours
Price = Annotated[float, Field(ge=0, le=MAX_AMOUNT, allow_inf_nan=False)]
Amount = Price  # a rate or a number of days that may be fractional
Bytes = Annotated[int, Field(ge=0, le=MAX_BYTES)]
Days = Annotated[int, Field(ge=0, le=int(MAX_AMOUNT))]

UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}
_SIZE = re.compile(r"\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")


def parse_size(value: object) -> int:
    """Bytes from ``123``, ``"40MiB"``, ``"1.5 TB"`` or ``"500TiB"`` (TiB = 2^40 bytes)."""
    number: int | float
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{shown(value)} is not a size; write e.g. 40MiB, 500TiB or 123")
    if isinstance(value, int | float):
        number = value
    else:
        match = _SIZE.fullmatch(value[:100])
        if not match or match.group(2).lower() not in UNITS:
            raise ValueError(f"{shown(value)} is not a size; write e.g. 40MiB, 500TiB or 123")
        number = float(match.group(1).replace("_", "").replace(",", ""))
        number *= UNITS[match.group(2).lower()]
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError("a size is a finite number of bytes; write e.g. 40MiB or 500TiB")
    if number < 0:
        raise ValueError(f"{shown(value)} is negative; a size is at least 0 bytes")
    if number > MAX_BYTES:
        raise ValueError(f"{shown(value)} is more than 1 YiB (2^80 bytes), the largest size")
    return round(number)


_BINARY = (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def format_size(nbytes: int) -> str:
    """``nbytes`` as a workload file writes it: ``1,000 TiB``, ``1.5 GiB``, ``123 B``
    (the largest binary unit it fills; exact multiples print whole)."""
    for unit, size in _BINARY:
        if nbytes >= size:
            whole, rest = divmod(nbytes, size)
            text = f"{whole:,}" if not rest else f"{nbytes / size:,.3f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
    return f"{nbytes:,} B"


def parse_share(value: object, whole: int) -> int:
    """Bytes of ``whole`` from a size (``"400TiB"``) or a percentage (``"80%"``)."""
    text = str(value).strip()
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            raise ValueError(f"{shown(value)} is not a percentage; write e.g. 80%") from None
        if not 0 <= percent <= 100:  # NaN and infinities fail this too
            raise ValueError(f"{shown(value)}: a share is between 0% and 100%")
        return round(whole * percent / 100)
    return parse_size(value)
