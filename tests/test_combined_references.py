"""A collection of archived netCDF4 files whose references are combined into one set.

``index_files(..., concat_dim=)`` / ``archivefs index --concat-dim`` combine the files'
references with kerchunk; ``open_mfdataset`` of exactly those files then opens one
dataset from one GET of the combined set, counted at the server on every provider,
and plans, reads and refuses changed objects as the files' own references do.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import fsspec
import numpy as np
import pytest
from click.testing import CliRunner
from fsspec.asyn import sync

from archivefs.cli import EXIT_ERROR, main
from archivefs.datasets.opening import COMBINED_FIRST
from archivefs.errors import ArchiveError, ObjectChangedError, ObjectNotFoundError
from archivefs.testing._rgw import operation
from tests.support.netcdf import STEPS, bundle_netcdf, write_netcdf
from tests.support.providers import provider_params, restore_calls, seed

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive
    from tests.support.providers import Provider

xr = pytest.importorskip("xarray")
h5py = pytest.importorskip("h5py")
pytest.importorskip("kerchunk")
pytest.importorskip("h5netcdf")
ads = pytest.importorskip("archivefs.datasets")
pytestmark = pytest.mark.timeout(600)

FILES = 3


def make_files(tmp_path: Path, n: int = FILES) -> dict[str, bytes]:
    """``nc/part<i>.nc`` -> its bytes: consecutive time steps."""
    out = {}
    for i in range(n):
        local = tmp_path / f"part{i}.nc"
        write_netcdf(local, start=i * STEPS)
        out[f"nc/part{i}.nc"] = local.read_bytes()
    return out


def hot_files(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, n: int = FILES
) -> tuple[dict[str, bytes], list[str]]:
    """:func:`make_files` written to ``bucket`` in STANDARD: the files and their URLs."""
    files = make_files(tmp_path, n)
    archive.put_objects(bucket, files, storage_class="STANDARD")
    return files, [f"s3://{bucket}/{k}" for k in sorted(files)]


def originals(tmp_path: Path, n: int = FILES) -> Any:
    paths = [tmp_path / f"part{i}.nc" for i in range(n)]
    return xr.open_mfdataset(paths, engine="h5netcdf", combine="by_coords")


def requests_of(provider: Provider, prefix: str) -> list[Any]:
    """Reads and descriptions of keys under ``prefix`` counted at the server."""
    spec = provider.spec
    log = provider.server.requests
    if provider.name == "rgw":  # radosgw's ops log: "GET /bucket/key?query" per record
        return [
            r
            for r in log.records()
            if operation(r) in ("GET", "HEAD")
            and unquote(str(r.get("uri", "")).split(" ", 1)[-1].split("?", 1)[0]).startswith(
                f"/{provider.bucket}/{prefix}"
            )
        ]
    return [
        r
        for op in (spec.read_op, spec.head_op)
        for r in log.matching(op=op)
        if (getattr(r, spec.key_field) or "").startswith(prefix)
    ]


TAGGED_READ = {"s3": 1, "azure": 1, "gcs": 2, "oracle": 1, "rgw": 1}  # one versioned read


@pytest.mark.parametrize("provider", provider_params(), indirect=True)
def test_a_combined_collection_opens_with_one_get_and_plans_exactly_on_every_provider(
    provider: Provider, tmp_path: Path
) -> None:
    """Files in the provider's cold class (radosgw: its hot one, it has no other)."""
    files = make_files(tmp_path)
    cold = provider.spec.cold_class or provider.spec.fee_class or provider.spec.hot_class
    seed(provider, files, cold)
    urls = [f"{provider.spec.protocol}://{provider.bucket}/{k}" for k in sorted(files)]
    fs = provider.fs()
    if provider.spec.restores:
        fs.restore(urls, wait=True, timeout=600)
    report = ads.index_files(urls, fs=fs, inline_threshold=0, concat_dim="time")
    assert report.ok, (report.failed, report.not_combined)
    made = report.combined
    assert made is not None
    assert made.written
    assert made.concat_dim == "time"
    assert made.files == [f"{provider.bucket}/{k}" for k in sorted(files)]
    assert made.location.startswith(f"{provider.bucket}/.archivefs/references/nc/.combined/")
    again = ads.combine_references(list(reversed(urls)), concat_dim="time", fs=fs)
    assert (again.location, again.written) == (made.location, False)  # the same set of files

    provider.server.requests.clear()
    ds = ads.open_mfdataset(urls, fs=provider.fs())
    assert requests_of(provider, "nc/") == []  # no GET, no HEAD of a data file
    combined = requests_of(provider, ".archivefs/references/nc/.combined/")
    # nor of a file's references; one read of the set (GCS's: its metadata, then its
    # bytes at that generation)
    assert len(requests_of(provider, ".archivefs/references/")) == len(combined)
    assert len(combined) == TAGGED_READ[provider.name]
    assert restore_calls(provider) == 0
    expected = originals(tmp_path)
    xr.testing.assert_identical(ds.coords.to_dataset(), expected.coords.to_dataset())
    assert ds.attrs == expected.attrs
    assert {n: v.attrs for n, v in ds.variables.items()} == {
        n: v.attrs for n, v in expected.variables.items()
    }

    selection = ds[["t", "q"]].isel(time=slice(STEPS - 2, STEPS + 2))  # part0's end, part1's
    plan = ads.plan_dataset(selection)
    assert sorted(g.key for g in plan) == [f"{provider.bucket}/nc/part{i}.nc" for i in (0, 1)]
    want = expected[["t", "q"]].isel(time=slice(STEPS - 2, STEPS + 2))
    xr.testing.assert_identical(selection.load(), want.load())  # bit for bit, encodings decoded


