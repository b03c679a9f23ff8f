"""A whole archive over a year: the study's workloads priced by hand from the sheets' prices.

Every expected figure below is written from the prices themselves (Table 1's storage
prices in study-2018-tokyo, the rest from aws-ap-northeast-1), not from archivefs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archivefs.errors import WorkloadError
from archivefs.pricing import (
    available_workloads,
    load_workload,
    parse_workload,
    plan_archive,
)
from archivefs.pricing.annual import COMPONENTS

GIB, TIB, MIB = 2**30, 2**40, 2**20
# Table 1 (study-2018-tokyo)
IA_STORAGE, GLACIER_STORAGE, STANDARD_STORAGE = 0.019, 0.005, 0.025
# aws-ap-northeast-1 (today's Tokyo list prices)
IA_GET, IA_RETRIEVAL, IA_TRANSITION = 0.001, 0.01, 0.01
GLACIER_GET, GLACIER_TRANSITION = 0.00037, 0.0571
STANDARD_GET = 0.00037
RESTORE_STANDARD_REQ, RESTORE_STANDARD_GB = 0.0571, 0.0114  # 3-5 hours: 4 on average
DIRECT_CONNECT, INTERNET_FIRST_10TB = 0.041, 0.114
GLACIER_OVERHEAD = 32768 * GLACIER_STORAGE + 8192 * STANDARD_STORAGE  # per object, per GiB
FIXED = 371.5 + 12.0 + 756.0 + 936.2
FIXITY_GETS_A_YEAR = 350_000 * 24 * 30 * 12
COPY_EXPECTED_DAYS = 1 - 4 / 24 + 0.5  # a 1-day Standard restore, S3's rule averaged
COPY_BOUND_DAYS = 2


def test_the_shipped_workloads() -> None:
    assert available_workloads() == [
        "aos-s3-vs-ia",
        "belle2-restore-once",
        "ngas-all-in-cloud",
        "ngas-hybrid",
    ]


def test_ngas_all_in_the_cloud_by_hand() -> None:
    plan = plan_archive("ngas-all-in-cloud")
    assert plan.sheet == "study-2018-tokyo + aws-ap-northeast-1"
    by_name = {p.name: p for p in plan.placements}
    ia, glacier = by_name["all in S3 IA"], by_name["all in Glacier"]
    gib, objects = 500 * 1024, 500 * TIB // (40 * MIB)  # 512,000 GiB in 13,107,200 objects
    read_gib, read_objects = 250 * 1024, 250 * TIB // (40 * MIB)  # a year's downloads
    fixity = FIXITY_GETS_A_YEAR * IA_GET / 1000  # priced at S3 IA's GET in both placements
    assert ia.annual == pytest.approx(
        {
            "storage": gib * IA_STORAGE * 12,  # 116,736.00
            "on_premises": 0.0,
            "requests": read_objects * IA_GET / 1000 + fixity,  # 3,030.55
            "retrieval": read_gib * IA_RETRIEVAL,  # 2,560.00
            "restores": 0.0,
            "restored_copies": 0.0,
            "egress": read_gib * DIRECT_CONNECT,  # 10,496.00
            "transitions": 0.0,
            "early_deletion": 0.0,
            "fixed": FIXED * 12,  # 24,908.40
        }
    )
    glacier_storage = (gib * GLACIER_STORAGE + objects * GLACIER_OVERHEAD / GIB) * 12
    assert glacier.annual == pytest.approx(
        {
            "storage": glacier_storage,  # 30,774.00
            "on_premises": 0.0,
            "requests": read_objects * GLACIER_GET / 1000 + fixity,
            "retrieval": 0.0,
            "restores": read_objects * RESTORE_STANDARD_REQ / 1000
            + read_gib * RESTORE_STANDARD_GB,  # 3,292.61
            "restored_copies": read_gib * STANDARD_STORAGE * COPY_EXPECTED_DAYS / 30,  # 284.44
            "egress": read_gib * DIRECT_CONNECT,
            "transitions": 0.0,
            "early_deletion": 0.0,
            "fixed": FIXED * 12,
        }
    )
    assert glacier.restored_copies_bound == pytest.approx(
        read_gib * STANDARD_STORAGE * COPY_BOUND_DAYS / 30  # 426.67
    )
    assert [p.name for p in plan.placements] == ["all in Glacier", "all in S3 IA"]
    assert glacier.annual_total == pytest.approx(sum(glacier.annual.values()))
    assert glacier.monthly_total == pytest.approx(glacier.annual_total / 12)
    # break-even in data read per month: fixed monthly parts and cost per TiB read a month
    ia_fixed = (gib * IA_STORAGE * 12 + fixity) / 12 + FIXED
    glacier_fixed = (glacier_storage + fixity) / 12 + FIXED
    per_tib = TIB / (40 * MIB)  # objects in a TiB: 26,214.4
    ia_slope = per_tib * IA_GET / 1000 + 1024 * (IA_RETRIEVAL + DIRECT_CONNECT)
    glacier_slope = (
        per_tib * (GLACIER_GET + RESTORE_STANDARD_REQ) / 1000
        + 1024 * (RESTORE_STANDARD_GB + DIRECT_CONNECT)
        + 1024 * STANDARD_STORAGE * COPY_EXPECTED_DAYS / 30
    )
    assert ia.per_tib_read == pytest.approx(ia_slope)
    assert glacier.per_tib_read == pytest.approx(glacier_slope)
    (point,) = plan.break_evens
    tib = (ia_fixed - glacier_fixed) / (glacier_slope - ia_slope)  # 1,768.02 TiB a month
    assert (point.cheaper_when_rare, point.cheaper_when_frequent) == (
        "all in Glacier",
        "all in S3 IA",
    )
    assert point.tib_per_month == pytest.approx(tib)
    assert point.gib_per_month == pytest.approx(tib * 1024)
    assert point.reads_per_month == pytest.approx(tib / 500)
    assert any("aws-ap-northeast-1 (today's list prices" in n for n in plan.notes)


def test_ngas_hybrid_by_hand() -> None:
    plan = plan_archive("ngas-hybrid")
    (hybrid,) = plan.placements
    ia_gib, glacier_gib = 400 * 1024, 100 * 1024
    glacier_objects = 100 * TIB // (40 * MIB)  # 2,621,440 moved by the lifecycle rule
    ia_read, glacier_read = 50 * 1024, 25 * 1024  # GiB a year
    ia_read_objects, glacier_read_objects = 50 * TIB // (40 * MIB), 25 * TIB // (40 * MIB)
    assert hybrid.annual == pytest.approx(
        {
            "storage": (
                ia_gib * IA_STORAGE
                + glacier_gib * GLACIER_STORAGE
                + glacier_objects * GLACIER_OVERHEAD / GIB
            )
            * 12,  # 99,543.60
            "on_premises": 0.0,  # the 500 TiB on premises are excluded: no price given
            "requests": (ia_read_objects * IA_GET + glacier_read_objects * GLACIER_GET) / 1000,
            "retrieval": ia_read * IA_RETRIEVAL,  # 512.00
            "restores": glacier_read_objects * RESTORE_STANDARD_REQ / 1000
            + glacier_read * RESTORE_STANDARD_GB,
            "restored_copies": glacier_read * STANDARD_STORAGE * COPY_EXPECTED_DAYS / 30,
            "egress": (ia_read + glacier_read) * DIRECT_CONNECT,  # 3,148.80
            "transitions": glacier_objects * GLACIER_TRANSITION / 1000,  # 149.68, once
            "early_deletion": 0.0,  # moved after 30 days, S3 IA's minimum
            "fixed": 0.0,
        }
    )
    assert any("500.0 TiB on premises" in n and "excluded" in n for n in hybrid.notes)
    assert plan.break_evens == []


def test_aos_break_even_below_which_s3_ia_is_cheaper() -> None:
    plan = plan_archive("aos-s3-vs-ia")
    gib, objects = 3.5 * 1024, 28_979
    per_tib = objects / 3.5  # objects read per TiB
    ia_fixed = gib * IA_STORAGE + objects * IA_TRANSITION / 1000 / 12  # the transition, spread
    standard_fixed = gib * STANDARD_STORAGE
    ia_slope = per_tib * IA_GET / 1000 + 1024 * (IA_RETRIEVAL + INTERNET_FIRST_10TB)
    standard_slope = per_tib * STANDARD_GET / 1000 + 1024 * INTERNET_FIRST_10TB
    (point,) = plan.break_evens
    assert point.cheaper_when_rare == "S3 IA by a lifecycle rule"
    tib = (standard_fixed - ia_fixed) / (ia_slope - standard_slope)  # 2.10 TiB a month
    assert point.tib_per_month == pytest.approx(tib)
    assert point.reads_per_month == pytest.approx(tib / 3.5)
    assert plan.read_tib_per_month == 0.0
    ia = next(p for p in plan.placements if p.name == "S3 IA by a lifecycle rule")
    assert ia.annual["transitions"] == pytest.approx(objects * IA_TRANSITION / 1000)


def test_belle2_bulk_copy_expected_and_bound() -> None:
    plan = plan_archive("belle2-restore-once")
    glacier = next(p for p in plan.placements if p.name == "all in Glacier")
    # Bulk restores take 5-12 hours (8.5 on average) and are free in the Tokyo sheet
    assert glacier.annual["restores"] == 0.0
    assert glacier.annual["restored_copies"] == pytest.approx(
        633 * STANDARD_STORAGE * (1 - 8.5 / 24 + 0.5) / 30
    )
    assert glacier.restored_copies_bound == pytest.approx(633 * STANDARD_STORAGE * 2 / 30)
    assert glacier.annual["egress"] == pytest.approx(633 * INTERNET_FIRST_10TB)
    assert next(p.name for p in plan.placements) == "all in Glacier"


def test_a_sheet_override_and_the_same_figures_from_a_loaded_workload() -> None:
    today = plan_archive(load_workload("ngas-all-in-cloud"), "aws-ap-northeast-1")
    ia = next(p for p in today.placements if p.name == "all in S3 IA")
    assert ia.annual["storage"] == pytest.approx(500 * 1024 * 0.0138 * 12)  # today's IA price
    assert today.sheet == "aws-ap-northeast-1"
    assert plan_archive("ngas-all-in-cloud") == plan_archive(load_workload("ngas-all-in-cloud"))


BASE = """
name: test
price_sheet: aws-ap-northeast-1
data: {total: 10TiB, object_size: 1GiB}
downloads: {per_year: 12TiB}
egress: {path: internet, per_gb: 0.05, label: campus link}
fixed_monthly: {server: 100}
placements:
  - name: hot
    classes: {STANDARD: 100%}
  - name: split
    on_premises: 5TiB
    on_premises_per_tib_month: 3.0
    classes: {STANDARD_IA: 5TiB}
