"""Tier-aware poll schedules: when to ask again whether a restore has finished.

Restore time depends on the storage class and the restore tier, not on the size
or number of objects, and AWS documents the windows. Polling early is wasted
money and requests; polling late wastes the user's time. So the schedule is:

* **early** -- a few polls at geometric fractions of the dense start ``d``
  (10% of it first): they catch restores that beat the documented window
  (emulators, small objects, copies that were already restored);
* **dense** -- the rest of the budget spread evenly from ``d`` to the expected
  maximum ``b``, inclusive, where completion is most likely; ``d`` is the
  expected minimum, or ``b / 2`` when AWS only says "within ``b``";
* **late** -- after ``b``, a slow steady backoff: the delay grows with the time
  overdue (a quarter of it) from the dense spacing up to a cap of ``b / 4``.

At most ``max_polls`` polls happen before ``b``, however the caller polls;
no delay is shorter than ``min_interval_s``. Pure arithmetic, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import NamedTuple

from archivefs.errors import InvalidRestoreRequestError
from archivefs.model import ArchiveAccessTier, RestoreTier, StorageClass, raise_not_archived
from archivefs.providers import S3, provider_named

MINUTE = 60.0
HOUR = 3600.0

DEFAULT_MAX_POLLS = 12
DEFAULT_MIN_INTERVAL_S = 5.0
EARLY_START = 0.1  # first poll at this fraction of the dense start
LATE_RATIO = 0.25  # after the window, wait this fraction of the time overdue
LATE_CAP = 0.25  # ... but never more than this fraction of the expected maximum
_TINY = math.ulp(0.0)  # the smallest positive time


class RestoreWindow(NamedTuple):
    """The documented completion window of a restore, in seconds."""

    min_s: float
    max_s: float


def _s3_windows(class_name: str) -> dict[RestoreTier, RestoreWindow]:
    return {
        RestoreTier.parse(speed): RestoreWindow(w.min_s, w.max_s)
        for (name, speed), w in S3.windows.items()
        if name == class_name
    }


# The documented windows (providers/s3.py; "within X" is recorded as (0, X)).
_GLACIER = _s3_windows("GLACIER")
_DEEP = _s3_windows("DEEP_ARCHIVE")
WINDOWS: dict[StorageClass | ArchiveAccessTier, dict[RestoreTier, RestoreWindow]] = {
    StorageClass.GLACIER: _GLACIER,
    StorageClass.DEEP_ARCHIVE: _DEEP,
    # Expedited is available for the Archive Access tier, not for Deep Archive Access.
    ArchiveAccessTier.ARCHIVE_ACCESS: _GLACIER,
    ArchiveAccessTier.DEEP_ARCHIVE_ACCESS: _DEEP,
}


def restore_window(
    storage_class: StorageClass | str,
    tier: RestoreTier | str,
    *,
    archive_access: ArchiveAccessTier | str | None = None,
) -> RestoreWindow:
    """The documented completion window for restoring from ``storage_class`` at ``tier``
    (a name is parsed in the class's provider's names; a ``RestoreTier`` of that
    provider is taken as it is)."""
    cls = StorageClass.parse(storage_class)
    if cls.provider != "s3":
        return _provider_window(cls, tier)
    speed = RestoreTier.parse(tier, provider="s3")
    source: StorageClass | ArchiveAccessTier = cls
    if cls is StorageClass.INTELLIGENT_TIERING and archive_access is not None:
        source = ArchiveAccessTier(str(archive_access).upper())
    elif not cls.needs_restore:
        raise_not_archived(None, cls)
    window = WINDOWS[source].get(speed)
    if window is None:
        raise InvalidRestoreRequestError(
            f"the {speed.value} tier is not available for {source.value} objects.",
            fix="use tier='Standard' (within 12 hours) or tier='Bulk' (within 48 hours).",
        )
    return window


def _provider_window(cls: StorageClass, tier: RestoreTier | str) -> RestoreWindow:
    """Another provider's window, from its description (speeds in its own names)."""
    if not cls.needs_restore:
        raise_not_archived(None, cls)
    spec = provider_named(cls.provider)
    speed = RestoreTier.parse(tier, provider=spec.name)
    window = spec.window(cls.value, speed.value)
    if window is None:
        raise InvalidRestoreRequestError(
            f"{spec.name} documents no window for {cls.value} at {spec.speed_word} {speed}.",
            fix=f"use one of: {', '.join(spec.speeds)}.",
        )
    return RestoreWindow(window.min_s, window.max_s)


