"""Cutting a listing's key space into ranges that can be listed at the same time.

A listing pages through keys in order, 1,000 per request, each request waiting
for the last one's continuation token: 10^6 keys are 1,000 round trips in a row.
Keys sort the same way everywhere (S3 orders them by UTF-8 bytes, which is code
point order), so the key space after any key can be cut at a few keys and each
piece listed from its own start (``StartAfter``) at once.

Where to cut: a listing with a delimiter names the "directories" that follow
in one request; cutting between them, evenly by count, gives pieces that are
balanced when directories are alike (a day, a run, an instrument each). Pure
functions, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class KeyRange:
    """Keys ``k`` with ``low <= k < high`` (``None``: unbounded), listed from ``start_after``."""

    start_after: str
    low: str | None
    high: str | None

    def holds(self, key: str) -> bool:
        """Whether ``key`` belongs to this range."""
        return (self.low is None or key >= self.low) and (self.high is None or key < self.high)

    def passed(self, key: str) -> bool:
        """Whether ``key`` and every key after it lie beyond this range."""
        return self.high is not None and key >= self.high


def cut_points(candidates: Sequence[str], pieces: int) -> list[str]:
    """At most ``pieces - 1`` keys of sorted ``candidates``, evenly spaced by count."""
    n = min(pieces, len(candidates))
    if n < 2:
        return []
    step = len(candidates) / n
    return sorted({candidates[round(i * step)] for i in range(1, n)})


def ranges_after(after: str, cuts: Sequence[str]) -> list[KeyRange]:
    """The ranges covering every key greater than ``after``, cut at sorted ``cuts``.

    The first range starts right after ``after``; the others at their cut, listed
    from a key just before it (keys between that and the cut are dropped by
    :meth:`KeyRange.holds`).
    """
    cuts = [c for c in cuts if c > after]
    lows: list[str | None] = [None, *cuts]
    highs: list[str | None] = [*cuts, None]
    starts = [after, *(just_before(c) or after for c in cuts)]
    return [KeyRange(s, lo, hi) for s, lo, hi in zip(starts, lows, highs, strict=True)]


def just_before(key: str) -> str | None:
    """A string that sorts before ``key`` (a ``StartAfter`` that keeps ``key``)."""
    if not key:
        return None
    last = ord(key[-1])
    return key[:-1] + chr(last - 1) if last > 0 else key[:-1] or None