def test_opening_named_files_from_their_combined_set_lists_each_folder_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """The files' folder is listed once, by the set's check (it also proves they exist),
    not a second time for their sizes; the references folder once: two LISTs whatever
    the number of files (the full-size benchmark's open listed 1,000 files twice)."""
    _, urls = hot_files(archive, bucket, tmp_path)
    fs = make_fs()
    assert ads.index_files(urls, fs=fs, concat_dim="time").combined is not None
    archive.requests.clear()
    ads.open_mfdataset(urls, fs=make_fs())
    assert archive.requests.count("LIST") == 2
    gets = sorted(r.key for r in archive.requests.matching(op="GET"))
    assert gets[0] == ".archivefs/catalogs.json"  # the registry: no catalog root here
    assert [g.rsplit("/", 1)[0] for g in gets[1:]] == [".archivefs/references/nc/.combined"]
    with pytest.raises(ObjectNotFoundError, match="do not exist"):  # named files still checked
        ads.open_mfdataset([*urls, f"s3://{bucket}/nc/absent.nc"], fs=make_fs())


def test_a_large_collection_finds_its_set_without_listing_every_file_s_references(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """From COMBINED_FIRST files on, opening reads the set where it would be (one GET)
    and lists the files' folder for the check, never the references of every file: the
    full-size benchmark's 1,000 files spent a listing of 1,000 keys there. Without a set,
    that GET is answered 404 and the files open from their own references."""
    n = COMBINED_FIRST
    files = {f"nc/part{i}.nc": write_netcdf(tmp_path / f"part{i}.nc", start=i * STEPS, steps=2)
             for i in range(n)}  # fmt: skip
    archive.put_objects(bucket, {k: (tmp_path / k.split("/")[1]).read_bytes() for k in files})
    urls = [f"s3://{bucket}/{k}" for k in sorted(files)]
    report = ads.index_files(urls, fs=make_fs())  # each file's references, no set yet
    assert report.ok
    lister = make_fs()

    def listed_bytes(folder: str, recursive: bool = False) -> int:
        archive.requests.clear()
        sync(lister.loop, lister.store.list, f"{bucket}/{folder}", recursive=recursive)
        return archive.requests.bytes_sent("LIST")

    every = listed_bytes(".archivefs/references/nc", recursive=True)  # every file's references
    files_folder = listed_bytes("nc")
    archive.requests.clear()
    per_file = ads.open_mfdataset(urls, fs=make_fs())
    assert per_file.sizes["time"] == 2 * n
    absent = [r for r in archive.requests.matching(op="GET") if "/.combined/" in (r.key or "")]
    assert [r.status for r in absent] == [404]  # where the set would be: one request
    assert archive.requests.bytes_sent("LIST") == every + files_folder

    assert ads.combine_references(urls, concat_dim="time", fs=make_fs()).written
    archive.requests.clear()
    ds = ads.open_mfdataset(urls, fs=make_fs())
    assert ds.sizes["time"] == 2 * n
    assert archive.requests.count("LIST") == 1
    assert archive.requests.bytes_sent("LIST") == files_folder  # the files', for the check
    gets = sorted(r.key for r in archive.requests.matching(op="GET"))
    assert gets[0] == ".archivefs/catalogs.json"  # the registry: no catalog root here
    assert [g.rsplit("/", 1)[0] for g in gets[1:]] == [".archivefs/references/nc/.combined"]
    xr.testing.assert_identical(ds.coords.to_dataset(), per_file.coords.to_dataset())


def test_the_combined_set_is_kerchunk_json_that_fsspec_opens_without_archivefs(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    files, _ = hot_files(archive, bucket, tmp_path)
    report = ads.index_files(f"s3://{bucket}/nc/*.nc", fs=make_fs(), concat_dim="time")
    assert report.combined is not None
    raw = fsspec.filesystem("s3", **archive.storage_options(), skip_instance_cache=True)
    refs = json.loads(raw.cat_file(report.combined.location))
    assert refs["version"] == 1
    assert sorted(refs["archivefs"]["targets"]) == [f"s3://{bucket}/{k}" for k in sorted(files)]
    # the same bytes as local files, so that zarr's own loop reads them without an S3
    # client (see test_references): fsspec's reference filesystem and xarray, no archivefs
    local = {f"s3://{bucket}/{k}": str(tmp_path / Path(k).name) for k in files}
    entries = {
        key: [local[value[0]], *value[1:]] if isinstance(value, list) else value
        for key, value in refs["refs"].items()
    }
    mapper = fsspec.get_mapper("reference://", fo={**refs, "refs": entries}, remote_protocol="file")
    ds = xr.open_dataset(mapper, engine="zarr", consolidated=False, chunks=None)
    xr.testing.assert_identical(ds.load(), originals(tmp_path).load())


def test_other_files_or_a_nested_combine_open_per_file(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    _, urls = hot_files(archive, bucket, tmp_path)
    assert ads.index_files(urls, fs=make_fs(), concat_dim="time").combined is not None

    def opened(chosen: list[str], **kwargs: Any) -> tuple[Any, int]:
        archive.requests.clear()
        ds = ads.open_mfdataset(chosen, fs=make_fs(), **kwargs)
        per_file = [
            r
            for r in archive.requests.matching(op="GET")
            if (r.key or "").startswith(".archivefs/references/")
            and "/.combined/" not in (r.key or "")
        ]
        return ds, len(per_file)

    ds, per_file = opened(urls[:2])  # two of the three: not the combined set
    assert per_file == 2
    assert ds.sizes["time"] == 2 * STEPS
    ds, per_file = opened(urls, combine="nested", concat_dim="time")
    assert per_file == FILES
    assert ds.sizes["time"] == FILES * STEPS
    ds, per_file = opened(urls, references=False)
    assert per_file == 0
    ds, per_file = opened(urls)
    assert per_file == 0
    assert ds.sizes["time"] == FILES * STEPS


def test_a_changed_object_passes_over_the_combined_set_and_its_own_references_decide(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    _, urls = hot_files(archive, bucket, tmp_path)
    assert ads.index_files(urls, fs=make_fs(), concat_dim="time").combined is not None
    replaced = tmp_path / "replaced.nc"
    write_netcdf(replaced, start=STEPS)  # part1's time steps and layout, another value
    with h5py.File(replaced, "r+") as changed:
        changed["t"][0, 0] += 1000
    archive.put_object(bucket, "nc/part1.nc", replaced.read_bytes())
    archive.requests.clear()
    with pytest.raises(ObjectChangedError, match=r"part1\.nc"):
        ads.open_mfdataset(urls, fs=make_fs())  # the file's own references are stale too
    assert [r for r in archive.requests.matching() if (r.key or "") == "nc/part1.nc"] == []

    assert ads.index_files(f"s3://{bucket}/nc/part1.nc", fs=make_fs()).ok  # indexed again
    ds = ads.open_mfdataset(urls, fs=make_fs())  # the combined set is stale: per file
    assert float(ds["t"].isel(time=STEPS).values[0]) == float(
        originals(tmp_path)["t"].isel(time=STEPS).values[0] + 1000
    )
    remade = ads.combine_references(urls, concat_dim="time", fs=make_fs())
    assert remade.written  # describes the new object: replaces the stale set
    archive.requests.clear()
    ds = ads.open_mfdataset(urls, fs=make_fs())
    gets = [r.key for r in archive.requests.matching(op="GET") if ".archivefs/" in (r.key or "")]
    assert [k for k in gets if "/references/" in k and "/.combined/" not in k] == []
    assert float(ds["t"].isel(time=STEPS).values[0]) == float(
        originals(tmp_path)["t"].isel(time=STEPS).values[0] + 1000
    )


def test_files_that_cannot_be_combined_are_refused_with_the_fix(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    _, urls = hot_files(archive, bucket, tmp_path)
    fs = make_fs()
    with pytest.raises(ArchiveError, match="has no stored references") as info:
        ads.combine_references(urls, concat_dim="time", fs=fs)
    assert f"archivefs index s3://{bucket}/nc/part0.nc" in str(info.value)
    assert ads.index_files(urls, fs=fs).ok
    with pytest.raises(ArchiveError, match="has no coordinate 'x' to combine") as info:
        ads.combine_references(urls, concat_dim="x", fs=fs)
    assert "--concat-dim" in str(info.value)
    with pytest.raises(ArchiveError, match="needs two or more"):
        ads.combine_references(urls[:1], concat_dim="time", fs=fs)

    hours = tmp_path / "hours.nc"
    write_netcdf(hours, start=2 * STEPS)
    with h5py.File(hours, "r+") as changed:  # its time steps counted in other units
        changed["time"].attrs["units"] = "hours since 2000-01-01"
    archive.put_object(bucket, "nc/part2.nc", hours.read_bytes())
    assert ads.index_files(urls[2], fs=fs).ok
    with pytest.raises(ArchiveError, match="encoded differently"):
        ads.combine_references(urls, concat_dim="time", fs=fs)
    assert fs.glob(f"{bucket}/.archivefs/references/nc/.combined/*") == []  # nothing was written


def test_two_writers_combining_one_collection_lose_nothing(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    _, urls = hot_files(archive, bucket, tmp_path)
    assert ads.index_files(urls, fs=make_fs()).ok
    written: list[bool] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            written.append(ads.combine_references(urls, concat_dim="time", fs=make_fs()).written)
        except BaseException as error:
            errors.append(error)

    writers = [threading.Thread(target=run) for _ in range(2)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert errors == []
    assert sorted(written) == [False, True]  # the second found the first's: theirs stays
    ds = ads.open_mfdataset(urls, fs=make_fs())
    xr.testing.assert_identical(ds.load(), originals(tmp_path).load())


def test_cli_index_combines_along_a_dimension_and_says_why_it_did_not(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    hot_files(archive, bucket, tmp_path)
    base = ["--storage-options", json.dumps(archive.storage_options())]
    base += ["--journal", str(tmp_path / "j.sqlite")]
    glob = f"s3://{bucket}/nc/*.nc"
    result = CliRunner().invoke(main, [*base, "index", glob, "--concat-dim", "time"])
    assert result.exit_code == 0, result.output
    last = result.stdout.splitlines()[-1]
    assert last.startswith(
        f"combined  {FILES} files along 'time': {bucket}/.archivefs/references/nc/.combined/"
    )
    result = CliRunner().invoke(main, [*base, "index", glob, "--concat-dim", "time", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["combined"]["written"] is False
    result = CliRunner().invoke(main, [*base, "index", glob, "--concat-dim", "x"])
    assert result.exit_code == EXIT_ERROR
    assert "has no coordinate 'x' to combine" in result.stderr

    later = tmp_path / "later.nc"
    write_netcdf(later, start=FILES * STEPS)  # archived before it was ever indexed
    archive.put_object(bucket, "nc/part3.nc", later.read_bytes(), storage_class="GLACIER")
    result = CliRunner().invoke(main, [*base, "index", glob, "--concat-dim", "time"])
    assert result.exit_code == EXIT_ERROR
    assert "not combined along 'time': 1 of 4 files were not indexed" in result.stderr
    assert f"archivefs restore s3://{bucket}/nc/part3.nc" in result.stderr


def test_monthly_files_with_their_own_date_origins_combine_in_the_first_files_units(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """xarray writes each month's times as days since that month's first day: the set
    counts them all from the first file's origin, and opens equal to the files."""
    import pandas as pd

    files = {}
    for month in (1, 2, 3):
        days = pd.date_range(f"2023-{month:02d}-01", periods=5, freq="D")
        ds = xr.Dataset(
            {"t2m": (("time", "x"), np.arange(10, dtype="f4").reshape(5, 2) + month)},
            coords={"time": days},
        )
        local = tmp_path / f"m{month}.nc"
        ds.to_netcdf(local, engine="h5netcdf", encoding={"t2m": {"chunksizes": (1, 2)}})
        files[f"nc/m{month}.nc"] = local.read_bytes()
    units = {
        str(xr.open_dataset(tmp_path / f"m{m}.nc", decode_times=False)["time"].attrs["units"])
        for m in (1, 2, 3)
    }
    assert len(units) == 3  # each file counts from its own origin
    archive.put_objects(bucket, files, storage_class="STANDARD")
    urls = [f"s3://{bucket}/{k}" for k in sorted(files)]
    report = ads.index_files(urls, fs=make_fs(), inline_threshold=0, concat_dim="time")
    assert report.ok, (report.failed, report.not_combined)
    archive.put_objects(bucket, files, storage_class="GLACIER")
    archive.requests.clear()
    ds = ads.open_mfdataset(urls, fs=make_fs())
    assert [r for r in archive.requests.matching() if (r.key or "").startswith("nc/")] == []
    expected = xr.open_mfdataset(
        [tmp_path / f"m{m}.nc" for m in (1, 2, 3)], engine="h5netcdf", combine="by_coords"
    )
    xr.testing.assert_identical(ds.coords.to_dataset(), expected.coords.to_dataset())
    plan = ads.plan_dataset(ds["t2m"].sel(time=slice("2023-02-03", "2023-02-04")))
    assert [g.key for g in plan] == [f"{bucket}/nc/m2.nc"]


def test_combining_works_where_an_event_loop_runs_as_in_a_notebook(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """Jupyter runs cells on a thread whose event loop runs; kerchunk's combiner calls
    ``asyncio.run``, which refuses there."""
    files, urls = hot_files(archive, bucket, tmp_path, 2)
    fs = make_fs()
    assert ads.index_files(urls, fs=fs).ok

    async def in_a_cell() -> Any:
        return ads.combine_references(urls, concat_dim="time", fs=fs)

    made = asyncio.run(in_a_cell())
    assert made.written
    assert made.files == [f"{bucket}/{k}" for k in sorted(files)]


def test_archived_files_already_indexed_are_not_read_and_combine_without_a_restore(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """Members bundled into DEEP_ARCHIVE keep the references the bundle run made: indexing
    them again reads nothing and restores nothing, so `archivefs index --concat-dim`
    combines an archived collection; it opens as one dataset and plans to its bundles."""
    bundled = bundle_netcdf(archive, bucket, tmp_path, FILES, "DEEP_ARCHIVE")
    assert len(bundled.referenced) == FILES
    archive.requests.clear()
    base = ["--storage-options", json.dumps(archive.storage_options())]
    base += ["--journal", str(tmp_path / "j.sqlite")]
    glob = f"s3://{bucket}/root/nc/*.nc"
    result = CliRunner().invoke(main, [*base, "index", glob, "--concat-dim", "time", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [f["written"] for f in report["indexed"]] == [False] * FILES
    assert [f["bytes_read"] for f in report["indexed"]] == [0] * FILES
    assert report["combined"]["written"] is True
    bundles = [r for r in archive.requests.matching() if "/bundles/" in (r.key or "")]
    assert [r.op for r in bundles if r.op in ("GET", "HEAD")] == []  # no byte of a bundle
    assert archive.requests.count("RestoreObject") == 0

    archive.requests.clear()
    ds = ads.open_mfdataset(glob, fs=make_fs())
    own = [r for r in archive.requests.matching(op="GET") if "/references/" in (r.key or "")]
    assert [r.key for r in own if "/.combined/" not in r.key] == []  # only the set's GET
    plan = ads.plan_dataset(ds["t"].isel(time=slice(STEPS, STEPS + 2)))
    member = (
        make_fs()
        .catalog_root_for(f"{bucket}/root/nc/part1.nc")[1]
        .lookup(f"{bucket}/root/nc/part1.nc")
    )
    assert [g.key for g in plan] == [member.bundle]
    assert archive.requests.count("RestoreObject") == 0
