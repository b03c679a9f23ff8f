"""xarray on the emulated archive: open lazily, plan a selection, prefetch, compute."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import archivefs.datasets as ads
from archivefs import ObjectArchivedError
from archivefs.errors import ArchiveError, ObjectNotFoundError
from tests.zarr_data import make_source, upload_zarr

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

xr = pytest.importorskip("xarray")


@pytest.fixture
def options(archive: EmulatedArchive, tmp_path: Path) -> dict[str, Any]:
    return {
        "storage_options": archive.storage_options(),
        "journal": str(tmp_path / "journal.sqlite"),
        "restore_status_in_listings": True,
        "restore_time_scale": 1 / 3600,
        "skip_instance_cache": True,
    }


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_plan_prefetch_compute(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    options: dict[str, Any],
    zarr_format: int,
) -> None:
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source, zarr_format=zarr_format)
    archive.requests.clear()
    ds = ads.open_zarr(url, **options)
    assert archive.requests.count("RestoreObject") == 0
    assert archive.requests.count("GET", status=403) == 0  # metadata only, all hot
    assert set(ds.data_vars) == {"t", "q"}

    selection = ds["t"].isel(time=slice(5, 11), y=slice(0, 2))
    plan = ads.plan_dataset(selection)
    sep = "/" if zarr_format == 3 else "."
    prefix = f"{bucket}/store.zarr/t/" + ("c/" if zarr_format == 3 else "")
    # time 5..10 -> time chunks 1 and 2; y 0..1 -> y chunk 0; x -> chunk 0
    assert sorted(g.key for g in plan) == [
        f"{prefix}1{sep}0{sep}0",
        f"{prefix}2{sep}0{sep}0",
    ]
    assert {g.action.value for g in plan} == {"restore"}

    with pytest.raises(ObjectArchivedError):
        selection.compute()

    result = ads.prefetch(selection, wait=True, timeout=600)
    assert result.requests_sent == 2
    assert archive.requests.count("RestoreObject") == 2
    np.testing.assert_array_equal(
        selection.values, source["t"].isel(time=slice(5, 11), y=slice(0, 2)).values
    )


def test_plan_follows_arithmetic_and_reductions(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    url = upload_zarr(archive, bucket, tmp_path, make_source())
    ds = ads.open_zarr(url, **options)
    derived = (ds["t"] + ds["q"]).isel(time=0).mean("x")
    keys = sorted(g.key for g in ads.plan_dataset(derived))
    assert keys == [
        f"{bucket}/store.zarr/q/c/0/0/0",
        f"{bucket}/store.zarr/q/c/0/1/0",
        f"{bucket}/store.zarr/t/c/0/0/0",
        f"{bucket}/store.zarr/t/c/0/1/0",
    ]


def test_plan_of_something_not_from_an_archive_is_an_error() -> None:
    with pytest.raises(ads.ArchiveError, match="no lazy chunk reads through an archivefs") as info:
        ads.plan_dataset(make_source()["t"])
    assert "storage_options" in str(info.value)  # the fix names both ways of opening


def test_netcdf_files_are_planned_per_file(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    pytest.importorskip("h5netcdf")
    urls = []
    for part in range(3):
        ds = xr.Dataset(
            {"t": (("time", "x"), np.full((4, 5), float(part), dtype="f4"))},
            coords={"time": np.arange(part * 4, part * 4 + 4)},
        )
        local = tmp_path / f"part{part}.nc"
        ds.to_netcdf(local, engine="h5netcdf")
        archive.put_object(bucket, f"nc/part{part}.nc", local.read_bytes(), storage_class="GLACIER")
        urls.append(f"s3://{bucket}/nc/part{part}.nc")
    opts = dict(options)
    storage = opts.pop("storage_options")
    fs = ads.ArchiveFileSystem(target_options=storage, **opts)
    with pytest.raises(ObjectArchivedError):
        ads.open_dataset(urls[0], fs=fs)  # the header itself is archived
    fs.restore(urls, wait=True, timeout=600)
    combined = ads.open_mfdataset(urls, fs=fs)
    selection = combined["t"].sel(time=slice(5, 9))  # rows of parts 1 and 2
    plan = ads.plan_dataset(selection)
    assert sorted(g.key for g in plan) == [f"{bucket}/nc/part1.nc", f"{bucket}/nc/part2.nc"]
    assert {g.action.value for g in plan} == {"read"}  # restored already: nothing to pay
    assert float(selection.sum()) == 3 * 5 * 1.0 + 2 * 5 * 2.0  # times 5-7 and 8-9


def test_restore_aware_graph_reads_each_chunk_after_its_own_group(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    archive.set_restore_delay(1.0)
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    ds = ads.open_zarr(url, **options)
    selection = ds["t"].isel(time=slice(0, 12))  # 3 time chunks x 2 y chunks = 6 objects
    gated = ads.restore_aware(selection, timeout=600, poll_interval=0.2)
    assert archive.requests.count("RestoreObject") == 6  # submitted once, up front
    graph = dict(gated.data.__dask_graph__())
    ready = [k for k in graph if isinstance(k, tuple) and k[0] == "archivefs-ready"]
    assert len(ready) == 6
    # no distributed client: each ready task polls its own group (no coordinator)
    assert {graph[k].func for k in ready} == {ads._wait_until_readable}
    for key, task in graph.items():  # each chunk read waits for exactly its own group
        if isinstance(key, tuple) and str(key[0]).startswith("open_dataset-t-") and key[1] < 3:
            waits = [
                d for d in task.dependencies if isinstance(d, tuple) and d[0] == "archivefs-ready"
            ]
            assert len(waits) == 1
    np.testing.assert_array_equal(gated.values, source["t"].isel(time=slice(0, 12)).values)
    assert archive.requests.count("RestoreObject") == 6


def test_restore_aware_coordinate_without_a_client_is_a_clear_error(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    url = upload_zarr(archive, bucket, tmp_path, make_source())
    ds = ads.open_zarr(url, **options)
    with pytest.raises(ArchiveError, match="needs a distributed client"):
        ads.restore_aware(ds["t"].isel(time=slice(0, 4)), coordinate=True)
    assert archive.requests.count("RestoreObject") == 0  # refused before submitting


def _netcdf_files(tmp_path: Path, count: int) -> Path:
    """``count`` small netCDF files of 2-4 time steps each, in ``tmp_path/src/radiometer``."""
    pytest.importorskip("h5netcdf")
    folder = tmp_path / "src" / "radiometer"
    folder.mkdir(parents=True)
    start = 0
    for index in range(count):
        steps = 2 + index % 3
        ds = xr.Dataset(
            {"tb": (("time", "channel"), np.full((steps, 4), float(index), dtype="f4"))},
            coords={"time": np.arange(start, start + steps), "channel": np.arange(4)},
        )
        ds.to_netcdf(folder / f"obs{index:03d}.nc", engine="h5netcdf")
        start += steps
    return folder


@pytest.mark.parametrize("referenced", [True, False], ids=["references", "made-before"])
def test_open_mfdataset_of_bundled_files_takes_a_glob_and_chunks_and_sends_no_head(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    options: dict[str, Any],
    referenced: bool,
) -> None:
    import fsspec
    import s3fs

    from archivefs.catalog import ByPrefix
    from archivefs.catalog.writer import bundle_tree

    count = 12
    folder = _netcdf_files(tmp_path, count)
    dest = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    bundle_tree(
        fsspec.filesystem("file"),
        str(folder.parent),
        dest,
        f"{bucket}/2023",
        policy=ByPrefix(depth=0),
        storage_class="DEEP_ARCHIVE",
    )
    if not referenced:  # bundled by an archivefs that made no references: as before
        dest.rm(f"{bucket}/2023/.archivefs/references", recursive=True)
    opts = dict(options)
    fs = ads.ArchiveFileSystem(target_options=opts.pop("storage_options"), **opts)
    fs.restore(f"s3://{bucket}/2023/radiometer/*.nc", wait=True, timeout=600)
    fs = ads.ArchiveFileSystem(target_options=archive.storage_options(), **opts)  # fresh caches
    archive.requests.clear()
    ds = ads.open_mfdataset(
        f"s3://{bucket}/2023/radiometer/*.nc",
        fs=fs,
        chunks={"time": 2},
        combine="nested",
        concat_dim="time",
    )
    expected = sum(float(i) * 4 * (2 + i % 3) for i in range(count))
    if referenced:
        # 3 GETs load the catalog (registry, pointer, file); the bundle run made the 12
        # members' references: one LIST finds them, 12 GETs read them, one LIST of the
        # bundles checks their bundle's size and ETag; no HEAD, no read of the bundle
        assert archive.requests.counts() == {"GET": 15, "LIST": 2}
        bundles = [r for r in archive.requests.records if ".archivefs/bundles/" in (r.key or "")]
        assert bundles == []
        assert ds["tb"].chunks[0][:4] == (2, 2, 1, 2)  # chunks= reaches every file
        archive.requests.clear()
        assert float(ds["tb"].sum()) == expected
        assert archive.requests.counts() == {}  # small variables are inline in the references
        plan = ads.plan_dataset(ds["tb"].isel(time=slice(0, 3)))  # times 0-2: files 0 and 1
        assert len(plan) == 0  # their chunks are inline: nothing to restore or read
        return
    # 3 GETs load the catalog (registry, pointer, file); one LIST finds no stored
    # references; then the 12 members, neighbours in one bundle, come in one ranged GET
    # of exactly their bytes and headers; no HEAD
    assert archive.requests.counts() == {"GET": 4, "LIST": 1}
    ranged = sum(r.bytes_sent for r in archive.requests.records if r.range)
    needed = sum(e["size"] for e in fs.find(f"{bucket}/2023", detail=True).values())
    assert needed <= ranged <= 1.05 * needed  # the members plus the zip headers between them
    assert ds["tb"].chunks[0][:4] == (2, 2, 1, 2)  # chunks= reaches every file (2, 3, 4 steps)
    archive.requests.clear()
    assert float(ds["tb"].sum()) == expected
    assert archive.requests.counts() == {}  # small files were fetched whole, once
    plan = ads.plan_dataset(ds["tb"].isel(time=slice(0, 3)))  # times 0-2: files 0 and 1
    assert sorted(plan.paths) == [f"{bucket}/2023/radiometer/obs00{i}.nc" for i in (0, 1)]
    assert len(plan) == 1  # their bundle, restored already: nothing to pay
    assert {g.action.value for g in plan} == {"read"}


def test_open_mfdataset_of_plain_objects_lists_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    count = 6
    folder = _netcdf_files(tmp_path, count)
    urls = []
    for file in sorted(folder.iterdir()):
        archive.put_object(bucket, f"nc/{file.name}", file.read_bytes())
        urls.append(f"s3://{bucket}/nc/{file.name}")
    opts = dict(options)
    fs = ads.ArchiveFileSystem(target_options=opts.pop("storage_options"), **opts)
    archive.requests.clear()
    ds = ads.open_mfdataset(urls, fs=fs, combine="nested", concat_dim="time")
    # one GET finds no catalog registry in the bucket; one listing; one listing finds no
    # stored references; one GET per file; no HEAD
    assert archive.requests.counts() == {"LIST": 2, "GET": 1 + count}
    assert archive.requests.count("GET", status=404) == 1
    assert float(ds["tb"].isel(time=-1).sum()) == 4 * float(count - 1)
    with pytest.raises(ObjectNotFoundError, match="1 of 2 files do not exist"):
        ads.open_mfdataset([urls[0], urls[0] + "x"], fs=fs)


def test_open_mfdataset_takes_xarrays_parallel_and_opens_the_same_dataset(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    """``parallel=True`` (an ``xarray.open_mfdataset`` option) was passed on to
    ``combine_nested``, which raised TypeError; it opens the files through dask."""
    count = 4
    folder = _netcdf_files(tmp_path, count)
    urls = []
    for file in sorted(folder.iterdir()):
        archive.put_object(bucket, f"nc/{file.name}", file.read_bytes())
        urls.append(f"s3://{bucket}/nc/{file.name}")
    opts = dict(options)
    fs = ads.ArchiveFileSystem(target_options=opts.pop("storage_options"), **opts)
    serial = ads.open_mfdataset(urls, fs=fs, combine="nested", concat_dim="time")
    archive.requests.clear()
    ds = ads.open_mfdataset(urls, fs=fs, combine="nested", concat_dim="time", parallel=True)
    # the lookup of stored references (one LIST, docs/datasets.md); no HEAD; a GET a file
    assert archive.requests.counts() == {"LIST": 1, "GET": count}
    xr.testing.assert_identical(ds.load(), serial.load())


def test_restore_aware_without_a_client_polls_on_the_tier_aware_schedule(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    """DEEP_ARCHIVE Standard is expected back within 12 h, 12 s at this time scale; a
    restore that takes 4 s is polled at the schedule's early times, never once a minute."""
    from archivefs.model import RestoreTier, StorageClass
    from archivefs.restore.schedule import PollSchedule

    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    ds = ads.open_zarr(url, **options)
    selection = ds["t"].isel(time=slice(0, 4), y=slice(0, 4))
    archive.set_restore_delay(4.0)
    gated = ads.restore_aware(selection, timeout=600)
    ready = [k for k in dict(gated.data.__dask_graph__()) if k[0] == "archivefs-ready"]
    groups = [k[1].split("/", 1)[1] for k in ready]
    assert groups
    archive.requests.clear()
    np.testing.assert_array_equal(gated.values, source["t"].isel(time=slice(0, 4), y=slice(0, 4)))
    schedule = PollSchedule.for_restore(
        StorageClass.DEEP_ARCHIVE, RestoreTier.STANDARD, time_scale=1 / 3600
    )
    before_window = [t for t in schedule.poll_times() if t < 3.5]  # restoring still
    assert len(before_window) >= 2
    for key in groups:  # each group's own polls: its HEADs
        polls = archive.requests.count("HEAD", key=key)
        assert len(before_window) + 1 <= polls <= schedule.max_polls + 1, (key, polls)
