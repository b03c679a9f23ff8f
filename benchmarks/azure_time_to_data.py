"""Time to data on Azure: N archived blobs, rehydration delay D, until every blob is read.

archivefs (rehydrations in Blob Batches, listing-based bulk polls, reads
pipelined with ``as_ready``) against what a competent user writes with adlfs and
azure-storage-blob: Set Blob Tier for every blob from a thread pool of 16 (or in
Blob Batches of 256, the strongest), then one ``get_blob_properties`` per
pending blob per round (every D/10) until ``archive_status`` is gone, then
reads with adlfs. Each sample rehydrates fresh blobs; the variants rotate,
after a warm-up of each.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from benchmarks._azure import SERVER, archive_fs, seed, service, set_tiers, versions
from benchmarks._common import SAMPLES, Result, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedAzureArchive

SIZES = {"smoke": (20, 0.5), "default": (200, 1.0), "full": (1000, 2.0)}
PAYLOAD = 16 * 1024
THREADS = 16


def _counted(archive: EmulatedAzureArchive, start: float, first: float | None) -> dict[str, Any]:
    return {
        "seconds_total": time.perf_counter() - start,
        "seconds_to_first_byte": first,
        "set_blob_tier": set_tiers(archive),
        "blob_batch": archive.requests.count("BlobBatch"),
        "status_requests": archive.requests.count("ListBlobs")
        + archive.requests.count("GetBlobProperties"),
    }


def run_archivefs(archive: EmulatedAzureArchive, paths: list[str], delay: float) -> dict[str, Any]:
    fs = archive_fs(archive)
    archive.requests.clear()
    start = time.perf_counter()
    plan = fs.plan(paths)
    fs.submit(plan)
    first = None
    for group in fs.as_ready(plan, timeout=600):
        fs.cat_file(group.key)
        if first is None:
            first = time.perf_counter() - start
    return _counted(archive, start, first)


def run_plain(
    archive: EmulatedAzureArchive, paths: list[str], delay: float, *, batches: bool
) -> dict[str, Any]:
    import fsspec

    client = service(archive)
    adlfs = fsspec.filesystem("az", skip_instance_cache=True, **archive.storage_options())
    container = paths[0].split("/", 1)[0]
    names = [p.split("/", 1)[1] for p in paths]
    archive.requests.clear()
    start = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        if batches:
            box = client.get_container_client(container)
            for i in range(0, len(names), 256):
                box.set_standard_blob_tier_blobs(
                    "Hot", *names[i : i + 256], rehydrate_priority="Standard"
                )
        else:
            list(
                pool.map(
                    lambda n: client.get_blob_client(container, n).set_standard_blob_tier(
                        "Hot", rehydrate_priority="Standard"
                    ),
                    names,
                )
            )
        pending = set(names)
        while pending:
            time.sleep(delay / 10)
            props = pool.map(
                lambda n: client.get_blob_client(container, n).get_blob_properties(),
                sorted(pending),
            )
            pending -= {p.name for p in props if not p.archive_status and p.blob_tier == "Hot"}
        first = None
        for path in paths:
            adlfs.cat_file(path)
            if first is None:
                first = time.perf_counter() - start
    return _counted(archive, start, first)


def run(archive: Any, size: str) -> Result:
    """``archive`` (the S3 emulator) is not used: this starts the emulated Azure archive."""
    from archivefs.testing import EmulatedAzureArchive

    n, delay = SIZES[size]
    with EmulatedAzureArchive() as azure:
        azure.rehydrate_delay["Standard"] = delay

        def variant(function: Any, **options: Any) -> Any:
            def measure(i: int) -> dict[str, Any]:
                _, paths = seed(azure, min(n, 5) if i < 0 else n, PAYLOAD)
                return dict(function(azure, paths, delay, **options))

            return measure

        runs = sample(
            {
                "archivefs": variant(run_archivefs),
                "batches_then_properties": variant(run_plain, batches=True),
                "threads_then_properties": variant(run_plain, batches=False),
            },
            SAMPLES[size],
        )
    ours = medians(runs, "archivefs")
    batched = medians(runs, "batches_then_properties")
    threaded = medians(runs, "threads_then_properties")
    vs = ours["seconds_total"] / batched["seconds_total"]
    word = "faster than" if vs <= 0.95 else "on par with" if vs <= 1.05 else "slower than"
    headline = (
        f"N={n}, D={delay:g}s: archivefs {spread(runs, 'archivefs', 'seconds_total', '.1f')} "
        f"({ours['blob_batch']:.0f} Blob Batch for {ours['set_blob_tier']:.0f} Set Blob Tier, "
        f"{ours['status_requests']:.0f} status requests); Blob Batches + per-blob properties "
        f"{spread(runs, 'batches_then_properties', 'seconds_total', '.1f')} "
        f"({batched['status_requests']:.0f} Get Blob Properties); 16 threads of Set Blob Tier + "
        f"per-blob properties {spread(runs, 'threads_then_properties', 'seconds_total', '.1f')} "
        f"({threaded['set_blob_tier']:.0f} requests, {threaded['status_requests']:.0f} status); "
        f"archivefs is {word} the batched loop ({vs:.2f}x its time)"
    )
    return Result(
        name="azure_time_to_data",
        question="Azure: time to data, N archived blobs, rehydration delay D",
        parameters={
            "blobs": n,
            "delay_s": delay,
            "blob_bytes": PAYLOAD,
            "threads": THREADS,
            **versions(),
        },
        archivefs=ours,
        baseline={"batches_then_properties": batched, "threads_then_properties": threaded},
        baseline_name="azure-storage-blob Set Blob Tier (Blob Batches; 16 threads) + "
        "get_blob_properties per blob every D/10, adlfs reads",
        headline=headline,
        runs=runs,
        server=dict(SERVER),
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's Azure time-to-data note, from the result file."""
    s, p = data["summary"], data["parameters"]
    ours, batched = s["archivefs"], s["batches_then_properties"]
    threaded = s["threads_then_properties"]
    ratio = ours["seconds_total"]["median"] / batched["seconds_total"]["median"]
    word = "faster than" if ratio <= 0.95 else "on par with" if ratio <= 1.05 else "slower than"
    return {
        "azure-time-to-data": (
            f"- **Azure: time to data** ({p['blobs']} archived blobs, {p['delay_s']:g} s "
            f"emulated rehydration, {data['sample_counts']['archivefs']} samples, "
            f"{data['size']} size): archivefs sent "
            f"{ours['blob_batch']['median']:.0f} Blob Batch ("
            f"{ours['set_blob_tier']['median']:.0f} Set Blob Tier inside) and "
            f"{ours['status_requests']['median']:.0f} status requests (List Blobs), and took "
            f"{ours['seconds_total']['median']:.1f} s (min {ours['seconds_total']['min']:.1f}, "
            f"max {ours['seconds_total']['max']:.1f}); the plain loop with the same Blob "
            f"Batches and `get_blob_properties` per pending blob every "
            f"{p['delay_s'] / 10:g} s sent {batched['status_requests']['median']:.0f} status "
            f"requests in {batched['seconds_total']['median']:.1f} s, and with 16 threads of "
            f"Set Blob Tier ({threaded['set_blob_tier']['median']:.0f} requests) "
            f"{threaded['status_requests']['median']:.0f} status requests in "
            f"{threaded['seconds_total']['median']:.1f} s: archivefs is {word} the batched "
            f"loop ({ratio:.2f}x its time). The proxy adds no latency, so times are local "
            "round trips on a busy 2-core machine and noisy; the counts are the comparison."
        )
    }
