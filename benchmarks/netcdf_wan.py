"""netCDF/HDF5 reads through a WAN-shaped link: archivefs against s3fs's defaults (issue #35.4).

The S3 endpoint is reached through :class:`~benchmarks._shaping_proxy.ShapingProxy`
(10 ms added each way, each connection capped at 40 MB/s), with the emulator's
own per-request latency off. Each sample opens the file (``fs.open``) and reads
it with xarray (``engine="h5netcdf"``): the whole variable, one time step, and the
whole variable again with the clients' caches dropped first (:data:`NO_LISTING`).
archivefs reads with its defaults (``archivefs.readahead``); s3fs with its own
(``cache_type="readahead"``, 50 MiB blocks). Both filesystems list the bucket
once before sampling, so neither sends a HEAD for the size. GETs and bytes are
counted at the server; the bytes needed are the values' own bytes.

Files: a small one (120 steps of 128 x 128 float32 in 64 KiB chunks, 7.9 MB) on
the emulator, at the default and full sizes; with ``--full`` also a large one
(500 steps of 512 x 512 in 1 MiB chunks, 500 MiB) on radosgw (a local one-node
Ceph cluster): moto reads an object's whole value for every GET, ranged or not,
so on the emulator each request for a 500 MiB object costs a copy of 500 MiB and
the comparison would count requests, not the link.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, ratio, sample, spread, verdict
from benchmarks._shaping_proxy import ShapingProxy

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

MiB = 2**20
FILES: dict[str, dict[str, tuple[int, int]]] = {
    "smoke": {"small": (24, 64)},
    "default": {"small": (120, 128)},
    "full": {"small": (120, 128)},
}
"""Per size: file name -> (time steps, side) on the emulator; float32, a chunk per step."""
RGW_FILES: dict[str, dict[str, tuple[int, int]]] = {
    "full": {"small_rgw": (120, 128), "large": (500, 512)}
}
"""The same, on radosgw (the small file again: a server that answers each request quicker)."""
LATENCY = 0.010  # seconds added each way by the proxy
RATE = 40e6  # bytes per second per connection and direction
BUCKET = "netcdf-wan"
PATTERNS: dict[str, Any] = {
    "whole variable": lambda steps: {},
    "one time step": lambda steps: {"time": steps // 2},
    "whole variable, no listing": lambda steps: {},
}
NO_LISTING = {"whole variable, no listing"}
"""Patterns read the simple way (issue 49.4): each client's caches dropped before
``fs.open``, so the open pays what a first open pays (the HEAD for the size; archivefs
its catalog lookup), as a user who opens a file without listing first."""
TIME_TARGET = 1.2  # whole variable: at most this times s3fs's time
BYTES_TARGET = 1.5  # one time step: at most this times the bytes needed


def _seed(archive: EmulatedArchive, files: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Write each file (a time step at a time: the large one never whole in memory twice)."""
    import h5netcdf
    import numpy as np

    archive.create_bucket(BUCKET)
    sizes = {}
    rng = np.random.default_rng(35)
    for name, (steps, side) in files.items():
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{name}.nc"
            with h5netcdf.File(path, "w") as nc:
                nc.dimensions = {"time": steps, "y": side, "x": side}
                var = nc.create_variable("t", ("time", "y", "x"), "f4", chunks=(1, side, side))
                for step in range(steps):
                    var[step] = rng.normal(size=(side, side)).astype("f4")
            data = path.read_bytes()
        archive.put_object(BUCKET, f"{name}.nc", data)
        sizes[name] = len(data)
    return sizes


def _options(archive: EmulatedArchive, endpoint: str) -> dict[str, Any]:
    options = archive.storage_options()
    return {**options, "client_kwargs": {**options["client_kwargs"], "endpoint_url": endpoint}}


def _read(
    archive: EmulatedArchive,
    proxy: ShapingProxy,
    fs: Any,
    name: str,
    selection: dict[str, Any],
    listed: bool = True,
) -> dict[str, float]:
    import xarray as xr

    if not listed:
        fs.invalidate_cache()
    archive.requests.clear()
    proxy.reset()
    start = time.perf_counter()
    with fs.open(f"{BUCKET}/{name}.nc") as f:
        values = xr.open_dataset(f, engine="h5netcdf")["t"].isel(**selection).values
    seconds = time.perf_counter() - start
    counts = proxy.reset()
    return {
        "seconds": seconds,
        "GET": archive.requests.count("GET"),
        "HEAD": archive.requests.count("HEAD"),
        "bytes": _get_bytes(archive.requests),
        "bytes_down": counts.bytes_down,
        "connections": counts.connections,
        "bytes_needed": values.nbytes,
    }


