"""Advice across providers: the 2018 Tokyo comparison sheet, two workloads worked by hand.

The study's own case-study workloads could not be found (its slides were not
readable), so two stand-ins are used, the same as in docs/cost-model.md and the
notebook ``where_should_this_archive_live``:

* ``INSTRUMENT``: a 100 TiB instrument archive, 51,200 objects of 2 GiB, 1% read a month;
* ``SIMULATION``: 10 TiB of 1 MiB files (10,485,760), read in full twice a year.

Storage prices are Table 1's; S3's and Azure's request and retrieval prices come
from the shipped aws-ap-northeast-1 and azure-eastus sheets; GCS's from a sheet
written here (test figures, not a list price); Oracle has none in this test, so
its classes are priced as storage only. Every expected figure is written out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from archivefs.cli import EXIT_ERROR, EXIT_USAGE, main
from archivefs.errors import PriceSheetError
from archivefs.pricing import Workload, load_price_sheet, parse_price_sheet
from archivefs.pricing.advise import ProviderAdvice, advise_providers
from archivefs.pricing.comparison import (
    access_sheets_for,
    available_comparison_sheets,
    load_any_sheet,
    load_comparison_sheet,
    parse_comparison_sheet,
)
from archivefs.pricing.sheet import sheet_provider

GiB, MiB, TiB = 2**30, 2**20, 2**40
STUDY = load_comparison_sheet("study-2018-tokyo")
TOKYO = load_price_sheet("aws-ap-northeast-1")
AZURE = load_price_sheet("azure-eastus")
GCS_TEST = parse_price_sheet(
    """
name: gcs-test-figures
provider: gcs
classes:
  STANDARD: {storage_per_gb_month: 0.02, get_per_1000: 0.004}
  COLDLINE: {storage_per_gb_month: 0.004, get_per_1000: 0.01, retrieval_per_gb: 0.02}
egress:
  same_region: [{up_to_gb: null, per_gb: 0.0}]
