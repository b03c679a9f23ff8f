"""A user's script, as issue 47 item 7 ran it: bundled netCDF files opened with
``ads.open_mfdataset`` and summed on a ``LocalCluster`` of 2 worker processes, nothing
closed by hand. Its exit code is the test (tests/test_dataset_exit.py)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import fsspec
import numpy as np
import s3fs
import xarray as xr
from distributed import Client, LocalCluster

import archivefs.datasets as ads
from archivefs.catalog import ByPrefix
from archivefs.catalog.writer import bundle_tree

if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    root, options = config["root"], config["target_options"]
    local = Path(tempfile.mkdtemp()) / "2023"
    (local / "radiometer").mkdir(parents=True)
    for index in range(4):
        ds = xr.Dataset(
            {"tb": (("time", "channel"), np.full((2, 4), float(index), dtype="f4"))},
            coords={"time": [2 * index, 2 * index + 1], "channel": np.arange(4)},
        )
        ds.to_netcdf(local / "radiometer" / f"obs{index}.nc", engine="h5netcdf")
    dest = s3fs.S3FileSystem(skip_instance_cache=True, **options)
    bundle_tree(fsspec.filesystem("file"), str(local), dest, f"{root}/2023",
                policy=ByPrefix(depth=0), storage_class="STANDARD")  # fmt: skip
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    client = Client(cluster)
    fs = ads.ArchiveFileSystem(target_options=options, pickle_credentials=True, journal=False)
    ds = ads.open_mfdataset(f"s3://{root}/2023/radiometer/*.nc", fs=fs, chunks={"time": 2},
                            combine="nested", concat_dim="time")  # fmt: skip
    print(float(client.compute(ds["tb"].sum()).result()), flush=True)
