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
    from archivefs.plans import Plan
    from archivefs.testing import EmulatedArchive

BUCKET = "archivefs-demo"
STORE = "climate/daily.zarr"
STATIONS_ROOT = "climate/stations"
STATIONS = 5


def _say(quiet: bool, text: str = "") -> None:
    if not quiet:
        print(text, flush=True)


def make_dataset() -> Any:
    """A small, physically plausible daily dataset: 365 days on a 5-degree grid, 292 chunks.

    ``t2m`` (K) has a warm equator, cold poles and a seasonal cycle whose
    amplitude grows with latitude, opposite in the two hemispheres and larger
    in the north, so the area-weighted global mean peaks in July;
    ``precip`` (mm/day) is highest in the tropics.
    Coordinates carry CF units.

    Example::

        ds = make_dataset()
        ds["t2m"].attrs["units"]          # 'K'
    """
    import numpy as np
    import pandas as pd  # type: ignore[import-untyped]
    import xarray as xr

    rng = np.random.default_rng(42)
    time_index = pd.date_range("2023-01-01", periods=365, freq="D")
    lat = np.linspace(-87.5, 87.5, 36)
    lon = np.linspace(0, 355, 72)
    phi = np.deg2rad(lat)[None, :, None]
    day = np.arange(365)[:, None, None]
    annual = 305.0 - 50.0 * np.sin(phi) ** 2  # 305 K at the equator, 255 K at the poles
    # the seasonal cycle: opposite in the two hemispheres, larger in the north (more land),
    # so the global mean peaks in July as Earth's does; coldest in mid-January in the north
    amplitude = np.where(phi > 0, 15.0, 8.0) * np.sin(phi)
    season = -amplitude * np.cos(2 * np.pi * (day - 15) / 365)
    zonal = 2.0 * np.cos(np.deg2rad(lon))[None, None, :] * np.cos(phi)
    t2m = (annual + season + zonal + rng.normal(0, 1.5, (365, 36, 72))).astype("float32")
    wet = 1.0 + 5.0 * np.exp(-((lat / 15.0) ** 2))[None, :, None]
    precip = (wet * rng.gamma(2.0, 0.5, (365, 36, 72))).astype("float32")
    ds = xr.Dataset(
        {
            "t2m": (
                ("time", "lat", "lon"),
                t2m,
                {"units": "K", "long_name": "2 m air temperature"},
            ),
            "precip": (
                ("time", "lat", "lon"),
                precip,
                {"units": "mm day-1", "long_name": "precipitation"},
            ),
        },
        coords={
            "time": ("time", time_index, {"long_name": "time"}),
            "lat": ("lat", lat, {"units": "degrees_north", "long_name": "latitude"}),
            "lon": ("lon", lon, {"units": "degrees_east", "long_name": "longitude"}),
        },
    )
    return ds.chunk({"time": 5, "lat": 18, "lon": 72})


def area_mean(da: Any) -> Any:
    """The area-weighted mean over latitude and longitude (weights ``cos(lat)``), and time.

    Example::

        area_mean(ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31")))   # K
    """
    import numpy as np

    weights = np.cos(np.deg2rad(da["lat"]))
    return da.weighted(weights).mean()


def seed_archive(archive: EmulatedArchive, workdir: Path, ds: Any) -> tuple[int, int, int]:
    """Write the dataset as zarr and bundle it into DEEP_ARCHIVE, 10 days of chunks a bundle.

    Metadata and the coordinate arrays stay hot, so the dataset opens at once.
    Bundles and catalogs are made in a local staging directory laid out like
    the bucket, then uploaded concurrently, one PUT each. Returns (objects kept
    hot, chunks bundled, bundles).

    Example::

        with EmulatedArchive() as archive:
            seed_archive(archive, Path(tempfile.mkdtemp()), make_dataset())   # (9, 292, 74)
    """
    import fsspec
    from fsspec.implementations.dirfs import DirFileSystem

    from archivefs.catalog import ByChunkNeighbourhood, ByPrefix
    from archivefs.catalog.writer import bundle_tree

    local = workdir / "daily.zarr"
    chunks = {name: var.data.chunksize for name, var in ds.data_vars.items()}
    ds.compute().to_zarr(  # from memory: no Dask graph for a few MB
        local,
        mode="w",
        consolidated=False,
        encoding={name: {"chunks": size} for name, size in chunks.items()},
    )
    stations = workdir / "stations"
    stations.mkdir()
    for i in range(STATIONS):
        station = ds["t2m"].isel(lat=_station_lat(i), lon=i * 11).to_dataset(name="t2m").load()
        station.to_netcdf(stations / f"station{i}.nc", engine="h5netcdf")
    stage = workdir / "stage"
    stage.mkdir()
    files = fsspec.filesystem("file")
    staged = DirFileSystem(path=str(stage), fs=fsspec.filesystem("file", auto_mkdir=True))
    report = bundle_tree(
        files,
        str(local),
        staged,
        f"{BUCKET}/{STORE}",
        policy=ByChunkNeighbourhood(
            dim_index=0, window=2, hot_arrays=frozenset({"time", "lat", "lon"})
        ),
        storage_class="DEEP_ARCHIVE",
    )
    bundle_tree(
        files,
        str(stations),
        staged,
        f"{BUCKET}/{STATIONS_ROOT}",
        policy=ByPrefix(depth=0),
        storage_class="DEEP_ARCHIVE",
    )
    archive.create_bucket(BUCKET)
    _upload(archive, stage)
    return len(report.kept_hot), report.members, len(report.bundles_written)


