"""Bundling small files into the emulated archive, and reading them back through the catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import pytest
import s3fs

from archivefs import ObjectArchivedError
from archivefs.catalog import ByPrefix, Catalog
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir
from archivefs.catalog.writer import bundle_tree, rebuild_catalog
from tests.support.processes import kill_when
from tests.support.trees import make_tree

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

WORKER = Path(__file__).with_name("_bundle_worker.py")


@pytest.fixture
def s3(archive: EmulatedArchive) -> Any:
    return s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())


def test_bundle_10000_small_files_then_list_plan_restore_read(
    archive: EmulatedArchive, bucket: str, s3: Any, tmp_path: Path, make_fs: Any
) -> None:
    files = make_tree(tmp_path / "src", 10_000, big=3)
    local = fsspec.filesystem("file")
    target = 4 * 2**20
    report = bundle_tree(
        local,
        str(tmp_path / "src"),
        s3,
        f"{bucket}/archive",
        policy=ByPrefix(depth=1, target_size=target),
        storage_class="DEEP_ARCHIVE",
    )
    assert report.members == 10_003
    catalog = Catalog.load(s3, catalog_dir(f"{bucket}/archive"))
    pointer = json.loads(s3.cat_file(f"{catalog_dir(f'{bucket}/archive')}/{POINTER}"))
    sizes = [b.size for b in catalog.bundles.values()]
    small = [s for s in sizes if s < 1_000_000]
    assert len(catalog.bundles) == len(report.bundles_written) < 60
    assert all(s <= target + 6_000_000 for s in sizes)  # near the target (one file may overflow)
    assert len(small) <= 21  # only the tail bundle of each directory is small

    fs = make_fs()
    archive.requests.clear()
    listing = fs.ls(f"{bucket}/archive/obs03", detail=True)
    found = fs.find(f"{bucket}/archive")
    assert len(listing) == 500
    assert {e["storage_class"] for e in listing} == {"DEEP_ARCHIVE"}
    assert {e["restore"] for e in listing} == {"archived"}
    assert len(found) == 10_003
    # registry, pointer, each catalog shard once (the listing's, then the rest for find); then
    # the listing's one bulk probe of the bundles it shows (a HEAD for one bundle, a LIST page
    # for up to 1,000), so states match fs.info()
    shown = {m.bundle for m in catalog.members() if m.path.startswith(f"{bucket}/archive/obs03/")}
    probe = {"HEAD": 1} if len(shown) == 1 else {"LIST": 1}
    assert archive.requests.counts() == {"GET": 2 + len(pointer["shards"]), **probe}

    archive.requests.clear()
    plan = fs.plan(f"{bucket}/archive/obs0*/*.dat")
    assert len(plan.paths) == 5000
    assert len(plan) == len({catalog.lookup(p).bundle for p in plan.paths})  # type: ignore[union-attr]
    with pytest.raises(ObjectArchivedError, match=r"\.archivefs/bundles/") as archived:
        fs.cat_file(f"{bucket}/archive/obs01/f00001.dat")
    assert "reading member" in str(archived.value)
    assert "obs01/f00001.dat" in str(archived.value)
    result = fs.restore(f"{bucket}/archive/obs0*/*.dat", wait=True, timeout=600)
    assert archive.requests.count("RestoreObject") == len(plan) == result.requests_sent

    archive.requests.clear()
    name = "obs07/f00027.dat"
    assert fs.cat_file(f"{bucket}/archive/{name}") == files[name]
    assert archive.requests.count("GET") == 1
    assert archive.requests.bytes_sent("GET") == len(files[name])
    assert fs.cat_file(f"{bucket}/archive/{name}", start=10, end=20) == files[name][10:20]


def test_catalog_rebuilds_from_the_bundles(
    archive: EmulatedArchive, bucket: str, s3: Any, tmp_path: Path
) -> None:
    make_tree(tmp_path / "src", 40)
    bundle_tree(
        fsspec.filesystem("file"),
        str(tmp_path / "src"),
        s3,
        f"{bucket}/r",
        storage_class="STANDARD",
    )
    before = Catalog.load(s3, catalog_dir(f"{bucket}/r"))
    pointer = f"{catalog_dir(f'{bucket}/r')}/CURRENT"
    s3.pipe_file(pointer, b"{ not json")
    rebuilt = rebuild_catalog(s3, f"{bucket}/r")
    assert [m.path for m in rebuilt.members()] == [m.path for m in before.members()]
    assert [(m.offset, m.length, m.crc32) for m in rebuilt.members()] == [
        (m.offset, m.length, m.crc32) for m in before.members()
    ]


def test_killed_bundling_resumes_without_duplicates_or_loss(
    archive: EmulatedArchive, bucket: str, s3: Any, tmp_path: Path, make_fs: Any
) -> None:
    files = make_tree(tmp_path / "src", 3000)
    config = {
        "storage_options": archive.storage_options(),
        "src": str(tmp_path / "src"),
        "dest": f"{bucket}/k",
        "target_size": 100_000,
    }
    assert kill_when(WORKER, config, lambda: archive.requests.count("PUT") >= 20, server=archive)
    bundle_tree(
        fsspec.filesystem("file"),
        str(tmp_path / "src"),
        s3,
        f"{bucket}/k",
        policy=ByPrefix(depth=1, target_size=100_000),
        storage_class="STANDARD",
    )
    catalog = Catalog.load(s3, catalog_dir(f"{bucket}/k"))
    assert len(catalog) == 3000
    objects = s3.find(f"{bucket}/k/.archivefs/bundles")
    assert sorted(objects) == sorted(catalog.bundles)  # no orphan or duplicate bundles
    fs = make_fs()
    for name in ("obs00/f00000.dat", "obs19/f02999.dat"):
        assert fs.cat_file(f"{bucket}/k/{name}") == files[name]
    assert all((tmp_path / "src" / n).exists() for n in files)  # sources untouched


def test_rebundle_objects_already_in_a_bucket(
    archive: EmulatedArchive, bucket: str, s3: Any, make_fs: Any
) -> None:
    objects = {f"raw/run{i % 4}/part{i:03d}.bin": bytes([i % 256]) * (100 + i) for i in range(120)}
    archive.put_objects(bucket, objects)  # hot objects written by someone else
    report = bundle_tree(s3, f"{bucket}/raw", s3, f"{bucket}/packed", storage_class="GLACIER")
    assert report.members == 120
    assert len(report.bundles_written) == 4  # one per run directory
    fs = make_fs()
    name = "run2/part006.bin"
    fs.restore(f"{bucket}/packed/run2/*", wait=True, timeout=600)
    assert fs.cat_file(f"{bucket}/packed/{name}") == objects[f"raw/{name}"]
    assert s3.exists(f"{bucket}/raw/{name}")  # sources are kept
