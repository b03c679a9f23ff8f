"""Archived netCDF4/HDF5 files that open, plan and read through their kerchunk references.

Files are indexed while they read (``index_files`` / ``archivefs index``), then made
archived; every claim is counted at the server: opening sends no restore and no
request to an archived file, a plan names exactly the files holding the selected
chunks, reads fetch only the referenced ranges, values equal the originals.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import numpy as np
import pytest
from click.testing import CliRunner

from archivefs.cli import EXIT_ERROR, main
from archivefs.errors import ObjectArchivedError, ObjectChangedError
from archivefs.plans import whole_file_json, whole_file_text
from tests.support.netcdf import CHUNK_ROWS, STEPS, bundle_netcdf, write_netcdf
from tests.support.providers import provider_params, reads, restore_calls, seed

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive
    from tests.support.providers import Provider

xr = pytest.importorskip("xarray")
pytest.importorskip("kerchunk")
pytest.importorskip("h5netcdf")
ads = pytest.importorskip("archivefs.datasets")
pytestmark = pytest.mark.timeout(600)

FILES = 3


def make_files(tmp_path: Path, n: int = FILES) -> dict[str, tuple[bytes, Any]]:
    """``nc/part<i>.nc`` -> (its bytes, its dataset): consecutive time steps."""
    out = {}
    for i in range(n):
        local = tmp_path / f"part{i}.nc"
        ds = write_netcdf(local, start=i * STEPS)
        out[f"nc/part{i}.nc"] = (local.read_bytes(), ds)
    return out


def originals(tmp_path: Path, n: int = FILES) -> Any:
    paths = [tmp_path / f"part{i}.nc" for i in range(n)]
    return xr.open_mfdataset(paths, engine="h5netcdf", combine="by_coords")


@pytest.mark.parametrize("provider", provider_params(), indirect=True)
def test_index_reads_only_what_reads_now_and_others_read_the_references(
    provider: Provider, tmp_path: Path
) -> None:
    files = make_files(tmp_path)
    seed(provider, {k: v[0] for k, v in files.items()}, provider.spec.hot_class)
    if provider.spec.restores:
        seed(provider, {"nc/cold.nc": files["nc/part0.nc"][0]}, provider.spec.chunk_class)
    fs = provider.fs()
    provider.server.requests.clear()
    glob = f"{provider.spec.protocol}://{provider.bucket}/nc/*.nc"
    report = ads.index_files(glob, fs=fs, inline_threshold=0)
    assert sorted(f.path for f in report.indexed) == [
        f"{provider.bucket}/nc/part{i}.nc" for i in range(FILES)
    ]
    if provider.spec.restores:
        (error,) = report.failed.values()
        assert isinstance(error, ObjectArchivedError)
        assert f"archivefs restore {provider.spec.protocol}://{provider.bucket}/nc/cold.nc" in str(
            error
        )
        assert reads(provider, "nc/cold.nc") == 0  # never read, not even its header
    else:
        assert report.ok
    for done in report.indexed:
        assert done.written
        assert done.references.startswith(f"{provider.bucket}/.archivefs/references/nc/")
        assert 0 < done.bytes_read <= done.size
        assert done.chunks >= STEPS // CHUNK_ROWS  # t's chunks point into the file
    again = ads.index_files(report.indexed[0].path, fs=fs, inline_threshold=0).indexed[0]
    assert (again.written, again.bytes_read) == (False, 0)  # they describe it: not read again

    # the references are kerchunk JSON that fsspec reads without archivefs
    raw = provider.raw()
    for i in range(FILES):
        refs = json.loads(
            raw.cat_file(f"{provider.bucket}/.archivefs/references/nc/part{i}.nc.json")
        )
        rfs = fsspec.filesystem(
            "reference", fo=refs, fs={provider.spec.protocol: raw}, skip_instance_cache=True
        )
        for row in range(0, STEPS, CHUNK_ROWS):  # each chunk: HDF5's own stored bytes
            stored_chunk = _stored_chunk(tmp_path / f"part{i}.nc", row)
            assert rfs.cat_file(f"t/{row // CHUNK_ROWS}.0") == stored_chunk
        # (not xarray through zarr here: zarr awaits the plain target on its own event
        # loop, so s3fs's session belongs to that loop, and s3fs's finaliser closing it
        # from fsspec's loop at some later garbage collection raised in whichever test
        # was running then; archivefs's own reads of them follow below)

    # and archivefs opens them from the references, equal to xarray on the original files
    urls = [f"{provider.spec.protocol}://{provider.bucket}/nc/part{i}.nc" for i in range(FILES)]
    combined = ads.open_mfdataset(urls, fs=provider.fs(), combine="by_coords")
    xr.testing.assert_identical(combined.load(), originals(tmp_path).load())


@pytest.fixture
def archived(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> dict[str, tuple[bytes, Any]]:
    """Three netCDF4 files indexed while hot, then archived (GLACIER, the same bytes)."""
    files = make_files(tmp_path)
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="STANDARD")
    assert ads.index_files(f"s3://{bucket}/nc/*.nc", fs=make_fs(), inline_threshold=0).ok
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="GLACIER")
    archive.requests.clear()
    return files


def nc_requests(archive: EmulatedArchive) -> list[Any]:
    return [r for r in archive.requests.matching() if (r.key or "").startswith("nc/")]


def test_archived_files_open_plan_and_read_through_references(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    make_fs: Any,
    archived: dict[str, tuple[bytes, Any]],
) -> None:
    fs = make_fs()
    urls = [f"s3://{bucket}/nc/part{i}.nc" for i in range(FILES)]
    ds = ads.open_mfdataset(urls, fs=fs, combine="by_coords")
    assert nc_requests(archive) == []  # no GET, no HEAD of an archived file
    assert archive.requests.count("RestoreObject") == 0
    expected = originals(tmp_path)
    xr.testing.assert_identical(ds.coords.to_dataset(), expected.coords.to_dataset())
    assert ds.attrs == expected.attrs
    assert {n: v.attrs for n, v in ds.variables.items()} == {
        n: v.attrs for n, v in expected.variables.items()
    }

    # time steps 6..9: chunk rows 3 of part0 and 0 of part1 -> exactly those two files
    selection = ds["t"].isel(time=slice(6, 10))
    plan = ads.plan_dataset(selection)
    assert sorted(g.key for g in plan) == [f"{bucket}/nc/part0.nc", f"{bucket}/nc/part1.nc"]
    assert {g.action.value for g in plan} == {"restore"}
    assert archive.requests.count("RestoreObject") == 0
    with pytest.raises(ObjectArchivedError, match="part"):
        selection.compute()

    result = ads.prefetch(selection, wait=True, timeout=600)
    assert result.requests_sent == 2
    assert archive.requests.count("RestoreObject") == 2
    archive.requests.clear()
    np.testing.assert_array_equal(selection.values, expected["t"].isel(time=slice(6, 10)).values)
    gets = archive.requests.matching(op="GET")
    nc_gets = [r for r in gets if (r.key or "").startswith("nc/")]
    assert len(nc_gets) == 2  # one ranged GET per chunk, nothing else of the files
    assert all(r.range is not None for r in nc_gets)
    # exactly the stored bytes of those two chunks, as HDF5 itself lays them out
    needed = _chunk_size(tmp_path / "part0.nc", 6) + _chunk_size(tmp_path / "part1.nc", 0)
    assert sum(r.bytes_sent for r in nc_gets) == needed
    assert sorted(r.key for r in nc_gets) == ["nc/part0.nc", "nc/part1.nc"]


def _stored_chunk(local: Path, row: int) -> bytes:
    """The stored (compressed) bytes of the chunk of ``t`` holding time step ``row``."""
    import h5py

    with h5py.File(local, "r") as f:
        _, data = f["t"].id.read_direct_chunk((row, 0))
    return bytes(data)


def _chunk_size(local: Path, row: int) -> int:
    """Stored (compressed) bytes of the chunk of ``t`` holding time step ``row``."""
    import h5py

    with h5py.File(local, "r") as f:
        size: int = f["t"].id.get_chunk_info_by_coord((row, 0)).size
    return size


def test_contiguous_and_packed_variables_read_bit_for_bit(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any, archived: Any
) -> None:
    fs = make_fs()
    url = f"s3://{bucket}/nc/part1.nc"
    ds = ads.open_dataset(url, fs=fs, mask_and_scale=False)
    plan = ads.plan_dataset(ds["q"])
    assert [g.key for g in plan] == [f"{bucket}/nc/part1.nc"]
    ads.prefetch(ds["q"], wait=True, timeout=600)
    plain = xr.open_dataset(tmp_path / "part1.nc", engine="h5netcdf", mask_and_scale=False)
    assert ds["q"].dtype == plain["q"].dtype
    np.testing.assert_array_equal(ds["q"].values, plain["q"].values)
    decoded = ads.open_dataset(url, fs=fs)
    xr.testing.assert_identical(decoded.load(), xr.open_dataset(tmp_path / "part1.nc").load())


def test_a_changed_object_is_refused_before_a_byte_is_used(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any, archived: Any
) -> None:
    other = tmp_path / "other.nc"
    write_netcdf(other, start=100)
    archive.put_object(bucket, "nc/part1.nc", other.read_bytes(), storage_class="STANDARD")
    archive.requests.clear()
    with pytest.raises(ObjectChangedError, match="changed since") as info:
        ads.open_dataset(f"s3://{bucket}/nc/part1.nc", fs=make_fs())
    assert "archivefs index" in str(info.value)
    assert not isinstance(info.value, FileNotFoundError)
    assert [r for r in nc_requests(archive) if r.op in ("GET", "HEAD")] == []
    urls = [f"s3://{bucket}/nc/part{i}.nc" for i in range(FILES)]
    with pytest.raises(ObjectChangedError, match=r"part1\.nc"):
        ads.open_mfdataset(urls, fs=make_fs())


def test_another_inline_threshold_describes_a_file_anew_if_it_reads_and_keeps_it_if_not(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """References record the inline threshold they were made with: indexing again with
    another reads a file that reads now and describes it anew; an archived file keeps its
    references (they still describe it), with nothing read and no failure."""
    files = make_files(tmp_path, 1)
    key = "nc/part0.nc"
    url = f"s3://{bucket}/{key}"
    archive.put_object(bucket, key, files[key][0], storage_class="STANDARD")
    first = ads.index_files(url, fs=make_fs(), inline_threshold=0).indexed[0]
    assert first.written
    assert first.chunks > 0
    whole = ads.index_files(url, fs=make_fs(), inline_threshold=10**8).indexed[0]
    assert whole.written
    assert whole.bytes_read > 0
    assert (whole.chunks, whole.inline > first.inline) == (0, True)  # every chunk inline now
    raw = fsspec.filesystem("s3", skip_instance_cache=True, **archive.storage_options())
    stored = json.loads(raw.cat_file(f"{bucket}/.archivefs/references/{key}.json"))
    assert stored["archivefs"]["inline_threshold"] == 10**8
    archive.put_object(bucket, key, files[key][0], storage_class="GLACIER")  # the same bytes
    archive.requests.clear()
    report = ads.index_files(url, fs=make_fs(), inline_threshold=0)
    assert report.ok
    kept = report.indexed[0]
    assert (kept.written, kept.bytes_read, kept.chunks) == (False, 0, 0)
    assert [r for r in nc_requests(archive) if r.op == "GET"] == []  # nothing of it read


def test_a_file_changed_since_it_was_indexed_is_described_anew_after_one_head(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """Indexing again a file whose object changed: one HEAD says so, and the same
    description serves the indexing (before, it was asked twice)."""
    files = make_files(tmp_path, 1)
    key = "nc/part0.nc"
    archive.put_object(bucket, key, files[key][0], storage_class="STANDARD")
    assert ads.index_files(f"s3://{bucket}/{key}", fs=make_fs()).ok
    other = tmp_path / "other.nc"
    write_netcdf(other, start=100)
    archive.put_object(bucket, key, other.read_bytes(), storage_class="STANDARD")
    archive.requests.clear()
    report = ads.index_files(f"s3://{bucket}/{key}", fs=make_fs())
    assert report.ok
    assert report.indexed[0].written
    assert archive.requests.count("HEAD") == 1
    opened = ads.open_dataset(f"s3://{bucket}/{key}", fs=make_fs())
    xr.testing.assert_identical(opened.load(), xr.open_dataset(other).load())


def test_without_references_files_open_as_before(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    files = make_files(tmp_path, 1)
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="GLACIER")
    with pytest.raises(ObjectArchivedError):
        ads.open_dataset(f"s3://{bucket}/nc/part0.nc", fs=make_fs())


def test_two_writers_indexing_one_root_lose_nothing(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    files = make_files(tmp_path, 6)
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="STANDARD")
    names = sorted(files)
    errors: list[BaseException] = []

    def run(chosen: list[str]) -> None:
        try:
            report = ads.index_files([f"s3://{bucket}/{n}" for n in chosen], fs=make_fs())
            assert report.ok, report.failed
        except BaseException as error:
            errors.append(error)

    # overlapping halves: part2 and part3 are indexed by both writers at once
    writers = [
        threading.Thread(target=run, args=(names[:4],)),
        threading.Thread(target=run, args=(names[2:],)),
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert errors == []
    stored = sorted(
        fsspec.filesystem("s3", **archive.storage_options()).find(f"{bucket}/.archivefs/references")
    )
    assert stored == [f"{bucket}/.archivefs/references/{n}.json" for n in names]
    ds = ads.open_mfdataset(f"s3://{bucket}/nc/*.nc", fs=make_fs())
    assert ds.sizes["time"] == 6 * STEPS


def test_cli_index_goes_on_past_an_archived_file_and_exits_non_zero(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = make_files(tmp_path, 2)
    archive.put_object(bucket, "nc/part0.nc", files["nc/part0.nc"][0], storage_class="STANDARD")
    archive.put_object(bucket, "nc/part1.nc", files["nc/part1.nc"][0], storage_class="GLACIER")
    base = ["--storage-options", json.dumps(archive.storage_options())]
    base += ["--journal", str(tmp_path / "j.sqlite")]
    result = CliRunner().invoke(main, [*base, "index", f"s3://{bucket}/nc/*.nc", "--json"])
    assert result.exit_code == EXIT_ERROR, result.output
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["indexed"]] == [f"{bucket}/nc/part0.nc"]
    assert list(report["failed"]) == [f"{bucket}/nc/part1.nc"]
    assert (
        f"archivefs restore s3://{bucket}/nc/part1.nc" in report["failed"][f"{bucket}/nc/part1.nc"]
    )
    text = CliRunner().invoke(main, [*base, "index", f"s3://{bucket}/nc/part0.nc"])
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(f"unchanged  {bucket}/nc/part0.nc  ")


def test_xarrays_own_reference_filesystem_over_archive_plans_the_same(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any, archived: Any
) -> None:
    """``xr.open_dataset("reference://", engine="zarr", ...)`` with the references' ``s3``
    URLs read by an archive filesystem: no archivefs helper opened it, and it plans,
    prefetches and reads the same."""
    from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

    fs = make_fs()
    options = {
        "fo": f"s3://{bucket}/.archivefs/references/nc/part1.nc.json",
        "target_options": archive.storage_options(),
        "fs": {"s3": AsyncFileSystemWrapper(fs, asynchronous=True)},  # zarr reads async
    }
    ds = xr.open_dataset(
        "reference://",
        engine="zarr",
        chunks={},
        backend_kwargs={"consolidated": False, "storage_options": options},
    )
    assert nc_requests(archive) == []
    selection = ds["t"].isel(time=slice(0, 3))
    plan = ads.plan_dataset(selection)
    assert [g.key for g in plan] == [f"{bucket}/nc/part1.nc"]
    assert {g.action.value for g in plan} == {"restore"}
    with pytest.raises(RuntimeError) as info:  # fsspec's ReferenceNotReachable, not fill values
        selection.compute()
    assert isinstance(info.value.__cause__, ObjectArchivedError)
    assert ads.prefetch(selection, wait=True, timeout=600).requests_sent == 1
    expected = xr.open_dataset(tmp_path / "part1.nc", engine="h5netcdf")["t"].isel(time=slice(0, 3))
    np.testing.assert_array_equal(selection.values, expected.values)
    assert archive.requests.count("RestoreObject") == 1


def test_cli_estimate_and_prefetch_take_a_variable_and_an_index_range(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, archived: Any
) -> None:
    base = ["--storage-options", json.dumps(archive.storage_options())]
    base += ["--journal", str(tmp_path / "j.sqlite"), "--restore-time-scale", str(1 / 3600)]
    selection = [f"s3://{bucket}/nc/*.nc", "--var", "t", "--sel", "time=6:9", "--json"]
    estimate = CliRunner().invoke(main, [*base, "estimate", *selection])
    assert estimate.exit_code == 0, estimate.output
    summary = json.loads(estimate.stdout)
    assert summary["selection"]["objects"]["archived"] == 2, summary  # part0 and part1 only
    assert archive.requests.count("RestoreObject") == 0
    assert [r for r in nc_requests(archive) if r.op in ("GET", "HEAD")] == []

    prefetch = CliRunner().invoke(main, [*base, "prefetch", *selection])
    assert prefetch.exit_code == 0, prefetch.output
    assert json.loads(prefetch.stdout)["requests_sent"] == 2
    restored = sorted(r.key for r in archive.requests.matching(op="RestoreObject"))
    assert restored == ["nc/part0.nc", "nc/part1.nc"]

    bad = CliRunner().invoke(main, [*base, "estimate", *selection[:4], "--sel", "time"])
    assert bad.exit_code == 2
    assert "DIM=START:STOP" in bad.output
    unknown = CliRunner().invoke(main, [*base, "estimate", selection[0], "--var", "nope"])
    assert unknown.exit_code == EXIT_ERROR
    assert "no variable 'nope'" in unknown.output


@pytest.mark.parametrize("way", ["restore_aware", "prefetch"])
def test_the_hooks_see_a_plan_that_names_the_files_read_whole(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any, way: str
) -> None:
    """The plan restore_aware and prefetch approve (what the on_estimate hooks see) says
    which files are read whole, as plan_dataset's does: part1 has no references. Before,
    prefetch's hooks saw a plan without it (it was added to the result afterwards)."""
    files = make_files(tmp_path, 2)
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="STANDARD")
    assert ads.index_files(f"s3://{bucket}/nc/part0.nc", fs=make_fs(), inline_threshold=0).ok
    archive.put_object(bucket, "nc/part0.nc", files["nc/part0.nc"][0], storage_class="GLACIER")
    seen: list[Any] = []

    def looks(plan: Any, estimate: Any) -> bool:
        seen.append(plan)
        return True

    urls = [f"s3://{bucket}/nc/part{i}.nc" for i in range(2)]
    fs = make_fs(on_estimate=looks)  # in the options: the graph's tasks carry it pickled
    ds = ads.open_mfdataset(urls, fs=fs, combine="by_coords")
    selection = ds["t"].isel(time=slice(STEPS - 2, STEPS + 1))
    expected = ads.plan_dataset(selection).read_whole
    assert expected == {"t": (f"{bucket}/nc/part1.nc",)}
    seen.clear()
    if way == "restore_aware":
        ads.restore_aware(selection, coordinate=False, poll_interval=0.2, timeout=600)
    else:
        assert ads.prefetch(selection, wait=False).plan.read_whole == expected
    assert [plan.read_whole for plan in seen] == [expected]
    assert archive.requests.count("RestoreObject") == 1  # part0 only


