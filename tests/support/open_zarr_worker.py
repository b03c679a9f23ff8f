"""A separate process that writes a small zarr through the store's own fsspec class, opens
it with xarray through archivefs and sums it, then exits: what it prints to stderr at
interpreter exit is the test (tests/test_clean_exit.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import fsspec
import numpy as np
import xarray as xr


def main() -> None:
    config = json.loads(sys.argv[1])
    protocol, root = config["protocol"], config["root"]
    raw = fsspec.filesystem(protocol, skip_instance_cache=True, **config["target_options"])
    local = Path(config["local"])
    source = xr.Dataset({"v": ("t", np.arange(8.0))}).chunk({"t": 4})
    source.to_zarr(local, mode="w", zarr_format=3, consolidated=False)
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        raw.pipe(f"{root}/d.zarr/{file.relative_to(local).as_posix()}", file.read_bytes())
    fs = fsspec.filesystem("archive", **config["archive_options"])
    # zarr re-creates the filesystem with asynchronous=True on its own loop
    print(float(xr.open_zarr(fs.get_mapper(f"{root}/d.zarr"), consolidated=False).v.sum()))


if __name__ == "__main__":
    main()
