"""Price sheets, estimates and the advisor, checked against hand-computed values."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from archivefs.errors import PriceSheetError
from archivefs.model import Action, ObjectState, PlannedGroup, RestoreState, RestoreTier
from archivefs.model import StorageClass as SC
from archivefs.plans import Plan
from archivefs.pricing import (
    COMPONENTS,
    Option,
    Workload,
    advise,
    available_price_sheets,
    break_even,
    compare,
    estimate,
    load_price_sheet,
    parse_price_sheet,
)

if TYPE_CHECKING:
    from pathlib import Path

GiB = 2**30
US = load_price_sheet("aws-us-east-1")


def group(path: str, klass: SC, state: RestoreState, size: int, action: Action) -> PlannedGroup:
    return PlannedGroup(ObjectState(path, size, klass, state), action, (path,), size, 1)


# -- sheets ----------------------------------------------------------------------------------


def test_shipped_sheets_load() -> None:
    assert {"aws-us-east-1", "aws-ap-northeast-1"} <= set(available_price_sheets())
    tokyo = load_price_sheet("aws-ap-northeast-1")
    assert tokyo.bytes_per_gb == GiB
    assert tokyo.price(SC.DEEP_ARCHIVE).restore[RestoreTier.BULK].hours == (0, 48)
    assert load_price_sheet().name == "aws-us-east-1"


MINIMAL = """
name: tape
classes:
  STANDARD: {storage_per_gb_month: 0.02}
egress:
  internet: [{up_to_gb: null, per_gb: 0.05}]
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace("0.02", "-1"), "classes.STANDARD.storage_per_gb_month"),
        (MINIMAL.replace("STANDARD:", "COLDEST:"), "classes.COLDEST"),
        (MINIMAL.replace("up_to_gb: null", "up_to_gb: 10"), "only the last tier may be open"),
        (MINIMAL + "bytes_per_gb: 0\n", "bytes_per_gb"),
        (MINIMAL + "discount: 3\n", "discount"),
        (MINIMAL.replace("name: tape\n", ""), "field name"),
        ("name: [unclosed", "not valid YAML"),
        ("- a list", "must be a YAML mapping"),
    ],
)
def test_bad_sheets_name_the_field(text: str, message: str) -> None:
    with pytest.raises(PriceSheetError, match=r"my\.yaml") as info:
        parse_price_sheet(text, source="my.yaml")
    assert message in str(info.value)


def test_restore_hours_must_be_ordered() -> None:
    bad = MINIMAL.replace(
        "STANDARD: {storage_per_gb_month: 0.02}",
        "STANDARD: {storage_per_gb_month: 0.02}\n  GLACIER:\n    storage_per_gb_month: 0.004\n"
        "    restore: {Bulk: {per_1000_requests: 0, per_gb: 0, hours: [12, 5]}}",
    )
    with pytest.raises(PriceSheetError, match="min <= max"):
        parse_price_sheet(bad)


def test_loading_a_missing_file_says_what_exists(tmp_path: Path) -> None:
    with pytest.raises(PriceSheetError, match="aws-us-east-1"):
        load_price_sheet(tmp_path / "nope.yaml")
    own = tmp_path / "own.yaml"
    own.write_text(MINIMAL)
    assert load_price_sheet(own).name == "tape"


def test_egress_walks_cumulative_tiers() -> None:
    assert US.egress_cost(100, "internet") == pytest.approx(9.0)
    assert US.egress_cost(20480, "internet") == pytest.approx(10240 * 0.09 + 10240 * 0.085)
    assert US.egress_cost(10**6, "same_region") == 0.0
    with pytest.raises(PriceSheetError, match="no egress path 'moon'"):
        US.egress_cost(1, "moon")


# -- estimates of plans ------------------------------------------------------------------------


def test_plan_components_by_hand() -> None:
    plan = Plan(
        groups=(
            group("b/archived", SC.GLACIER, RestoreState.ARCHIVED, 2 * GiB, Action.RESTORE),
            group("b/ia", SC.STANDARD_IA, RestoreState.HOT, GiB, Action.READ),
            group("b/restoring", SC.GLACIER, RestoreState.RESTORING, GiB, Action.WAIT),
        ),
        tier=RestoreTier.STANDARD,
        days=2,
    )
    result = estimate(plan, US, egress="internet")
    c = result.components
    assert set(c) == set(COMPONENTS)
    assert c["restore_requests"] == pytest.approx(0.05 / 1000)
    assert c["restore_data"] == pytest.approx(2 * 0.01)
    assert c["restored_copy_storage"] == pytest.approx(2 * 0.023 * (2 + 1) / 30)
    assert c["requests"] == pytest.approx((0.0004 + 0.001 + 0.0004) / 1000)
    assert c["retrieval"] == pytest.approx(0.01)  # only the IA read; restored copies paid above
    assert c["egress"] == pytest.approx(4 * 0.09)
    assert c["early_deletion"] == 0.0
    glacier = lambda size: ((size + 32768) * 0.0036 + 8192 * 0.023) / GiB  # noqa: E731
    assert c["storage_per_month"] == pytest.approx(glacier(2 * GiB) + 0.0125 + glacier(GiB))
    assert result.total == pytest.approx(sum(v for k, v in c.items() if k != "storage_per_month"))
    assert result.restore_request_count == 1
    assert result.get_request_count == 3
    assert result.restore_hours == (3, 5)
    assert result.transfer_seconds == pytest.approx(4 * GiB / 100e6)


