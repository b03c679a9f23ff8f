"""The advisor: break-even read frequencies, the case study, and the lifecycle option."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archivefs.model import RestoreTier
from archivefs.model import StorageClass as SC
from archivefs.pricing import (
    Advice,
    Option,
    Workload,
    advise,
    break_even,
    compare,
    load_price_sheet,
)
from archivefs.pricing.advise import advise_providers, lifecycle_option
from archivefs.pricing.comparison import load_comparison_sheet, with_storage_prices

GiB = 2**30
US = load_price_sheet("aws-us-east-1")
ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"

# The case study's measured charges for reading 633 GiB: (per access, per month).
S3 = Option(name="S3 Standard", per_access=0.031, monthly=15.8)
IA = Option(name="S3 IA", per_access=7.065, monthly=12.0)
GLACIER = Option(name="Glacier standard", per_access=8.394, monthly=3.2)
BULK = Option(name="Glacier bulk", per_access=2.353, monthly=3.2)


def test_case_study_break_even_frequencies() -> None:
    standard_vs_ia = break_even(S3.per_access, S3.monthly, IA.per_access, IA.monthly)
    ia_vs_glacier = break_even(IA.per_access, IA.monthly, GLACIER.per_access, GLACIER.monthly)
    assert standard_vs_ia is not None
    assert ia_vs_glacier is not None
    assert round(standard_vs_ia, 2) == 0.54
    assert round(ia_vs_glacier, 1) == 6.6
    assert standard_vs_ia == pytest.approx(3.8 / 7.034)
    assert ia_vs_glacier == pytest.approx(8.8 / 1.329)
    assert break_even(BULK.per_access, BULK.monthly, IA.per_access, IA.monthly) is None
    assert break_even(IA.per_access, IA.monthly, BULK.per_access, BULK.monthly) is None


BELLE2 = Workload(objects=1000, total_bytes=633 * GiB, storage_class=SC.STANDARD)
BELLE2_CLASSES = ["s3:STANDARD", "s3:STANDARD_IA", "s3:GLACIER"]


def _belle2_points(pairs: list[tuple[str, str, float | None]]) -> tuple[float, float]:
    """(S3 IA vs S3 Standard, Glacier Standard restores vs S3 IA) break-evens."""
    found = {(rare, frequent): reads for rare, frequent, reads in pairs}
    standard_ia = found[("s3:STANDARD_IA", "s3:STANDARD")]
    ia_glacier = found[("s3:GLACIER (Standard restore)", "s3:STANDARD_IA")]
    assert standard_ia is not None
    assert ia_glacier is not None
    return standard_ia, ia_glacier


# (read amplification, S3 IA vs Standard, Glacier vs S3 IA, the digits published)
@pytest.mark.parametrize(
    ("amplification", "standard_ia", "ia_glacier", "digits"),
    [(1.0, 0.60, 4.44, 2), (1.103, 0.54, 6.6, 1)],
)
def test_belle2_break_evens_follow_from_the_prices_with_the_measured_read_amplification(
    amplification: float, standard_ia: float, ia_glacier: float, digits: int
) -> None:
    """The case study measured 1.103 bytes fetched per byte its FUSE reads needed; with it,
    Table 1's storage prices and today's Tokyo access prices give its break-evens (0.54 and
    6.6 reads a month). ``advise`` had no read amplification (``estimate`` had): 0.60, 4.44."""
    study = load_comparison_sheet("study-2018-tokyo")
    tokyo = load_price_sheet("aws-ap-northeast-1")
    advice = advise_providers(
        BELLE2, [study], reads_per_month=1.0, access_sheets={"s3": tokyo},
        classes=BELLE2_CLASSES, read_amplification=amplification,
    )  # fmt: skip
    pairs = [(b.cheaper_when_rare, b.cheaper_when_frequent, b.reads_per_month)
             for b in advice.break_evens]  # fmt: skip
    found = _belle2_points(pairs)
    assert (round(found[0], 2), round(found[1], digits)) == (standard_ia, ia_glacier)
    # the one-sheet twin: the same figures from advise() on the hybrid sheet
    hybrid = with_storage_prices(tokyo, study, "s3")
    one = advise(BELLE2, hybrid, ["STANDARD", "STANDARD_IA", "GLACIER"],
                 read_amplification=amplification)  # fmt: skip
    renamed = [(f"s3:{b.cheaper_when_rare}", f"s3:{b.cheaper_when_frequent}", b.reads_per_month)
               for b in one.break_evens]  # fmt: skip
    assert _belle2_points(renamed) == pytest.approx(found)
    # and the command line, through the installed script
    done = subprocess.run(
        [ARCHIVEFS, "--json", "advise", "--price-sheet", "study-2018-tokyo",
         "--access-prices", "s3=aws-ap-northeast-1", "--classes", ",".join(BELLE2_CLASSES),
         "--objects", "1000", "--total-size", "633GiB", "--reads-per-month", "1",
         "--read-amplification", str(amplification)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    points = [(b["cheaper_when_rare"], b["cheaper_when_frequent"], b["reads_per_month"])
              for b in json.loads(done.stdout)["break_evens"]]  # fmt: skip
    assert _belle2_points(points) == pytest.approx(found)


def test_read_amplification_scales_the_bytes_a_read_fetches_not_its_requests() -> None:
    plain = advise(BELLE2, US, ["STANDARD_IA"])
    amplified = advise(BELLE2, US, ["STANDARD_IA"], read_amplification=2.0)
    (ia,), (ia2,) = plain.options, amplified.options
    assert ia2.monthly == ia.monthly  # storage does not change
    gets = 1000 * US.price(SC.STANDARD_IA).get_per_1000 / 1000
    assert ia2.per_access - gets == pytest.approx(2 * (ia.per_access - gets))


def test_case_study_advice() -> None:
    advice = compare([S3, IA, GLACIER, BULK], grid=[0.0, 0.5, 1.0, 7.0, 100.0])
    points = {(b.cheaper_when_rare, b.cheaper_when_frequent): b for b in advice.break_evens}
    assert len(points) == 6
    assert round(points[("S3 IA", "S3 Standard")].reads_per_month or 0, 2) == 0.54
    assert round(points[("Glacier standard", "S3 IA")].reads_per_month or 0, 1) == 6.6
    ia_bulk = points[("Glacier bulk", "S3 IA")]
    assert (ia_bulk.reads_per_month, ia_bulk.always_cheaper) == (None, "Glacier bulk")
    same_storage = points[("Glacier standard", "Glacier bulk")]
    assert (same_storage.reads_per_month, same_storage.always_cheaper) == (None, "Glacier bulk")
    assert [advice.cheapest(a).name for a in advice.grid] == [
        "Glacier bulk",
        "Glacier bulk",
        "Glacier bulk",
        "S3 Standard",
        "S3 Standard",
    ]
    # IA is never the cheapest once bulk Glacier is on the table
    assert all(advice.cheapest(a / 10).name != "S3 IA" for a in range(200))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((1.0, 10.0), (2.0, 5.0), 5.0),  # 10 + a == 5 + 2a
        ((2.0, 5.0), (1.0, 10.0), 5.0),  # symmetric
        ((1.0, 10.0), (1.0, 5.0), None),  # parallel: the cheaper storage always wins
        ((1.0, 5.0), (2.0, 5.0), None),  # cross at a = 0
        ((2.0, 4.0), (1.0, 5.0), 1.0),
        ((1.0, 4.0), (2.0, 5.0), None),  # A cheaper in both: always wins
    ],
)
def test_break_even(a: tuple[float, float], b: tuple[float, float], expected: float | None) -> None:
    assert break_even(a[0], a[1], b[0], b[1]) == expected


def test_advise_prices_each_class_from_the_sheet() -> None:
    work = Workload(objects=1000, total_bytes=633 * GiB, storage_class=SC.STANDARD)
    advice = advise(
        work, US, [SC.STANDARD, "STANDARD_IA", SC.GLACIER], tier="Standard", egress="same_region"
    )
    by_name = {o.name: o for o in advice.options}
    assert list(by_name) == ["STANDARD", "STANDARD_IA", "GLACIER (Standard restore)"]
    gets = 1000 * 0.0004 / 1000
    standard, ia, glacier = advice.options
    assert standard.monthly == pytest.approx(633 * 0.023)
    assert standard.per_access == pytest.approx(gets)
    assert ia.monthly == pytest.approx(633 * 0.0125)
    assert ia.per_access == pytest.approx(1000 * 0.001 / 1000 + 633 * 0.01)
    overhead = 1000 * (32768 * 0.0036 + 8192 * 0.023) / GiB
    assert glacier.monthly == pytest.approx(633 * 0.0036 + overhead)
    assert glacier.per_access == pytest.approx(
        1000 * 0.05 / 1000 + 633 * 0.01 + 633 * 0.023 * (1 + 1) / 30 + gets
    )
    assert (glacier.storage_class, glacier.tier) == (SC.GLACIER, RestoreTier.STANDARD)
    assert (standard.storage_class, standard.tier) == (SC.STANDARD, None)
    point = next(b for b in advice.break_evens if b.cheaper_when_frequent == "STANDARD")
    assert point.cheaper_when_rare == "STANDARD_IA"
    assert point.reads_per_month == pytest.approx(
        (standard.monthly - ia.monthly) / (ia.per_access - standard.per_access)
    )


def test_advise_compares_several_tiers() -> None:
    work = Workload(objects=10, total_bytes=10 * GiB, storage_class=SC.GLACIER)
    advice = advise(work, US, [SC.STANDARD, SC.DEEP_ARCHIVE], tier=["Standard", "bulk"])
    assert [o.name for o in advice.options] == [
        "STANDARD",
        "DEEP_ARCHIVE (Standard restore)",
        "DEEP_ARCHIVE (Bulk restore)",
    ]
    standard_restore, bulk_restore = advice.options[1:]
    assert standard_restore.monthly == bulk_restore.monthly
    assert standard_restore.per_access - bulk_restore.per_access == pytest.approx(
        10 * (0.10 - 0.025) / 1000 + 10 * (0.02 - 0.0025)
    )


def test_lifecycle_option_model() -> None:
    hot = Option(name="hot", monthly=30.0, per_access=1.0)
    cold = Option(name="cold", monthly=3.0, per_access=10.0)
    moved = lifecycle_option(hot, cold, after_days=60, horizon_days=360, transition=12.0)
    assert moved.name == "hot -> cold after 60 d"
    assert moved.monthly == pytest.approx((30 * 60 + 3 * 300 + 12 * 30) / 360)
    assert moved.per_access == pytest.approx((1 * 60 + 10 * 300) / 360)
    # moving before the first class's minimum pays that minimum; the last class's too
    early = lifecycle_option(
        hot, cold, after_days=10, horizon_days=100, first_min_days=30, then_min_days=180
    )
    assert early.monthly == pytest.approx((30 * 30 + 3 * 180) / 100)
    assert early.per_access == pytest.approx((1 * 10 + 10 * 90) / 100)
    never = lifecycle_option(hot, cold, after_days=360, horizon_days=360)
    assert (never.monthly, never.per_access) == (hot.monthly, hot.per_access)
    with pytest.raises(ValueError, match="does not fit a 360-day horizon"):
        lifecycle_option(hot, cold, after_days=400, horizon_days=360)


def test_advise_lifecycle_uses_the_sheets_transition_and_minimums() -> None:
    work = Workload(objects=2000, total_bytes=100 * GiB, storage_class=SC.STANDARD)
    advice = advise(work, US, [SC.STANDARD_IA, SC.GLACIER], tier="Bulk", lifecycle_after_days=20)
    ia, glacier, hybrid = advice.options
    assert hybrid.name == "STANDARD_IA -> GLACIER (Bulk restore) after 20 d"
    transition = 2000 * 0.03 / 1000
    assert hybrid.monthly == pytest.approx(
        (ia.monthly * 30 + glacier.monthly * 340 + transition * 30) / 360
    )
    assert hybrid.per_access == pytest.approx((ia.per_access * 20 + glacier.per_access * 340) / 360)


def test_table_costs_and_json() -> None:
    advice = compare([S3, BULK], grid=[0.0, 2.0])
    assert advice.table() == [
        ["option", "per month", "per access", "0/mo", "2/mo"],
        ["S3 Standard", "15.80", "0.031", "15.80", "15.86"],  # significant digits
        ["Glacier bulk", "3.20", "2.35", "3.20", "7.91"],
    ]
    assert advice.costs() == {
        "S3 Standard": [15.8, pytest.approx(15.862)],
        "Glacier bulk": [3.2, pytest.approx(7.906)],
    }
    assert Advice.model_validate_json(advice.model_dump_json()) == advice
