"""Azure: status of many rehydrating blobs, one poll round.

archivefs's bulk probe (List Blobs, 5,000 blobs per page, tier and
``archive_status`` in each entry) against what a competent user writes with
azure-storage-blob: ``ContainerClient.list_blobs`` over the same prefix (the
strongest: the same listing) and, as a second baseline, ``get_blob_properties``
per blob from a thread pool of 64 (run on a subset and extrapolated, labelled,
when the set is large).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from benchmarks._azure import SERVER, archive_fs, seed, service, versions
from benchmarks._common import SAMPLES, Result, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedAzureArchive

SIZES = {"smoke": 300, "default": 2000, "full": 10_000}
PROPERTIES_SUBSET = 500  # Get Blob Properties measured per sample; the rest extrapolated


def _counted(archive: EmulatedAzureArchive, seconds: float) -> dict[str, Any]:
    return {
        "seconds": seconds,
        "ListBlobs": archive.requests.count("ListBlobs"),
        "GetBlobProperties": archive.requests.count("GetBlobProperties"),
    }


def _archivefs(archive: EmulatedAzureArchive, fs: Any, paths: list[str]) -> dict[str, Any]:
    archive.requests.clear()
    start = time.perf_counter()
    states = fs.probe(paths)
    seconds = time.perf_counter() - start
    assert all(s is not None and s.restore.value == "restoring" for s in states.values())
    return _counted(archive, seconds)


def _list_blobs(archive: EmulatedAzureArchive, client: Any, container: str, n: int) -> Any:
    archive.requests.clear()
    start = time.perf_counter()
    box = client.get_container_client(container)
    pending = sum(
        1
        for b in box.list_blobs(name_starts_with="o/", results_per_page=5000)
        if (b.archive_status or "").startswith("rehydrate-pending")
    )
    seconds = time.perf_counter() - start
    assert pending == n
    return _counted(archive, seconds)


def _properties(
    archive: EmulatedAzureArchive, client: Any, container: str, names: list[str]
) -> dict[str, Any]:
    archive.requests.clear()
    start = time.perf_counter()
    with ThreadPoolExecutor(64) as pool:
        props = list(
            pool.map(lambda n: client.get_blob_client(container, n).get_blob_properties(), names)
        )
    seconds = time.perf_counter() - start
    assert all((p.archive_status or "").startswith("rehydrate-pending") for p in props)
    return _counted(archive, seconds)


def run(archive: Any, size: str) -> Result:
    """``archive`` (the S3 emulator) is not used: this starts the emulated Azure archive."""
    from archivefs.testing import EmulatedAzureArchive

    n = SIZES[size]
    subset = min(n, PROPERTIES_SUBSET)
    with EmulatedAzureArchive() as azure:
        azure.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # all stay pending
        container, paths = seed(azure, n, 1)
        fs = archive_fs(azure)
        fs.restore(paths)
        client = service(azure)
        names = [p.split("/", 1)[1] for p in paths]
        runs = sample(
            {
                "archivefs": lambda i: _archivefs(azure, fs, paths),
                "list_blobs": lambda i: _list_blobs(azure, client, container, n),
                "properties_per_blob": lambda i: _properties(
                    azure, client, container, names[:subset] if i >= 0 else names[:20]
                ),
            },
            SAMPLES[size],
        )
    for cell in runs["properties_per_blob"]:
        cell["seconds_extrapolated"] = cell["seconds"] / subset * n
        cell["GetBlobProperties_extrapolated"] = cell["GetBlobProperties"] * n // subset
    ours, lister, props = (
        medians(runs, v) for v in ("archivefs", "list_blobs", "properties_per_blob")
    )
    ratio = lister["seconds"] / ours["seconds"]
    verdict = (
        "archivefs faster" if ratio >= 1.1 else "parity" if ratio >= 0.9 else "archivefs slower"
    )
    headline = (
        f"{n:,} rehydrating blobs: archivefs {ours['ListBlobs']} List Blobs + "
        f"{ours['GetBlobProperties']} Get Blob Properties in "
        f"{spread(runs, 'archivefs', 'seconds')}; "
        f"azure-storage-blob list_blobs {lister['ListBlobs']} List Blobs in "
        f"{spread(runs, 'list_blobs', 'seconds')} ({verdict}, {ratio:.2f}x); get_blob_properties "
        f"per blob (64 threads) {props['GetBlobProperties_extrapolated']:,} requests in "
        f"~{props['seconds_extrapolated']:.1f} s"
        + (f" (extrapolated from {subset})" if subset < n else "")
    )
    return Result(
        name="azure_status_polling",
        question="Azure: status requests per poll round",
        parameters={"blobs": n, "properties_subset": subset, **versions()},
        archivefs=ours,
        baseline={**lister, "properties_per_blob": props},
        baseline_name="azure-storage-blob list_blobs; get_blob_properties per blob (64 threads)",
        headline=headline,
        runs=runs,
        server=dict(SERVER),
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's Azure status-polling note, from the result file."""
    s, p = data["summary"], data["parameters"]
    ours, lister = s["archivefs"], s["list_blobs"]
    props = data["baseline"]["properties_per_blob"]
    ratio = lister["seconds"]["median"] / ours["seconds"]["median"]
    verdict = "faster than" if ratio >= 1.1 else "on par with" if ratio >= 0.9 else "slower than"
    extrapolated = p["properties_subset"] < p["blobs"]
    return {
        "azure-status-polling": (
            f"- **Azure: status polling** ({p['blobs']:,} rehydrating blobs, "
            f"{data['sample_counts']['archivefs']} samples, {data['size']} size): archivefs "
            f"sends {ours['ListBlobs']['median']:.0f} List Blobs + "
            f"{ours['GetBlobProperties']['median']:.0f} Get Blob Properties in "
            f"{ours['seconds']['median']:.2f} s; azure-storage-blob's `list_blobs` sends the "
            f"same {lister['ListBlobs']['median']:.0f} List Blobs in "
            f"{lister['seconds']['median']:.2f} s: archivefs is {verdict} it ({ratio:.2f}x). "
            f"`get_blob_properties` per blob: {props['GetBlobProperties_extrapolated']:,.0f} "
            f"requests, ~{props['seconds_extrapolated']:.1f} s"
            + (f" (extrapolated from {p['properties_subset']})." if extrapolated else ".")
            + " No latency is injected on Azure: times are local and noisy."
        )
    }