""",
    source="gcs-test-figures",
)
ACCESS = {"s3": TOKYO, "azure": AZURE, "gcs": GCS_TEST}
COLD = ["s3:STANDARD_IA", "gcs:COLDLINE", "azure:Cool", "oracle:Archive"]

INSTRUMENT = Workload(objects=51_200, object_size=2 * GiB, storage_class="STANDARD")
SIMULATION = Workload(objects=10_485_760, object_size=1 * MiB, storage_class="STANDARD")


def _advise(work: Workload, reads: float, **kw: object) -> ProviderAdvice:
    return advise_providers(work, [STUDY], reads_per_month=reads, access_sheets=ACCESS, **kw)  # type: ignore[arg-type]


def _points(advice: ProviderAdvice) -> dict[frozenset[str], tuple[float | None, str | None]]:
    return {
        frozenset((b.cheaper_when_rare, b.cheaper_when_frequent)): (
            b.reads_per_month,
            b.always_cheaper,
        )
        for b in advice.break_evens
    }


def test_the_study_sheet_holds_table_1() -> None:
    assert "study-2018-tokyo" in available_comparison_sheets()
    assert STUDY.source == "the 2018 study's Table 1, June 2018, Tokyo region"
    assert STUDY.providers == ["s3", "gcs", "azure", "oracle"]
    prices = {k: (e.storage_per_gb_month, e.min_storage_days) for k, e in STUDY.classes.items()}
    assert prices == {
        "s3:STANDARD": (0.0250, 0),
        "gcs:STANDARD": (0.0230, 0),
        "azure:Hot": (0.0200, 0),
        "oracle:Standard": (0.0255, 0),
        "s3:GLACIER": (0.0050, 90),
        "s3:STANDARD_IA": (0.0190, 30),
        "gcs:COLDLINE": (0.0100, 90),
        "azure:Cool": (0.0150, 30),
        "oracle:Archive": (0.0026, 90),
    }
    assert STUDY.classes["gcs:STANDARD"].label == "GCP Regional"
    assert STUDY.classes["s3:GLACIER"].label == "AWS Glacier"
    assert STUDY.classes["s3:GLACIER"].access.value == "restore"
    assert "request prices" in STUDY.not_included
    assert STUDY.access_prices["s3"] == "aws-ap-northeast-1"
    assert isinstance(load_any_sheet("study-2018-tokyo"), type(STUDY))
    assert load_any_sheet("aws-ap-northeast-1") == TOKYO


def test_instrument_archive_cold_classes_by_hand() -> None:
    advice = _advise(INSTRUMENT, 0.01, classes=COLD)
    gb = 51_200 * 2  # 102,400 GiB
    by_name = {o.name: o for o in advice.options}
    ia, cool = by_name["s3:STANDARD_IA"], by_name["azure:Cool"]
    coldline, archive = by_name["gcs:COLDLINE"], by_name["oracle:Archive"]
    assert ia.monthly == pytest.approx(gb * 0.019)  # 1945.60
    assert ia.per_access == pytest.approx(51_200 * 0.001 / 1000 + gb * 0.01)  # 1024.0512
    assert cool.monthly == pytest.approx(gb * 0.015)  # 1536.00
    assert cool.per_access == pytest.approx(51_200 * 0.001 / 1000 + gb * 0.01)
    assert coldline.monthly == pytest.approx(gb * 0.010)  # 1024.00 (Table 1, not 0.004)
    assert coldline.per_access == pytest.approx(51_200 * 0.01 / 1000 + gb * 0.02)  # 2048.512
    assert archive.monthly == pytest.approx(gb * 0.0026)  # 266.24
    assert (archive.per_access, archive.reads_priced) == (0.0, False)
    assert (ia.min_storage_days, coldline.min_storage_days, archive.min_storage_days) == (
        30,
        90,
        90,
    )
    # ranked at 1% a month: 266.24, 1044.49, 1546.24, 1955.84
    assert [o.name for o in advice.options] == [
        "oracle:Archive",
        "gcs:COLDLINE",
        "azure:Cool",
        "s3:STANDARD_IA",
    ]
    assert advice.cheapest.cost(0.01) == pytest.approx(266.24)
    assert advice.options[1].cost(0.01) == pytest.approx(1024 + 0.01 * 2048.512)
    points = _points(advice)
    assert len(points) == 6  # every pair of four
    assert points[frozenset(("gcs:COLDLINE", "s3:STANDARD_IA"))][0] == pytest.approx(
        (1945.6 - 1024) / (2048.512 - 1024.0512)  # 0.8996
    )
    assert points[frozenset(("gcs:COLDLINE", "azure:Cool"))][0] == pytest.approx(
        (1536 - 1024) / (2048.512 - 1024.0512)  # 0.4998
    )
    assert points[frozenset(("azure:Cool", "s3:STANDARD_IA"))] == (None, "azure:Cool")
    assert points[frozenset(("oracle:Archive", "gcs:COLDLINE"))] == (None, "oracle:Archive")
    assert (
        "oracle:Archive: storage only (no oracle price sheet); requests, retrieval, restores "
        "and egress are NOT included (per_access is left at 0)."
    ) in advice.notes
    assert len(advice.notes) == 4  # whence s3, gcs and azure prices come; oracle: storage only
    assert any("azure-eastus (today's list prices" in n for n in advice.notes)


def test_simulation_output_cold_classes_by_hand() -> None:
    advice = _advise(SIMULATION, 2 / 12, classes=COLD)
    gb = 10_485_760 / 1024  # 10,240 GiB
    gets = 10_485_760 * 0.001 / 1000  # 10.48576: one GET per file
    by_name = {o.name: o for o in advice.options}
    assert by_name["s3:STANDARD_IA"].monthly == pytest.approx(gb * 0.019)  # 194.56
    assert by_name["s3:STANDARD_IA"].per_access == pytest.approx(gets + gb * 0.01)  # 112.886
    assert by_name["azure:Cool"].monthly == pytest.approx(gb * 0.015)  # 153.60
    assert by_name["gcs:COLDLINE"].per_access == pytest.approx(
        10_485_760 * 0.01 / 1000 + gb * 0.02  # 309.6576
    )
    assert by_name["oracle:Archive"].monthly == pytest.approx(gb * 0.0026)  # 26.624
    costs = [o.cost(2 / 12) for o in advice.options]
    assert costs == pytest.approx(
        [26.624, 102.4 + 309.6576 / 6, 153.6 + 112.88576 / 6, 194.56 + 112.88576 / 6]
    )
    assert [o.name for o in advice.options] == [
        "oracle:Archive",
        "gcs:COLDLINE",
        "azure:Cool",
        "s3:STANDARD_IA",
    ]
    # Coldline beats Cool below (153.6 - 102.4) / (309.6576 - 112.88576) = 0.2602 reads/month
    point = _points(advice)[frozenset(("gcs:COLDLINE", "azure:Cool"))][0]
    assert point == pytest.approx(51.2 / 196.77184)
    assert advice.ranked(0.3)[1].name == "azure:Cool"  # read more than that: Cool is second


def test_hot_and_cold_together_and_the_s3_break_even() -> None:
    advice = _advise(INSTRUMENT, 0.01)
    assert len(advice.options) == 9
    assert len(advice.break_evens) == 36
    standard = next(o for o in advice.options if o.name == "s3:STANDARD")
    assert standard.monthly == pytest.approx(102_400 * 0.025)  # 2560.00, Table 1
    assert standard.per_access == pytest.approx(51_200 * 0.00037 / 1000)
    point = _points(advice)[frozenset(("s3:STANDARD_IA", "s3:STANDARD"))][0]
    assert point == pytest.approx((2560 - 1945.6) / (1024.0512 - 51_200 * 0.00037 / 1000))
    cold = [o.name for o in _advise(INSTRUMENT, 0.01, cold_only=True).options]
    assert cold == [
        o.name for o in _advise(INSTRUMENT, 0.01, classes=[*COLD, "s3:GLACIER"]).options
    ]
    assert "s3:GLACIER (Standard restore)" in cold
    glacier = next(o for o in advice.options if o.storage_class == "GLACIER")
    overhead = 51_200 * (32768 * 0.005 + 8192 * 0.025) / 2**30  # Tokyo sheet's overheads
    assert glacier.monthly == pytest.approx(102_400 * 0.005 + overhead)  # Table 1's 0.0050


def test_restore_classes_pick_each_providers_tier(tmp_path: Path) -> None:
    sheet = parse_comparison_sheet(
        """
