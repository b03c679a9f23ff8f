"""A catalog root the bucket's registry does not list is still found (issue #30, item 3).

The registry (``bucket/.archivefs/catalogs.json``) can be stale: written by an older
release, lost in a race between two ``bundle`` runs, edited by hand. A read under a root
it does not list must still find the catalog there, never read the members as absent;
the search costs one GET per ancestor folder of a path the store did not find, each
asked once per filesystem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import fsspec
import numpy as np
import pytest
import s3fs
import xarray as xr

import archivefs.datasets as ads
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir, registry_path
from archivefs.catalog.registry import dump_registry
from archivefs.catalog.writer import bundle_tree

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


def _tree(root: Path) -> dict[str, bytes]:
    files = {f"d{i % 3}/f{i:03d}.dat": f"member {i} ".encode() * (20 + i) for i in range(12)}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def _gets(archive: EmulatedArchive) -> list[str]:
    return [f"{r.bucket}/{r.key}" for r in archive.requests.records if r.op == "GET"]


def _pointers(archive: EmulatedArchive) -> list[str]:
    """The catalog pointers asked for, in order."""
    return [k.removesuffix(f"/.archivefs/catalog/{POINTER}") for k in _gets(archive)
            if k.endswith(f"/.archivefs/catalog/{POINTER}")]  # fmt: skip


def test_members_under_a_root_missing_from_the_registry_read_and_missing_paths_stay_missing(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    files = _tree(tmp_path / "src")
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    root = f"{bucket}/runs/r1"
    bundle_tree(fsspec.filesystem("file"), str(tmp_path / "src"), raw, root,
                storage_class="STANDARD")  # fmt: skip
    raw.rm(registry_path(bucket))  # as if the run that wrote this root lost the registry
    fs = make_fs()
    archive.requests.clear()

    assert fs.cat_file(f"{root}/d1/f004.dat") == files["d1/f004.dat"]
    # the store's miss (a HEAD and a GET of the logical path), then the ancestors'
    # pointers shallowest first, up to the root's: found there, never read as absent
    assert _pointers(archive) == [bucket, f"{bucket}/runs", root]
    assert archive.requests.count("HEAD", bucket=bucket, key="runs/r1/d1/f004.dat") == 1
    assert archive.requests.count("GET", bucket=bucket, key="runs/r1/d1/f004.dat") == 1

    archive.requests.clear()  # the root is known now: members cost what registered ones do
    assert fs.info(f"{root}/d2/f005.dat")["size"] == len(files["d2/f005.dat"])
    with fs.open(f"{root}/d0/f009.dat") as f:
        assert f.read() == files["d0/f009.dat"]
    assert fs.cat(f"{root}/d0/*") == {f"{root}/{n}": d for n, d in files.items() if n[:2] == "d0"}
    assert _pointers(archive) == []
    assert not [k for k in _gets(archive) if k.startswith(f"{root}/d")]  # no logical path

    archive.requests.clear()  # a missing member: its one ancestor not asked yet, once
    with pytest.raises(FileNotFoundError):
        fs.cat_file(f"{root}/d1/nope.dat")
    with pytest.raises(FileNotFoundError):
        fs.info(f"{root}/d1/nope.dat")
    assert _pointers(archive) == [f"{root}/d1"]  # (a catalog nested there would be found)

    archive.requests.clear()  # a missing object elsewhere: one GET per new ancestor, once
    with pytest.raises(FileNotFoundError):
        fs.cat_file(f"{bucket}/runs/r2/x/y.dat")
    assert _pointers(archive) == [f"{bucket}/runs/r2", f"{bucket}/runs/r2/x"]
    archive.requests.clear()
    with pytest.raises(FileNotFoundError):
        fs.cat_file(f"{bucket}/runs/r2/x/z.dat")
    with pytest.raises(FileNotFoundError):
        fs.info(f"{bucket}/runs/r2/x/z.dat")
    assert _pointers(archive) == []


def test_a_zarr_store_under_an_unregistered_root_reads_every_cell(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    values = np.arange(240, dtype="float64").reshape(24, 10)
    xr.Dataset({"v": (("t", "x"), values)}).chunk({"t": 1}).to_zarr(
        tmp_path / "s.zarr", mode="w", consolidated=False, zarr_format=3
    )
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    for run in ("lost", "kept"):  # the chunks go into bundles, the metadata stays plain
        bundle_tree(fsspec.filesystem("file"), str(tmp_path / "s.zarr"), raw,
                    f"{bucket}/{run}/s.zarr", storage_class="STANDARD",
                    hot_arrays=frozenset())  # fmt: skip
    # the registry of a lost race: it lists only the other run's root
    raw.pipe_file(registry_path(bucket), dump_registry([f"{bucket}/kept/s.zarr"]))
    assert raw.exists(f"{catalog_dir(f'{bucket}/lost/s.zarr')}/{POINTER}")
    archive.requests.clear()
    ds = ads.open_zarr(
        f"s3://{bucket}/lost/s.zarr",
        storage_options=archive.storage_options(),
        journal=str(tmp_path / "j.sqlite"),
        restore_status_in_listings=True,
    )
    np.testing.assert_array_equal(ds["v"].values, values)  # 240 of 240, no NaN
    # the first chunk the store did not find started the search; the others waited for it
    assert _pointers(archive) == [bucket, f"{bucket}/lost", f"{bucket}/lost/s.zarr"]


def test_a_root_nested_in_a_registered_one_is_found_and_the_registered_one_not_asked_again(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    files = _tree(tmp_path / "src")
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    for root in (f"{bucket}/a", f"{bucket}/a/b"):
        bundle_tree(fsspec.filesystem("file"), str(tmp_path / "src"), raw, root,
                    storage_class="STANDARD")  # fmt: skip
    raw.pipe_file(registry_path(bucket), dump_registry([f"{bucket}/a"]))
    fs = make_fs()
    archive.requests.clear()
    assert fs.cat_file(f"{bucket}/a/d0/f000.dat") == files["d0/f000.dat"]
    assert fs.cat_file(f"{bucket}/a/b/d0/f000.dat") == files["d0/f000.dat"]
    # the registered root's pointer once (its catalog does not hold a/b/...), then the
    # search: the bucket's, and the nested root's (the registered one is not asked again)
    assert _pointers(archive) == [f"{bucket}/a", bucket, f"{bucket}/a/b"]
    archive.requests.clear()
    assert fs.cat_file(f"{bucket}/a/b/d1/f001.dat") == files["d1/f001.dat"]
    assert _pointers(archive) == []
