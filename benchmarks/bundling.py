"""Restore requests and cost for many small files: bundled vs one object each."""

from __future__ import annotations

import random
import tempfile
import time
from typing import TYPE_CHECKING

from benchmarks._common import SAMPLES, Result, medians, sample, spread, write_tree

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 1000, "default": 10_000, "full": 10_000}


def run(archive: EmulatedArchive, size: str) -> Result:
    import fsspec
    import s3fs

    from archivefs.catalog import ByPrefix
    from archivefs.catalog.writer import bundle_tree
    from archivefs.filesystem import ArchiveFileSystem

    n = SIZES[size]
    rng = random.Random(0)
    files = {
        f"obs{i % 20:02d}/f{i:05d}.dat": rng.randbytes(rng.randint(1000, 8000)) for i in range(n)
    }
    archive.create_bucket("bundled")
    archive.create_bucket("plain")
    archive.put_objects("plain", files, storage_class="DEEP_ARCHIVE")
    s3 = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(tmp, files)

        def bundle(i: int) -> dict[str, float]:
            dest = "bundled/archive" if i == 0 else f"bundled/timing-{'w' if i < 0 else i}"
            start = time.perf_counter()
            bundle_tree(
                fsspec.filesystem("file"),
                tmp,
                s3,
                dest,
                policy=ByPrefix(depth=1, target_size=64 * 2**20),
                storage_class="DEEP_ARCHIVE",
            )
            return {"bundling_seconds": time.perf_counter() - start}

        runs = sample({"bundle_tree": bundle}, SAMPLES[size], warmup=size != "smoke")
    # restore requests and estimates are deterministic counts: one run, without latency
    latency = archive.latency
    archive.set_latency(0)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        skip_instance_cache=True,
        egress="same_region",
    )
    out = {}
    for name, pattern in (("bundled", "bundled/archive/*/*.dat"), ("plain", "plain/*/*.dat")):
        plan = fs.plan(pattern, tier="Bulk")
        estimate = fs.estimate_plan(plan)
        archive.requests.clear()
        fs.restore(pattern, tier="Bulk")
        out[name] = {
            "files": len(plan.paths),
            "groups": len(plan),
            "restore_requests_sent": archive.requests.count("RestoreObject"),
            "estimated_total_usd": estimate.total,
            "storage_per_month_usd": estimate.components["storage_per_month"],
        }
    archive.set_latency(latency)
    ours, base = out["bundled"], out["plain"]
    ours["bundling_seconds"] = medians(runs, "bundle_tree")["bundling_seconds"]
    ratio = base["restore_requests_sent"] / max(ours["restore_requests_sent"], 1)
    headline = (
        f"{n:,} files of 1-8 KB: {ours['restore_requests_sent']} restore requests bundled vs "
        f"{base['restore_requests_sent']:,} ({ratio:.0f}x); Bulk restore "
        f"${ours['estimated_total_usd']:.4f} vs ${base['estimated_total_usd']:.4f}; storage "
        f"${ours['storage_per_month_usd']:.5f} vs ${base['storage_per_month_usd']:.5f}/month "
        "(per-object overhead and minimums); bundle_tree took "
        f"{spread(runs, 'bundle_tree', 'bundling_seconds', '.1f')}"
    )
    return Result(
        name="bundling",
        question="Restore requests, small files: bundled vs one object each",
        parameters={"files": n, "tier": "Bulk"},
        archivefs=ours,
        baseline=base,
        baseline_name="one DEEP_ARCHIVE object per file",
        headline=headline,
        runs=runs,
    )
