"""Read amplification (bytes fetched / needed) of xarray reads: archivefs vs s3fs defaults."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import Result

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": (24, 50), "default": (120, 200), "full": (365, 400)}


def run(archive: EmulatedArchive, size: str) -> Result:
    import numpy as np
    import s3fs
    import xarray as xr

    from archivefs.filesystem import ArchiveFileSystem

    steps, side = SIZES[size]
    bucket = "amplification"
    archive.create_bucket(bucket)
    data = np.random.default_rng(0).normal(size=(steps, side, side)).astype("f4")
    ds = xr.Dataset({"t": (("time", "y", "x"), data)})
    with tempfile.TemporaryDirectory() as tmp:
        nc = Path(tmp) / "a.nc"
        ds.to_netcdf(nc, engine="h5netcdf", encoding={"t": {"chunksizes": (1, side, side)}})
        archive.put_object(bucket, "a.nc", nc.read_bytes())
        store = Path(tmp) / "a.zarr"
        ds.chunk({"time": 1, "y": side // 2, "x": side // 2}).to_zarr(store, consolidated=False)
        archive.put_objects(
            bucket,
            {
                f"a.zarr/{p.relative_to(store).as_posix()}": p.read_bytes()
                for p in store.rglob("*")
                if p.is_file()
            },
        )
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    ours = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    ours.ls(bucket)  # the one-off catalog lookup, outside the measurement
    patterns: dict[str, Any] = {
        "one time step": {"time": steps // 2},
        "box over many steps": {
            "time": slice(0, steps // 2),
            "y": slice(0, side // 4),
            "x": slice(0, side // 4),
        },
        "full variable": {},
    }
    rows = []
    for pattern, selection in patterns.items():
        needed = int(ds["t"].isel(**selection).nbytes)
        for fmt in ("netCDF", "zarr"):
            row: dict[str, Any] = {"pattern": pattern, "format": fmt, "bytes_needed": needed}
            for name, fs in (("s3fs", raw), ("archivefs", ours)):
                archive.requests.clear()
                if fmt == "netCDF":
                    with fs.open(f"{bucket}/a.nc") as f:
                        xr.open_dataset(f, engine="h5netcdf")["t"].isel(**selection).load()
                else:
                    opened = xr.open_zarr(fs.get_mapper(f"{bucket}/a.zarr"), consolidated=False)
                    opened["t"].isel(**selection).load()
                fetched = archive.requests.bytes_sent("GET")
                row[f"{name}_requests"] = archive.requests.count("GET")
                row[f"{name}_amplification"] = fetched / needed
            rows.append(row)
    worst = max(r["archivefs_amplification"] for r in rows if r["format"] == "zarr")
    one = next(r for r in rows if r["format"] == "netCDF" and r["pattern"] == "one time step")
    headline = (
        f"zarr: archivefs <= {worst:.2f}x (metadata included); netCDF one time step: archivefs "
        f"{one['archivefs_amplification']:.1f}x vs s3fs defaults {one['s3fs_amplification']:.0f}x; "
        "full table in the JSON"
    )
    return Result(
        name="read_amplification",
        question="Read amplification of xarray reads",
        parameters={"steps": steps, "side": side},
        archivefs={"rows": rows},
        baseline={},
        baseline_name="s3fs with its defaults (50 MiB readahead blocks)",
        headline=headline,
    )
