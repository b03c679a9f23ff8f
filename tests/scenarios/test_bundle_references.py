"""netCDF/HDF5 members get kerchunk references when they are bundled, on every provider.

``bundle_tree`` describes each netCDF4/HDF5/netCDF3 member from the local bundle it
has just written, at no request to the cold store but the references' own writes;
the members then open from the references without a restore, a selection plans to
exactly the bundles holding its chunks (worked out here from the files' layout),
reads fetch only those chunks' bytes and equal the originals, and a replaced bundle
is refused before a byte of it is used. Counts are the server's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import fsspec
import numpy as np
import pytest

from archivefs.catalog import ByKey, Catalog
from archivefs.catalog.layout import catalog_dir
from archivefs.catalog.writer import bundle_tree
from archivefs.errors import ObjectChangedError
from tests.support.netcdf import CHUNK_ROWS, STEPS, write_netcdf
from tests.support.providers import provider_params, reads, restore_calls, seed

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.providers import Provider

xr = pytest.importorskip("xarray")
pytest.importorskip("kerchunk")
pytest.importorskip("h5netcdf")
pytest.importorskip("scipy")
ads = pytest.importorskip("archivefs.datasets")
pytestmark = pytest.mark.timeout(900)

NO_COLD = {
    "rgw": "radosgw stores no class that needs a restore or bills a read, and its ops "
    "log has no per-object request records to count this scenario's claims with"
}
PARTS = 3
WIDTH = 500  # chunks of t over 500 bytes: referenced, not inline (kerchunk's threshold)
# which bundle each file goes in: part1 and part2 share one, the others are apart
BUNDLE_OF = {
    "part0.nc": "a",
    "part1.nc": "b",
    "part2.nc": "b",
    "classic.nc": "c",
    "filtered.nc": "c",
    "notes.txt": "c",
}


def write_sources(folder: Path) -> None:
    """Three netCDF4 files of consecutive time steps, a netCDF3 file, an HDF5 file whose
    filter kerchunk cannot describe (scale-offset), and a text file."""
    import h5py

    folder.mkdir(parents=True)
    for i in range(PARTS):
        write_netcdf(folder / f"part{i}.nc", start=i * STEPS, x=WIDTH)
    classic = xr.Dataset(
        {"t": (("time", "x"), np.arange(8 * WIDTH, dtype="f4").reshape(8, WIDTH))},
        coords={"time": np.arange(8, dtype="i4")},
        attrs={"title": "classic"},
    )
    classic.to_netcdf(folder / "classic.nc", format="NETCDF3_64BIT", engine="scipy")
    with h5py.File(folder / "filtered.nc", "w") as f:
        f.create_dataset("s", data=np.arange(100), chunks=(10,), scaleoffset=0)
    (folder / "notes.txt").write_text("not a netCDF file\n")


def stored_chunk(local: Path, row: int) -> bytes:
    """The stored (compressed) bytes of the chunk of ``t`` holding time step ``row``."""
    import h5py

    with h5py.File(local, "r") as f:
        _, data = f["t"].id.read_direct_chunk((row, 0))
    return bytes(data)


def touching(provider: Provider, prefix: str, *ops: str) -> list[Any]:
    """Requests (of ``ops``, or any) whose object key starts with ``prefix``."""
    spec = provider.spec
    return [
        r
        for r in provider.server.requests.matching()
        if (getattr(r, spec.key_field) or "").startswith(prefix) and (not ops or r.op in ops)
    ]


@pytest.mark.parametrize("provider", provider_params(skip=NO_COLD), indirect=True)
def test_bundled_netcdf_opens_plans_and_reads_through_references_made_at_bundle_time(
    provider: Provider, tmp_path: Path
) -> None:
    spec = provider.spec
    folder = tmp_path / "src" / "nc"
    write_sources(folder)
    raw, root = provider.raw(), f"{provider.bucket}/r"
    provider.server.requests.clear()
    report = bundle_tree(
        fsspec.filesystem("file"),
        str(tmp_path / "src"),
        raw,
        root,
        policy=ByKey(func=lambda path: BUNDLE_OF[path.rsplit("/", 1)[-1]]),
        storage_class=spec.chunk_class,
    )
    described = ["classic.nc", *(f"part{i}.nc" for i in range(PARTS))]
    assert report.referenced == [f"{root}/nc/{name}" for name in described]
    assert list(report.unreferenced) == [f"{root}/nc/filtered.nc"]  # bundled all the same
    assert "scaleoffset" in report.unreferenced[f"{root}/nc/filtered.nc"]
    # the references cost one write each and nothing else: no bundle or member was read
    written = touching(provider, "r/.archivefs/references/")
    assert len(written) == len(described)
    assert all(r.op not in (spec.read_op, spec.head_op) for r in written)
    assert reads(provider, "r/.archivefs/bundles/") == 0

    catalog = Catalog.load(raw, catalog_dir(root))
    bundle_of = {}
    for name in BUNDLE_OF:
        member = catalog.lookup(f"{root}/nc/{name}")
        assert member is not None
        bundle_of[name] = member.bundle
    assert len(set(bundle_of.values())) == 3

    # opening the three archived files: no restore, no request to a bundle
    provider.server.requests.clear()
    urls = [f"{spec.protocol}://{root}/nc/part{i}.nc" for i in range(PARTS)]
    fs = provider.fs()
    ds = ads.open_mfdataset(urls, fs=fs, combine="by_coords")
    assert touching(provider, "r/.archivefs/bundles/") == []
    assert restore_calls(provider) == 0
    originals = xr.open_mfdataset(
        [folder / f"part{i}.nc" for i in range(PARTS)], engine="h5netcdf", combine="by_coords"
    )
    xr.testing.assert_identical(ds.coords.to_dataset(), originals.coords.to_dataset())
    assert ds.attrs == originals.attrs

    # the plan: the bundles of the files whose chunks hold the selected steps
    steps = range(STEPS - 2, STEPS + 2)  # part0's last chunk, part1's first
    selection = ds["t"].isel(time=slice(steps.start, steps.stop))
    plan = ads.plan_dataset(selection)
    assert sorted(g.key for g in plan) == sorted({bundle_of[f"part{s // STEPS}.nc"] for s in steps})
    assert restore_calls(provider) == 0

    result = ads.prefetch(selection, wait=True, timeout=600)
    assert result.requests_sent == (2 if spec.restores else 0)
    provider.server.requests.clear()
    fetched = fs.read_stats.bytes_fetched
    values = selection.values
    expected = originals["t"].isel(time=slice(steps.start, steps.stop)).values
    assert values.tobytes() == expected.tobytes()  # bit for bit
    # one ranged read per chunk, of exactly its stored bytes
    chunks = {(f"part{s // STEPS}.nc", s % STEPS // CHUNK_ROWS * CHUNK_ROWS) for s in steps}
    bundle_reads = touching(provider, "r/.archivefs/bundles/", spec.read_op)
    assert len(bundle_reads) == len(chunks) == 2
    needed = sum(len(stored_chunk(folder / name, row)) for name, row in chunks)
    assert fs.read_stats.bytes_fetched - fetched == needed
    if provider.name != "azure":  # the Azure proxy counts requests, not body bytes
        assert sum(r.bytes_sent for r in bundle_reads) == needed

    # the references are kerchunk JSON that fsspec reads without archivefs
    refs = json.loads(raw.cat_file(f"{root}/.archivefs/references/nc/part1.nc.json"))
    assert list(refs["archivefs"]["targets"]) == [f"{spec.protocol}://{bundle_of['part1.nc']}"]
    plain = fsspec.filesystem(
        "reference", fo=refs, fs={spec.protocol: raw}, skip_instance_cache=True
    )
    assert plain.cat_file("t/0.0") == stored_chunk(folder / "part1.nc", 0)

    # a netCDF3 member: opens without a request to its bundle, plans to it, reads equal
    provider.server.requests.clear()
    classic = ads.open_dataset(f"{spec.protocol}://{root}/nc/classic.nc", fs=provider.fs())
    assert touching(provider, "r/.archivefs/bundles/") == []
    assert [g.key for g in ads.plan_dataset(classic["t"])] == [bundle_of["classic.nc"]]
    ads.prefetch(classic["t"], wait=True, timeout=600)
    xr.testing.assert_identical(
        classic.load(), xr.open_dataset(folder / "classic.nc", engine="scipy").load()
    )

    # a replaced bundle is refused before a byte of it is used
    seed(provider, {bundle_of["part0.nc"].split("/", 1)[1]: b"another bundle"}, spec.hot_class)
    provider.server.requests.clear()
    with pytest.raises(ObjectChangedError, match="changed since") as info:
        ads.open_mfdataset(urls, fs=provider.fs())
    assert bundle_of["part0.nc"] in str(info.value)
    assert not isinstance(info.value, FileNotFoundError)
    assert touching(provider, "r/.archivefs/bundles/", spec.read_op, spec.head_op) == []


def test_cli_bundle_counts_the_referenced_and_names_an_unreferenced_file(
    archive: Any, bucket: str, tmp_path: Path
) -> None:
    """``archivefs bundle`` says in one line each how many files got references and how
    many did not (with one example and the reason), and exits 0."""
    from click.testing import CliRunner

    from archivefs.cli import main

    write_sources(tmp_path / "src" / "nc")
    base = ["--storage-options", json.dumps(archive.storage_options())]
    dest = f"s3://{bucket}/r"
    text = CliRunner().invoke(main, [*base, "bundle", str(tmp_path / "src"), dest])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert "4 netCDF/HDF5 files referenced (open unrestored)" in lines
    (without,) = [line for line in lines if "without references" in line]
    assert without.startswith("1 netCDF/HDF5 file(s) bundled without references")
    assert f"{bucket}/r/nc/filtered.nc" in without
    assert "scaleoffset" in without
    summary = CliRunner().invoke(main, [*base, "--json", "bundle", str(tmp_path / "src"), dest])
    assert summary.exit_code == 0, summary.output
    report = json.loads(summary.stdout)
    assert report["bundles_reused"] == 1  # the same bundle: nothing sent again
    assert report["referenced"] == 0  # a recorded bundle is kept as it is, references too
    assert list(report["unreferenced"]) == []


def test_a_netcdf_file_kept_hot_as_a_plain_object_is_referenced_too(
    archive: Any, bucket: str, tmp_path: Path
) -> None:
    """A policy that keeps a netCDF file as a plain object: its references point at the
    object itself, with the ETag the store gave after the upload; it opens from them,
    plans to itself, reads equal, and a replaced object is refused."""
    from dataclasses import dataclass

    from archivefs.catalog import ByPrefix
    from archivefs.filesystem import ArchiveFileSystem

    @dataclass(frozen=True)
    class KeepPart2(ByPrefix):
        def keep_hot(self, items: Any) -> list[Any]:
            return [i for i in items if i.path.endswith("part2.nc")]

    folder = tmp_path / "src" / "nc"
    write_sources(folder)
    raw = fsspec.filesystem("s3", skip_instance_cache=True, **archive.storage_options())
    root = f"{bucket}/r"
    report = bundle_tree(
        fsspec.filesystem("file"),
        str(tmp_path / "src"),
        raw,
        root,
        policy=KeepPart2(depth=0),
        storage_class="GLACIER",
    )
    assert report.kept_hot == [f"{root}/nc/part2.nc"]
    assert f"{root}/nc/part2.nc" in report.referenced
    refs = json.loads(raw.cat_file(f"{root}/.archivefs/references/nc/part2.nc.json"))
    etag = raw.info(f"{root}/nc/part2.nc")["ETag"].strip('"')
    assert refs["archivefs"]["targets"] == {
        f"s3://{root}/nc/part2.nc": {"size": (folder / "part2.nc").stat().st_size, "etag": etag}
    }

    def make_fs() -> ArchiveFileSystem:
        return ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(tmp_path / "journal.sqlite"),
            skip_instance_cache=True,
        )

    archive.requests.clear()
    ds = ads.open_dataset(f"s3://{root}/nc/part2.nc", fs=make_fs())
    assert [r for r in archive.requests.matching() if (r.key or "") == "r/nc/part2.nc"] == []
    plan = ads.plan_dataset(ds["t"].isel(time=slice(0, 2)))
    assert [g.key for g in plan] == [f"{root}/nc/part2.nc"]
    assert {g.action.value for g in plan} == {"read"}
    expected = xr.open_dataset(folder / "part2.nc", engine="h5netcdf")
    assert ds["t"].values.tobytes() == expected["t"].values.tobytes()

    archive.put_object(bucket, "r/nc/part2.nc", (folder / "part1.nc").read_bytes())
    with pytest.raises(ObjectChangedError, match="changed since"):
        ads.open_dataset(f"s3://{root}/nc/part2.nc", fs=make_fs())
