"""Restore submission throughput: the batch submitter vs a sequential request loop."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from benchmarks._common import Result, archive_fs, seed_archived

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 200, "default": 2000, "full": 10_000}


def run(archive: EmulatedArchive, size: str) -> Result:
    n = SIZES[size]
    archive.set_restore_delay(3600)
    paths = seed_archived(archive, "submit-ours", n)
    seed_archived(archive, "submit-loop", n)
    fs = archive_fs(archive)
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
