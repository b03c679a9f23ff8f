"""Plain hot objects listed by a catalog show their provider's own hot class.

A bundled zarr store keeps its metadata and coordinates as plain objects; on
Azure those are ``Hot`` blobs, and every listing through the catalog (``ls``,
``find``, ``info``, ``walk``, the planner's states) says so, as it says
``STANDARD`` on S3. The catalog records its provider in its pointer; older
pointers, which do not, take it from their bundles.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.catalog import Catalog
from archivefs.catalog.index import POINTER, POINTER_CHECKSUM, pointer_digest
from archivefs.catalog.layout import catalog_dir
from archivefs.catalog.table import BundleInfo
from archivefs.catalog.writer import bundle_tree
from archivefs.errors import CatalogError
from archivefs.model import StorageClass

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from archivefs.testing import EmulatedAzureArchive


def _bundle_zarr(archive: EmulatedAzureArchive, container: str, tmp_path: Path) -> tuple[Any, str]:
    from tests.zarr_data import make_source

    source = tmp_path / "src.zarr"
    make_source().to_zarr(source, mode="w", consolidated=False, zarr_format=3)
    az = fsspec.filesystem("az", skip_instance_cache=True, **archive.storage_options())
    dest = f"{container}/z.zarr"
    report = bundle_tree(
        fsspec.filesystem("file"), str(source), az, dest,
        storage_class="Archive", hot_arrays=frozenset({"time", "y", "x"}),
    )  # fmt: skip
    assert report.kept_hot  # zarr.json files and the coordinates
    return az, dest


def test_hot_objects_listed_by_an_azure_catalog_say_hot(
    azure_archive: EmulatedAzureArchive,
    azure_container: str,
    make_az: Callable[..., Any],
    tmp_path: Path,
) -> None:
    az, dest = _bundle_zarr(azure_archive, azure_container, tmp_path)
    catalog = Catalog.load(az, catalog_dir(dest))
    assert catalog.provider == "azure"
    assert catalog.hot_class is StorageClass.parse("Hot", provider="azure")
    pointer = json.loads(az.cat_file(f"{catalog_dir(dest)}/{POINTER}"))
    assert pointer["provider"] == "azure"
    # the blobs themselves are Hot on the service: the catalog says what a listing says
    meta = f"{dest}/zarr.json"
    assert azure_archive.tier_of(meta) == "Hot"

    fs = make_az()
    found = fs.find(dest, detail=True)
    plain = {n: e for n, e in found.items() if n in catalog.plain}
    members = {n: e for n, e in found.items() if n not in catalog.plain}
    assert len(plain) == len(catalog.plain) > 0
    assert {(e["storage_class"], e["access"], e["restore"]) for e in plain.values()} == {
        ("Hot", "immediate", "hot")
    }
    assert {(e["storage_class"], e["access"]) for e in members.values()} == {("Archive", "restore")}
    assert fs.info(meta)["storage_class"] == "Hot"
    listed = {e["name"]: e for e in fs.ls(dest, detail=True)}
    assert listed[meta]["storage_class"] == "Hot"
    assert listed[meta]["access"] == "immediate"
    walked = fs.find(dest, maxdepth=2, detail=True)  # the catalog's walk
    assert walked[f"{dest}/time/zarr.json"]["storage_class"] == "Hot"
    # the planner's states of plain objects: Hot, nothing to restore
    plan = fs.plan([meta])
    assert [str(g.state.storage_class) for g in plan] == ["Hot"]
    assert plan.to_restore == []
    assert "STANDARD" not in json.dumps(list(found.values()), default=str)


def test_an_s3_catalog_still_says_standard_and_older_pointers_take_their_bundles_provider(
    tmp_path: Path,
) -> None:
    local = fsspec.filesystem("file")
    archive_class = StorageClass.parse("Archive", provider="azure")
    bundle = BundleInfo(key="c/k/.archivefs/bundles/b.zip", size=10, storage_class=archive_class,
                        members=0, sha256="0" * 64)  # fmt: skip
    directory = str(tmp_path / "cat")
    Catalog(bundles=[bundle], plain={"c/k/zarr.json": 3}).save(local, directory)
    pointer_path = f"{directory}/{POINTER}"
    pointer = json.loads(local.cat_file(pointer_path))
    assert pointer["provider"] == "azure"  # from the bundles, recorded
    del pointer["provider"]  # what a catalog saved before the provider was recorded holds
    pointer[POINTER_CHECKSUM] = pointer_digest(pointer)
    local.pipe_file(pointer_path, json.dumps(pointer).encode())
    older = Catalog.load(local, directory)
    assert (older.provider, older.hot_class.value) == ("azure", "Hot")

    s3 = Catalog(plain={"b/zarr.json": 3})  # no bundles, nothing recorded: S3
    assert (s3.provider, s3.hot_class) == ("s3", StorageClass.STANDARD)
    only_plain = Catalog().with_plain({"c/zarr.json": 3}, "azure")  # recorded, kept on merge
    assert only_plain.merge(Catalog()).hot_class.value == "Hot"

    pointer["provider"] = "tape"
    pointer[POINTER_CHECKSUM] = pointer_digest(pointer)
    local.pipe_file(pointer_path, json.dumps(pointer).encode())
    with pytest.raises(CatalogError, match=r"unknown provider 'tape'.*Fix"):
        Catalog.load(local, directory)