def _get_bytes(requests: Any) -> int:
    """Bytes the server sent in answer to GETs (radosgw: from its ops log's records)."""
    if hasattr(requests, "bytes_sent"):
        return int(requests.bytes_sent("GET"))
    from archivefs.testing._rgw import operation

    return sum(int(r.get("bytes_sent", 0)) for r in requests.records() if operation(r) == "GET")


def run(archive: EmulatedArchive, size: str) -> Result:
    """The emulator's files; with ``--full``, radosgw's too (their samples' names
    prefixed ``radosgw:``)."""
    load_start = os.getloadavg()
    files, sizes = dict(FILES[size]), {}
    latency = archive.latency
    archive.set_latency(0.0)  # the proxy shapes the link instead
    try:
        sizes.update(_seed(archive, FILES[size]))
        runs = _sample_on(archive, FILES[size], size)
    finally:
        archive.set_latency(latency)
    if size in RGW_FILES:
        from archivefs.testing import LocalRGW

        with LocalRGW() as rgw:
            sizes.update(_seed(rgw, RGW_FILES[size]))
            on_rgw = _sample_on(rgw, RGW_FILES[size], size)
        files.update(RGW_FILES[size])
        for name in runs:
            for cell, extra in zip(runs[name], on_rgw[name], strict=True):
                cell.update(extra)
    result = _result(files, sizes, runs, load_start, os.getloadavg())
    result.server = {
        "process": "own process",
        "latency_s": 0.0,
        "proxy": f"{LATENCY * 1000:g} ms each way, {RATE / 1e6:g} MB/s per connection",
    }
    if size in RGW_FILES:
        result.server["radosgw"] = (
            f"{', '.join(RGW_FILES[size])} on a local one-node Ceph cluster "
            "(archivefs.testing.LocalRGW)"
        )
    return result


def _sample_on(server: Any, files: dict[str, tuple[int, int]], size: str) -> dict[str, Any]:
    """Sample both clients reading ``files`` from ``server`` through the proxy."""
    import s3fs

    from archivefs.filesystem import ArchiveFileSystem

    with ShapingProxy(server.endpoint_url, latency=LATENCY, rate=RATE) as proxy:
        options = _options(server, proxy.endpoint_url)
        clients = {
            "archivefs": ArchiveFileSystem(
                target_options=options, journal=False, skip_instance_cache=True
            ),
            "s3fs_default": s3fs.S3FileSystem(skip_instance_cache=True, **options),
        }
        for fs in clients.values():
            fs.ls(BUCKET)  # sizes known (no HEAD per open); archivefs's catalog lookup

        def variant(client: str) -> Any:
            def measure(i: int) -> dict[str, float]:
                out: dict[str, float] = {}
                for name, (steps, _) in files.items():
                    for pattern, selection in PATTERNS.items():
                        cell = _read(
                            server,
                            proxy,
                            clients[client],
                            name,
                            selection(steps),
                            listed=pattern not in NO_LISTING,
                        )
                        for metric, value in cell.items():
                            out[f"{name}/{pattern}/{metric}"] = value
                return out

            return measure

        return sample({name: variant(name) for name in clients}, SAMPLES[size])


