"""Price sheets: the shipped ones, validation that names the file and the field, egress tiers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import yaml

from archivefs.errors import PriceSheetError, UnknownStorageClassError
from archivefs.model import RestoreTier, StorageClass
from archivefs.pricing import (
    DEFAULT_SHEET,
    PriceSheet,
    available_price_sheets,
    load_price_sheet,
    parse_price_sheet,
)

if TYPE_CHECKING:
    from pathlib import Path

SHEET = """
name: tape
currency: EUR
bytes_per_gb: 1000000000
restored_copy_class: STANDARD
classes:
  STANDARD: {storage_per_gb_month: 0.02}
  DEEP_ARCHIVE:
    storage_per_gb_month: 0.001
    restore:
      Bulk: {per_1000_requests: 0.5, per_gb: 0.002, hours: [24, 48]}
egress:
  internet:
    - {up_to_gb: 10, per_gb: 0.1}
    - {up_to_gb: 20, per_gb: 0.05}
    - {up_to_gb: null, per_gb: 0.01}
"""


def test_shipped_sheets_are_listed_and_load() -> None:
    assert available_price_sheets() == [
        "aws-ap-northeast-1",
        "aws-us-east-1",
        "azure-eastus",
        "gcs-us-central1",
        "oci-us-ashburn-1",
    ]
    assert DEFAULT_SHEET == "aws-us-east-1"
    for name in available_price_sheets():
        sheet = load_price_sheet(name)
        assert sheet.name == name
        assert sheet.currency == "USD"
        assert sheet.bytes_per_gb == 2**30
        expected = {"azure": "Hot", "oci": "Standard"}.get(name.split("-")[0], "STANDARD")
        assert sheet.restored_copy_class == expected
        assert {"internet", "same_region"} <= set(sheet.egress)
        assert sheet.egress_cost(1000, "same_region") == 0.0
        if name.startswith("azure"):
            archive = sheet.price(StorageClass.parse("Archive", provider="azure"))
            assert set(archive.restore) == {"Standard", "High"}
            assert archive.min_storage_days == 180
            continue
        if name.startswith("gcs"):  # no restores: fees per GB read, minimum days
            for klass, days in {"NEARLINE": 30, "COLDLINE": 90, "ARCHIVE": 365}.items():
                price = sheet.price(StorageClass.parse(klass, provider="gcs"))
                assert (price.min_storage_days, price.restore) == (days, {})
                assert price.retrieval_per_gb > 0
            assert sheet.price(StorageClass.parse("STANDARD", provider="gcs")).retrieval_per_gb == 0
            continue
        if name.startswith("oci"):
            archive = sheet.price(StorageClass.parse("Archive", provider="oracle"))
            assert set(archive.restore) == {"Standard"}  # RestoreObjects has no tiers
            assert archive.restore["Standard"].hours == (0.0, 1.0)  # "at most an hour"
            assert archive.min_storage_days == 90
            infrequent = sheet.price(StorageClass.parse("InfrequentAccess", provider="oracle"))
            assert (infrequent.min_storage_days, infrequent.retrieval_per_gb > 0) == (31, True)
            assert sheet.egress_cost(10240, "internet") == 0.0  # the first 10 TB are free
            continue
        glacier = sheet.price(StorageClass.GLACIER)
        deep = sheet.price(StorageClass.DEEP_ARCHIVE)
        assert set(glacier.restore) == set(RestoreTier)
        assert set(deep.restore) == {RestoreTier.STANDARD, RestoreTier.BULK}  # no Expedited
        assert (glacier.min_storage_days, deep.min_storage_days) == (90, 180)
        assert glacier.overhead_bytes_at_class + glacier.overhead_bytes_at_standard == 40 * 1024
        assert sheet.price(StorageClass.STANDARD_IA).min_billable_object_bytes == 128 * 1024


def test_us_east_1_list_prices() -> None:
    sheet = load_price_sheet()
    assert sheet.price("STANDARD").storage_per_gb_month == 0.023
    assert sheet.price("glacier").restore[RestoreTier.STANDARD].per_1000_requests == 0.05
    assert sheet.restore_price(StorageClass.GLACIER, RestoreTier.STANDARD).per_gb == 0.01
    assert sheet.restore_price(StorageClass.DEEP_ARCHIVE, RestoreTier.BULK).hours == (0, 48)


def test_a_custom_sheet_from_text_and_file(tmp_path: Path) -> None:
    sheet = parse_price_sheet(SHEET, source="tape.yaml")
    assert (sheet.name, sheet.currency, sheet.bytes_per_gb) == ("tape", "EUR", 10**9)
    bulk = sheet.restore_price(StorageClass.DEEP_ARCHIVE, RestoreTier.BULK)
    assert (bulk.per_1000_requests, bulk.per_gb, bulk.hours) == (0.5, 0.002, (24, 48))
    own = tmp_path / "tape.yaml"
    own.write_text(SHEET, encoding="utf-8")
    assert load_price_sheet(own) == sheet
    assert load_price_sheet(str(own)) == sheet


def test_shipped_sheets_survive_a_yaml_round_trip() -> None:
    for name in available_price_sheets():
        sheet = load_price_sheet(name)
        text = yaml.safe_dump(sheet.model_dump(mode="json"))
        assert parse_price_sheet(text) == sheet


def _with(old: str, new: str) -> str:
    assert old in SHEET
    return SHEET.replace(old, new)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (_with("0.02}", "-0.02}"), "classes.STANDARD.storage_per_gb_month"),
        (_with("per_gb: 0.002", "per_gb: -1"), "classes.DEEP_ARCHIVE.restore.Bulk.per_gb"),
        (_with("hours: [24, 48]", "hours: [48, 24]"), "classes.DEEP_ARCHIVE.restore.Bulk.hours"),
        (_with("hours: [24, 48]", "hours: [24]"), "classes.DEEP_ARCHIVE.restore.Bulk.hours"),
        (_with("Bulk:", "Slow:"), "classes.DEEP_ARCHIVE.restore.Slow"),
        (_with("DEEP_ARCHIVE:", "deep_archive:"), "classes.deep_archive"),
        (_with("DEEP_ARCHIVE:", "TAPE:"), "classes.TAPE"),
        (_with("up_to_gb: 20", "up_to_gb: 5"), "egress"),
        (_with("up_to_gb: 20", "up_to_gb: 10"), "egress"),
        (_with("up_to_gb: 20", "up_to_gb: null"), "egress"),
        (_with("{up_to_gb: null, per_gb: 0.01}", "{up_to_gb: 30, per_gb: 0.01}"), "egress"),
        (_with("per_gb: 0.05}", "per_gb: -0.05}"), "egress.internet.1.per_gb"),
        (
            _with("restored_copy_class: STANDARD", "restored_copy_class: GLACIER"),
            "restored_copy_class",
        ),
        (
            _with("restored_copy_class: STANDARD\n", "").replace("STANDARD: ", "ONEZONE_IA: "),
            "restored_copy_class",
        ),
        (_with("currency: EUR", "currency: EUR\ndiscount: 0.5"), "discount"),
        (_with("bytes_per_gb: 1000000000", "bytes_per_gb: 0"), "bytes_per_gb"),
        (_with("name: tape\n", ""), "name"),
    ],
)
def test_bad_sheets_are_refused_naming_file_and_field(text: str, field: str) -> None:
    with pytest.raises(PriceSheetError) as info:
        parse_price_sheet(text, source="/prices/tape.yaml")
    message = str(info.value)
    assert message.startswith("/prices/tape.yaml: field ")
    assert f"field {field}" in message
    assert "Fix: " in message
    assert info.value.path == "/prices/tape.yaml"


def test_egress_tier_problems_are_explained() -> None:
    with pytest.raises(PriceSheetError, match=r"up_to_gb must increase, got \[10\.0, 5\.0\]"):
        parse_price_sheet(_with("up_to_gb: 20", "up_to_gb: 5"))
    with pytest.raises(PriceSheetError, match="only the last tier may be open-ended"):
        parse_price_sheet(_with("up_to_gb: 20", "up_to_gb: null"))
    with pytest.raises(PriceSheetError, match="has no tiers"):
        parse_price_sheet(SHEET + "  direct_connect: []\n")


def test_unreadable_sources(tmp_path: Path) -> None:
    with pytest.raises(PriceSheetError, match="not valid YAML"):
        parse_price_sheet("name: [", source="x.yaml")
    with pytest.raises(PriceSheetError, match="must be a YAML mapping"):
        parse_price_sheet("- 1\n- 2\n", source="x.yaml")
    with pytest.raises(PriceSheetError, match="aws-ap-northeast-1, aws-us-east-1") as info:
        load_price_sheet("aws-mars-1")
    assert info.value.path == "aws-mars-1"
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00name")
    with pytest.raises(PriceSheetError, match="cannot read the price sheet"):
        load_price_sheet(binary)


def test_missing_prices_say_what_to_add() -> None:
    sheet = parse_price_sheet(SHEET)
    with pytest.raises(PriceSheetError, match=r"'tape' has no prices for GLACIER") as info:
        sheet.price(StorageClass.GLACIER)
    assert "add a 'GLACIER' entry under 'classes'" in str(info.value)
    with pytest.raises(PriceSheetError, match=r"classes\.DEEP_ARCHIVE\.restore\.Standard"):
        sheet.restore_price(StorageClass.DEEP_ARCHIVE, RestoreTier.STANDARD)
    with pytest.raises(PriceSheetError, match="use one of: internet"):
        sheet.egress_cost(1.0, "same_region")
    with pytest.raises(UnknownStorageClassError):
        sheet.price("COLD")


@pytest.mark.parametrize(
    ("gb", "dollars"),
    [
        (0, 0.0),
        (4, 0.4),
        (10, 1.0),
        (15, 1.0 + 5 * 0.05),
        (20, 1.0 + 0.5),
        (120, 1.0 + 0.5 + 100 * 0.01),
    ],
)
def test_egress_walks_cumulative_tiers(gb: float, dollars: float) -> None:
    assert parse_price_sheet(SHEET).egress_cost(gb, "internet") == pytest.approx(dollars)


def test_us_internet_egress_by_hand() -> None:
    sheet: PriceSheet = load_price_sheet("aws-us-east-1")
    expected = 10240 * 0.09 + 40960 * 0.085 + 102400 * 0.07 + 46400 * 0.05
    assert sheet.egress_cost(200_000, "internet") == pytest.approx(expected)
