"""Listing plain objects: ``find`` in key ranges at once vs one sequence of pages, and s3fs.

N objects spread over D directories, listed recursively three ways, alternating:
archivefs as shipped (the key space cut into up to 8 ranges after the first
page), archivefs with ``list_fanout=1`` (one page after the other), and s3fs's
``find`` (what a competent user calls). Counted at the server: LIST requests.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, archive_fs, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

# objects, directories
SIZES = {"smoke": (3_000, 30), "default": (50_000, 100), "full": (200_000, 200)}


def run(archive: EmulatedArchive, size: str) -> Result:
    import s3fs

    objects, directories = SIZES[size]
    bucket = "plain-listing"
    archive.create_bucket(bucket)
    per_dir = objects // directories
    keys = [f"run/{d:04d}/{f:06d}.nc" for d in range(directories) for f in range(per_dir)]
    archive.put_objects(bucket, dict.fromkeys(keys, b"x"), storage_class="GLACIER")
    expected = sorted(f"{bucket}/{k}" for k in keys)

    def lister(make: Any) -> Any:
        def measure(i: int) -> dict[str, float]:
            fs = make()
            archive.requests.clear()
            start = time.perf_counter()
            names = fs.find(f"{bucket}/run")
            seconds = time.perf_counter() - start
            assert names == expected, "a listing lost or added names"
            return {"seconds": seconds, "LIST_requests": archive.requests.count("LIST")}

        return measure

    variants = {
        "ranges": lister(lambda: archive_fs(archive)),
        "sequential": lister(lambda: archive_fs(archive, store_options={"list_fanout": 1})),
        "s3fs": lister(
            lambda: s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
        ),
    }
    runs = sample(variants, SAMPLES[size])
    ours, seq, base = medians(runs, "ranges"), medians(runs, "sequential"), medians(runs, "s3fs")
    speedup = statistics.median(s["seconds"] for s in runs["s3fs"]) / ours["seconds"]
    headline = (
        f"find of {len(keys):,} objects in {directories} directories: "
        f"{spread(runs, 'ranges', 'seconds')} in {ours['LIST_requests']:.0f} LISTs vs "
        f"s3fs {spread(runs, 's3fs', 'seconds')} in {base['LIST_requests']:.0f} "
        f"({speedup:.1f}x); one page after another {spread(runs, 'sequential', 'seconds')} "
        f"in {seq['LIST_requests']:.0f}"
    )
    return Result(
        name="parallel_listing",
        question="Listing many plain objects (find)",
        parameters={"objects": len(keys), "directories": directories, "list_fanout": 8},
        archivefs={**ours, "sequential": seq},
        baseline=base,
        baseline_name="s3fs find",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/index.md's passage on listing in key ranges, from the result file."""
    summary, p = data["summary"], data["parameters"]
    ours, seq, base = (summary[v] for v in ("ranges", "sequential", "s3fs"))
    speedup = base["seconds"]["median"] / ours["seconds"]["median"]
    return {
        "parallel-listing": (
            f"Measured (`benchmarks/parallel_listing.py`, {p['objects']:,} objects in "
            f"{p['directories']} directories, {data['sample_counts']['ranges']} alternating "
            f"samples on the emulated server with "
            f"{data['server'].get('latency_s', 0) * 1000:g} ms per request): `find` took "
            f"{ours['seconds']['median']:.1f} s (min {ours['seconds']['min']:.1f}, max "
            f"{ours['seconds']['max']:.1f}) in {ours['LIST_requests']['median']:.0f} LIST "
            f"requests, against {base['seconds']['median']:.1f} s in "
            f"{base['LIST_requests']['median']:.0f} for s3fs's `find` ({speedup:.1f}x) and "
            f"{seq['seconds']['median']:.1f} s in {seq['LIST_requests']['median']:.0f} with "
            f"`list_fanout=1`. The emulator builds pages in one Python process (one GIL), so "
            f"the pieces overlap only in their waiting; against S3 the page building overlaps "
            f"too (not measured here)."
        )
    }
