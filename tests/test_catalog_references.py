"""kerchunk references of netCDF4/HDF5 files (catalog/references.py): made, kept, refused."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import fsspec
import numpy as np
import pytest

from archivefs.catalog import references as refs_mod
from archivefs.catalog.layout import references_path
from archivefs.errors import ObjectChangedError, ReferencesError
from archivefs.stores.conditional import run_blocking
from tests.support.netcdf import write_netcdf

xr = pytest.importorskip("xarray")
pytest.importorskip("kerchunk")
pytest.importorskip("h5netcdf")


def test_file_kind_from_signatures() -> None:
    assert refs_mod.file_kind(b"\x89HDF\r\n\x1a\n....") == "hdf5"
    assert refs_mod.file_kind(b"\0" * 512 + b"\x89HDF\r\n\x1a\n") == "hdf5"  # a user block
    assert refs_mod.file_kind(b"CDF\x01\0\0") == "netcdf3"
    assert refs_mod.file_kind(b"CDF\x02\0\0") == "netcdf3"
    assert refs_mod.file_kind(b"PK\x03\x04") is None


def test_references_read_without_archivefs_bit_equal(tmp_path: Path) -> None:
    local = tmp_path / "a.nc"
    write_netcdf(local)
    url = local.as_uri()
    with local.open("rb") as f:
        refs = refs_mod.make_references(f, url, inline_threshold=0)
    # chunked and compressed: one reference per 2x5 chunk, pointing into the file
    assert sorted(k for k in refs["refs"] if k.startswith("t/") and "." not in k[2]) == [
        "t/0.0",
        "t/1.0",
        "t/2.0",
        "t/3.0",
    ]
    assert all(refs["refs"][f"t/{i}.0"][0] == url for i in range(4))
    # coordinates are inline even with inline_threshold=0: opening reads no chunk
    for name in ("time/0", "lat/0"):
        assert refs["refs"][name].startswith("base64:"), name
    rfs = fsspec.filesystem("reference", fo=refs, remote_protocol="file")
    opened = xr.open_dataset(rfs.get_mapper(""), engine="zarr", consolidated=False)
    original = xr.open_dataset(local, engine="h5netcdf")
    xr.testing.assert_identical(opened.load(), original.load())
    raw = xr.open_dataset(
        rfs.get_mapper(""), engine="zarr", consolidated=False, mask_and_scale=False
    )
    plain = xr.open_dataset(local, engine="h5netcdf", mask_and_scale=False)
    assert raw["q"].dtype == plain["q"].dtype == np.dtype("i2")
    np.testing.assert_array_equal(raw["q"].values, plain["q"].values)  # bit for bit


def test_relocated_points_into_the_bundle(tmp_path: Path) -> None:
    local = tmp_path / "a.nc"
    write_netcdf(local)
    with local.open("rb") as f:
        refs = refs_mod.make_references(f, "memory://x", inline_threshold=0)
    moved = refs_mod.relocated(
        refs, "s3://bkt/.archivefs/bundles/b.zip", 1000, local.stat().st_size
    )
    before, after = refs["refs"]["t/1.0"], moved["refs"]["t/1.0"]
    assert after == ["s3://bkt/.archivefs/bundles/b.zip", before[1] + 1000, before[2]]
    assert moved["refs"]["time/0"] == refs["refs"]["time/0"]  # inline stays inline


def _described(tmp_path: Path, etag: str) -> dict:
    local = tmp_path / "a.nc"
    write_netcdf(local)
    with local.open("rb") as f:
        refs = refs_mod.make_references(f, "s3://bkt/a.nc")
    target = refs_mod.Target("s3://bkt/a.nc", local.stat().st_size, etag)
    return refs_mod.described(refs, "bkt/a.nc", [target])


def test_saved_references_round_trip_and_are_kept_when_the_same(tmp_path: Path) -> None:
    fs = fsspec.filesystem("file")
    path = str(tmp_path / "root" / ".archivefs" / "references" / "a.nc.json")
    refs = _described(tmp_path, '"e1"')
    assert run_blocking(fs, refs_mod.save_references(fs, path, refs)) is True
    assert run_blocking(fs, refs_mod.save_references(fs, path, refs)) is False  # same objects
    loaded = run_blocking(fs, _load(fs, [path, path + ".missing"]))
    assert loaded[path] == refs
    assert loaded[path + ".missing"] is None
    assert refs_mod.targets_of(loaded[path]) == [
        refs_mod.Target("s3://bkt/a.nc", refs_mod.targets_of(refs)[0].size, '"e1"')
    ]
    changed = _described(tmp_path, '"e2"')
    assert run_blocking(fs, refs_mod.save_references(fs, path, changed)) is True
    assert (
        json.loads(Path(path).read_bytes())["archivefs"]["targets"]["s3://bkt/a.nc"]["etag"]
        == "e2"  # recorded without the quotes some answers keep
    )


async def _load(fs: object, paths: list[str]) -> dict:
    from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

    return await refs_mod.load_references(AsyncFileSystemWrapper(fs), paths)


def test_damaged_references_are_never_replaced(tmp_path: Path) -> None:
    fs = fsspec.filesystem("file")
    path = tmp_path / "a.nc.json"
    path.write_bytes(b"{not json")
    with pytest.raises(ReferencesError, match="not valid JSON") as info:
        run_blocking(fs, refs_mod.save_references(fs, str(path), _described(tmp_path, '"e"')))
    assert "index the file again" in str(info.value)
    assert path.read_bytes() == b"{not json"
    path.write_text(
        json.dumps({"version": 1, "refs": {}, "archivefs": {"format": 99, "targets": {}}})
    )
    with pytest.raises(ReferencesError, match="upgrade archivefs"):
        run_blocking(fs, refs_mod.save_references(fs, str(path), _described(tmp_path, '"e"')))


def test_writers_racing_on_one_file_leave_readable_references(tmp_path: Path) -> None:
    fs = fsspec.filesystem("file")
    path = str(tmp_path / "a.nc.json")
    versions = [_described(tmp_path, f'"e{i}"') for i in range(6)]
    threads = [
        threading.Thread(target=run_blocking, args=(fs, refs_mod.save_references(fs, path, v)))
        for v in versions
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = refs_mod.parse_references(Path(path).read_bytes(), path)
    assert stored in versions  # one writer's whole references, never a mixture


def test_check_targets_refuses_a_changed_or_missing_object(tmp_path: Path) -> None:
    refs = _described(tmp_path, '"e1"')
    (target,) = refs_mod.targets_of(refs)
    refs_mod.check_targets(refs, {target.url: (target.size, "e1")})
    refs_mod.check_targets(refs, {target.url: (target.size, '"e1"')})  # Azure: both spellings
    with pytest.raises(ObjectChangedError, match="changed since") as info:
        refs_mod.check_targets(refs, {target.url: (target.size, '"e2"')})
    assert info.value.path == "bkt/a.nc"
    assert "archivefs index" in str(info.value)
    assert not isinstance(info.value, FileNotFoundError)
    with pytest.raises(ObjectChangedError, match="gone"):
        refs_mod.check_targets(refs, {target.url: None})


def test_references_path_sits_beside_the_catalog() -> None:
    assert references_path("bkt/root", "a/b.nc") == "bkt/root/.archivefs/references/a/b.nc.json"


def test_why_a_bundled_file_has_no_references_is_said_in_words() -> None:
    from archivefs.catalog.member_references import unreferenced_reason

    missing = ModuleNotFoundError("No module named 'kerchunk'", name="kerchunk")
    assert unreferenced_reason(missing) == (
        "kerchunk is not installed: pip install 'archivefs[xarray]' and bundle again"
    )
    assert unreferenced_reason(ValueError("scaleoffset")) == "ValueError: scaleoffset"
