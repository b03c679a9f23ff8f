"""Hostile and malformed input: every case a clear archivefs error, nothing written outside."""

from __future__ import annotations

import contextlib
import io
import json
import struct
import zipfile
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivefs.catalog.bundle import read_entries
from archivefs.catalog.names import normalize_member_name, safe_target_path
from archivefs.cli import main
from archivefs.errors import ArchiveError, BundleError, PriceSheetError
from archivefs.pricing import parse_price_sheet
from tests.reliability._support import make_fs

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
CLEAR = (ArchiveError, ValueError)  # archivefs errors, or ValueError subclasses already

paths = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "",
            "/",
            "s3://",
            "archive://",
            "..",
            "../../etc/passwd",
            "a/../b",
            "*",
            "[",
            "**/?",
            "b\x00k",
            "s3://UPPER_bad/k",
            "x" * 1100,
        ]
    ),
    st.builds(lambda a, b: f"{a}/{b}", st.text(max_size=20), st.text(max_size=20)),
)


@FUZZ
@given(path=paths)
def test_fuzzed_paths_to_info_restore_plan(archive: EmulatedArchive, path: str) -> None:
    fs = make_fs(archive, archive_tmp(archive), journal=False)
    for call in (fs.info, fs.plan, fs.restore):
        with contextlib.suppress(CLEAR):
            call(path)
    assert archive.requests.count("RestoreObject", status=202) == 0


def archive_tmp(archive: EmulatedArchive) -> Any:
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp(prefix="archivefs-fuzz-"))


names = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "../x",
            "/abs",
            "a/../../b",
            "C:\\x",
            "a\\b",
            "a\x00b",
            "./a",
            "a//b",
            "é",
            "e\u0301",
            "x" * 2000,
        ]
    ),
)


@FUZZ
@given(name=names)
def test_fuzzed_member_names_never_escape(tmp_path_factory: Any, name: str) -> None:
    root = tmp_path_factory.mktemp("extract")
    try:
        normal = normalize_member_name(name)
    except BundleError:
        return
    target = safe_target_path(root, name)
    assert target.is_relative_to(root.resolve())
    assert normal == normalize_member_name(normal)  # one normal form


def test_unicode_normalisation_clash_in_a_zip_is_refused() -> None:
    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w", zipfile.ZIP_STORED) as z:
        z.writestr("caf\u00e9", b"1")
        z.writestr("cafe\u0301", b"2")
    data = blob.getvalue()
    with pytest.raises(BundleError, match="both named"):
        read_entries(lambda a, b: data[a:b], len(data))


price_values = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
)


@FUZZ
@given(
    field=st.sampled_from(
        [
            "storage_per_gb_month",
            "get_per_1000",
            "put_per_1000",
            "retrieval_per_gb",
            "min_storage_days",
        ]
    ),
    value=price_values,
    drop=st.sampled_from([None, "name", "currency", "classes", "bytes_per_gb"]),
)
def test_fuzzed_price_sheets(field: str, value: Any, drop: str | None) -> None:
    sheet: dict[str, Any] = {
        "name": "fuzz",
        "currency": "USD",
        "bytes_per_gb": 1073741824,
        "restored_copy_class": "STANDARD",
        "classes": {
            "STANDARD": {
                "storage_per_gb_month": 0.02,
                "put_per_1000": 0.005,
                "get_per_1000": 0.0004,
            }
        },
    }
    sheet["classes"]["STANDARD"][field] = value
    if drop is not None:
        sheet.pop(drop)
    try:
        parsed = parse_price_sheet(json.dumps(sheet))
    except PriceSheetError:
        return
    price = parsed.price("STANDARD")
    got = getattr(price, field)
    assert got is None or got >= 0  # accepted sheets never carry negative prices


@FUZZ
@given(lines=st.lists(st.text(max_size=30), min_size=1, max_size=6))
def test_cli_restore_from_file_with_garbage(
    archive: EmulatedArchive, tmp_path_factory: Any, lines: list[str]
) -> None:
    work = tmp_path_factory.mktemp("cli")
    listing = work / "paths.txt"
    listing.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    options = json.dumps(archive.storage_options())
    result = CliRunner().invoke(
        main,
        [
            "--storage-options",
            options,
            "--journal",
            str(work / "j.sqlite"),
            "restore",
            "--from-file",
            str(listing),
        ],
    )
    # a usage error (2) or a one-line archivefs error (1), never a traceback
    assert result.exit_code in (0, 1, 2), result.output
    assert not isinstance(result.exception, (KeyError, struct.error, TypeError, AttributeError)), (
        result.exception
    )
    if result.exit_code != 0:
        assert "Traceback" not in result.output
    assert archive.requests.count("RestoreObject", status=202) == 0


def _zip(members: list[tuple[str, bytes]], compress: int = zipfile.ZIP_STORED) -> bytes:
    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w", compress) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = compress
            z.writestr(info, data)
    return blob.getvalue()


def _overlapping() -> bytes:
    data = bytearray(_zip([("a", b"A" * 100), ("b", b"B" * 100)]))
    cd = data.rfind(b"PK\x01\x02")  # second central entry: point it at the first member
    struct.pack_into("<I", data, cd + 42, 0)
    return bytes(data)


def _huge() -> bytes:
    data = bytearray(_zip([("a", b"A" * 10)]))
    cd = data.find(b"PK\x01\x02")
    struct.pack_into("<II", data, cd + 20, 0xFFFFFFF0, 0xFFFFFFF0)  # claimed sizes
    return bytes(data)


HOSTILE = {
    "not a zip": b"hello world, definitely not a zip" * 10,
    "empty": b"",
    "compressed": _zip([("a", b"x" * 1000)], zipfile.ZIP_DEFLATED),
    "escaping name": _zip([("../../evil", b"x")]),
    "absolute name": _zip([("/etc/evil", b"x")]),
    "overlapping members": _overlapping(),
    "huge claimed sizes": _huge(),
    "truncated": _zip([("a", b"x" * 500)])[:-30],
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_zips_that_are_not_ours_or_are_malicious(kind: str) -> None:
    data = HOSTILE[kind]
    with pytest.raises(BundleError):
        read_entries(lambda a, b: data[a:b], len(data), bundle=kind)


@FUZZ
@given(data=st.binary(max_size=400), flips=st.lists(st.integers(0, 10_000), max_size=4))
def test_fuzzed_zip_bytes(data: bytes, flips: list[int]) -> None:
    raw = bytearray(_zip([("a/b", data), ("c", data[::-1])]))
    for at in flips:
        raw[at % len(raw)] ^= 0x5A
    try:
        entries = read_entries(lambda a, b: bytes(raw[a:b]), len(raw))
    except BundleError:
        return
    for entry in entries:
        assert entry.data_offset >= 0
        assert entry.data_offset + entry.length <= len(raw)