# The installed console script, as users run it.
ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


def test_cli_estimate_and_prefetch_say_which_files_are_read_whole_and_why(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """part0 is indexed and archived, part1 (hot) has no references: a selection over both
    reads part1 whole, and the installed script says so (text and --json) in the words of
    the plan's repr, with what the Python twin (``ads.select_files``) finds."""
    files = make_files(tmp_path, 2)
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="STANDARD")
    assert ads.index_files(f"s3://{bucket}/nc/part0.nc", fs=make_fs(), inline_threshold=0).ok
    archive.put_object(bucket, "nc/part0.nc", files["nc/part0.nc"][0], storage_class="GLACIER")
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "ARCHIVEFS_RESTORE_TIME_SCALE": str(1 / 3600),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        tail = ["--endpoint-url", archive.endpoint_url, "--journal", str(tmp_path / "j.sqlite")]
        done = subprocess.run(
            [ARCHIVEFS, *args, *tail], capture_output=True, text=True, env=env, timeout=600,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done

    glob = f"s3://{bucket}/nc/*.nc"
    both = [glob, "--var", "t", "--sel", f"time={STEPS - 2}:{STEPS + 1}"]
    chosen = ads.select_files(glob, fs=make_fs(), variables=["t"], ranges={"time": ("6", "9")})
    assert set(chosen.read_whole) >= {"t"}
    assert {f for v in chosen.read_whole.values() for f in v} == {f"{bucket}/nc/part1.nc"}
    line = whole_file_text(chosen.read_whole)
    assert line.startswith("1 file read whole, not chunk by chunk, for ")
    assert line.endswith(f": {bucket}/nc/part1.nc (no references: `archivefs index URL` makes "
                         "them while a file reads (hot or restored), `archivefs bundle` as it "
                         "packs it; kerchunk cannot describe every file)")  # fmt: skip

    assert line in cli("estimate", *both).stdout.splitlines()
    estimate = json.loads(cli("estimate", *both, "--json").stdout)
    assert estimate["read_whole"] == whole_file_json(chosen.read_whole)
    assert estimate["read_whole"]["files"] == [f"{bucket}/nc/part1.nc"]
    assert estimate["selection"]["objects"]["archived"] == 1  # part0; part1 reads at once

    # part0's first chunk only (of the glob, part1's lazy coordinate lat would be read whole)
    inside = [f"s3://{bucket}/nc/part0.nc", "--var", "t", "--sel", "time=0:1"]
    assert "read whole" not in cli("estimate", *inside).stdout
    assert json.loads(cli("estimate", *inside, "--json").stdout)["read_whole"] == {
        "files": [],
        "variables": {},
        "why": None,
    }
    plain = json.loads(cli("estimate", f"s3://{bucket}/nc/part0.nc", "--json").stdout)
    assert "read_whole" not in plain  # no dataset selection: nothing to say
    assert archive.requests.count("RestoreObject") == 0

    assert line in cli("prefetch", *both).stdout.splitlines()
    assert archive.requests.count("RestoreObject") == 1  # part0; part1 is hot
    prefetched = json.loads(cli("prefetch", *both, "--json").stdout)
    assert prefetched["read_whole"] == whole_file_json(chosen.read_whole)
    assert prefetched["requests_sent"] == 0  # restored by the first prefetch


def test_bundle_members_reference_their_bundle_and_plan_to_it(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """A member's references, made by the bundle run, point into the bundle at (bundle
    offset + member offset); indexing it again once its bundle reads finds them
    unchanged; the plan names the bundle, values equal."""
    broken = b"\x89HDF\r\n\x1a\n" + b"\0" * 64  # an HDF5 signature, not HDF5 inside
    bundled = bundle_netcdf(archive, bucket, tmp_path, FILES, "STANDARD", {"broken.nc": broken})
    source = tmp_path / "src" / "nc"
    dest = fsspec.filesystem("s3", skip_instance_cache=True, **archive.storage_options())
    fs = make_fs()
    report = ads.index_files(f"s3://{bucket}/root/nc/*.nc", fs=fs)  # the bundle run's threshold
    assert [f.path.rsplit("/", 1)[-1] for f in report.indexed] == [f"part{i}.nc" for i in range(3)]
    assert bundled.referenced == [f.path for f in report.indexed]
    assert not any(f.written for f in report.indexed)  # the bundle run's describe the same
    assert list(bundled.unreferenced) == [f"{bucket}/root/nc/broken.nc"]
    assert list(report.failed) == [f"{bucket}/root/nc/broken.nc"]  # the run went on
    assert "kerchunk could not describe" in str(report.failed[f"{bucket}/root/nc/broken.nc"])
    found = fs.catalog_root_for(f"{bucket}/root/nc/part1.nc")
    assert found is not None
    catalog = found[1]
    member = catalog.lookup(f"{bucket}/root/nc/part1.nc")
    assert member is not None
    stored = json.loads(dest.cat_file(f"{bucket}/root/.archivefs/references/nc/part1.nc.json"))
    (target,) = stored["archivefs"]["targets"]
    assert target == f"s3://{member.bundle}"
    offset = stored["refs"]["t/0.0"][1]
    with (source / "part1.nc").open("rb") as f:
        f.seek(offset - member.offset)  # the chunk's place in the file itself
        assert f.read(stored["refs"]["t/0.0"][2]) == _stored_chunk(source / "part1.nc", 0)

    ds = ads.open_mfdataset(f"s3://{bucket}/root/nc/part*.nc", fs=make_fs())
    selection = ds["t"].isel(time=slice(STEPS, STEPS + 2))
    plan = ads.plan_dataset(selection)
    assert [g.key for g in plan] == [member.bundle]
    np.testing.assert_array_equal(
        selection.values,
        xr.open_dataset(source / "part1.nc", engine="h5netcdf")["t"].isel(time=slice(0, 2)).values,
    )


NO_COLD = {"rgw": "radosgw stores no class that needs a restore or bills a read"}


@pytest.mark.parametrize("provider", provider_params(skip=NO_COLD), indirect=True)
def test_cold_files_open_from_references_and_plan_exactly_on_every_provider(
    provider: Provider, tmp_path: Path
) -> None:
    """Files in the provider's cold class, indexed once readable (restored, or at once for
    a fee): opening sends no request to any of them, the plan names exactly the files
    holding the selected chunks, values equal the originals."""
    files = make_files(tmp_path)
    seed(provider, {k: v[0] for k, v in files.items()}, provider.spec.chunk_class)
    urls = [f"{provider.spec.protocol}://{provider.bucket}/{k}" for k in sorted(files)]
    fs = provider.fs()
    if provider.spec.restores:
        fs.restore(urls, wait=True, timeout=600)
    assert ads.index_files(urls, fs=fs, inline_threshold=0).ok
    provider.server.requests.clear()
    ds = ads.open_mfdataset(urls, fs=provider.fs())
    spec = provider.spec
    touched = [
        r
        for op in (spec.read_op, spec.head_op)
        for r in provider.server.requests.matching(op=op)
        if (getattr(r, spec.key_field) or "").startswith("nc/")
    ]
    assert touched == []  # no GET, no HEAD of a data file
    assert restore_calls(provider) == 0
    selection = ds["t"].isel(time=slice(STEPS - 2, STEPS + 2))  # part0's last, part1's first
    plan = ads.plan_dataset(selection)
    assert sorted(g.key for g in plan) == [f"{provider.bucket}/nc/part{i}.nc" for i in (0, 1)]
    expected = originals(tmp_path)["t"].isel(time=slice(STEPS - 2, STEPS + 2))
    np.testing.assert_array_equal(selection.values, expected.values)


def test_restore_aware_graph_of_a_referenced_selection_restores_only_its_files(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any, archived: Any
) -> None:
    urls = [f"s3://{bucket}/nc/part{i}.nc" for i in range(FILES)]
    ds = ads.open_mfdataset(urls, fs=make_fs(), combine="by_coords")
    selection = ds["t"].isel(time=slice(STEPS + 1, 2 * STEPS + 1))  # part1's rows 1.., part2's 0
    gated = ads.restore_aware(selection, poll_interval=0.2, timeout=600, coordinate=False)
    values = gated.compute().values
    restored = sorted(r.key for r in archive.requests.matching(op="RestoreObject"))
    assert restored == ["nc/part1.nc", "nc/part2.nc"]
    expected = originals(tmp_path)["t"].isel(time=slice(STEPS + 1, 2 * STEPS + 1))
    np.testing.assert_array_equal(values, expected.values)


def test_a_referenced_file_s_chunk_layers_are_named_by_the_file_and_its_objects(
    archive: EmulatedArchive, bucket: str, make_fs: Any, archived: dict[str, tuple[bytes, Any]]
) -> None:
    """The Dask name of a referenced file's chunks comes from the file and the objects its
    references point into (``ReferencedStore``, not a pickle of the reference filesystem):
    one per file, so plans tell files apart, and the same again for the same file."""
    urls = [f"s3://{bucket}/nc/part{i}.nc" for i in range(FILES)]
    names = [ads.open_dataset(url, fs=make_fs())["t"].data.name for url in urls]
    assert len(set(names)) == FILES
    assert ads.open_dataset(urls[0], fs=make_fs())["t"].data.name == names[0]
    together = ads.open_mfdataset(urls, fs=make_fs(), combine="by_coords")
    plan = ads.plan_dataset(together["t"].isel(time=slice(STEPS, STEPS + 1)))
    assert [g.key for g in plan] == [f"{bucket}/nc/part1.nc"]


def test_netcdf3_files_are_indexed_and_open_archived(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    pytest.importorskip("scipy")
    local = tmp_path / "classic.nc"
    ds = xr.Dataset(
        {"t": (("time", "x"), np.arange(40, dtype="f4").reshape(8, 5))},
        coords={"time": np.arange(8, dtype="i4")},
        attrs={"title": "classic"},
    )
    ds.to_netcdf(local, format="NETCDF3_64BIT", engine="scipy")
    archive.put_object(bucket, "nc3/classic.nc", local.read_bytes(), storage_class="STANDARD")
    report = ads.index_files(f"s3://{bucket}/nc3/classic.nc", fs=make_fs(), inline_threshold=0)
    assert report.ok, report.failed
    archive.put_object(bucket, "nc3/classic.nc", local.read_bytes(), storage_class="GLACIER")
    archive.requests.clear()
    opened = ads.open_dataset(f"s3://{bucket}/nc3/classic.nc", fs=make_fs())
    assert [r for r in archive.requests.matching() if (r.key or "").startswith("nc3/")] == []
    plan = ads.plan_dataset(opened["t"])
    assert [g.key for g in plan] == [f"{bucket}/nc3/classic.nc"]
    ads.prefetch(opened["t"], wait=True, timeout=600)
    xr.testing.assert_identical(opened.load(), xr.open_dataset(local, engine="scipy").load())


def test_the_plan_names_per_variable_the_files_read_whole(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, make_fs: Any
) -> None:
    """A file without references (never indexed, or kerchunk could not describe it) is
    read whole: the plan says so per variable, naming those files; a selection of only
    referenced chunks has none."""
    files = make_files(tmp_path, 2)
    archive.put_objects(bucket, {k: v[0] for k, v in files.items()}, storage_class="STANDARD")
    assert ads.index_files(f"s3://{bucket}/nc/part0.nc", fs=make_fs(), inline_threshold=0).ok
    urls = [f"s3://{bucket}/nc/part{i}.nc" for i in range(2)]
    ds = ads.open_mfdataset(urls, fs=make_fs(), combine="by_coords")
    plan = ads.plan_dataset(ds[["t", "q"]])
    whole = (f"{bucket}/nc/part1.nc",)
    assert plan.read_whole == {"lat": whole, "q": whole, "t": whole}  # lat: a lazy coordinate
    assert f"1 file read whole, not chunk by chunk, for lat, q, t: {whole[0]} (no references" in (
        repr(plan)
    )
    (row,) = [i for i, g in enumerate(plan) if whole[0] in g.paths]
    assert plan.take([row]).read_whole == plan.read_whole  # derived plans keep it
    assert plan.only([g for g in plan if whole[0] not in g.paths]).read_whole == {}
    # prefetch's plan says it as plan_dataset's does
    assert ads.prefetch(ds[["t", "q"]], wait=False).plan.read_whole == plan.read_whole
    assert ads.plan_dataset(ds["t"].isel(time=slice(0, 2))).read_whole == {}  # part0's chunk
    assert ads.plan_dataset(ds["t"].isel(time=slice(STEPS, STEPS + 1))).read_whole == {
        "t": (f"{bucket}/nc/part1.nc",)
    }
