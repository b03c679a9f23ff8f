"""A separate process that opens netCDF files with ``ads.open_mfdataset``, sums them, and
exits with the dataset still alive and never freed (as a Dask client's state or a
reference cycle can leave it): its exit code is the test (tests/test_dataset_exit.py).

An HDF5 file still open at exit is closed by HDF5's C exit handler after Python has
finalised, which crashed the process (exit 139) before archivefs closed its files first.
"""

from __future__ import annotations

import ctypes
import io
import json
import pickle
import sys

import numpy as np
import s3fs
import xarray as xr

import archivefs.datasets as ads


def main() -> None:
    config = json.loads(sys.argv[1])
    root = config["root"]
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **config["target_options"])
    for index in range(3):
        ds = xr.Dataset({"tb": ("time", np.full(2, float(index), dtype="f4"))},
                        coords={"time": [2 * index, 2 * index + 1]})  # fmt: skip
        buffer = io.BytesIO()
        ds.to_netcdf(buffer, engine="h5netcdf")
        raw.pipe(f"{root}/nc/obs{index}.nc", buffer.getvalue())
    fs = ads.ArchiveFileSystem(
        target_options=config["target_options"], journal=False, skip_instance_cache=True
    )
    combined = ads.open_mfdataset(
        f"s3://{root}/nc/*.nc", fs=fs, chunks={}, combine="nested", concat_dim="time",
        read_whole_below=config["read_whole_below"],
    )  # fmt: skip
    print(float(combined["tb"].sum()), flush=True)
    kept = combined
    if config["copy"]:  # a copy made by unpickling, as a LocalCluster's scheduler makes
        kept = pickle.loads(pickle.dumps(combined))  # opens each file again
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(kept))  # alive until the very end


if __name__ == "__main__":
    main()
