"""netCDF4 files for the reference tests: chunked, compressed, encoded, with coordinates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

STEPS = 8  # time steps per file
CHUNK_ROWS = 2  # time steps per chunk of "t"


def write_netcdf(path: Path, *, start: int = 0, steps: int = STEPS, x: int = 5) -> Any:
    """A netCDF4 file of ``steps`` time steps from ``start``; returns its dataset.

    ``t``: float32 in compressed chunks of :data:`CHUNK_ROWS` rows, a fill value;
    ``q``: int16 packed with scale/offset (contiguous); ``time``, ``lat``: coordinates."""
    import xarray as xr

    ds = xr.Dataset(
        {
            "t": (("time", "x"), np.arange(steps * x, dtype="f4").reshape(steps, x) + start),
            "q": (("time", "x"), np.linspace(0, 1, steps * x).reshape(steps, x)),
        },
        coords={"time": np.arange(start, start + steps), "lat": ("x", np.linspace(-2, 2, x))},
        attrs={"title": "test"},
    )
    ds["t"].encoding.update(chunksizes=(CHUNK_ROWS, x), zlib=True, _FillValue=-999.0)
    ds["q"].encoding.update(dtype="i2", scale_factor=0.001, add_offset=0.5, _FillValue=-1)
    ds.to_netcdf(path, engine="h5netcdf")
    return ds


def bundle_netcdf(
    archive: Any,
    bucket: str,
    tmp_path: Path,
    files: int,
    storage_class: str,
    extra: dict[str, bytes] | None = None,
) -> Any:
    """``files`` netCDF4 files (``nc/part<i>.nc``, chunks too large to be inline), and
    ``extra`` files by name in ``nc/``, written under ``tmp_path/src`` and bundled into
    ``bucket/root`` in ``storage_class`` by the bundle run (which references the netCDF
    ones); its report."""
    import fsspec
    import s3fs

    from archivefs.catalog import ByPrefix
    from archivefs.catalog.writer import bundle_tree

    source = tmp_path / "src" / "nc"
    source.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        write_netcdf(source / f"part{i}.nc", start=i * STEPS, x=500)
    for name, data in (extra or {}).items():
        (source / name).write_bytes(data)
    dest = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    return bundle_tree(
        fsspec.filesystem("file"),
        str(tmp_path / "src"),
        dest,
        f"{bucket}/root",
        policy=ByPrefix(depth=0),
        storage_class=storage_class,
    )
