"""A small zarr dataset uploaded to the emulated archive: chunks cold, metadata hot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from tests.support.providers import seed

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import (
        EmulatedArchive,
        EmulatedAzureArchive,
    )
    from tests.support.providers import Provider

METADATA = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}


def make_source() -> Any:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(40, 6, 8)).astype("float32")
    return xr.Dataset(
        {"t": (("time", "y", "x"), data), "q": (("time", "y", "x"), data * 2)},
        coords={"time": np.arange(40), "y": np.arange(6), "x": np.arange(8)},
    ).chunk({"time": 4, "y": 3, "x": 8})


def upload_zarr(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, ds: Any, *, zarr_format: int = 3
) -> str:
    local = tmp_path / "src.zarr"
    ds.to_zarr(local, mode="w", consolidated=False, zarr_format=zarr_format)
    hot, cold = {}, {}
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        is_coord = rel.split("/")[0] in ("time", "x", "y")
        (hot if file.name in METADATA or is_coord else cold)[f"store.zarr/{rel}"] = (
            file.read_bytes()
        )
    archive.put_objects(bucket, hot)
    archive.put_objects(bucket, cold, storage_class="DEEP_ARCHIVE")
    return f"s3://{bucket}/store.zarr"


def upload_zarr_azure(
    archive: EmulatedAzureArchive, container: str, tmp_path: Path, ds: Any
) -> str:
    """The same store on the emulated Azure archive: chunks in Archive, metadata Hot."""
    local = tmp_path / "src.zarr"
    ds.to_zarr(local, mode="w", consolidated=False, zarr_format=3)
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        is_coord = rel.split("/")[0] in ("time", "x", "y")
        tier = "Hot" if file.name in METADATA or is_coord else "Archive"
        archive.put_blob(container, f"store.zarr/{rel}", file.read_bytes(), tier=tier)
    return f"az://{container}/store.zarr"


def upload_zarr_to(
    provider: Provider, tmp_path: Path, ds: Any, *, chunks: str | None = None
) -> str:
    """The same store on ``provider``: chunks in ``chunks`` (by default its class that
    needs a restore, or else its fee-charging one), metadata and coordinates hot."""
    local = tmp_path / "src.zarr"
    ds.to_zarr(local, mode="w", consolidated=False, zarr_format=3)
    hot, cold = {}, {}
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        is_coord = rel.split("/")[0] in ("time", "x", "y")
        (hot if file.name in METADATA or is_coord else cold)[f"store.zarr/{rel}"] = (
            file.read_bytes()
        )
    seed(provider, hot, provider.spec.hot_class)
    seed(provider, cold, chunks or provider.spec.chunk_class)
    return f"{provider.spec.protocol}://{provider.bucket}/store.zarr"
