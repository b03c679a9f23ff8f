"""The S3 scenario tests that apply to Oracle, on the emulated Oracle archive.

Real HTTP through ocifs and the OCI SDK to the fake Object Storage endpoint of
``archivefs.testing``; every count is the fake's, server side. RestoreObjects
restores one object per call, so N objects are N requests (no batches, unlike
Azure); ``restores`` counts the restores each object started.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest

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
