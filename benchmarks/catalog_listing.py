"""Listing: the catalog (loaded from the hot tier) vs S3 LIST of as many objects, and its cost.

The variants alternate (catalog load + find, then S3 LIST, then the other
order), after a warm-up of each.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

# (objects listed through S3, catalog members): the same number, side by side
SIZES = {"smoke": (10_000, 10_000), "default": (100_000, 100_000), "full": (1_000_000, 1_000_000)}


def run(archive: EmulatedArchive, size: str) -> Result:
    import s3fs

    from archivefs.catalog import BundleInfo, Catalog, MemberInfo
    from archivefs.model import StorageClass

    n_list, n_catalog = SIZES[size]
    bucket = "listing"
    archive.create_bucket(bucket)
    archive.put_objects(
        bucket, {f"obs/{i:07d}.fits": b"x" for i in range(n_list)}, storage_class="DEEP_ARCHIVE"
    )
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())

    def s3_list(i: int) -> dict[str, float]:
        archive.requests.clear()
        start = time.perf_counter()
        listed = raw.find(f"{bucket}/obs")
        seconds = time.perf_counter() - start
        assert len(listed) == n_list
        raw.invalidate_cache()
        return {"seconds": seconds, "LIST_requests": archive.requests.count("LIST")}

    bundles = [
        BundleInfo(
            f"{bucket}/root/.archivefs/bundles/b{j:05d}.zip",
            1 << 28,
            StorageClass.DEEP_ARCHIVE,
            1000,
            "00" * 32,
        )
        for j in range(n_catalog // 1000)
    ]
    members = (
        MemberInfo(
            f"{bucket}/root/obs/{i:07d}.fits",
            bundles[i // 1000].key,
            64 + i,
            1000,
            i,
            "11" * 32,
            StorageClass.STANDARD,
            1.7e9,
        )
        for i in range(n_catalog)
    )
    catalog = Catalog(members, bundles)
    catalog.save(raw, f"{bucket}/root/.archivefs/catalog")

    def catalog_find(i: int) -> dict[str, Any]:
        archive.requests.clear()
        start = time.perf_counter()
        loaded = Catalog.load(raw, f"{bucket}/root/.archivefs/catalog")
        load_seconds = time.perf_counter() - start
        start = time.perf_counter()
        found = loaded.find(f"{bucket}/root/obs")
        find_seconds = time.perf_counter() - start
        assert len(found) == n_catalog
        return {
            "load_seconds": load_seconds,
            "find_seconds": find_seconds,
            "seconds": load_seconds + find_seconds,
            "requests": archive.requests.counts(),
        }

    runs = sample({"catalog": catalog_find, "s3_list": s3_list}, SAMPLES[size])
    tracemalloc.start()  # memory pass, apart from the timed ones
    Catalog.load(raw, f"{bucket}/root/.archivefs/catalog")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    cat, lst = medians(runs, "catalog"), medians(runs, "s3_list")
    load_seconds, find_seconds = cat["load_seconds"], cat["find_seconds"]
    s3_seconds = lst["seconds"]
    catalog_requests, s3_lists = cat["requests"], lst["LIST_requests"]
    catalog_files = raw.du(f"{bucket}/root/.archivefs/catalog", total=False)
    file_bytes = sum(catalog_files.values())  # the shards and the pointer
    ours = {
        "entries": n_catalog,
        "load_seconds": load_seconds,
        "find_seconds": find_seconds,
        "requests": catalog_requests,
        "file_bytes": file_bytes,
        "files": len(catalog_files),
        "bytes_per_member": file_bytes / n_catalog,
        "peak_load_memory_MiB": peak / 2**20,
    }
    base = {
        "entries": n_list,
        "seconds": s3_seconds,
        "LIST_requests": s3_lists,
        "entries_per_second": n_list / s3_seconds,
    }
    headline = (
        f"{n_catalog:,} entries: catalog load + find {spread(runs, 'catalog', 'seconds')} "
        f"in {sum(catalog_requests.values())} requests ({file_bytes / n_catalog:.0f} B/member) "
        f"vs S3 LIST {spread(runs, 's3_list', 'seconds', '.1f')} in {s3_lists} requests "
        f"({s3_seconds / (load_seconds + find_seconds):.0f}x)"
    )
    return Result(
        name="catalog_listing",
        question="Listing: catalog vs S3 LIST",
        parameters={"s3_entries": n_list, "catalog_entries": n_catalog},
        archivefs=ours,
        baseline=base,
        baseline_name="s3fs find (ListObjectsV2, 1,000 per request)",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/bundles.md's measured reasons for the catalog format, from the result file."""
    ours, base, summary = data["archivefs"], data["baseline"], data["summary"]
    catalog, listing = summary["catalog"], summary["s3_list"]
    samples = data["sample_counts"]["catalog"]
    latency = data.get("server", {}).get("latency_s", 0) * 1000
    where = {"own process": "in its own process", "in-process": "in the client's process"}
    return {
        "catalog-format": (
            f"Measured by `python -m benchmarks --only catalog_listing` ({data['size']} size, "
            f"{samples} sample{'s' if samples > 1 else ''} each, the emulator "
            f"{where.get(data.get('server', {}).get('process'), 'in this process')} with "
            f"{latency:g} ms per "
            f"request, {data['machine']['cpus']} CPUs): a catalog of {ours['entries']:,} members "
            f"takes {ours['bytes_per_member']:.0f} B/member ({ours.get('files', 1)} "
            f"file{'s' if ours.get('files', 1) > 1 else ''}) and loads whole in "
            f"{catalog['load_seconds']['median']:.2f} s and answers `find` of all of them in "
            f"{catalog['find_seconds']['median']:.2f} s, with "
            f"{sum(ours['requests'].values())} requests; listing the same number of objects "
            f"through S3 `ListObjectsV2` took {listing['seconds']['median']:.1f} s "
            f"(min {listing['seconds']['min']:.1f}, max {listing['seconds']['max']:.1f}) and "
            f"{base['LIST_requests']} requests on the emulator."
        )
    }
