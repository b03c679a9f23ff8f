"""A small zarr dataset uploaded to the emulated archive: chunks cold, metadata hot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import (
        EmulatedArchive,
        EmulatedAzureArchive,
        EmulatedGcsArchive,
        EmulatedOracleArchive,
    )

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


def upload_zarr_gcs(
    archive: EmulatedGcsArchive, bucket: str, tmp_path: Path, ds: Any, *, chunks: str
) -> str:
    """The same store on the emulated GCS server: chunks in ``chunks`` (e.g. COLDLINE),
    metadata and coordinates in STANDARD."""
    local = tmp_path / "src.zarr"
    ds.to_zarr(local, mode="w", consolidated=False, zarr_format=3)
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        is_coord = rel.split("/")[0] in ("time", "x", "y")
        klass = "STANDARD" if file.name in METADATA or is_coord else chunks
        archive.put_object(bucket, f"store.zarr/{rel}", file.read_bytes(), storage_class=klass)
    return f"gs://{bucket}/store.zarr"


def upload_zarr_oracle(archive: EmulatedOracleArchive, bucket: str, tmp_path: Path, ds: Any) -> str:
    """The same store on the emulated Oracle archive: chunks in Archive, metadata Standard."""
    local = tmp_path / "src.zarr"
    ds.to_zarr(local, mode="w", consolidated=False, zarr_format=3)
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        is_coord = rel.split("/")[0] in ("time", "x", "y")
        tier = "Standard" if file.name in METADATA or is_coord else "Archive"
        archive.put_object(bucket, f"store.zarr/{rel}", file.read_bytes(), tier=tier)
    return f"oci://{bucket}/store.zarr"
