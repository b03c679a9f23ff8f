"""Across machines: one coordinator vs per-worker polling, and claims vs no claims.

Polling: a restore-aware graph over N archived groups on a 4-worker Dask cluster,
computed with per-group polling on the workers (each ready task polls its own
group with HEAD, every ``poll_interval`` seconds) and with one coordinator task
polling all groups in bulk. Counted at the server: status requests (HEAD, LIST)
while computing, and time to the first and the last result. The variants
alternate, 3 samples each.

Claims: 4 processes standing for 4 hosts (one journal each, no shared file)
restore the same N groups at once, with and without claims in the bucket;
counted: RestoreObject requests sent in all.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import ROOT, Result, Runs, sample

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

# groups, restore delay (s), samples
SIZES = {"smoke": (100, 1.0, 1), "default": (1000, 3.0, 3), "full": (10_000, 5.0, 3)}
WORKERS = 4
HOSTS = 4


def _seed_store(archive: EmulatedArchive, bucket: str, groups: int, tmp: Path) -> None:
    import numpy as np
    import xarray as xr

    data = np.arange(groups * 4, dtype="f8").reshape(groups, 4)
    local = tmp / f"{bucket}.zarr"
    xr.Dataset({"v": (("t", "x"), data)}).chunk({"t": 1}).to_zarr(
        local, mode="w", consolidated=False, zarr_format=3
    )
    archive.create_bucket(bucket)
    hot, cold = {}, {}
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        (hot if file.name == "zarr.json" else cold)[f"store.zarr/{rel}"] = file.read_bytes()
    archive.put_objects(bucket, hot)
    archive.put_objects(bucket, cold, storage_class="GLACIER")


def _one_computation(
    archive: EmulatedArchive, client: Any, bucket: str, delay: float, coordinate: bool
) -> dict[str, float]:
    from distributed import as_completed

    import archivefs.datasets as ads

    ds = ads.open_zarr(
        f"s3://{bucket}/store.zarr",
        storage_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        restore_time_scale=delay / (4 * 3600),  # Standard 3-5 h -> around the delay
        skip_instance_cache=True,
        pickle_credentials=True,  # the emulator's dummy keys: workers have no others
    )
    gated = ads.restore_aware(ds["v"], timeout=600, poll_interval=delay / 4, coordinate=coordinate)
    archive.requests.clear()
    steps = ds.sizes["t"]
    part = max(1, steps // 8)
    start = time.perf_counter()
    parts = [gated.isel(t=slice(i, i + part)).sum() for i in range(0, steps, part)]
    futures = client.compute(parts)
    first = None
    for _ in as_completed(futures):
        first = time.perf_counter() - start if first is None else first
    total = time.perf_counter() - start
    head, listing = archive.requests.count("HEAD"), archive.requests.count("LIST")
    rounds = ads.coordination_stats(gated)[0]["rounds"] if coordinate else None
    return {
        "first_result_s": first or 0.0,
        "all_results_s": total,
        "status_requests": head + listing,
        "head": head,
        "list": listing,
        # per-group polling has no rounds: each waiting group polls on its own
        **(
            {"poll_rounds": rounds, "status_requests_per_round": (head + listing) / rounds}
            if rounds
            else {"polls_per_group": head / steps}
        ),
    }


def _polling(archive: EmulatedArchive, groups: int, delay: float, samples: int) -> Runs:
    from distributed import Client, LocalCluster

    archive.set_restore_delay(delay)
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(
            n_workers=WORKERS, threads_per_worker=2, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):

        def variant(name: str) -> Any:
            def measure(i: int) -> dict[str, float]:
                # the warm-up (i < 0): both variants pay imports and worker start-up
                bucket = f"cc-{name}-{'w' if i < 0 else i}"
                _seed_store(archive, bucket, 8 if i < 0 else groups, Path(tmp))
                archive.set_restore_delay(0.1 if i < 0 else delay)
                return _one_computation(
                    archive, client, bucket, 0.1 if i < 0 else delay, name == "coordinator"
                )

            return measure

        return sample({name: variant(name) for name in ("coordinator", "per-group")}, samples)


def _claims(archive: EmulatedArchive, groups: int) -> dict[str, int]:
    archive.set_restore_delay(3600.0)  # nothing completes while the hosts race
    sent: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for claims in (False, True):
            bucket = f"cc-claims-{'on' if claims else 'off'}"
            archive.create_bucket(bucket)
            keys = [f"o/{i:06d}" for i in range(groups)]
            archive.put_objects(bucket, dict.fromkeys(keys, b"x"), storage_class="GLACIER")
            archive.requests.clear()
            procs = []
            for host in range(HOSTS):
                config = {
                    "storage_options": archive.storage_options(),
                    "journal": str(Path(tmp) / f"{bucket}-{host}" / "journal.sqlite"),
                    "paths": [f"{bucket}/{k}" for k in keys],
                    "bucket_claims": claims,
                }
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", __name__, json.dumps(config)],
                        stderr=subprocess.PIPE,
                        cwd=ROOT,
                    )
                )
            for proc in procs:
                _, err = proc.communicate(timeout=900)
                if proc.returncode != 0:
                    raise RuntimeError(err.decode())
            sent["with_claims" if claims else "without_claims"] = archive.requests.count(
                "RestoreObject"
            )
    return sent


def _host(config: dict[str, Any]) -> None:
    """One "host": restore every path, with its own journal (run as a subprocess)."""
    from archivefs.filesystem import ArchiveFileSystem

    Path(config["journal"]).parent.mkdir(parents=True, exist_ok=True)
    fs = ArchiveFileSystem(
        target_options=config["storage_options"],
        journal=config["journal"],
        restore_status_in_listings=True,
        bucket_claims=config["bucket_claims"],
        skip_instance_cache=True,
    )
    fs.submit(fs.plan(config["paths"]))


def run(archive: EmulatedArchive, size: str) -> Result:
    groups, delay, samples = SIZES[size]
    runs = _polling(archive, groups, delay, samples)
    sent = _claims(archive, groups)

    def median(name: str, metric: str) -> float:
        return statistics.median(r[metric] for r in runs[name])

    ours = {m: median("coordinator", m) for m in runs["coordinator"][0]}
    base = {m: median("per-group", m) for m in runs["per-group"][0]}
    headline = (
        f"{groups} groups on {WORKERS} workers: {ours['status_requests']:.0f} status requests "
        f"with the coordinator ({ours['status_requests_per_round']:.1f} per bulk round) vs "
        f"{base['status_requests']:.0f} polling each group on its worker "
        f"({base['polls_per_group']:.1f} HEAD per group); "
        f"first result {ours['first_result_s']:.1f}s vs "
        f"{base['first_result_s']:.1f}s (medians of {samples}); {HOSTS} hosts restoring the same "
        f"groups sent {sent['with_claims']} RestoreObject with claims vs "
        f"{sent['without_claims']} without"
    )
    return Result(
        name="cluster_coordination",
        question="Cluster-wide polling and cross-host dedupe",
        parameters={"groups": groups, "delay_s": delay, "workers": WORKERS, "hosts": HOSTS},
        archivefs={**ours, "restore_requests_4_hosts": sent["with_claims"]},
        baseline={**base, "restore_requests_4_hosts": sent["without_claims"]},
        baseline_name="each worker polls its group with HEAD; no claims",
        headline=headline,
        runs=runs,
    )


if __name__ == "__main__":
    _host(json.loads(sys.argv[1]))
