"""SIGKILL at random points of restore submission, bundling, catalog saves and promotion.

Each scenario runs over several seeds; the seed picks after how many server
requests of a kind the worker dies. The next run must resume: no restore paid
twice, no half-written catalog or bundle visible, every source still readable.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from archivefs.catalog import Catalog
from archivefs.catalog.layout import catalog_dir
from archivefs.errors import CatalogError
from tests.reliability._support import (
    assert_catalog_consistent,
    bundle,
    make_fs,
    make_tree,
    s3,
    seed_cold,
)
from tests.support.counts import assert_each_once, s3_restores
from tests.support.processes import kill_when

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

WORKER = Path(__file__).with_name("_crash_worker.py")
SEEDS = range(5)

pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_restore_submission_resumes_without_paying_twice(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, seed: int
) -> None:
    archive.set_restore_delay(1.0)
    data = seed_cold(archive, bucket, 60)
    paths = sorted(data)
    journal = str(tmp_path / "journal.sqlite")
    at = random.Random(seed).randint(1, 55)
    config = {
        "mode": "restore",
        "storage_options": archive.storage_options(),
        "journal": journal,
        "paths": paths,
    }
    kill_when(WORKER, config, lambda: archive.requests.count("RestoreObject") >= at, server=archive)
    before = archive.requests.count("RestoreObject", status=202)
    fs = make_fs(archive, tmp_path)
    result = fs.restore(paths, wait=True, timeout=600)
    assert sorted(result.ready) == paths
    assert result.requests_sent == 60 - before
    archive.wait_idle()
    assert_each_once(s3_restores(archive), paths)
    assert archive.requests.count("RestoreObject", status=409) == 0
    for path in paths[:: 60 // 6]:
        assert fs.cat_file(path) == data[path]


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_bundling_leaves_nothing_half_written(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, seed: int
) -> None:
    files = make_tree(tmp_path / "src", 120, seed=seed, dirs=6)
    dest = f"{bucket}/k"
    at = random.Random(seed).randint(1, 20)
    config = {
        "mode": "bundle",
        "storage_options": archive.storage_options(),
        "src": str(tmp_path / "src"),
        "dest": dest,
        "target_size": 8_000,
        "save_every": random.Random(seed).choice([1, 3, 7]),
    }
    kill_when(WORKER, config, lambda: archive.requests.count("PUT") >= at, server=archive)
    fs3 = s3(archive)
    try:  # whatever the crash left: a loadable catalog that lists only complete bundles
        catalog = Catalog.load(fs3, catalog_dir(dest))
    except CatalogError as error:  # killed before the first save: no catalog at all
        assert "there is no catalog here" in str(error)  # noqa: PT017
    else:
        for key, info in catalog.bundles.items():
            assert fs3.info(key)["size"] == info.size
    bundle(tmp_path / "src", fs3, dest)
    catalog = assert_catalog_consistent(fs3, dest)
    assert len(catalog) == len(files)
    fs = make_fs(archive, tmp_path)
    for name in sorted(files)[:: len(files) // 8]:
        assert fs.cat_file(f"{dest}/{name}") == files[name]
    assert all((tmp_path / "src" / n).read_bytes() == d for n, d in files.items())


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_catalog_save_keeps_a_whole_catalog(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, seed: int
) -> None:
    files = make_tree(tmp_path / "src", 60, seed=seed, dirs=5)
    dest = f"{bucket}/c"
    fs3 = s3(archive)
    bundle(tmp_path / "src", fs3, dest)
    expected = [
        (m.path, m.bundle, m.offset, m.length, m.crc32)
        for m in Catalog.load(fs3, catalog_dir(dest)).members()
    ]
    archive.requests.clear()
    at = random.Random(seed).randint(1, 30)
    config = {
        "mode": "catalog",
        "storage_options": archive.storage_options(),
        "dir": catalog_dir(dest),
        "saves": 200,
    }
    kill_when(WORKER, config, lambda: archive.requests.count("PUT") >= at, server=archive)
    catalog = assert_catalog_consistent(fs3, dest)
    assert [(m.path, m.bundle, m.offset, m.length, m.crc32) for m in catalog.members()] == expected
    fs = make_fs(archive, tmp_path)
    name = sorted(files)[seed]
    assert fs.cat_file(f"{dest}/{name}") == files[name]


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_promotion_shows_only_whole_copies(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, seed: int
) -> None:
    data = seed_cold(archive, bucket, 30)
    big = {f"{bucket}/big/{i}": random.Random(i).randbytes(300_000) for i in range(6)}
    archive.put_objects(
        bucket, {p.split("/", 1)[1]: d for p, d in big.items()}, storage_class="GLACIER"
    )
    data.update(big)
    paths = sorted(data)
    fs = make_fs(archive, tmp_path)
    fs.restore(paths, wait=True, timeout=600)
    hot = tmp_path / "hot"
    archive.requests.clear()
    at = random.Random(seed).randint(1, 30)
    config = {
        "mode": "promote",
        "storage_options": archive.storage_options(),
        "hot": str(hot),
        "paths": paths,
    }
    kill_when(WORKER, config, lambda: archive.requests.count("GET") >= at, server=archive)
    for path in paths:  # a promoted copy at its final name is complete
        copy = hot / path
        if copy.exists():
            assert copy.read_bytes() == data[path]
    cold = make_fs(archive, tmp_path)
    hot_fs = make_fs(archive, tmp_path, hot=str(hot), journal=False)
    hot_fs.promote(paths)
    for path in paths:
        assert (hot / path).read_bytes() == data[path]
        assert hot_fs.cat_file(path) == data[path]
        assert cold.cat_file(path) == data[path]  # the archived source is untouched
