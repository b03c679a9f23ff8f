"""One coordinator polls for a whole restore-aware computation on the session's Dask cluster.

Server-side counts: one restore per group, status requests per poll round bounded by
the bulk listing (never a HEAD per object), and a killed worker costs no second restore.
"""

from __future__ import annotations

import math
import os
import signal
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import xarray as xr

import archivefs.datasets as ads
from archivefs import coordinator
from tests.support.counts import assert_each_once, s3_restores
from tests.zarr_data import METADATA

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

distributed = pytest.importorskip("distributed")

LIST_PAGE = 1000
# The bound per poll round is ceil(restoring / 1000) + a small constant. The
# constant is 0: a round lists under the restoring keys' common prefix (the chunks of
# "v", nothing else) from just before the first one, so no page is spent elsewhere.
EXTRA_PAGES_PER_ROUND = 0


def archived_store(archive: EmulatedArchive, bucket: str, tmp_path: Path, groups: int) -> Any:
    """A zarr store whose variable ``v`` has ``groups`` chunk objects, each archived."""
    data = np.arange(groups * 4, dtype="float64").reshape(groups, 4)
    source = xr.Dataset({"v": (("t", "x"), data)}).chunk({"t": 1, "x": 4})
    local = tmp_path / "src.zarr"
    source.to_zarr(local, mode="w", consolidated=False, zarr_format=3)
    hot, cold = {}, {}
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        (hot if file.name in METADATA else cold)[f"store.zarr/{rel}"] = file.read_bytes()
    assert len(cold) == groups
    archive.put_objects(bucket, hot)
    archive.put_objects(bucket, cold, storage_class="GLACIER")
    return source


def options(archive: EmulatedArchive, tmp_path: Path) -> dict[str, Any]:
    return {
        "storage_options": archive.storage_options(),
        "journal": str(tmp_path / "journal.sqlite"),
        "restore_status_in_listings": True,
        "restore_time_scale": 1 / 3600,  # Standard: 3-5 h -> 3-5 s
        "pickle_credentials": True,  # the emulator's keys are fakes
    }


