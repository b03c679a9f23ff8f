"""Damaged bundles, lying catalogs and replaced objects are detected, never returned as data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from archivefs.catalog import Catalog
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir
from archivefs.catalog.writer import rebuild_catalog
from archivefs.errors import ArchiveError, BundleError, CatalogError, ChecksumMismatchError
from tests.reliability._support import bundle, make_fs, make_tree, s3

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

DETECTED = (ChecksumMismatchError, BundleError, CatalogError)


def _setup(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> tuple[dict[str, bytes], str]:
    files = make_tree(tmp_path / "src", 24)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/i")
    return files, f"{bucket}/i"


@pytest.mark.parametrize("where", [0, 1, "last"])
def test_corrupted_member_bytes(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, where: int | str
) -> None:
    _files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    catalog = Catalog.load(fs3, catalog_dir(root))
    member = sorted(catalog.members(), key=lambda m: m.path)[3]
    raw = bytearray(fs3.cat_file(member.bundle))
    at = member.offset + (member.length - 1 if where == "last" else int(where))
    raw[at] ^= 0x01
    fs3.pipe_file(member.bundle, bytes(raw))
    fs = make_fs(archive, tmp_path)
    with pytest.raises(ChecksumMismatchError):
        fs.cat_file(member.path)
    with pytest.raises(ChecksumMismatchError), fs.open(member.path, "rb") as handle:
        handle.read()


def test_truncated_bundle(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> None:
    _files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    catalog = Catalog.load(fs3, catalog_dir(root))
    last = max(catalog.members(), key=lambda m: m.offset)
    raw = fs3.cat_file(last.bundle)
    fs3.pipe_file(last.bundle, raw[: last.offset + last.length // 2])
    fs = make_fs(archive, tmp_path)
    with pytest.raises(DETECTED):
        fs.cat_file(last.path)
    with pytest.raises(BundleError):  # the bundle's own directory is gone with its tail
        rebuild_catalog(fs3, root)


def test_catalog_offsets_disagree_with_bundle(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    _files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    directory = catalog_dir(root)
    pointer = json.loads(fs3.cat_file(f"{directory}/{POINTER}"))
    catalog = Catalog.load(fs3, directory)
    victim = sorted(catalog.members(), key=lambda m: m.path)[5]
    # shift every offset by 7 bytes and save it as a well-formed catalog
    shifted = Catalog.load(fs3, directory)
    shifted._offset = shifted._offset + 7  # what a buggy or stale writer would record
    shifted.save(fs3, directory)
    assert json.loads(fs3.cat_file(f"{directory}/{POINTER}"))["file"] != pointer["file"]
    fs = make_fs(archive, tmp_path)
    with pytest.raises(ChecksumMismatchError):
        fs.cat_file(victim.path)


def test_catalog_file_tampered_after_save(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    directory = catalog_dir(root)
    pointer = json.loads(fs3.cat_file(f"{directory}/{POINTER}"))
    path = f"{directory}/{pointer['file']}"
    data = bytearray(fs3.cat_file(path))
    data[len(data) // 2] ^= 0xFF
    fs3.pipe_file(path, bytes(data))
    with pytest.raises(CatalogError, match="checksum"):
        Catalog.load(fs3, directory)
    fs = make_fs(archive, tmp_path)
    with pytest.raises(CatalogError):
        fs.cat_file(f"{root}/{sorted(files)[0]}")


def test_restored_bundle_replaced_by_other_content(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "src", 24)
    fs3 = s3(archive)
    bundle(tmp_path / "src", fs3, f"{bucket}/g", storage_class="GLACIER")
    fs = make_fs(archive, tmp_path)
    name = sorted(files)[2]
    fs.restore(f"{bucket}/g/{name}", wait=True, timeout=60)
    assert fs.cat_file(f"{bucket}/g/{name}") == files[name]
    member = Catalog.load(fs3, catalog_dir(f"{bucket}/g")).lookup(f"{bucket}/g/{name}")
    assert member is not None
    # someone puts a different object (same size, other bytes) at the bundle's key
    size = fs3.info(member.bundle)["size"]
    archive.put_object(bucket, member.bundle.split("/", 1)[1], b"\x00" * size)
    fresh = make_fs(archive, tmp_path)
    with pytest.raises(ChecksumMismatchError):
        fresh.cat_file(f"{bucket}/g/{name}")
    archive.put_object(bucket, member.bundle.split("/", 1)[1], b"short")
    # a shorter object: S3 refuses the range (InvalidRange), an ArchiveError, never data
    with pytest.raises(ArchiveError, match="range is not satisfiable"):
        make_fs(archive, tmp_path).cat_file(f"{bucket}/g/{name}")
