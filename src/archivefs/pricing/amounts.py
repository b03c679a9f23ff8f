"""How an amount of money is written, everywhere archivefs prints one."""

from __future__ import annotations

import math


def format_amount(value: float, currency: str | None = None) -> str:
    """``value`` with its significant digits: cents from 0.01 up, three significant digits
    below (``0.0000123``), so a small cost never prints as ``0.0000``.

    Examples
    --------
    ```python
    format_amount(0.0000123456, "USD")  # '0.0000123 USD'
    format_amount(0.05, "USD")          # '0.05 USD'
    format_amount(1234.5)               # '1234.50'
    ```
    """
    if value == 0 or not math.isfinite(value):
        text = f"{value:.2f}"
    else:
        decimals = max(2, 2 - math.floor(math.log10(abs(value))))
        text = f"{value:.{decimals}f}"
        if decimals > 2:  # 0.0500 -> 0.05; at least two decimals stay
            whole, _, fraction = text.partition(".")
            text = f"{whole}.{fraction.rstrip('0').ljust(2, '0')}"
    return f"{text} {currency}" if currency else text


__all__ = ["format_amount"]