def test_one_coordinator_polls_for_the_whole_cluster(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    groups = 1000
    archive.set_restore_delay(2.0)
    source = archived_store(archive, bucket, tmp_path, groups)
    ds = ads.open_zarr(f"s3://{bucket}/store.zarr", **options(archive, tmp_path))
    gated = ads.restore_aware(ds["v"], timeout=600, poll_interval=1.0)
    assert archive.requests.count("RestoreObject") == groups  # submitted once, here
    archive.requests.clear()

    total = dask_client.compute(gated.sum()).result(timeout=600)

    assert float(total) == float(source["v"].sum())
    assert archive.requests.count("RestoreObject") == 0  # workers never send restores
    assert archive.requests.count("HEAD") == 0  # nobody polls an object on its own
    [stats] = wait_for_stats(gated, groups)
    assert stats["ready"] == groups
    rounds = stats["rounds"]
    assert rounds >= 1
    per_round = math.ceil(groups / LIST_PAGE) + EXTRA_PAGES_PER_ROUND
    assert archive.requests.count("LIST") <= rounds * per_round
    assert archive.requests.count("LIST") == rounds  # 1,000 keys: exactly one page a round
    # readers released once per round, not per group; then the last, empty batch
    assert stats["batches"] <= rounds + 1


def test_listeners_stop_when_the_coordinator_is_done(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """Each worker's listener ends on the coordinator's last (empty) batch, not on its
    next look at the coordinator (here only every 600 s): nothing is left waiting."""
    archive.set_restore_delay(0.5)
    source = archived_store(archive, bucket, tmp_path, 20)
    ds = ads.open_zarr(f"s3://{bucket}/store.zarr", **options(archive, tmp_path))
    gated = ads.restore_aware(ds["v"], timeout=600, poll_interval=600)

    assert float(dask_client.compute(gated.sum()).result(timeout=600)) == float(source["v"].sum())

    [token] = [k.removeprefix(f"{coordinator.KEY_PREFIX}-") for k in coordinator_keys(gated)]

    def listening() -> list[str]:
        import threading

        return [t.name for t in threading.enumerate() if t.name.endswith(token[:8])]

    deadline = time.monotonic() + 120
    while any(dask_client.run(listening).values()):
        assert time.monotonic() < deadline, dask_client.run(listening)
        time.sleep(0.2)


def test_a_killed_worker_costs_no_second_restore(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    groups = 300
    archive.set_restore_delay(3.0)
    source = archived_store(archive, bucket, tmp_path, groups)
    ds = ads.open_zarr(f"s3://{bucket}/store.zarr", **options(archive, tmp_path))
    gated = ads.restore_aware(ds["v"] * 2, timeout=600, poll_interval=0.5)
    future = dask_client.compute(gated.sum())

    # kill the worker running the coordinator while groups are still restoring
    key = next(iter(coordinator_keys(gated)))
    deadline = time.monotonic() + 600
    while (worker := running_on(dask_client, key)) is None:
        assert time.monotonic() < deadline, "the coordinator never started"
        time.sleep(0.1)
    pid = dask_client.run(os.getpid, workers=[worker])[worker]
    os.kill(pid, signal.SIGKILL)

    total = future.result(timeout=600)
    assert float(total) == float(2 * source["v"].sum())
    while _alive(pid):  # its nanny reaps it; then it sends nothing more
        assert time.monotonic() < deadline, f"the killed worker {pid} is still there"
        time.sleep(0.05)
    archive.wait_idle()  # what it sent before it died is answered and counted
    [(_, chunks)] = ads.chunk_paths(ds["v"]).items()
    assert_each_once(s3_restores(archive), chunks)
    assert archive.requests.count("RestoreObject") == groups  # no 409: none asked twice
    # (a restarted worker process starts with no read hints, so its reads may each
    # send a HEAD: that is a read's cost, not polling)


def test_notifications_reach_the_coordinator_so_no_scheduled_poll_is_needed(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    groups = 50
    archived_store(archive, bucket, tmp_path, groups)
    notes = coordinator.ClusterNotifications(name=f"restored-{tmp_path.name}")
    opts = options(archive, tmp_path)
    opts["restore_time_scale"] = 1.0  # real windows: the first scheduled poll is hours away
    ds = ads.open_zarr(f"s3://{bucket}/store.zarr", notifications=notes, **opts)
    gated = ads.restore_aware(ds["v"], timeout=600, poll_interval=0.5)
    assert archive.requests.count("RestoreObject") == groups  # restored at once (delay 0)
    keys = chunk_keys(ds["v"])
    archive.requests.clear()
    future = dask_client.compute(gated.sum())
    # what an SQS consumer would forward: one S3 event notification naming every object
    notes.put({"Records": [s3_restore_completed(bucket, k) for k in keys]})
    assert float(future.result(timeout=600)) == float(np.arange(groups * 4).sum())
    [stats] = wait_for_stats(gated, groups)
    assert stats["rounds"] == 1  # the notified keys, probed at once; no scheduled round
    assert archive.requests.count("LIST") == 1
    assert archive.requests.count("HEAD") == 0, [
        (r.key, r.status) for r in archive.requests.records if r.op == "HEAD"
    ]


def s3_restore_completed(bucket: str, key: str) -> dict[str, Any]:
    return {
        "eventName": "ObjectRestore:Completed",
        "s3": {"bucket": {"name": bucket}, "object": {"key": key}},
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def chunk_keys(obj: Any) -> list[str]:
    [(_, paths)] = ads.chunk_paths(obj).items()
    return [p.split("/", 1)[1] for p in paths]


def coordinator_keys(obj: Any) -> set[str]:
    keys = set()
    for task in obj.data.__dask_graph__().values():
        if getattr(task, "func", None) is coordinator.await_group:
            keys.add(task.args[0].value.key)
    return keys


def running_on(dask_client: Any, key: str) -> str | None:
    for worker, keys in dask_client.processing().items():
        if key in keys:
            return str(worker)
    return None


def wait_for_stats(obj: Any, groups: int) -> list[dict[str, int]]:
    """The coordinators' last published progress (published just before they return)."""
    deadline = time.monotonic() + 600
    while True:
        stats = ads.coordination_stats(obj)
        if all(s["ready"] == groups for s in stats) or time.monotonic() > deadline:
            return stats
        time.sleep(0.1)
