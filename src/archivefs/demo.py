"""``archivefs demo``: the whole story on an emulated archive, no cloud account needed.

It starts the in-process emulated archive (moto's S3 server plus the
``archivefs.testing`` shim), writes a small real zarr dataset whose chunks sit
in DEEP_ARCHIVE (metadata stays in STANDARD, as bundling would keep it), and
then does what a scientist would: list with states, open lazily, meet the
archived-data error, estimate, batch-restore with a progress bar, compute, and
print what was requested, read and what it would cost on AWS.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.model import Plan
    from archivefs.testing import EmulatedArchive

BUCKET = "archivefs-demo"
STORE = "climate/daily.zarr"
STATIONS_ROOT = "climate/stations"
STATIONS = 5


def _say(quiet: bool, text: str = "") -> None:
    if not quiet:
        print(text, flush=True)


def make_dataset() -> Any:
    """A small but real dataset: two variables, 365 days, 292 chunks."""
    import numpy as np
    import pandas as pd  # type: ignore[import-untyped]
    import xarray as xr

    rng = np.random.default_rng(42)
    time_index = pd.date_range("2023-01-01", periods=365, freq="D")
    lat = np.linspace(-87.5, 87.5, 36)
    lon = np.linspace(0, 355, 72)
    seasonal = 10 * np.sin(2 * np.pi * np.arange(365) / 365)[:, None, None]
    t2m = (15 + seasonal + rng.normal(0, 2, (365, 36, 72))).astype("float32")
    precip = rng.gamma(2.0, 1.5, (365, 36, 72)).astype("float32")
    ds = xr.Dataset(
        {"t2m": (("time", "lat", "lon"), t2m), "precip": (("time", "lat", "lon"), precip)},
        coords={"time": time_index, "lat": lat, "lon": lon},
    )
    return ds.chunk({"time": 5, "lat": 18, "lon": 72})


def seed_archive(archive: EmulatedArchive, workdir: Path, ds: Any) -> tuple[int, int, int]:
    """Write the dataset as zarr and bundle it into DEEP_ARCHIVE, 10 days of chunks a bundle.

    Metadata and the coordinate arrays stay hot, so the dataset opens at once.
    """
    import fsspec
    import s3fs

    from archivefs.catalog import ByChunkNeighbourhood, ByPrefix
    from archivefs.catalog.writer import bundle_tree

    local = workdir / "daily.zarr"
    ds.to_zarr(local, mode="w", consolidated=False)
    archive.create_bucket(BUCKET)
    dest = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    report = bundle_tree(
        fsspec.filesystem("file"),
        str(local),
        dest,
        f"{BUCKET}/{STORE}",
        policy=ByChunkNeighbourhood(
            dim_index=0, window=2, hot_arrays=frozenset({"time", "lat", "lon"})
        ),
        storage_class="DEEP_ARCHIVE",
    )
    stations = workdir / "stations"
    stations.mkdir()
    for i in range(STATIONS):
        station = ds["t2m"].isel(lat=i * 7, lon=i * 11).to_dataset(name="t2m").load()
        station.to_netcdf(stations / f"station{i}.nc", engine="h5netcdf")
    bundle_tree(
        fsspec.filesystem("file"),
        str(stations),
        dest,
        f"{BUCKET}/{STATIONS_ROOT}",
        policy=ByPrefix(depth=0),
        storage_class="DEEP_ARCHIVE",
    )
    return len(report.kept_hot), report.members, len(report.bundles_written)


def run_demo(*, delay: float = 3.0, keep: bool = False, quiet: bool = False) -> dict[str, Any]:
    """Run the demo; return its summary numbers."""
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive

    workdir = Path(tempfile.mkdtemp(prefix="archivefs-demo-"))
    workdir.chmod(0o700)
    started = time.monotonic()
    archive = EmulatedArchive(restore_delay=delay, seconds_per_day=3600.0).start()
    try:
        _say(quiet, "archivefs demo: an emulated S3 archive on this machine (no cloud account)")
        ds = make_dataset()
        n_hot, n_members, n_bundles = seed_archive(archive, workdir, ds)
        _say(
            quiet,
            f"  wrote s3://{BUCKET}/{STORE}: {n_members} chunks packed into {n_bundles} bundles "
            f"in DEEP_ARCHIVE (10 days each); {n_hot} metadata/coordinate objects stay STANDARD",
        )
        fs = ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(workdir / "journal.sqlite"),
            restore_time_scale=delay / (12 * 3600),  # Deep Archive Standard: "within 12 h"
            skip_instance_cache=True,
        )
        return _story(fs, archive, ds, quiet=quiet, started=started)
    finally:
        archive.stop()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            _say(quiet, f"  kept {workdir}")


def _story(
    fs: ArchiveFileSystem, archive: EmulatedArchive, ds: Any, *, quiet: bool, started: float
) -> dict[str, Any]:
    import archivefs.datasets as ads
    from archivefs.errors import ObjectArchivedError

    store = f"{BUCKET}/{STORE}"
    _say(quiet, "\n1. listing comes from the catalog, with class and state (no LIST, no HEAD):")
    archive.requests.clear()
    entries = list(fs.find(f"{store}/t2m", detail=True).values())
    for entry in entries[:3]:
        _say(quiet, f"     {entry['name']:<48} {entry['storage_class']:<13} {entry['restore']}")
    _say(quiet, f"     ... {len(entries)} objects; requests: {archive.requests.counts()}")

    _say(quiet, "\n2. open the dataset lazily: metadata and coordinates are hot, nothing restored")
    opened = ads.open_zarr(f"s3://{store}", fs=fs)
    _say(quiet, f"     variables {sorted(opened.data_vars)}, dims {dict(opened.sizes)}")

    _say(quiet, "\n3. computing on archived chunks raises a clear error (never fill values):")
    summer = opened["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))
    try:
        summer.isel(time=0).values  # noqa: B018
    except ObjectArchivedError as error:
        _say(quiet, "     ObjectArchivedError: " + str(error)[:240] + " ...")

    plan = ads.plan_dataset(summer)
    members = len(plan.paths)
    _say(
        quiet,
        f"\n4. plan for June-August of t2m: {members} chunks in {len(plan)} bundles, "
        f"{len(plan.to_restore)} restore requests",
    )
    cost = _estimate(plan, quiet)

    _say(quiet, "\n5. batch restore, polled in bulk, progress as bundles come back:")
    archive.requests.clear()
    ready = _restore_with_progress(fs, plan, quiet)
    restore_requests = archive.requests.count("RestoreObject")

    _say(quiet, "\n6. compute on the restored data:")
    archive.requests.clear()
    mean = float(summer.mean().compute())
    expected = float(ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31")).mean().compute())
    bytes_read = archive.requests.bytes_sent("GET")
    needed = sum(g.read_bytes for g in plan)
    _say(quiet, f"     mean summer 2 m temperature: {mean:.4f} (source: {expected:.4f})")
    if abs(mean - expected) > 1e-4:
        raise RuntimeError(f"demo: computed mean {mean} differs from the source {expected}")

    _say(quiet, f"\n7. {STATIONS} netCDF station files in one bundle: restore, open, compute")
    archive.requests.clear()
    urls = [f"s3://{BUCKET}/{STATIONS_ROOT}/station{i}.nc" for i in range(STATIONS)]
    fs.restore(urls, wait=True, timeout=600)
    netcdf_requests = archive.requests.count("RestoreObject")
    stations = ads.open_mfdataset(urls, fs=fs, combine="nested", concat_dim="station")
    station_mean = float(stations["t2m"].mean().compute())
    source_mean = (
        sum(float(ds["t2m"].isel(lat=i * 7, lon=i * 11).mean().compute()) for i in range(STATIONS))
        / STATIONS
    )
    _say(
        quiet,
        f"     {netcdf_requests} restore request; mean over stations {station_mean:.4f} "
        f"(source: {source_mean:.4f})",
    )
    if abs(station_mean - source_mean) > 1e-4:
        raise RuntimeError(f"demo: station mean {station_mean} differs from {source_mean}")

    summary = {
        "netcdf_files": STATIONS,
        "netcdf_restore_requests": netcdf_requests,
        "objects": members,
        "groups": len(plan),
        "restore_requests": restore_requests,
        "groups_ready": ready,
        "bytes_read": bytes_read,
        "bytes_needed": needed,
        "estimated_cost_usd": cost,
        "seconds": round(time.monotonic() - started, 1),
    }
    _say(quiet, "\nsummary:")
    _say(quiet, f"  archived chunks needed ......... {members}")
    _say(quiet, f"  restore requests issued ........ {restore_requests} (one per bundle)")
    _say(
        quiet,
        f"  bytes read / needed ............ {bytes_read} / {needed} "
        f"(amplification {bytes_read / max(needed, 1):.2f})",
    )
    if cost is not None:
        _say(quiet, f"  same run on AWS (us-east-1) .... ${cost:.4f}")
    _say(quiet, f"  wall time ...................... {summary['seconds']} s")
    return summary


def _estimate(plan: Plan, quiet: bool) -> float | None:
    from archivefs.pricing import estimate, load_price_sheet

    result = estimate(plan, load_price_sheet("aws-us-east-1"), days=1, egress="internet")
    for name, dollars in result.components.items():
        _say(quiet, f"     {name:<24} ${dollars:.6f}")
    lo, hi = result.restore_hours
    _say(quiet, f"     total ${result.total:.6f}; restore wait on AWS {lo:g}-{hi:g} h")
    return float(result.total)


def _restore_with_progress(fs: ArchiveFileSystem, plan: Plan, quiet: bool) -> int:
    total = len(plan)
    use_bar = not quiet and sys.stderr.isatty()
    bar: Any = None
    if use_bar:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="group", desc="restored")
    report = fs.submit(plan)
    _say(quiet, f"     {report.requests_sent} restore requests sent")
    done = 0
    last = time.monotonic()
    for _group in fs.as_ready(plan, timeout=600):
        done += 1
        if bar is not None:
            bar.update(1)
        elif time.monotonic() - last > 1 or done == total:
            _say(quiet, f"     {done}/{total} groups readable")
            last = time.monotonic()
    if bar is not None:
        bar.close()
    return done
