"""Sizes and shares as people write them in workload files: ``40MiB``, ``1.5 TB``, ``80%``."""

from __future__ import annotations

import re

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
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size; write e.g. 40MiB, 500TiB or 123")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative; a size is at least 0 bytes")
        return value
    if isinstance(value, float) and value >= 0:
        return round(value)
    match = _SIZE.fullmatch(str(value))
    if not match or match.group(2).lower() not in UNITS:
        raise ValueError(f"{value!r} is not a size; write e.g. 40MiB, 500TiB or 123")
    number = float(match.group(1).replace("_", "").replace(",", ""))
    return round(number * UNITS[match.group(2).lower()])


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
            raise ValueError(f"{value!r} is not a percentage; write e.g. 80%") from None
        if not 0 <= percent <= 100:
            raise ValueError(f"{value!r}: a share is between 0% and 100%")
        return round(whole * percent / 100)
    return parse_size(value)
