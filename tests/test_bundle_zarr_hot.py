"""A bundled zarr store keeps metadata, coordinates and small arrays hot: opens without restores."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import xarray as xr
from click.testing import CliRunner

import archivefs.datasets as ads
from archivefs.catalog.grouping import SourceItem
from archivefs.catalog.hot import SMALL_ARRAY_BYTES, hot_items, parse_hot_arrays
from archivefs.cli import main
from archivefs.errors import ObjectArchivedError

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


def _dataset() -> Any:
    rng = np.random.default_rng(1)
    data = rng.normal(size=(400, 30, 40)).astype("float32")  # 1.9 MB per variable
    return xr.Dataset(
        {"t": (("time", "y", "x"), data), "q": (("time", "y", "x"), data * 2)},
        coords={"time": np.arange(400), "y": np.arange(30), "x": np.arange(40)},
    ).chunk({"time": 10, "y": 30, "x": 40})


def _bundle(archive: EmulatedArchive, bucket: str, tmp_path: Path, fmt: int, *extra: str) -> str:
    source = tmp_path / f"v{fmt}.zarr"
    _dataset().to_zarr(source, mode="w", consolidated=fmt == 2, zarr_format=fmt)
    url = f"s3://{bucket}/v{fmt}{'-'.join(extra)}.zarr"
    options = ["--storage-options", json.dumps(archive.storage_options())]
    grouping = ["--group-by", "chunks:0", "--window", "5", "--target-size", "256KiB"]
    result = CliRunner().invoke(main, [*options, "bundle", str(source), url, *grouping, *extra])
    assert result.exit_code == 0, result.output
    return url


def _open(archive: EmulatedArchive, tmp_path: Path, url: str) -> Any:
    return ads.open_zarr(
        url,
        storage_options=archive.storage_options(),
        journal=str(tmp_path / "j.sqlite"),
        restore_status_in_listings=True,
    )


@pytest.mark.parametrize("fmt", [2, 3])
def test_cli_bundle_by_chunks_keeps_the_store_openable(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, fmt: int
) -> None:
    url = _bundle(archive, bucket, tmp_path, fmt)
    archive.requests.clear()
    ds = _open(archive, tmp_path, url)
    np.testing.assert_array_equal(ds["time"].values, np.arange(400))
    np.testing.assert_array_equal(ds["x"].values, np.arange(40))
    assert archive.requests.count("RestoreObject") == 0
    bundles = [r for r in archive.requests.records if r.key and "/.archivefs/bundles/" in r.key]
    assert bundles == []  # opening read no bundle at all
    with pytest.raises(ObjectArchivedError):  # the data variables are archived, as asked
        ds["t"].isel(time=slice(0, 10)).values  # noqa: B018


def test_hot_arrays_none_archives_the_coordinates_too(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    url = _bundle(archive, bucket, tmp_path, 3, "--hot-arrays", "none")
    with pytest.raises(ObjectArchivedError):
        _open(archive, tmp_path, url)


def test_index_coordinates_are_found_in_metadata_whatever_their_size() -> None:
    big = SMALL_ARRAY_BYTES  # each chunk: the coordinate totals well above the threshold
    items = [
        SourceItem("time/zarr.json", 300),
        *(SourceItem(f"time/c/{i}", big) for i in range(3)),
        SourceItem("t/zarr.json", 300),
        *(SourceItem(f"t/c/{i}/0/0", big) for i in range(3)),
        SourceItem("zarr.json", 100),
    ]
    documents = {
        "time/zarr.json": {"node_type": "array", "dimension_names": ["time"]},
        "t/zarr.json": {
            "node_type": "array",
            "dimension_names": ["time", "y", "x"],
            "attributes": {"coordinates": "lat"},
        },
        "zarr.json": {"node_type": "group"},
    }
    hot = {i.path for i in hot_items(items, lambda p: json.dumps(documents[p]).encode())}
    assert hot == {"time/zarr.json", "t/zarr.json", "zarr.json", *(f"time/c/{i}" for i in range(3))}
    named = hot_items(items, lambda p: b"{}", parse_hot_arrays("t"))
    assert {i.path for i in named} >= {f"t/c/{i}/0/0" for i in range(3)}
    assert hot_items([SourceItem("a/b.nc", 10)], lambda p: b"") == []  # not a zarr store