def _station_lat(i: int) -> int:
    return 4 + i * 7  # latitude index: from the far south to the far north


def _upload(archive: EmulatedArchive, stage: Path) -> None:
    """Store a staged bucket tree in the archive: bundles in DEEP_ARCHIVE, the rest STANDARD.

    Straight into the emulator's backend (``put_objects``): seeding is the
    set-up, not part of the story, and costs no HTTP request.
    """
    from archivefs.catalog import layout

    by_class: dict[str, dict[str, bytes]] = {"DEEP_ARCHIVE": {}, "STANDARD": {}}
    for file in sorted(p for p in stage.rglob("*") if p.is_file()):
        key = file.relative_to(stage).as_posix()
        bundle = f"/{layout.RESERVED}/bundles/" in f"/{key}"
        bucket, name = key.split("/", 1)
        if bucket != BUCKET:
            raise RuntimeError(f"demo: staged {key!r} outside the bucket {BUCKET!r}")
        by_class["DEEP_ARCHIVE" if bundle else "STANDARD"][name] = file.read_bytes()
    for klass, objects in by_class.items():
        archive.put_objects(BUCKET, objects, storage_class=klass)


def run_demo(*, delay: float = 3.0, keep: bool = False, quiet: bool = False) -> dict[str, Any]:
    """Run the demo; return its summary numbers (``seconds`` is its measured wall time).

    Example::

        run_demo(delay=1.0, quiet=True)["restore_requests"]   # 11: one per bundle
    """
    import dask
    import dask.threaded

    # the local threaded scheduler, named as a function: dask then never imports
    # `distributed` to look for a cluster (about a second of start-up)
    with dask.config.set(scheduler=dask.threaded.get):
        return _run(delay=delay, keep=keep, quiet=quiet)


