"""Status requests per poll round for many restoring objects: bulk listing vs HEAD each."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from benchmarks._common import Result, archive_fs, seed_archived

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 1000, "default": 10_000, "full": 10_000}


def run(archive: EmulatedArchive, size: str) -> Result:
    import s3fs
    from fsspec.asyn import sync

    n = SIZES[size]
    archive.set_restore_delay(3600)
    paths = seed_archived(archive, "status-poll", n)
    fs = archive_fs(archive)
    fs.restore(paths)

    archive.requests.clear()
    start = time.perf_counter()
    states = fs.probe(paths)
    ours_s = time.perf_counter() - start
    assert all(s is not None and s.restore.value == "restoring" for s in states.values())
    ours = {
        "seconds": ours_s,
        "LIST": archive.requests.count("LIST"),
        "HEAD": archive.requests.count("HEAD"),
    }

    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())

    async def heads() -> None:
        import asyncio

        semaphore = asyncio.Semaphore(64)

        async def one(path: str) -> None:
            async with semaphore:
                bucket_name, key = path.split("/", 1)
                await raw._call_s3("head_object", Bucket=bucket_name, Key=key)

        await asyncio.gather(*(one(p) for p in paths))

    archive.requests.clear()
    start = time.perf_counter()
    sync(raw.loop, heads)
    base = {
        "seconds": time.perf_counter() - start,
        "HEAD": archive.requests.count("HEAD"),
        "LIST": 0,
    }
    headline = (
        f"{n} restoring objects: {ours['LIST']} LIST + {ours['HEAD']} HEAD "
        f"in {ours['seconds']:.2f}s "
        f"vs {base['HEAD']} HEADs (64 concurrent) in {base['seconds']:.2f}s "
        f"({base['HEAD'] / max(ours['LIST'] + ours['HEAD'], 1):.0f}x fewer requests)"
    )
    return Result(
        name="status_polling",
        question="Status requests per poll round",
        parameters={"objects": n},
        archivefs=ours,
        baseline=base,
        baseline_name="HEAD per object (s3fs, 64 concurrent)",
        headline=headline,
        samples={"archivefs_s": [ours["seconds"]], "heads_s": [base["seconds"]]},
    )
