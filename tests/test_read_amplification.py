"""Bytes fetched / bytes needed for typical xarray reads, archivefs vs s3fs defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING

import fsspec.asyn
import numpy as np
import pytest
import s3fs

import archivefs.datasets as ads
from archivefs.filesystem import ArchiveFileSystem
from tests.zarr_data import make_source, upload_zarr

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")


def netcdf_bytes(tmp_path: Path) -> bytes:
    data = np.random.default_rng(1).normal(size=(60, 100, 100)).astype("f4")
    ds = xr.Dataset({"t": (("time", "y", "x"), data)})
    path = tmp_path / "a.nc"
    ds.to_netcdf(path, engine="h5netcdf", encoding={"t": {"chunksizes": (1, 100, 100)}})
    return path.read_bytes()


def amplification(archive: EmulatedArchive, fs: object, path: str, needed: int) -> float:
    archive.requests.clear()
    with fs.open(path) as f:  # type: ignore[attr-defined]
        values = xr.open_dataset(f, engine="h5netcdf")["t"].isel(time=30).values
    assert values.nbytes == needed
    return archive.requests.bytes_sent("GET") / needed


def test_netcdf_one_time_step_reads_far_less_than_s3fs_defaults(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.nc", netcdf_bytes(tmp_path))
    path = f"{bucket}/a.nc"
    ours = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    needed = 100 * 100 * 4
    ours_amp = amplification(archive, ours, path, needed)
    raw_amp = amplification(archive, raw, path, needed)
    # the 64 KiB first block (HDF5 headers) dominates for a 40 kB chunk
    assert ours_amp < 3.0
    assert raw_amp > 50  # s3fs's 50 MiB readahead fetches the whole 2.4 MB file
    assert raw_amp / ours_amp > 20


def test_zarr_selection_fetches_only_the_chunks_it_needs(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    ds = ads.open_zarr(
        url,
        storage_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        restore_time_scale=1 / 3600,
        skip_instance_cache=True,
    )
    selection = ds["t"].isel(time=slice(4, 12))
    ads.prefetch(selection, wait=True, timeout=600)  # chunks are in DEEP_ARCHIVE
    plan = ads.plan_dataset(selection)
    chunk_bytes = sum(g.size for g in plan)
    archive.requests.clear()
    selection.values  # noqa: B018
    assert archive.requests.bytes_sent("GET") / chunk_bytes <= 1.1
    assert archive.requests.count("GET") == len(plan)


def test_measured_amplification_feeds_the_estimate(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.nc", netcdf_bytes(tmp_path))
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(),
        journal=False,
        egress="internet",
        skip_instance_cache=True,
    )
    assert fs.read_stats.amplification is None
    fsspec.asyn.sync(fs.loop, fs.catalogs.catalogs, bucket)  # the one-off catalog lookup
    archive.requests.clear()
    with fs.open(f"{bucket}/a.nc") as f:
        xr.open_dataset(f, engine="h5netcdf")["t"].isel(time=30).values  # noqa: B018
    stats = fs.read_stats
    assert stats.bytes_fetched == archive.requests.bytes_sent("GET")  # counted like the server
    assert stats.requests == archive.requests.count("GET")
    measured = stats.amplification
    assert measured is not None
    assert measured > 1.0
    plan = fs.plan(f"{bucket}/a.nc")
    estimate = fs.estimate_plan(plan)
    assert estimate.bytes_read == int(plan.groups[0].read_bytes * measured)
    assert any("read amplification" in w for w in estimate.warnings)
    exact = fs.estimate_plan(plan, read_amplification=1.0)
    assert exact.components["egress"] < estimate.components["egress"]


def test_netcdf_runs_of_chunks_take_a_few_gets_not_one_per_chunk(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """A whole variable and a point time series read every chunk in order: readahead that
    grows along the run (archivefs.readahead) instead of one GET per chunk (60 chunks)."""
    data = netcdf_bytes(tmp_path)
    archive.put_object(bucket, "a.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)  # the catalog lookup and the file's size, outside the measurement
    for selection in ({}, {"y": 50, "x": 50}):
        archive.requests.clear()
        with fs.open(f"{bucket}/a.nc") as f:
            xr.open_dataset(f, engine="h5netcdf")["t"].isel(**selection).load()
        assert archive.requests.counts() == {"GET": 5}  # "first" cache: 60, one per chunk
        assert archive.requests.bytes_sent("GET") <= len(data) * 1.01
    archive.requests.clear()
    with fs.open(f"{bucket}/a.nc") as f:
        xr.open_dataset(f, engine="h5netcdf")["t"].isel(time=30).load()
    assert archive.requests.bytes_sent("GET") <= 1.5 * (100 * 100 * 4 + 64 * 1024)


def test_a_whole_file_block_reads_a_netcdf_file_in_one_get(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """The docs' advice for a reader who knows it reads a whole file: s3fs's 50 MiB block."""
    data = netcdf_bytes(tmp_path)
    archive.put_object(bucket, "a.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)
    archive.requests.clear()
    with fs.open(f"{bucket}/a.nc", block_size=50 * 2**20) as f:
        loaded = xr.open_dataset(f, engine="h5netcdf")["t"].load()
    assert archive.requests.counts() == {"GET": 1}
    assert archive.requests.bytes_sent("GET") == len(data)
    assert loaded.shape[0] == 60
