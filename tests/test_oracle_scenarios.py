"""The S3 scenario tests that apply to Oracle, on the emulated Oracle archive.

Real HTTP through ocifs and the OCI SDK to the fake Object Storage endpoint of
``archivefs.testing``; every count is the fake's, server side. RestoreObjects
restores one object per call, so N objects are N requests (no batches, unlike
Azure); ``restores`` counts the restores each object started.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.filesystem import ArchiveFileSystem
from archivefs.stores.oracle import LIST_PAGE

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedOracleArchive


pytestmark = pytest.mark.timeout(900)


def seed(archive: EmulatedOracleArchive, bucket: str, n: int, prefix: str = "o") -> list[str]:
    objects = {f"{prefix}/{i:05d}": f"object {i}".encode() for i in range(n)}
    archive.put_objects(bucket, objects, tier="Archive")
    return [f"{bucket}/{name}" for name in sorted(objects)]


def test_1001_objects_one_restore_each_and_two_listobjects_per_poll_round(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.restore_delay = 3600.0  # done only when the test says so
    paths = seed(oracle_archive, oracle_bucket, 1001)
    fs = make_oci()
    oracle_archive.requests.clear()

    result = fs.restore(paths)

    assert result.requests_sent == 1001
    pages = math.ceil(1001 / LIST_PAGE)  # 2 ListObjects describe all 1001 objects
    # the catalog registry, looked up once (absent); one probe; one RestoreObjects each
    assert oracle_archive.requests.counts() == {
        "GetObject": 1,
        "ListObjects": pages,
        "RestoreObjects": 1001,
    }
    assert oracle_archive.requests.count("RestoreObjects", status=202) == 1001
    assert set(oracle_archive.restores.values()) == {1}
    assert len(oracle_archive.restores) == 1001

    plan = fs.plan(paths)
    oracle_archive.requests.clear()
    rounds: list[int] = []

    def finish_after_first_round(states: dict[str, Any]) -> None:
        rounds.append(len(states))
        oracle_archive.complete_restores()

    ready = list(fs.as_ready(plan, timeout=600, on_round=finish_after_first_round))

    assert sorted(g.key for g in ready) == paths
    assert rounds == [1001, 1001]  # restoring, then restored: every object in each round
    # bulk polling from listings: per round ceil(1001 / 1000) ListObjects, no HeadObject
    assert oracle_archive.requests.counts() == {"ListObjects": pages * len(rounds)}
    assert fs.cat_file(paths[123]) == b"object 123"


def test_as_ready_yields_objects_as_their_restores_finish(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    paths = seed(oracle_archive, oracle_bucket, 20)
    fs = make_oci()
    assert fs.restore(paths).requests_sent == 20  # submitted; as_ready only waits
    plan = fs.plan(paths)
    ready = [group.key for group in fs.as_ready(plan, timeout=300)]
    assert sorted(ready) == paths
    assert oracle_archive.requests.count("RestoreObjects") == 20
    assert fs.cat_file(paths[7]) == b"object 7"


def test_bundles_go_to_oracle_archive_and_their_members_read_after_one_restore_each(
    oracle_archive: EmulatedOracleArchive,
    oracle_bucket: str,
    make_oci: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    # `bundle ... oci://... --storage-class Archive` wrote Standard bundles (issue #31):
    # "Archive" is parsed in the destination's names and each bundle is put in that tier
    from archivefs.catalog import ByPrefix, Catalog
    from archivefs.catalog.layout import catalog_dir
    from archivefs.catalog.writer import bundle_tree
    from archivefs.errors import ObjectArchivedError

    src = tmp_path / "src"
    files = {f"d{i % 3}/f{i}.dat": f"member {i} ".encode() * (30 + i) for i in range(12)}
    for name, data in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    raw = fsspec.filesystem("oci", skip_instance_cache=True, **oracle_archive.storage_options())
    dest = f"{oracle_bucket}/run"
    bundle_tree(fsspec.filesystem("file"), str(src), raw, dest, storage_class="Archive",
                policy=ByPrefix(depth=1))  # fmt: skip
    catalog = Catalog.load(raw, catalog_dir(dest))
    assert len(catalog.bundles) == 3
    for key, info in catalog.bundles.items():
        assert (info.storage_class.provider, info.storage_class.value) == ("oracle", "Archive")
        assert oracle_archive.archival_state(oracle_bucket, key.split("/", 1)[1]) == "Archived"
    fs = make_oci()
    member = f"{dest}/d0/f0.dat"
    with pytest.raises(ObjectArchivedError):
        fs.cat_file(member)
    oracle_archive.requests.clear()
    fs.restore([f"{dest}/{name}" for name in files], wait=True, timeout=600)
    assert oracle_archive.requests.count("RestoreObjects", status=202) == 3  # one per bundle
    for name, data in files.items():
        assert fs.cat_file(f"{dest}/{name}") == data
