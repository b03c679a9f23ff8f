"""Hot-read overhead: reading STANDARD objects through archivefs vs raw s3fs (target >= 0.95)."""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any

from benchmarks._common import Result

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {
    "smoke": ([1 << 20], [1, 4], 2),
    "default": ([1 << 20, 16 << 20], [1, 8], 9),
    "full": ([1 << 20, 16 << 20, 100 << 20], [1, 4, 16], 5),
}


def run(archive: EmulatedArchive, size: str) -> Result:
    import s3fs
    from fsspec.asyn import sync

    from archivefs.filesystem import ArchiveFileSystem

    object_sizes, concurrencies, repeats = SIZES[size]
    bucket = "hot-read"
    archive.create_bucket(bucket)
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    ours = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    rows: list[dict[str, Any]] = []
    samples: dict[str, list[float]] = {}
    for nbytes in object_sizes:
        for concurrency in concurrencies:
            keys = [f"{bucket}/{nbytes}/{i}" for i in range(concurrency)]
            for key in keys:
                archive.put_object(bucket, key.split("/", 1)[1], b"\1" * nbytes)

            def read_all(fs: Any, keys: list[str] = keys) -> float:
                async def go() -> None:
                    import asyncio

                    await asyncio.gather(*(fs._cat_file(k) for k in keys))

                start = time.perf_counter()
                sync(fs.loop, go)
                return time.perf_counter() - start

            for fs in (raw, ours):  # warm both
                read_all(fs)
            raw_t, our_t = [], []
            for _ in range(repeats):  # interleaved, so drift hits both alike
                raw_t.append(read_all(raw))
                our_t.append(read_all(ours))
            total = nbytes * concurrency
            row = {
                "object_bytes": nbytes,
                "concurrency": concurrency,
                "s3fs_MBps": total / statistics.median(raw_t) / 1e6,
                "archivefs_MBps": total / statistics.median(our_t) / 1e6,
            }
            row["ratio"] = row["archivefs_MBps"] / row["s3fs_MBps"]
            rows.append(row)
            samples[f"s3fs_{nbytes}_{concurrency}"] = raw_t
            samples[f"archivefs_{nbytes}_{concurrency}"] = our_t
    worst = min(r["ratio"] for r in rows)
    headline = f"throughput ratio archivefs/s3fs: worst {worst:.2f}, median " + (
        f"{statistics.median(r['ratio'] for r in rows):.2f} over "
        f"{len(rows)} size x concurrency cells"
        + (" (below the 0.95 target)" if worst < 0.95 else "")
    )
    return Result(
        name="hot_read",
        question="Hot-read overhead",
        parameters={"object_sizes": object_sizes, "concurrency": concurrencies, "repeats": repeats},
        archivefs={"rows": rows},
        baseline={},
        baseline_name="raw s3fs",
        headline=headline,
        samples=samples,
    )
