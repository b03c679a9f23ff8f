"""Damaged bundles, lying catalogs and replaced objects are detected, never returned as data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from archivefs.catalog import Catalog
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir
from archivefs.catalog.writer import rebuild_catalog
from archivefs.errors import (
    BundleChangedError,
    BundleError,
    CatalogError,
    ChecksumMismatchError,
    MissingBundleError,
)
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
    assert json.loads(fs3.cat_file(f"{directory}/{POINTER}"))["shards"] != pointer["shards"]
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
    path = f"{directory}/{pointer['shards'][0]['file']}"
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
    fs.restore(f"{bucket}/g/{name}", wait=True, timeout=600)
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
    # a shorter object: its ETag is not the recorded one (S3 checks If-Match before the range)
    with pytest.raises(BundleChangedError, match="ETag differs"):
        make_fs(archive, tmp_path).cat_file(f"{bucket}/g/{name}")


# -- a member's damage is never silent (issue 20, items 1-4) ----------------------------------


def _bundled_zarr(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> tuple[Any, Catalog]:
    """The test dataset as a bundled zarr store at ``bucket/b.zarr`` (coordinates hot)."""
    import fsspec

    from archivefs.catalog import ByChunkNeighbourhood
    from archivefs.catalog.writer import bundle_tree
    from tests.zarr_data import make_source

    source = make_source()
    local = tmp_path / "src.zarr"
    source.to_zarr(local, mode="w", consolidated=False)
    policy = ByChunkNeighbourhood(dim_index=0, window=2, hot_arrays=frozenset({"time", "x", "y"}))
    fs3 = s3(archive)
    bundle_tree(
        fsspec.filesystem("file"), str(local), fs3, f"{bucket}/b.zarr", policy=policy,
        storage_class="STANDARD",
    )  # fmt: skip
    return source, Catalog.load(fs3, catalog_dir(f"{bucket}/b.zarr"))


def _open(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> Any:
    import archivefs.datasets as ads

    return ads.open_zarr(
        f"s3://{bucket}/b.zarr",
        storage_options=archive.storage_options(),
        journal=str(tmp_path / "journal.sqlite"),
        skip_instance_cache=True,
    )


def test_a_missing_bundle_is_an_error_naming_it_and_zarr_yields_no_nan(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    pytest.importorskip("xarray")
    source, catalog = _bundled_zarr(archive, bucket, tmp_path)
    # the bundle holding the last time window of "t" (bundle names are content hashes, so
    # pick by content), leaving the first window's bundle intact
    chunks = [m for k in catalog.bundles for m in catalog.members_of(k) if "/t/" in m.path]
    member = max(chunks, key=lambda m: int(m.path.split("/t/", 1)[1].removeprefix("c/")
                                             .replace(".", "/").split("/")[0]))  # fmt: skip
    victim = member.bundle
    s3(archive).rm_file(victim)  # a lifecycle rule, an operator, a damaged pointer
    fs = make_fs(archive, tmp_path)
    for read in (
        lambda: fs.cat_file(member.path),
        lambda: fs.cat_file(member.path, start=0, end=4),
        lambda: fs.info(member.path),
        lambda: fs.get_file(member.path, str(tmp_path / "out")),
    ):
        with pytest.raises(MissingBundleError, match="bundle object does not exist") as info:
            read()
        assert not isinstance(info.value, FileNotFoundError)
        assert info.value.path == victim
    ds = _open(archive, bucket, tmp_path)
    with pytest.raises(MissingBundleError):
        ds["t"].values  # noqa: B018 - reading is the point
    readable = ds["t"].isel(time=slice(0, 4)).values  # a window whose bundle is intact
    assert np.isnan(readable).sum() == 0
    np.testing.assert_array_equal(readable, source["t"].isel(time=slice(0, 4)).values)


def test_a_denied_registry_is_not_taken_for_no_catalogs(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    pytest.importorskip("xarray")
    source, catalog = _bundled_zarr(archive, bucket, tmp_path)
    member = sorted(catalog.members(), key=lambda m: m.path)[-1]
    data = s3(archive).cat_file(member.bundle, start=member.offset, end=member.offset + 8)
    archive.faults.error(403, "AccessDenied", ops=["GET"], count=1)  # the registry's GET
    fs = make_fs(archive, tmp_path)
    assert fs.cat_file(member.path, start=0, end=8) == data
    assert archive.faults.injected == 1
    first = sorted(catalog.members(), key=lambda m: m.path)[0]
    archive.requests.clear()
    fs.cat_file(first.path, start=0, end=8)  # another folder of the same catalog
    assert archive.requests.counts() == {"GET": 1}  # the catalog found once serves it
    archive.faults.error(403, "AccessDenied", ops=["GET"], count=1)
    ds = _open(archive, bucket, tmp_path)
    values = ds["t"].values
    assert archive.faults.injected == 2
    assert np.isnan(values).sum() == 0
    np.testing.assert_array_equal(values, source["t"].values)


def test_a_changed_catalog_pointer_is_caught(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs.catalog.index import pointer_digest

    files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    path = f"{catalog_dir(root)}/{POINTER}"
    original = fs3.cat_file(path)
    changed = json.loads(original)
    first = changed["shards"][0]["first"]
    # one character of the shard's first path: paths would map to the wrong rows
    changed["shards"][0]["first"] = first[:-1] + ("0" if first[-1] != "0" else "1")
    fs3.pipe_file(path, json.dumps(changed).encode())
    name = f"{root}/{sorted(files)[0]}"
    with pytest.raises(CatalogError, match="does not match its own checksum"):
        make_fs(archive, tmp_path).cat_file(name, start=0, end=4)
    changed["pointer_sha256"] = pointer_digest(changed)  # re-checksummed: the file disagrees
    fs3.pipe_file(path, json.dumps(changed).encode())
    with pytest.raises(CatalogError, match="differs from the shard it names"):
        make_fs(archive, tmp_path).cat_file(name, start=0, end=4)


def test_a_partial_read_from_a_replaced_bundle_is_refused(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    _files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    catalog = Catalog.load(fs3, catalog_dir(root))
    member = sorted(catalog.members(), key=lambda m: m.path)[0]
    other = next(k for k in catalog.bundles if k != member.bundle)
    fs3.pipe_file(member.bundle, fs3.cat_file(other))  # another bundle's bytes at this key
    fs = make_fs(archive, tmp_path)
    with pytest.raises(BundleChangedError, match="not the bundle the catalog recorded"):
        fs.cat_file(member.path, start=0, end=4)


def test_a_same_size_replacement_is_refused_on_partial_reads_too(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    _files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    catalog = Catalog.load(fs3, catalog_dir(root))
    member = sorted(catalog.members(), key=lambda m: m.path)[0]
    assert catalog.bundles[member.bundle].etag  # recorded when the bundle was uploaded
    raw = bytearray(fs3.cat_file(member.bundle))
    raw[member.offset + member.length - 1] ^= 0xFF  # same size, one byte outside the range read
    fs3.pipe_file(member.bundle, bytes(raw))
    fs = make_fs(archive, tmp_path)
    archive.requests.clear()
    with pytest.raises(BundleChangedError, match="ETag differs"):
        fs.cat_file(member.path, start=0, end=4)
    assert archive.requests.count("GET", status=412) == 1


def test_a_bundle_re_uploaded_unchanged_with_a_new_etag_still_reads(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files, root = _setup(archive, bucket, tmp_path)
    fs3 = s3(archive)
    catalog = Catalog.load(fs3, catalog_dir(root))
    member = sorted(catalog.members(), key=lambda m: m.path)[0]
    bucket_, key = member.bundle.split("/", 1)
    client = archive.client()
    upload = client.create_multipart_upload(Bucket=bucket_, Key=key)["UploadId"]
    part = client.upload_part(
        Bucket=bucket_, Key=key, UploadId=upload, PartNumber=1, Body=fs3.cat_file(member.bundle)
    )
    client.complete_multipart_upload(
        Bucket=bucket_, Key=key, UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
    )  # fmt: skip  # the same bytes re-uploaded: a multipart ETag, not the recorded one
    fs = make_fs(archive, tmp_path)
    name = member.path.split("/", 2)[2]
    archive.requests.clear()
    assert fs.cat_file(member.path, start=0, end=4) == files[name][:4]
    assert archive.requests.count("GET", status=412) == 1  # new ETag: proven by SHA-256 once
    archive.requests.clear()
    assert fs.cat_file(member.path) == files[name]
    assert archive.requests.counts() == {"GET": 1}  # the proven ETag is remembered
