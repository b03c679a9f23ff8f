"""Status of many restoring objects, one poll round: archivefs vs the best plain loops.

archivefs's bulk probe against what a competent user writes: a boto3
``list_objects_v2(OptionalObjectAttributes=["RestoreStatus"])`` pagination
over the same prefix (the strongest baseline: the same LISTs), and, as a
second baseline, one HEAD per object (s3fs, 64 concurrent), run on a subset
and extrapolated (labelled) when the set is large.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, archive_fs, medians, sample, seed_archived, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 1000, "default": 10_000, "full": 10_000}
HEAD_SUBSET = 1000  # HEADs measured per sample; the rest extrapolated
BUCKET = "status-poll"


def _archivefs(archive: EmulatedArchive, fs: Any, paths: list[str]) -> dict[str, Any]:
    archive.requests.clear()
    start = time.perf_counter()
    states = fs.probe(paths)
    seconds = time.perf_counter() - start
    assert all(s is not None and s.restore.value == "restoring" for s in states.values())
    return _counted(archive, seconds)


def _boto3_list(archive: EmulatedArchive, client: Any, n: int) -> dict[str, Any]:
    archive.requests.clear()
    start = time.perf_counter()
    restoring = 0
    for page in client.get_paginator("list_objects_v2").paginate(
        Bucket=BUCKET, Prefix="o/", OptionalObjectAttributes=["RestoreStatus"]
    ):
        for entry in page.get("Contents", []):
            restoring += bool(entry.get("RestoreStatus", {}).get("IsRestoreInProgress"))
    seconds = time.perf_counter() - start
    assert restoring == n
    return _counted(archive, seconds)


def _heads(archive: EmulatedArchive, raw: Any, paths: list[str]) -> dict[str, Any]:
    import asyncio

    from fsspec.asyn import sync

    async def heads() -> None:
        semaphore = asyncio.Semaphore(64)

        async def one(path: str) -> None:
            async with semaphore:
                bucket_name, key = path.split("/", 1)
                await raw._call_s3("head_object", Bucket=bucket_name, Key=key)

        await asyncio.gather(*(one(p) for p in paths))

    archive.requests.clear()
    start = time.perf_counter()
    sync(raw.loop, heads)
    return _counted(archive, time.perf_counter() - start)


def _counted(archive: EmulatedArchive, seconds: float) -> dict[str, Any]:
    return {
        "seconds": seconds,
        "LIST": archive.requests.count("LIST"),
        "HEAD": archive.requests.count("HEAD"),
    }


def run(archive: EmulatedArchive, size: str) -> Result:
    import s3fs

    n = SIZES[size]
    subset = min(n, HEAD_SUBSET)
    archive.set_restore_delay(3600)
    paths = seed_archived(archive, BUCKET, n)
    latency = archive.latency
    archive.set_latency(0)  # seeding the restores is not what is measured
    fs = archive_fs(archive)
    fs.restore(paths)
    archive.set_latency(latency)
    client = archive.client()
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    runs = sample(
        {
            "archivefs": lambda i: _archivefs(archive, fs, paths),
            "boto3_list": lambda i: _boto3_list(archive, client, n),
            "s3fs_head": lambda i: _heads(archive, raw, paths[:subset] if i >= 0 else paths[:50]),
        },
        SAMPLES[size],
    )
    for cell in runs["s3fs_head"]:
        cell["seconds_extrapolated"] = cell["seconds"] / subset * n
        cell["HEAD_extrapolated"] = cell["HEAD"] * n // subset
    ours, lister, heads = (medians(runs, v) for v in ("archivefs", "boto3_list", "s3fs_head"))
    time_ratio = lister["seconds"] / ours["seconds"]
    verdict = (
        "archivefs faster"
        if time_ratio >= 1.1
        else "parity"
        if time_ratio >= 0.9
        else "archivefs slower"
    )
    headline = (
        f"{n:,} restoring objects: archivefs {ours['LIST']} LIST + {ours['HEAD']} HEAD in "
        f"{spread(runs, 'archivefs', 'seconds')}; boto3 list_objects_v2 with RestoreStatus "
        f"{lister['LIST']} LIST in {spread(runs, 'boto3_list', 'seconds')} ({verdict}, "
        f"{time_ratio:.2f}x); HEAD per object (s3fs, 64 concurrent) "
        f"{heads['HEAD_extrapolated']:,} HEAD in ~{heads['seconds_extrapolated']:.0f} s"
        + (f" (extrapolated from {subset})" if subset < n else "")
    )
    return Result(
        name="status_polling",
        question="Status requests per poll round",
        parameters={"objects": n, "head_subset": subset},
        archivefs=ours,
        baseline={**lister, "head_per_object": heads},
        baseline_name="boto3 list_objects_v2 with RestoreStatus; HEAD per object (s3fs)",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's status-polling note, from the result file."""
    s, p = data["summary"], data["parameters"]
    ours, lister = s["archivefs"], s["boto3_list"]
    heads = data["baseline"]["head_per_object"]
    ratio = lister["seconds"]["median"] / ours["seconds"]["median"]
    extrapolated = p["head_subset"] < p["objects"]
    verdict = "faster than" if ratio >= 1.1 else "on par with" if ratio >= 0.9 else "slower than"
    return {
        "status-polling": (
            f"- **Status polling** ({p['objects']:,} restoring objects, "
            f"{data['sample_counts']['archivefs']} samples): archivefs sends "
            f"{ours['LIST']['median']:.0f} LIST + {ours['HEAD']['median']:.0f} HEAD in "
            f"{ours['seconds']['median']:.2f} s; the boto3 `list_objects_v2` loop with "
            f"`RestoreStatus` sends the same {lister['LIST']['median']:.0f} LIST in "
            f"{lister['seconds']['median']:.2f} s: archivefs is {verdict} it ({ratio:.2f}x). "
            f"Its gain is over HEAD per object: {heads['HEAD_extrapolated']:,.0f} HEAD, "
            f"~{heads['seconds_extrapolated']:.0f} s"
            + (f" (extrapolated from {p['head_subset']})." if extrapolated else ".")
        )
    }