"""


def test_egress_override_on_premises_cost_and_proportional_downloads() -> None:
    plan = plan_archive(parse_workload(BASE))
    split = next(p for p in plan.placements if p.name == "split")
    # downloads follow the shares: 6 TiB a year from IA, 6 TiB on premises (no egress)
    assert split.annual["storage"] == pytest.approx(5 * 1024 * 0.0138 * 12)
    assert split.annual["on_premises"] == pytest.approx(5 * 3.0 * 12)  # apart: its own colour
    assert split.annual["retrieval"] == pytest.approx(6 * 1024 * 0.01)
    assert split.annual["egress"] == pytest.approx(6 * 1024 * 0.05)
    assert split.annual["fixed"] == 1200.0
    hot = next(p for p in plan.placements if p.name == "hot")
    assert hot.annual["egress"] == pytest.approx(12 * 1024 * 0.05)
    assert set(hot.annual) == set(COMPONENTS)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("classes: {STANDARD_IA: 5TiB}", "classes: {STANDARD_IA: 4TiB}"), "not data.total"),
        (("object_size: 1GiB", "object_size: 1GiB, objects: 3"), "one way"),
        (("per_gb: 0.05, ", ""), None),  # the sheet's internet path: fine
        (("path: internet, per_gb: 0.05", "path: sinet"), "egress path 'sinet'"),
        (("total: 10TiB", "total: ten"), "not a size"),
    ],
)
def test_workload_mistakes_name_the_field_and_the_fix(
    change: tuple[str, str], says: str | None
) -> None:
    text = BASE.replace(*change)
    if says is None:
        assert plan_archive(parse_workload(text)).placements
        return
    with pytest.raises(WorkloadError, match=says) as caught:
        plan_archive(parse_workload(text, source="mine.yaml"))
    assert "Fix:" in str(caught.value)


def _cost_model_example() -> str:
    """The workload file docs/cost-model.md shows, field by field."""
    text = (Path(__file__).parent.parent / "docs" / "cost-model.md").read_text(encoding="utf-8")
    start = text.index("```yaml\nname: NGAS (ALMA) on AWS")
    return text[start + len("```yaml\n") : text.index("```", start + 7)]


def test_the_cost_model_pages_example_workload_loads_and_prices_its_copies() -> None:
    """The page's example did not load: its hybrid holds 1,000 TiB of a 500 TiB archive
    (a full copy on premises plus one in the cloud), which ``copies: 2`` now says."""
    work = parse_workload(_cost_model_example(), source="docs/cost-model.md")
    hybrid = next(p for p in work.placements if p.name == "hybrid")
    assert hybrid.copies == 2
    assert sum(work.shares(hybrid).values()) == 2 * work.data.total == 1000 * TIB
    plan = plan_archive(work)
    priced = next(p for p in plan.placements if p.name == "hybrid")
    ia = next(p for p in plan.placements if p.name == "all in S3 IA")
    # both copies are stored: 500 TiB on premises at 4.0 a TiB-month, 400 + 100 TiB in S3
    assert priced.annual["on_premises"] == pytest.approx(500 * 4.0 * 12)
    assert priced.annual["storage"] > 0  # the cloud copy's 400 + 100 TiB
    assert ia.annual["storage"] > 0
    # without copies the same file is refused, naming the placement's field in TiB
    single = _cost_model_example().replace("    copies: 2 ", "    # copies: 2 ")
    with pytest.raises(WorkloadError) as caught:
        parse_workload(single, source="docs/cost-model.md")
    message = str(caught.value)
    assert "field placements.1.classes:" in message
    assert "holds 1,000 TiB (classes plus on_premises), not data.total 500 TiB" in message
    assert "copies: N" in message
    assert "(top level)" not in message
    assert str(1000 * TIB) not in message


def test_copies_must_hold_the_data_that_many_times() -> None:
    text = BASE.replace("  - name: split\n", "  - name: split\n    copies: 2\n")
    with pytest.raises(WorkloadError) as caught:
        parse_workload(text, source="mine.yaml")
    assert "holds 10 TiB (classes plus on_premises), not 2 x data.total 10 TiB = 20 TiB" in str(
        caught.value
    )
    doubled = text.replace("on_premises: 5TiB", "on_premises: 10TiB").replace(
        "STANDARD_IA: 5TiB", "STANDARD_IA: 10TiB"
    )
    split = next(p for p in plan_archive(parse_workload(doubled)).placements if p.name == "split")
    # each copy is stored; the reads split over both copies' shares, as before over one
    assert split.annual["storage"] == pytest.approx(10 * 1024 * 0.0138 * 12)
    assert split.annual["on_premises"] == pytest.approx(10 * 3.0 * 12)
    assert split.annual["retrieval"] == pytest.approx(6 * 1024 * 0.01)


def test_a_missing_workload_lists_the_shipped_ones() -> None:
    with pytest.raises(WorkloadError, match="ngas-hybrid"):
        load_workload("no-such-workload")


def test_a_size_distribution_raises_small_objects_to_the_minimum_billable_size() -> None:
    text = BASE.replace("object_size: 1GiB", "size_distribution: [64KiB, 192KiB]").replace(
        "total: 10TiB", "total: 1TiB"
    )
    text = text.replace("on_premises: 5TiB", "on_premises: 0").replace(
        "STANDARD_IA: 5TiB", "STANDARD_IA: 1TiB"
    )
    plan = plan_archive(parse_workload(text))
    split = next(p for p in plan.placements if p.name == "split")
    # S3 IA bills at least 128 KiB an object: (128 + 192) / (64 + 192) = 1.25 x the bytes
    assert split.annual["storage"] == pytest.approx(1024 * 1.25 * 0.0138 * 12)
    # one GET per object read, 128 KiB on average: 12 TiB a year from S3 IA
    assert split.annual["requests"] == pytest.approx(12 * TIB / (128 * 2**10) * 0.001 / 1000)
    assert split.monthly["storage"] == pytest.approx(split.annual["storage"] / 12)