def _result(
    files: dict[str, tuple[int, int]],
    sizes: dict[str, int],
    runs: dict[str, list[dict[str, Any]]],
    load_start: tuple[float, float, float],
    load_end: tuple[float, float, float],
) -> Result:
    med = {name: medians(runs, name) for name in runs}
    rows = []
    for name in files:
        for pattern in PATTERNS:
            cell = f"{name}/{pattern}"
            needed = med["archivefs"][f"{cell}/bytes_needed"]
            row: dict[str, Any] = {
                "file": name,
                "file_bytes": sizes[name],
                "pattern": pattern,
                "bytes_needed": needed,
                "time_ratio": ratio(runs, "archivefs", "s3fs_default", f"{cell}/seconds"),
            }
            for client in runs:
                row[f"{client}_seconds"] = med[client][f"{cell}/seconds"]
                row[f"{client}_seconds_spread"] = spread(runs, client, f"{cell}/seconds")
                row[f"{client}_GET"] = med[client][f"{cell}/GET"]
                row[f"{client}_HEAD"] = med[client][f"{cell}/HEAD"]
                row[f"{client}_bytes"] = med[client][f"{cell}/bytes"]
                row[f"{client}_amplification"] = med[client][f"{cell}/bytes"] / needed
            rows.append(row)

    def verdict(row: dict[str, Any]) -> str:
        if row["pattern"].startswith("whole variable"):
            ok = row["time_ratio"] <= TIME_TARGET
            return f"{row['time_ratio']:.2f}x s3fs's time ({'met' if ok else 'missed'})"
        amp = row["archivefs_amplification"]
        return f"{amp:.2f}x the bytes needed ({'met' if amp <= BYTES_TARGET else 'missed'})"

    cells = []
    for row in rows:
        cells.append(
            f"{row['file']} ({row['file_bytes'] / 1e6:.1f} MB) {row['pattern']}: archivefs "
            f"{row['archivefs_seconds_spread']} in {row['archivefs_GET']:.0f} GETs, "
            f"{row['archivefs_amplification']:.2f}x bytes; s3fs "
            f"{row['s3fs_default_seconds_spread']} in {row['s3fs_default_GET']:.0f} GETs, "
            f"{row['s3fs_default_amplification']:.2f}x bytes; {verdict(row)}"
        )
    load = f"load average {load_start[0]:.1f} at the start, {load_end[0]:.1f} at the end"
    headline = (
        f"through {LATENCY * 1000:g} ms each way and {RATE / 1e6:g} MB/s per connection: "
        + "; ".join(cells)
        + f"; medians (min-max); {load}"
    )
    return Result(
        name="netcdf_wan",
        question="netCDF/HDF5 reads with xarray through a WAN-shaped link",
        parameters={
            "proxy_latency_s_each_way": LATENCY,
            "proxy_rate_bytes_per_s_per_connection": RATE,
            "files": {n: {"steps": s, "side": d, "bytes": sizes[n]} for n, (s, d) in files.items()},
            "time_target": TIME_TARGET,
            "bytes_target": BYTES_TARGET,
            "load_average_start": list(load_start),
            "load_average_end": list(load_end),
        },
        archivefs={"rows": rows},
        baseline={},
        baseline_name='s3fs defaults (cache_type="readahead", 50 MiB blocks)',
        headline=headline,
        runs=runs,
    )


SERVER_OF = {"small": "emulator", "small_rgw": "radosgw", "large": "radosgw"}
"""Which server each file of :data:`FILES` and :data:`RGW_FILES` is read from."""


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's netCDF-over-the-WAN table and issue #35's targets, from the
    result file."""
    params = data["parameters"]
    counts = sorted(set(data["sample_counts"].values()))
    lines = [
        f"Through {params['proxy_latency_s_each_way'] * 1000:g} ms each way and "
        f"{params['proxy_rate_bytes_per_s_per_connection'] / 1e6:g} MB/s per connection, "
        f'xarray with `engine="h5netcdf"`, {"/".join(map(str, counts))} alternating samples '
        "after a warm-up, medians (min-max); GETs and bytes counted at the server; 1-minute "
        f"load average {params['load_average_start'][0]:.1f} at the start, "
        f"{params['load_average_end'][0]:.1f} at the end.",
        "",
        "| file | server | read | archivefs | s3fs defaults | archivefs / s3fs time "
        "| archivefs bytes / needed |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["archivefs"]["rows"]:
        lines.append(
            f"| {row['file_bytes'] / 1e6:.1f} MB | {SERVER_OF.get(row['file'], '?')} "
            f"| {row['pattern']} "
            f"| {row['archivefs_seconds_spread']}, {row['archivefs_GET']:.0f} GETs "
            f"| {row['s3fs_default_seconds_spread']}, {row['s3fs_default_GET']:.0f} GETs "
            f"| {row['time_ratio']:.2f}x | {row['archivefs_amplification']:.2f}x |"
        )

    whole = [r for r in data["archivefs"]["rows"] if r["pattern"].startswith("whole variable")]
    step = [r for r in data["archivefs"]["rows"] if not r["pattern"].startswith("whole variable")]
    worst_time = max(r["time_ratio"] for r in whole)
    worst_bytes = max(r["archivefs_amplification"] for r in step)
    lines += [
        "",
        "Targets (issue 35):",
        f"- a whole variable within {params['time_target']}x s3fs's time, on every file: at "
        f"most {worst_time:.2f}x, {verdict(worst_time <= params['time_target'])};",
        f"- one time step at most {params['bytes_target']}x the bytes it needs: at most "
        f"{worst_bytes:.2f}x, {verdict(worst_bytes <= params['bytes_target'])}.",
    ]
    return {"netcdf-wan": "\n".join(lines)}
