"""How many days S3 bills a restored copy: from the restore's completion to its expiry.

S3 sets a restored copy's expiry to the request time plus ``Days``, rounded up
to the next midnight UTC (never before the copy exists), and bills the copy
from the restore's completion until then. The billed time therefore depends on
the time of day of the request and on how long the restore took:
:func:`billed_days` is that rule for one restore; :func:`copy_days` gives its
expected value and its bound for an estimate made without a clock.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

SECONDS_PER_DAY = 86_400.0
CopyBasis = Literal["expected", "bound"]


def expiry(requested: datetime, days: int) -> datetime:
    """When S3 expires a copy restored for ``days``: ``requested + days``, up to midnight UTC."""
    return _next_midnight(requested + timedelta(days=days))


def billed_days(requested: datetime, completed: datetime, days: int) -> float:
    """Days S3 bills the copy of one restore: from ``completed`` to its expiry.

    The expiry is :func:`expiry` of the request, but never before the midnight
    after completion (a restore slower than ``days`` still leaves a copy).
    """
    if completed < requested:
        raise ValueError(f"a restore completes after its request, not at {completed.isoformat()}")
    end = max(expiry(requested, days), _next_midnight(completed))
    return (end - completed).total_seconds() / SECONDS_PER_DAY


def _next_midnight(moment: datetime) -> datetime:
    """The first midnight UTC at or after ``moment`` (a naive time is taken as UTC)."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    seconds = utc.timestamp()
    return datetime.fromtimestamp(math.ceil(seconds / SECONDS_PER_DAY) * SECONDS_PER_DAY, UTC)


class CopyDays(BaseModel):
    """The billed days of a restored copy: expected and bound, and which one is totalled."""

    model_config = ConfigDict(frozen=True)

    expected: float
    bound: float
    totalled: CopyBasis = "bound"

    @property
    def charged(self) -> float:
        """The days the estimate totals."""
        return self.bound if self.totalled == "bound" else self.expected


def copy_days(
    days: int, restore_hours: tuple[float, float], totalled: CopyBasis = "bound"
) -> CopyDays:
    """Expected and largest billed days of a copy restored for ``days``.

    With the request at a time of day spread evenly over the UTC day and a
    restore taking ``h`` days (the middle of ``restore_hours``), the copy lives
    from ``request + h`` to the midnight after ``request + days``: on average
    ``max(days - h, 0) + 0.5`` days. The bound is ``days + 1``: a request just
    after midnight and a restore that completes at once; no timing bills more.
    """
    h = (restore_hours[0] + restore_hours[1]) / 2 / 24
    return CopyDays(expected=max(days - h, 0.0) + 0.5, bound=days + 1.0, totalled=totalled)
