"""Listing: the catalog (loaded from the hot tier) vs S3 LIST, and the catalog format's cost."""

from __future__ import annotations

import time
import tracemalloc
from typing import TYPE_CHECKING

from benchmarks._common import Result

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": (10_000, 10_000), "default": (100_000, 1_000_000), "full": (1_000_000, 1_000_000)}


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
    archive.requests.clear()
    start = time.perf_counter()
    listed = raw.find(f"{bucket}/obs")
    s3_seconds = time.perf_counter() - start
    assert len(listed) == n_list
    s3_lists = archive.requests.count("LIST")

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
    archive.requests.clear()
    tracemalloc.start()
    start = time.perf_counter()
    loaded = Catalog.load(raw, f"{bucket}/root/.archivefs/catalog")
    load_seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = time.perf_counter()
    found = loaded.find(f"{bucket}/root/obs")
    find_seconds = time.perf_counter() - start
    assert len(found) == n_catalog
    catalog_requests = archive.requests.counts()
    file_bytes = sum(
        s
        for p, s in raw.du(f"{bucket}/root/.archivefs/catalog", total=False).items()
        if p.endswith(".npz")
    )
    ours = {
        "entries": n_catalog,
        "load_seconds": load_seconds,
        "find_seconds": find_seconds,
        "requests": catalog_requests,
        "file_bytes": file_bytes,
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
        f"catalog of {n_catalog:,} members: load {load_seconds:.2f}s + find {find_seconds:.2f}s "
        f"in {sum(catalog_requests.values())} GETs ({file_bytes / n_catalog:.0f} B/member); "
        f"S3 LIST of {n_list:,} objects: {s3_seconds:.1f}s in {s3_lists} requests "
        f"({n_list / s3_seconds:,.0f} entries/s on the emulator)"
    )
    return Result(
        name="catalog_listing",
        question="Listing: catalog vs S3 LIST",
        parameters={"s3_entries": n_list, "catalog_entries": n_catalog},
        archivefs=ours,
        baseline=base,
        baseline_name="s3fs find (ListObjectsV2, 1,000 per request)",
        headline=headline,
        samples={"catalog_load_s": [load_seconds], "s3_list_s": [s3_seconds]},
    )
