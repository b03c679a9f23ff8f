"""The billed days of a restored copy: S3's rule for one restore, its expected value and bound."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from archivefs.model import StorageClass
from archivefs.pricing import Workload, estimate, load_price_sheet
from archivefs.pricing.copy_days import billed_days, copy_days, expiry

MIDNIGHT = datetime(2018, 6, 12, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def test_a_request_just_before_midnight_expires_a_day_earlier_than_one_just_after() -> None:
    before, after = MIDNIGHT - MINUTE, MIDNIGHT + MINUTE
    assert expiry(before, 1) == datetime(2018, 6, 13, tzinfo=UTC)
    assert expiry(after, 1) == datetime(2018, 6, 14, tzinfo=UTC)
    # a Bulk restore taking 5 hours: the copy lives from completion to that midnight
    bulk = timedelta(hours=5)
    assert billed_days(before, before + bulk, 1) == pytest.approx(1 - 5 / 24 + 1 / 1440)
    assert billed_days(after, after + bulk, 1) == pytest.approx(2 - 5 / 24 - 1 / 1440)
    # both within the bound, days + 1
    assert billed_days(after, after, 1) < 2


def test_a_restore_slower_than_its_days_keeps_its_copy_to_the_next_midnight() -> None:
    requested = MIDNIGHT + timedelta(hours=6)
    completed = requested + timedelta(hours=40)  # Deep Archive Bulk: after request + 1 day
    assert billed_days(requested, completed, 1) == pytest.approx(2 / 24)  # to 00:00 two days on
    with pytest.raises(ValueError, match="completes after its request"):
        billed_days(requested, requested - MINUTE, 1)


def test_expected_and_bound_against_the_rule_averaged_over_the_day() -> None:
    hours = (3.0, 5.0)  # a Standard restore: 4 hours on average
    got = copy_days(2, hours)
    assert got.expected == pytest.approx(2 - 4 / 24 + 0.5)
    assert (got.bound, got.totalled, got.charged) == (3.0, "bound", 3.0)
    # the rule, averaged over requests every minute of a day, with the 4-hour restore
    starts = [MIDNIGHT + i * MINUTE for i in range(1440)]
    spent = [billed_days(t, t + timedelta(hours=4), 2) for t in starts]
    assert sum(spent) / len(spent) == pytest.approx(got.expected, abs=1e-3)
    assert max(spent) <= got.bound
    slow = copy_days(1, (24.0, 48.0))  # slower than its days: half a day on average
    assert slow.expected == 0.5


def test_the_estimate_gives_both_and_totals_the_one_asked() -> None:
    sheet = load_price_sheet("aws-ap-northeast-1")
    work = Workload(objects=1000, total_bytes=633 * 2**30, storage_class=StorageClass.GLACIER)
    bound = estimate(work, sheet, tier="Bulk", days=1)
    expected = estimate(work, sheet, tier="Bulk", days=1, copy_basis="expected")
    # Bulk restores take 5-12 hours (8.5 on average); a copy is billed as STANDARD, 0.025
    by_hand_bound = 633 * 0.025 * 2 / 30
    by_hand_expected = 633 * 0.025 * (1 - 8.5 / 24 + 0.5) / 30
    assert bound.components["restored_copy_storage"] == pytest.approx(by_hand_bound)
    assert expected.components["restored_copy_storage"] == pytest.approx(by_hand_expected)
    for result in (bound, expected):
        assert result.restored_copy is not None
        assert result.restored_copy.expected == pytest.approx(by_hand_expected)
        assert result.restored_copy.bound == pytest.approx(by_hand_bound)
    assert (bound.restored_copy.totalled, expected.restored_copy.totalled) == ("bound", "expected")  # type: ignore[union-attr]
    assert bound.total - expected.total == pytest.approx(by_hand_bound - by_hand_expected)
    ia = estimate(work.model_copy(update={"storage_class": StorageClass.STANDARD_IA}), sheet)
    assert ia.restored_copy is None  # nothing restored, nothing to say