name: archive-tiers
source: test figures
date: "2026-11"
region: test
classes:
  s3:GLACIER: {label: Glacier, access: restore, storage_per_gb_month: 0.005, min_storage_days: 90}
  azure:Archive: {label: Azure Archive, access: restore, storage_per_gb_month: 0.002}
"""
    )
    work = Workload(objects=10, object_size=GiB, storage_class="STANDARD")
    advice = advise_providers(work, [sheet], reads_per_month=1, tier="Bulk", access_sheets=ACCESS)
    glacier = next(o for o in advice.options if o.provider == "s3")
    archive = next(o for o in advice.options if o.provider == "azure")
    assert (glacier.name, glacier.tier) == ("s3:GLACIER (Bulk restore)", "Bulk")
    assert (archive.name, archive.tier) == ("azure:Archive (Standard restore)", "Standard")
    overhead = 10 * (32768 * 0.005 + 8192 * 0.025) / GiB  # S3 STANDARD at its 2018 price too
    assert glacier.monthly == pytest.approx(10 * 0.005 + overhead)
    # Bulk in Tokyo: free requests and data; the copy is STANDARD (0.025) for 1 + 1 days
    assert glacier.per_access == pytest.approx(10 * 0.0 + 10 * 0.025 * 2 / 30 + 10 * 0.00037 / 1000)
    # Azure: Standard rehydration 0.55/1000 and 0.022/GB, then Hot for 1 + 1 days at
    # azure-eastus's 0.018 (this sheet gives Hot no 2018 price), and the GETs at Hot's read price
    assert archive.per_access == pytest.approx(
        10 * 0.55 / 1000 + 10 * 0.022 + 10 * 0.018 * 2 / 30 + 10 * 0.00044 / 1000
    )


def test_several_provider_sheets_without_a_comparison() -> None:
    work = Workload(objects=1000, object_size=GiB, storage_class="STANDARD")
    advice = advise_providers(work, [TOKYO, AZURE], reads_per_month=0.5)
    names = {o.name for o in advice.options}
    assert {"s3:STANDARD", "s3:DEEP_ARCHIVE (Standard restore)", "azure:Cool"} <= names
    assert len(advice.options) == 5 + 4  # S3's usual five, Azure's four
    hot = next(o for o in advice.options if o.name == "azure:Hot")
    assert hot.monthly == pytest.approx(1000 * 0.018)  # today's list price, not 2018's
    assert advice.notes == []
    with pytest.raises(ValueError, match="priced by two of the sheets given") as twice:
        advise_providers(work, [TOKYO, TOKYO], reads_per_month=0.5)
    assert "s3:GLACIER_IR, s3:STANDARD, s3:STANDARD_IA priced by two of the sheets given" in str(
        twice.value
    )
    with pytest.raises(ValueError, match="no sheet given prices s3:TAPE"):
        advise_providers(work, [TOKYO], reads_per_month=0.5, classes=["s3:TAPE"])


def test_access_sheets_come_from_the_sheet_or_the_caller(tmp_path: Path) -> None:
    found, notes = access_sheets_for(STUDY, {"gcs": "none", "oracle": "none"})
    assert found["s3"] == TOKYO
    assert found["azure"] == AZURE
    assert set(found) == {"s3", "azure"}
    assert "gcs: no price sheet for requests, retrieval and restores." in notes
    with pytest.raises(PriceSheetError, match="prices no class of ibm"):
        access_sheets_for(STUDY, {"ibm": "none"})
    with pytest.raises(PriceSheetError, match="prices s3 classes, not azure's"):
        access_sheets_for(STUDY, {"azure": "aws-ap-northeast-1"})


@pytest.mark.parametrize(
    ("key", "entry", "problem"),
    [
        ("s3STANDARD", "{label: x, access: immediate, storage_per_gb_month: 1}", "provider:Class"),
        ("s3:COLD", "{label: x, access: immediate, storage_per_gb_month: 1}", "no class 'COLD'"),
        ("azure:Cool", "{label: x, access: restore, storage_per_gb_month: 1}", "retrieval_fee"),
        ("s3:GLACIER", "{label: x, access: restore, storage_per_gb_month: -1}", "greater than"),
    ],
)
def test_bad_comparison_sheets_name_the_field(key: str, entry: str, problem: str) -> None:
    text = f"name: t\nsource: s\ndate: d\nregion: r\nclasses:\n  {key}: {entry}\n"
    with pytest.raises(PriceSheetError, match="field classes") as error:
        parse_comparison_sheet(text, source="mine.yaml")
    assert problem in str(error.value)
    assert "mine.yaml" in str(error.value)


# -- the command line, walked as a user -------------------------------------------------------


def _gcs_sheet(tmp_path: Path) -> str:
    path = tmp_path / "gcs-test.yaml"
    path.write_text(
        "name: gcs-test-figures\nprovider: gcs\nclasses:\n"
        "  STANDARD: {storage_per_gb_month: 0.02, get_per_1000: 0.004}\n"
        "  COLDLINE: {storage_per_gb_month: 0.004, get_per_1000: 0.01, retrieval_per_gb: 0.02}\n"
        "egress:\n  same_region: [{up_to_gb: null, per_gb: 0.0}]\n",
        encoding="utf-8",
    )
    return str(path)


def test_cli_ranks_the_instrument_archive(tmp_path: Path) -> None:
    gcs = f"gcs={_gcs_sheet(tmp_path)}"
    args = ["advise", "--price-sheet", "study-2018-tokyo", "--objects", "51200",
            "--total-size", "100TiB", "--reads-per-month", "0.01", "--cold-only",
            "--access-prices", gcs, "--access-prices", "oracle=none"]  # fmt: skip
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0].startswith("51200 objects, 100.0 TiB, 0.01 reads/month")
    assert "cheapest at 0.01 reads/month: oracle:Archive (Oracle Archive), 266.24 a month" in lines
    assert "  gcs:COLDLINE is cheaper below 0.90 reads/month, s3:STANDARD_IA above" in lines
    assert "  gcs:COLDLINE is cheaper below 0.50 reads/month, azure:Cool above" in lines
    assert "  azure:Cool is always cheaper than s3:STANDARD_IA" in lines
    assert any(line.startswith("note: oracle:Archive: storage only") for line in lines)
    assert "not incl." in text.output
    # --json before the command and after it: the same answer
    for where in (["--json", *args], [*args, "--json"]):
        result = CliRunner().invoke(main, where)
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert data["cheapest"] == "oracle:Archive"
        assert [o["name"] for o in data["options"]] == [
            "oracle:Archive", "s3:GLACIER (Standard restore)", "gcs:COLDLINE", "azure:Cool",
            "s3:STANDARD_IA"]  # fmt: skip
        assert data["options"][2]["per_access"] == pytest.approx(
            51_200 * 0.01 / 1000 + 102_400 * 0.02
        )
        assert data["workload"] == {"objects": 51200, "total_bytes": 100 * TiB, "tier": "Standard"}
        assert len(data["break_evens"]) == 10  # every pair of five cold classes


def test_cli_mistakes_get_one_clear_line(tmp_path: Path) -> None:
    base = ["advise", "--objects", "10", "--size", "1GiB"]
    bad = CliRunner().invoke(
        main, [*base, "--price-sheet", "study-2081-tokio", "--reads-per-month", "1"]
    )
    assert bad.exit_code == EXIT_USAGE  # a sheet that cannot be used: wrong usage
    assert "study-2081-tokio: no such price sheet" in bad.output
    assert "study-2018-tokyo" in bad.output  # the fix lists the sheets there are
    no_reads = CliRunner().invoke(main, [*base, "--price-sheet", "study-2018-tokyo"])
    assert no_reads.exit_code == EXIT_USAGE
    assert "--reads-per-month" in no_reads.output
    both = CliRunner().invoke(main, [*base, "--total-size", "1TiB"])
    assert both.exit_code == EXIT_USAGE
    assert "--size (each object) or --total-size" in both.output
    single = CliRunner().invoke(main, [*base, "--reads-per-month", "1"])
    assert single.exit_code == EXIT_USAGE
    assert "compare providers" in single.output
    malformed = CliRunner().invoke(
        main, [*base, "--price-sheet", "study-2018-tokyo", "--reads-per-month", "1",
               "--access-prices", "azure"])  # fmt: skip
    assert malformed.exit_code == EXIT_USAGE
    assert "PROVIDER=SHEET" in malformed.output
    wrong_class = CliRunner().invoke(
        main, [*base, "--price-sheet", "study-2018-tokyo", "--reads-per-month", "1",
               "--classes", "s3:DEEP_ARCHIVE"])  # fmt: skip
    assert wrong_class.exit_code == EXIT_ERROR
    assert "no sheet given prices s3:DEEP_ARCHIVE" in wrong_class.output
    helped = CliRunner().invoke(main, ["advise", "--help"])
    assert "archivefs advise --price-sheet study-2018-tokyo" in helped.output
    assert "--reads-per-month" in helped.output


def test_cli_two_provider_sheets() -> None:
    result = CliRunner().invoke(
        main, ["--json", "advise", "--price-sheet", "aws-ap-northeast-1", "--price-sheet",
               "azure-eastus", "--objects", "1000", "--size", "1GiB", "--reads-per-month", "0.5",
               "--classes", "s3:STANDARD_IA,azure:Cool"])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    ia, cool = (next(o for o in data["options"] if o["provider"] == p) for p in ("s3", "azure"))
    assert ia["monthly"] == pytest.approx(1000 * 0.0138)  # today's Tokyo IA price
    assert cool["monthly"] == pytest.approx(1000 * 0.01)
    assert ia["per_access"] == pytest.approx(1000 * 0.001 / 1000 + 1000 * 0.01)
    assert data["cheapest"] == "azure:Cool"


def test_a_sheet_can_name_its_provider() -> None:
    # GCS's STANDARD is not S3's: with provider: the class names are the provider's
    assert {(k.provider, str(k)) for k in GCS_TEST.classes} == {
        ("gcs", "STANDARD"),
        ("gcs", "COLDLINE"),
    }
    assert (GCS_TEST.provider, GCS_TEST.restored_copy_class.provider) == ("gcs", "gcs")
    text = "name: t\nprovider: gcs\nclasses:\n  GLACIER: {storage_per_gb_month: 1}\negress: {}\n"
    with pytest.raises(PriceSheetError, match="gcs has no storage class 'GLACIER'"):
        parse_price_sheet(text)
    with pytest.raises(PriceSheetError, match="unknown provider 'tape'"):
        parse_price_sheet(text.replace("provider: gcs", "provider: tape"))
    assert TOKYO.provider is None  # sheets without it read as before (S3's names first)


def test_the_cost_model_page_quotes_these_figures() -> None:
    """docs/cost-model.md works the instrument archive through; its numbers are these."""
    page = (Path(__file__).parents[1] / "docs" / "cost-model.md").read_text(encoding="utf-8")
    text = " ".join(page.split())
    access = {"s3": TOKYO, "azure": AZURE}  # the page's case: no GCS or Oracle sheet
    advice = advise_providers(INSTRUMENT, [STUDY], reads_per_month=0.01, access_sheets=access)
    by_name = {o.name: o for o in advice.options}
    for name in COLD:
        option = by_name[name]
        assert f"= ${option.monthly:,.2f} |" in text, name
        assert f"| ${option.cost(0.01):,.2f} |" in text, name
        if option.reads_priced:
            assert f"= ${option.per_access:,.2f} |" in text, name
    ranked = [o.name for o in advice.options if o.name in COLD]
    assert ranked == ["oracle:Archive", "gcs:COLDLINE", "azure:Cool", "s3:STANDARD_IA"]
    points = _points(advice)
    standard_ia = points[frozenset(("s3:STANDARD", "s3:STANDARD_IA"))][0]
    hot_cool = points[frozenset(("azure:Hot", "azure:Cool"))][0]
    assert f"below 614.40 / 1,024.03 = {standard_ia:.2f} reads a month" in text
    assert f"Azure Cool beats Azure Hot below {hot_cool:.2f}" in text
    assert f"(${by_name['s3:STANDARD'].monthly:,.2f} a month" in text


def test_a_sheet_without_provider_still_reads_as_its_providers() -> None:
    # GCS's STANDARD spelled like S3's, and no provider: line: the sheet is GCS's all the same
    text = (
        "name: gcs-no-provider\nclasses:\n  STANDARD: {storage_per_gb_month: 0.02}\n"
        "  COLDLINE: {storage_per_gb_month: 0.004, retrieval_per_gb: 0.02}\n"
        "egress: {same_region: [{up_to_gb: null, per_gb: 0.0}]}\n"
    )
    sheet = parse_price_sheet(text)
    assert sheet_provider(sheet) == "gcs"
    work = Workload(objects=1, object_size=GiB, storage_class="STANDARD")
    advice = advise_providers(work, [sheet], reads_per_month=1)
    assert sorted(o.name for o in advice.options) == ["gcs:COLDLINE", "gcs:STANDARD"]
    coldline = next(o for o in advice.options if o.name == "gcs:COLDLINE")
    assert coldline.monthly == pytest.approx(0.004)
    assert coldline.per_access == pytest.approx(0.02)  # 1 GiB at 0.02, no request price
    assert [sheet_provider(s) for s in (TOKYO, AZURE, GCS_TEST)] == ["s3", "azure", "gcs"]
    found, _ = access_sheets_for(STUDY, {"gcs": "none", "oracle": "none"})
    with pytest.raises(PriceSheetError, match="prices s3 classes, not azure's"):
        access_sheets_for(STUDY, {"azure": "aws-ap-northeast-1"})
    assert set(found) == {"s3", "azure"}


def test_the_measured_case_study_stored_at_table_1s_prices() -> None:
    """The 633 GiB case study (tests/test_pricing_advise.py) paid Table 1's S3 prices a month."""
    standard = STUDY.classes["s3:STANDARD"].storage_per_gb_month
    ia = STUDY.classes["s3:STANDARD_IA"].storage_per_gb_month
    assert round(633 * standard, 1) == 15.8  # 633 x 0.025 = 15.825
    assert round(633 * ia, 1) == 12.0  # 633 x 0.019 = 12.027