@dataclass(frozen=True, slots=True)
class PollSchedule:
    """When to poll a batch of restores expected to finish between two times.

    Times are seconds since the restore requests were sent.
    """

    expected_min_s: float
    expected_max_s: float
    _: KW_ONLY
    max_polls: int = DEFAULT_MAX_POLLS
    min_interval_s: float = DEFAULT_MIN_INTERVAL_S

    def __post_init__(self) -> None:
        lo, hi = self.expected_min_s, self.expected_max_s
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi and hi > 0):
            raise InvalidRestoreRequestError(
                f"poll schedule window ({lo!r}, {hi!r}) is not a window of seconds.",
                fix="pass 0 <= expected_min_s <= expected_max_s, with expected_max_s > 0.",
            )
        if self.max_polls < 2:
            raise InvalidRestoreRequestError(
                f"poll schedule max_polls={self.max_polls} is too small.",
                fix="pass max_polls=2 or more (one early poll and one at the expected maximum).",
            )
        if not (math.isfinite(self.min_interval_s) and self.min_interval_s > 0):
            raise InvalidRestoreRequestError(
                f"poll schedule min_interval_s={self.min_interval_s!r} is not a positive time.",
                fix="pass a positive number of seconds.",
            )

    @classmethod
    def for_restore(
        cls,
        storage_class: StorageClass | str,
        tier: RestoreTier | str,
        *,
        archive_access: ArchiveAccessTier | str | None = None,
        time_scale: float = 1.0,
        max_polls: int = DEFAULT_MAX_POLLS,
        min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
    ) -> PollSchedule:
        """The schedule for the documented window, with every time multiplied by ``time_scale``.

        ``time_scale=1/3600`` turns hours into seconds (tests, emulated archives).
        """
        if not (math.isfinite(time_scale) and time_scale > 0):
            raise InvalidRestoreRequestError(
                f"time_scale={time_scale!r} is not a positive factor.",
                fix="pass time_scale=1.0 for real archives, or e.g. 1/3600 for an emulator.",
            )
        window = restore_window(storage_class, tier, archive_access=archive_access)
        return cls(
            window.min_s * time_scale,
            window.max_s * time_scale,
            max_polls=max_polls,
            min_interval_s=min_interval_s * time_scale,
        )

    @property
    def dense_start_s(self) -> float:
        """Where the dense phase starts: the expected minimum, or half the maximum."""
        return self.expected_min_s if self.expected_min_s > 0 else self.expected_max_s / 2

    @property
    def dense_interval_s(self) -> float:
        """Spacing of the polls in the dense phase (before ``min_interval_s`` applies)."""
        dense = self.max_polls - self._early_count
        return (self.expected_max_s - self.dense_start_s) / max(dense - 1, 1)

    @property
    def _early_count(self) -> int:
        return max(1, self.max_polls // 4)

    def poll_times(self) -> list[float]:
        """The planned polls up to the expected maximum (seconds after sending)."""
        # never at 0 s: a window of a few denormal seconds must not underflow to "now"
        start, end = max(self.dense_start_s, _TINY), self.expected_max_s
        early_n = self._early_count
        dense_n = self.max_polls - early_n
        # Geometric from EARLY_START * start up to (not including) start.
        early = [max(start * EARLY_START ** (1 - i / early_n), _TINY) for i in range(early_n)]
        if dense_n == 1:
            return [*early, end]
        step = (end - start) / (dense_n - 1)
        return [*early, *(start + step * i for i in range(dense_n - 1)), end]

    def next_delay(self, elapsed_s: float, polls_done: int) -> float:
        """Seconds from ``elapsed_s`` until the next poll, given ``polls_done`` so far."""
        elapsed = max(0.0, elapsed_s)
        end = self.expected_max_s
        if elapsed < end:
            if polls_done >= self.max_polls:  # budget spent (e.g. by notifications)
                return (end - elapsed) + self._late_delay(end)
            # A planned time closer than half the minimum interval counts as just polled.
            horizon = elapsed + self.min_interval_s / 2
            planned = next((t for t in self.poll_times() if t > horizon), end)
            return max(self.min_interval_s, planned - elapsed)
        return self._late_delay(elapsed)

    def _late_delay(self, elapsed: float) -> float:
        base = max(self.min_interval_s, self.dense_interval_s)
        cap = max(base, LATE_CAP * self.expected_max_s)
        return min(cap, max(base, LATE_RATIO * (elapsed - self.expected_max_s)))
