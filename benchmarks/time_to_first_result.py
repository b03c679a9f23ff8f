"""Time to first result on an archived zarr dataset: pipelined (restore-aware graph) vs
restore-all-then-compute (prefetch, then compute), on a 2-process Dask cluster.

Half of the bundles were already restoring (asked for by an earlier job), so
groups come back in two waves, as real restores do: the pipelined graph
computes on the first wave while the second is still restoring.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": (2.0, 48), "default": (4.0, 96), "full": (8.0, 192)}


def _prepare(archive: EmulatedArchive, name: str, steps: int, tmp: Path) -> str:
    import fsspec
    import numpy as np
    import s3fs
    import xarray as xr

    from archivefs.catalog import ByChunkNeighbourhood
    from archivefs.catalog.writer import bundle_tree

    data = np.random.default_rng(0).normal(size=(steps, 64, 64)).astype("f4")
    ds = xr.Dataset({"t": (("time", "y", "x"), data)}, coords={"time": np.arange(steps)})
    local = tmp / f"{name}.zarr"
    ds.chunk({"time": 4}).to_zarr(local, consolidated=False)
    archive.create_bucket(name)
    s3 = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    bundle_tree(
        fsspec.filesystem("file"),
        str(local),
        s3,
        f"{name}/store.zarr",
        policy=ByChunkNeighbourhood(window=2, hot_arrays=frozenset({"time"})),
        storage_class="DEEP_ARCHIVE",
    )
    return f"s3://{name}/store.zarr"


def _first_and_all(client: Any, parts: list[Any]) -> tuple[float, float]:
    from distributed import as_completed

    start = time.perf_counter()
    futures = client.compute(parts)
    first = None
    for _ in as_completed(futures):
        if first is None:
            first = time.perf_counter() - start
    return first or 0.0, time.perf_counter() - start


def _one(
    archive: EmulatedArchive, client: Any, tmp: Path, name: str, delay: float, steps: int, i: int
) -> dict[str, float]:
    import archivefs.datasets as ads

    url = _prepare(archive, f"ttfr-{name}-{'w' if i < 0 else i + 1}", steps, tmp)
    ds = ads.open_zarr(
        url,
        storage_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        restore_time_scale=delay / (12 * 3600),
        skip_instance_cache=True,
        pickle_credentials=True,  # the emulator's dummy keys: workers have no others
    )
    earlier = ds["t"].isel(time=slice(0, steps // 2))
    ads.prefetch(earlier, wait=False)  # an earlier job's restores: the first wave
    time.sleep(delay / 2)
    selection = ds["t"]
    start = time.perf_counter()
    if name == "pipelined":
        gated = ads.restore_aware(selection, timeout=600, poll_interval=delay / 10)
        parts = [gated.isel(time=slice(i, i + 4)).mean() for i in range(0, steps, 4)]
        first, total = _first_and_all(client, parts)
    else:
        ads.prefetch(selection, wait=True, timeout=600)
        waited = time.perf_counter() - start
        parts = [selection.isel(time=slice(i, i + 4)).mean() for i in range(0, steps, 4)]
        first, total = _first_and_all(client, parts)
        first, total = first + waited, total + waited
    return {"first_result_s": first, "all_results_s": total}


def run(archive: EmulatedArchive, size: str) -> Result:
    from distributed import Client, LocalCluster

    delay, steps = SIZES[size]
    archive.set_restore_delay(delay)
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(
            n_workers=2, threads_per_worker=2, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        # a warm-up of each variant first: neither pays imports or cold workers alone
        runs = sample(
            {
                name: (lambda i, name=name: _one(archive, client, Path(tmp), name, delay, steps, i))
                for name in ("pipelined", "all-then-compute")
            },
            SAMPLES[size],
        )
    ours, base = medians(runs, "pipelined"), medians(runs, "all-then-compute")
    headline = (
        f"restore delay {delay:g}s, half the bundles already restoring, warmed workers: first "
        f"result after {spread(runs, 'pipelined', 'first_result_s', '.1f')} pipelined vs "
        f"{spread(runs, 'all-then-compute', 'first_result_s', '.1f')} restore-all-then-compute; "
        f"all results {spread(runs, 'pipelined', 'all_results_s', '.1f')} vs "
        f"{spread(runs, 'all-then-compute', 'all_results_s', '.1f')}"
    )
    return Result(
        name="time_to_first_result",
        question="Time to first result: pipelined vs restore-all-then-compute",
        parameters={"delay_s": delay, "time_steps": steps, "workers": 2},
        archivefs=ours,
        baseline=base,
        baseline_name="prefetch (wait for all), then compute",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's time-to-first-result note, from the result file."""
    s, p = data["summary"], data["parameters"]
    first, base_first = s["pipelined"]["first_result_s"], s["all-then-compute"]["first_result_s"]
    total, base_total = s["pipelined"]["all_results_s"], s["all-then-compute"]["all_results_s"]
    return {
        "time-to-first-result": (
            f"- **Time to first result** ({p['workers']}-process Dask cluster"
            + (
                ", warmed by one run of each variant"
                if data["sample_counts"]["pipelined"] > 1
                else ""
            )
            + ", zarr in bundles, half of them already restoring so groups "
            f"return in two waves, {p['delay_s']:g} s delay, "
            f"{data['sample_counts']['pipelined']} alternating samples): the restore-aware graph "
            f"gave its first result after {first['median']:.1f} s (min {first['min']:.1f}, max "
            f"{first['max']:.1f}), waiting for everything then computing after "
            f"{base_first['median']:.1f} s ({base_first['min']:.1f}-{base_first['max']:.1f}); "
            f"all results {total['median']:.1f} s vs {base_total['median']:.1f} s."
        )
    }
