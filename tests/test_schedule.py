"""Tier-aware poll schedules: documented windows, shape, and properties."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from archivefs.errors import InvalidRestoreRequestError, NotArchivedError
from archivefs.model import ArchiveAccessTier, RestoreTier, StorageClass
from archivefs.restore.schedule import PollSchedule, restore_window

H = 3600.0
M = 60.0


@pytest.mark.parametrize(
    ("storage_class", "archive_access", "tier", "window"),
    [
        ("GLACIER", None, "Expedited", (1 * M, 5 * M)),
        ("GLACIER", None, "Standard", (3 * H, 5 * H)),
        ("GLACIER", None, "Bulk", (5 * H, 12 * H)),
        ("DEEP_ARCHIVE", None, "Standard", (0.0, 12 * H)),
        ("DEEP_ARCHIVE", None, "bulk", (0.0, 48 * H)),
        ("INTELLIGENT_TIERING", "ARCHIVE_ACCESS", "Expedited", (1 * M, 5 * M)),
        ("INTELLIGENT_TIERING", "ARCHIVE_ACCESS", "Standard", (3 * H, 5 * H)),
        ("INTELLIGENT_TIERING", "ARCHIVE_ACCESS", "Bulk", (5 * H, 12 * H)),
        ("INTELLIGENT_TIERING", "DEEP_ARCHIVE_ACCESS", "Standard", (0.0, 12 * H)),
        ("INTELLIGENT_TIERING", "DEEP_ARCHIVE_ACCESS", "Bulk", (0.0, 48 * H)),
    ],
)
def test_documented_windows(
    storage_class: str, archive_access: str | None, tier: str, window: tuple[float, float]
) -> None:
    assert restore_window(storage_class, tier, archive_access=archive_access) == window
    schedule = PollSchedule.for_restore(storage_class, tier, archive_access=archive_access)
    assert (schedule.expected_min_s, schedule.expected_max_s) == window


def test_enums_are_accepted() -> None:
    schedule = PollSchedule.for_restore(
        StorageClass.INTELLIGENT_TIERING,
        RestoreTier.BULK,
        archive_access=ArchiveAccessTier.DEEP_ARCHIVE_ACCESS,
    )
    assert schedule.expected_max_s == 48 * H


@pytest.mark.parametrize(
    ("storage_class", "archive_access"),
    [("DEEP_ARCHIVE", None), ("INTELLIGENT_TIERING", "DEEP_ARCHIVE_ACCESS")],
)
def test_expedited_is_refused_for_deep_archive(
    storage_class: str, archive_access: str | None
) -> None:
    with pytest.raises(InvalidRestoreRequestError, match="Expedited tier is not available") as e:
        PollSchedule.for_restore(storage_class, "Expedited", archive_access=archive_access)
    assert "Fix: use tier='Standard'" in str(e.value)


@pytest.mark.parametrize("storage_class", ["STANDARD", "GLACIER_IR", "INTELLIGENT_TIERING"])
def test_classes_that_read_at_once_have_no_window(storage_class: str) -> None:
    with pytest.raises(NotArchivedError, match="nothing to restore"):
        restore_window(storage_class, "Standard")


def test_glacier_standard_shape() -> None:
    schedule = PollSchedule.for_restore("GLACIER", "Standard")
    minutes = [round(t / M, 1) for t in schedule.poll_times()]
    # 3 early polls (18 min, then geometric towards 3 h), 9 dense ones every 15 min to 5 h.
    early, dense = [18.0, 38.8, 83.5], [180.0 + 15 * i for i in range(9)]
    assert minutes == early + dense
    assert schedule.next_delay(0, 0) == pytest.approx(18 * M)
    assert schedule.next_delay(3 * H, 4) == pytest.approx(15 * M)
    # After the window: the dense spacing, growing with time overdue, capped at 5 h / 4.
    assert schedule.next_delay(5 * H, 12) == pytest.approx(15 * M)
    assert schedule.next_delay(7 * H, 14) == pytest.approx(30 * M)
    assert schedule.next_delay(50 * H, 30) == pytest.approx(75 * M)


def test_within_windows_start_dense_at_half_the_maximum() -> None:
    schedule = PollSchedule.for_restore("DEEP_ARCHIVE", "Bulk")
    hours = [round(t / H, 2) for t in schedule.poll_times()]
    assert hours == [2.4, 5.17, 11.14, 24.0, 27.0, 30.0, 33.0, 36.0, 39.0, 42.0, 45.0, 48.0]


def test_time_scale_turns_hours_into_seconds() -> None:
    schedule = PollSchedule.for_restore("GLACIER", "Standard", time_scale=1 / 3600)
    assert (schedule.expected_min_s, schedule.expected_max_s) == pytest.approx((3.0, 5.0))
    assert schedule.min_interval_s == pytest.approx(5 / 3600)
    # A restore that takes 2 s is seen at the 4th poll (0.3, 0.65, 1.39, then 3 s).
    elapsed, polls = 0.0, 0
    while elapsed < 2.0:
        elapsed += schedule.next_delay(elapsed, polls)
        polls += 1
    assert polls == 4
    assert elapsed == pytest.approx(3.0)


def test_min_interval_applies() -> None:
    schedule = PollSchedule(60, 300, max_polls=40, min_interval_s=30)
    assert all(schedule.next_delay(t, 0) >= 30 for t in range(0, 400, 7))


def test_spent_budget_waits_for_the_window_end() -> None:
    schedule = PollSchedule(100, 200, max_polls=4, min_interval_s=1)
    # 4 polls already (e.g. woken by notifications): nothing more until after 200 s.
    assert schedule.next_delay(120, 4) == pytest.approx(80 + schedule.dense_interval_s)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((5, 3), {}, "not a window"),
        ((0, 0), {}, "not a window"),
        ((-1, 3), {}, "not a window"),
        ((1, float("inf")), {}, "not a window"),
        ((1, 3), {"max_polls": 1}, "max_polls=1"),
        ((1, 3), {"min_interval_s": 0}, "min_interval_s=0"),
    ],
)
def test_invalid_schedules(args: tuple[float, float], kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(InvalidRestoreRequestError, match=match):
        PollSchedule(*args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan")])
def test_invalid_time_scale(scale: float) -> None:
    with pytest.raises(InvalidRestoreRequestError, match="time_scale"):
        PollSchedule.for_restore("GLACIER", "Bulk", time_scale=scale)


# -- properties ------------------------------------------------------------------------------

windows = st.tuples(st.floats(0, 1e6, allow_nan=False), st.floats(1e-3, 1e6, allow_nan=False)).map(
    lambda w: (min(w), max(w))
)
schedules = st.builds(
    lambda w, n, m: PollSchedule(w[0], w[1], max_polls=n, min_interval_s=m),
    windows,
    st.integers(2, 60),
    st.floats(1e-4, 1e4, allow_nan=False),
)


@given(schedules, st.floats(0, 1e7, allow_nan=False), st.integers(0, 200))
def test_delays_are_positive(schedule: PollSchedule, elapsed: float, polls: int) -> None:
    delay = schedule.next_delay(elapsed, polls)
    assert delay >= schedule.min_interval_s
    assert delay > 0


@given(schedules)
def test_polls_before_the_expected_maximum_are_capped(schedule: PollSchedule) -> None:
    elapsed, polls = 0.0, 0
    while True:
        elapsed += schedule.next_delay(elapsed, polls)
        if elapsed > schedule.expected_max_s:
            break
        polls += 1
    assert polls <= schedule.max_polls


@given(schedules, st.floats(0, 1e7, allow_nan=False), st.floats(0, 1e6, allow_nan=False))
def test_next_poll_never_moves_earlier(schedule: PollSchedule, early: float, later: float) -> None:
    late = early + later
    for polls in (0, schedule.max_polls - 1, schedule.max_polls + 3):
        first = early + schedule.next_delay(early, polls)
        second = late + schedule.next_delay(late, polls)
        assert second >= first - 1e-9 * max(1.0, second)


@given(schedules, st.floats(0, 1e7, allow_nan=False), st.floats(0, 1e6, allow_nan=False))
def test_backoff_after_the_window_never_shrinks(
    schedule: PollSchedule, overdue: float, more: float
) -> None:
    start = schedule.expected_max_s + overdue
    first = schedule.next_delay(start, schedule.max_polls)
    second = schedule.next_delay(start + more, schedule.max_polls)
    assert second >= first
    assert second <= max(schedule.min_interval_s, schedule.dense_interval_s, 0.25 * start)


@given(schedules)
@example(PollSchedule(5e-324, 1.0))  # early polls once underflowed to 0 s
@example(PollSchedule(0.0, 5e-324))
def test_planned_polls_are_ordered_and_end_at_the_maximum(schedule: PollSchedule) -> None:
    times = schedule.poll_times()
    assert len(times) == schedule.max_polls
    assert times == sorted(times)
    assert times[-1] == schedule.expected_max_s
    assert times[0] > 0