def _run(*, delay: float, keep: bool, quiet: bool) -> dict[str, Any]:
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
        seeded = time.monotonic() - started
        _say(
            quiet,
            f"  wrote s3://{BUCKET}/{STORE}: {n_members} chunks packed into {n_bundles} bundles "
            f"in DEEP_ARCHIVE (10 days each); {n_hot} metadata/coordinate objects stay STANDARD "
            f"(seeded in {seeded:.1f} s)",
        )
        fs = ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(workdir / "journal.sqlite"),
            restore_time_scale=delay / (12 * 3600),  # Deep Archive Standard: "within 12 h"
            restore_status_in_listings=True,  # the emulated archive's listings say it, as AWS's
            skip_instance_cache=True,
        )
        summary = _story(fs, archive, ds, quiet=quiet, started=started)
        summary["seed_seconds"] = round(seeded, 1)
        return summary
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
    from archivefs.pricing.amounts import format_amount

    store = f"{BUCKET}/{STORE}"
    _say(
        quiet,
        "\n1. listing comes from the catalog (registry, pointer, shard: 3 GETs), with class "
        "and state (the bundles' states: one LIST; no HEAD, nothing per chunk):",
    )
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
    archived_error = ""
    try:
        summer.isel(time=0).values  # noqa: B018
    except ObjectArchivedError as error:
        archived_error = str(error)
        _say(quiet, _indent("ObjectArchivedError: " + archived_error))

    plan = ads.plan_dataset(summer)
    members = len(plan.paths)
    _say(
        quiet,
        f"\n4. plan for June-August of t2m: {members} chunks in {len(plan)} bundles, "
        f"{len(plan.to_restore)} restore requests",
    )
    cost = _estimate(plan, quiet)

    urls = [f"s3://{BUCKET}/{STATIONS_ROOT}/station{i}.nc" for i in range(STATIONS)]
    _say(
        quiet,
        f"\n5. one batch: the summer's {len(plan)} bundles and the bundle of {STATIONS} netCDF "
        "station files, polled in bulk, progress as bundles come back:",
    )
    archive.requests.clear()
    batch = fs.plan([*plan.paths, *urls])
    ready = _restore_with_progress(fs, batch, quiet)
    restore_requests = archive.requests.count("RestoreObject")
    netcdf_groups = len(batch) - len(plan)

    _say(quiet, "\n6. compute on the restored data: the area-weighted (cos lat) mean")
    archive.requests.clear()
    mean = float(area_mean(summer).compute())
    expected = float(area_mean(ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))).compute())
    bytes_read = archive.requests.bytes_sent("GET")
    needed = sum(g.read_bytes for g in plan)
    _say(
        quiet,
        f"     June-August global mean 2 m temperature: {mean:.3f} K (source: {expected:.3f} K)",
    )
    if abs(mean - expected) > 1e-3:
        raise RuntimeError(f"demo: computed mean {mean} differs from the source {expected}")

    _say(quiet, f"\n7. the {STATIONS} netCDF station files (restored in step 5): open, compute")
    stations = ads.open_mfdataset(urls, fs=fs, combine="nested", concat_dim="station")
    station_mean = float(stations["t2m"].mean().compute())
    source_mean = (
        sum(
            float(ds["t2m"].isel(lat=_station_lat(i), lon=i * 11).mean().compute())
            for i in range(STATIONS)
        )
        / STATIONS
    )
    _say(
        quiet, f"     annual mean over stations {station_mean:.3f} K (source: {source_mean:.3f} K)"
    )
    if abs(station_mean - source_mean) > 1e-3:
        raise RuntimeError(f"demo: station mean {station_mean} differs from {source_mean}")

    summary = {
        "netcdf_files": STATIONS,
        "netcdf_groups": netcdf_groups,
        "objects": members,
        "groups": len(plan),
        "restore_requests": restore_requests,
        "groups_ready": ready,
        "bytes_read": bytes_read,
        "bytes_needed": needed,
        "estimated_cost_usd": cost,
        "summer_mean_k": round(mean, 3),
        "station_mean_k": round(station_mean, 3),
        "archived_error": archived_error,
        "seconds": round(time.monotonic() - started, 1),
    }
    _say(quiet, "\nsummary:")
    _say(quiet, f"  archived chunks needed ......... {members} (in {len(plan)} bundles)")
    _say(
        quiet,
        f"  restore requests issued ........ {restore_requests} (one per bundle: "
        f"{len(plan)} + {netcdf_groups} for the station files)",
    )
    _say(
        quiet,
        f"  bytes read / needed ............ {bytes_read} / {needed} "
        f"(amplification {bytes_read / max(needed, 1):.2f})",
    )
    if cost is not None:
        _say(quiet, f"  summer chunks on AWS (us-east-1) {format_amount(cost, 'USD')}")
    _say(quiet, f"  wall time ...................... {summary['seconds']} s")
    return summary


def _indent(text: str, width: int = 96) -> str:
    """A long message wrapped and indented, every word of it kept (the Fix: line too)."""
    import textwrap

    problem, _, fix = text.partition(" Fix: ")
    lines = textwrap.wrap(problem, width - 5, break_on_hyphens=False, break_long_words=False)
    if fix:
        lines += textwrap.wrap(
            "Fix: " + fix, width - 5, break_on_hyphens=False, break_long_words=False
        )
    return "\n".join("     " + line for line in lines)


def _estimate(plan: Plan, quiet: bool) -> float | None:
    from archivefs.pricing import estimate, load_price_sheet
    from archivefs.pricing.amounts import format_amount

    result = estimate(plan, load_price_sheet("aws-us-east-1"), days=1, egress="internet")
    for name, dollars in result.components.items():
        _say(quiet, f"     {name:<24} {format_amount(dollars, 'USD')}")
    lo, hi = result.restore_hours
    total = format_amount(result.total, "USD")
    _say(quiet, f"     total {total}; restore wait on AWS {lo:g}-{hi:g} h")
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