def test_nothing_to_restore_means_no_restore_latency() -> None:
    plan = Plan(groups=(group("b/hot", SC.STANDARD, RestoreState.HOT, 10, Action.READ),))
    result = estimate(plan, US)
    assert result.restore_hours == (0.0, 0.0)
    assert result.tier is None
    assert result.components["restore_requests"] == 0.0


def test_amplification_multiplies_egress_and_warns() -> None:
    plan = Plan(groups=(group("b/x", SC.STANDARD, RestoreState.HOT, GiB, Action.READ),))
    exact = estimate(plan, US, egress="internet")
    amplified = estimate(plan, US, egress="internet", read_amplification=4.0)
    assert amplified.components["egress"] == pytest.approx(4 * exact.components["egress"])
    assert any("read amplification 4" in w for w in amplified.warnings)


# -- workloads (what-if) -------------------------------------------------------------------------


def test_workload_deep_archive_bulk_by_hand() -> None:
    work = Workload(objects=1000, object_size=40 * 2**20, storage_class=SC.DEEP_ARCHIVE)
    result = estimate(work, US, tier="Bulk", egress="same_region")
    gb = 1000 * 40 * 2**20 / GiB
    assert result.components["restore_requests"] == pytest.approx(1000 * 0.025 / 1000)
    assert result.components["restore_data"] == pytest.approx(gb * 0.0025)
    assert result.components["requests"] == pytest.approx(1000 * 0.0004 / 1000)
    assert result.restore_hours == (0, 48)
    assert result.restore_request_count == 1000


def test_small_objects_and_early_deletion() -> None:
    work = Workload(
        objects=10,
        total_bytes=10 * 1000,
        storage_class=SC.STANDARD_IA,
        age_days=10,
        delete_after_read=True,
    )
    result = estimate(work, US)
    monthly = 10 * 131072 * 0.0125 / GiB  # billed at the 128 KiB minimum
    assert result.components["storage_per_month"] == pytest.approx(monthly)
    assert result.components["early_deletion"] == pytest.approx(monthly * 20 / 30)
    assert any("minimum billable size" in w for w in result.warnings)


def test_archive_workload_without_tier_warns() -> None:
    work = Workload(objects=1, total_bytes=GiB, storage_class=SC.GLACIER)
    assert any("no tier was given" in w for w in estimate(work, US).warnings)


# -- the advisor ----------------------------------------------------------------------------


def test_case_study_break_evens() -> None:
    # reads of 633 GiB, per-access charges and monthly storage measured in the case study
    standard = Option(name="S3", per_access=0.031, monthly=15.8)
    ia = Option(name="S3 IA", per_access=7.065, monthly=12.0)
    glacier = Option(name="Glacier standard", per_access=8.394, monthly=3.2)
    bulk = Option(name="Glacier bulk", per_access=2.353, monthly=3.2)
    assert round(break_even(0.031, 15.8, 7.065, 12.0) or 0, 2) == 0.54
    assert round(break_even(7.065, 12.0, 8.394, 3.2) or 0, 1) == 6.6
    assert break_even(2.353, 3.2, 7.065, 12.0) is None
    advice = compare([standard, ia, glacier, bulk])
    points = {(b.cheaper_when_rare, b.cheaper_when_frequent): b for b in advice.break_evens}
    assert round(points[("S3 IA", "S3")].reads_per_month or 0, 2) == 0.54
    assert round(points[("Glacier standard", "S3 IA")].reads_per_month or 0, 1) == 6.6
    bulk_vs_ia = points[("Glacier bulk", "S3 IA")]
    assert bulk_vs_ia.reads_per_month is None
    assert bulk_vs_ia.always_cheaper == "Glacier bulk"
    assert advice.cheapest(0.1).name in {"Glacier bulk", "Glacier standard"}
    assert advice.cheapest(20).name == "S3"


def test_advise_from_a_price_sheet() -> None:
    work = Workload(objects=1000, total_bytes=633 * GiB, storage_class=SC.STANDARD)
    advice = advise(
        work,
        US,
        [SC.STANDARD, SC.STANDARD_IA, SC.GLACIER],
        tier="Bulk",
        egress="internet",
        lifecycle_after_days=30,
    )
    names = [o.name for o in advice.options]
    assert names[:3] == ["STANDARD", "STANDARD_IA", "GLACIER (Bulk restore)"]
    assert "after 30 d" in names[3]
    standard = advice.options[0]
    assert standard.monthly == pytest.approx(633 * 0.023)
    assert advice.table()[0][:3] == ["option", "per month", "per access"]
    assert len(advice.table()) == 1 + len(advice.options)
