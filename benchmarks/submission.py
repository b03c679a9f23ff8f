"""Restore submission throughput: the batch submitter vs a sequential request loop."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from benchmarks._common import Result

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 200, "default": 2000, "full": 10_000}


def run(archive: EmulatedArchive, size: str) -> Result:
    from archivefs.filesystem import ArchiveFileSystem

    n = SIZES[size]
    archive.set_restore_delay(3600)
    for bucket in ("submit-ours", "submit-loop"):
        archive.create_bucket(bucket)
        archive.put_objects(bucket, {f"o/{i:06d}": b"x" for i in range(n)}, storage_class="GLACIER")
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        skip_instance_cache=True,
    )
    paths = [f"submit-ours/o/{i:06d}" for i in range(n)]
    plan = fs.plan(paths)
    archive.requests.clear()
    start = time.perf_counter()
    fs.submit(plan)
    ours_s = time.perf_counter() - start
    ours = {
        "seconds": ours_s,
        "requests": archive.requests.count("RestoreObject"),
        "per_second": n / ours_s,
    }

    client = archive.client()
    archive.requests.clear()
    start = time.perf_counter()
    for i in range(n):
        client.restore_object(Bucket="submit-loop", Key=f"o/{i:06d}", RestoreRequest={"Days": 1})
    loop_s = time.perf_counter() - start
    base = {
        "seconds": loop_s,
        "requests": archive.requests.count("RestoreObject"),
        "per_second": n / loop_s,
    }
    headline = (
        f"{n} restores: {ours['per_second']:.0f} req/s (64 concurrent) vs "
        f"{base['per_second']:.0f} req/s sequential "
        f"({ours['per_second'] / base['per_second']:.1f}x); "
        "against a single-process local emulator, so the ratio is bounded by the server"
    )
    return Result(
        name="submission",
        question="Restore submission throughput",
        parameters={"objects": n},
        archivefs=ours,
        baseline=base,
        baseline_name="sequential boto3 loop",
        headline=headline,
        samples={"archivefs_s": [ours_s], "loop_s": [loop_s]},
    )
