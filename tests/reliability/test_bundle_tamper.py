"""Bundles that disagree with themselves, and catalog pointers that point out of their directory."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from typing import TYPE_CHECKING

import fsspec
import pytest
from click.testing import CliRunner

from archivefs.catalog import Catalog, Source, read_entries, write_bundle
from archivefs.catalog.bundle import verify_bundle_bytes
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import bundle_dir, catalog_dir, registry_path
from archivefs.catalog.writer import rebuild_catalog
from archivefs.cli import main
from archivefs.errors import BundleError, CatalogError
from tests.reliability._support import bundle, make_tree, s3

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

MEMBERS = {"a.dat": b"A" * 100, "b.dat": b"B" * 200, "c.dat": b"C" * 300}


def _bundle_bytes() -> bytes:
    out = io.BytesIO()
    sources = [Source(n, len(d), 1.7e9, lambda d=d: io.BytesIO(d)) for n, d in MEMBERS.items()]
    write_bundle(sources, out)
    return out.getvalue()


def _upload_bundle(archive: EmulatedArchive, bucket: str, data: bytes) -> str:
    root = f"{bucket}/t"
    s3(archive).pipe_file(f"{bundle_dir(root)}/b-tampered.zip", data)
    return root


def test_an_untouched_bundle_verifies() -> None:
    data = _bundle_bytes()
    checked = verify_bundle_bytes(data, read_entries(lambda a, b: data[a:b], len(data)), bundle="x")
    assert [e.name for e in checked] == sorted(MEMBERS)
    assert all(e.sha256 for e in checked)


def test_local_header_name_differs_from_the_directory(
    archive: EmulatedArchive, bucket: str
) -> None:
    data = bytearray(_bundle_bytes())
    at = data.find(b"b.dat")  # the first occurrence is b's local header
    data[at] = ord("x")
    with pytest.raises(zipfile.BadZipFile):  # Python's zipfile refuses it too
        zipfile.ZipFile(io.BytesIO(bytes(data))).read("b.dat")
    entries = read_entries(lambda a, b: bytes(data[a:b]), len(data))  # the directory is intact
    with pytest.raises(BundleError, match=r"local header names 'x\.dat'"):
        verify_bundle_bytes(bytes(data), entries, bundle="x")
    root = _upload_bundle(archive, bucket, bytes(data))
    with pytest.raises(BundleError, match="local header"):
        rebuild_catalog(s3(archive), root)
    assert not s3(archive).exists(catalog_dir(root))  # nothing recorded


def test_local_header_layout_that_makes_zipfile_read_other_bytes(
    archive: EmulatedArchive, bucket: str
) -> None:
    data = bytearray(_bundle_bytes())
    at = data.find(b"PK\x03\x04", 1)  # b's local header
    struct.pack_into("<H", data, at + 28, 0)  # no local extra: zipfile reads 20 bytes early
    entries = read_entries(lambda a, b: bytes(data[a:b]), len(data))
    with pytest.raises(BundleError, match="local header layout"):
        verify_bundle_bytes(bytes(data), entries, bundle="x")
    root = _upload_bundle(archive, bucket, bytes(data))
    with pytest.raises(BundleError):
        rebuild_catalog(s3(archive), root)


def test_data_descriptor_crc_differs(archive: EmulatedArchive, bucket: str) -> None:
    data = bytearray(_bundle_bytes())
    at = data.find(b"PK\x07\x08")  # a's data descriptor
    struct.pack_into("<I", data, at + 4, 12345)
    entries = read_entries(lambda a, b: bytes(data[a:b]), len(data))
    with pytest.raises(BundleError, match="data descriptor"):
        verify_bundle_bytes(bytes(data), entries, bundle="x")


def test_zip64_end_record_with_a_lowered_member_count_is_refused() -> None:
    data = bytearray(_bundle_bytes())
    at = data.rfind(b"PK\x06\x06")
    struct.pack_into("<QQ", data, at + 24, 2, 2)  # 3 members, the record says 2
    with pytest.raises(BundleError, match="lowered member count"):
        read_entries(lambda a, b: bytes(data[a:b]), len(data))
    assert len(zipfile.ZipFile(io.BytesIO(_bundle_bytes())).namelist()) == 3


def _drop_last_central_entry(raw: bytes) -> bytes:
    """A self-consistent directory that no longer lists the last member (the c.dat bytes stay)."""
    data = bytearray(raw)
    zip64 = data.rfind(b"PK\x06\x06")
    (cd_size, cd_start) = struct.unpack_from("<QQ", data, zip64 + 40)
    directory = bytes(data[cd_start : cd_start + cd_size])
    last = directory.rfind(b"PK\x01\x02")
    shorter = directory[:last]
    tail = bytes(data[zip64:])
    out = bytearray(bytes(data[:cd_start]) + shorter)
    new_zip64 = len(out)
    tail_b = bytearray(tail)
    struct.pack_into("<QQQQ", tail_b, 24, 2, 2, len(shorter), cd_start)
    struct.pack_into("<Q", tail_b, 56 + 8, new_zip64)  # the locator's pointer to the record
    return bytes(out + tail_b)


def test_rebuild_that_would_find_fewer_members_than_the_bundle_holds_is_an_error(
    archive: EmulatedArchive, bucket: str
) -> None:
    data = _drop_last_central_entry(_bundle_bytes())
    with pytest.raises(BundleError, match="fewer members"):
        read_entries(lambda a, b: data[a:b], len(data))
    root = _upload_bundle(archive, bucket, data)
    with pytest.raises(BundleError, match="fewer members"):
        rebuild_catalog(s3(archive), root)
    assert not s3(archive).exists(catalog_dir(root))


def test_rebuild_never_deletes_outside_the_catalog_directory(tmp_path: Path) -> None:
    make_tree(tmp_path / "src", 12)
    local = fsspec.filesystem("file")
    dest = str(tmp_path / "dest")
    bundle(tmp_path / "src", local, dest)
    planted = tmp_path / "planted.txt"
    planted.write_text("keep me")
    pointer_path = f"{catalog_dir(dest)}/{POINTER}"
    pointer = json.loads(local.cat_file(pointer_path))
    hostile = "../" * (catalog_dir(dest).count("/") - str(tmp_path).count("/")) + "planted.txt"
    assert (tmp_path / "dest" / ".archivefs" / "catalog" / hostile).resolve() == planted
    pointer["shards"][0]["file"] = hostile
    local.pipe_file(pointer_path, json.dumps(pointer).encode())
    with pytest.raises(CatalogError, match="not a catalog file in its own directory"):
        Catalog.load(local, catalog_dir(dest))
    result = CliRunner().invoke(main, ["catalog", "rebuild", dest])
    assert result.exit_code == 0, result.output
    assert "rebuilt: 12 members" in result.output
    assert planted.read_text() == "keep me"
    assert len(Catalog.load(local, catalog_dir(dest))) == 12
    outside = {p for p in tmp_path.rglob("*") if "dest" not in p.parts and "src" not in p.parts}
    assert outside == {planted}


def test_bundle_to_and_rebuild_in_a_local_directory(tmp_path: Path) -> None:
    files = make_tree(tmp_path / "src", 20)
    dest = tmp_path / "archive"
    result = CliRunner().invoke(
        main, ["bundle", str(tmp_path / "src"), str(dest), "--storage-class", "STANDARD"]
    )
    assert result.exit_code == 0, result.output
    assert "20 files in 4 new bundles" in result.output
    local = fsspec.filesystem("file")
    catalog = Catalog.load(local, catalog_dir(str(dest)))
    assert len(catalog) == 20
    assert not local.exists(registry_path(""))  # no registry at the filesystem's root
    (dest / ".archivefs" / "catalog" / POINTER).write_text("{ not json")
    rebuilt = CliRunner().invoke(main, ["catalog", "rebuild", str(dest)])
    assert rebuilt.exit_code == 0, rebuilt.output
    again = Catalog.load(local, catalog_dir(str(dest)))
    member = again.lookup(f"{dest}/{sorted(files)[3]}")
    assert member is not None
    raw = (tmp_path / "archive").joinpath(*member.bundle.split("/")[-3:]).read_bytes()
    assert raw[member.offset : member.offset + member.length] == files[sorted(files)[3]]
