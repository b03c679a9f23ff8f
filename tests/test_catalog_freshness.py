"""A long-lived filesystem sees catalogs bundled or changed after it first looked (issue 31,
item 12), within ``catalog_ttl`` seconds, for one GET of the registry per bucket and one
of each catalog pointer in use per ttl; ``invalidate_cache()`` forgets them at once.

Time is the view's clock, set by the test; counts are the servers'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir, registry_path
from archivefs.catalog.writer import bundle_tree

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@dataclass
class Store:
    """One provider's emulated store as these tests use it."""

    bucket: str
    raw: Any  # the store library's own filesystem, for bundling
    make: Callable[..., Any]  # an ArchiveFileSystem on it
    gets: Callable[[], list[str]]  # the paths of the GETs counted since clear()
    clear: Callable[[], None]
    hot: str  # the provider's hot class


@pytest.fixture(params=["s3", "azure"])
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "s3":
        archive = request.getfixturevalue("archive")
        import s3fs

        return Store(
            request.getfixturevalue("bucket"),
            s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options()),
            request.getfixturevalue("make_fs"),
            lambda: [f"{r.bucket}/{r.key}" for r in archive.requests.records if r.op == "GET"],
            archive.requests.clear,
            "STANDARD",
        )
    azure = request.getfixturevalue("azure_archive")
    return Store(
        request.getfixturevalue("azure_container"),
        fsspec.filesystem("az", skip_instance_cache=True, **azure.storage_options()),
        request.getfixturevalue("make_az"),
        lambda: [f"{r.container}/{r.blob}" for r in azure.requests.records if r.op == "GetBlob"],
        azure.requests.clear,
        "Hot",
    )


def _bundle(store: Store, src: Path, root: str, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    bundle_tree(fsspec.filesystem("file"), str(src), store.raw, root, storage_class=store.hot)


def _counts(store: Store, root: str) -> tuple[int, int, int]:
    """GETs of the registry, of ``root``'s catalog pointer, and of its other catalog files."""
    gets = store.gets()
    pointer = f"{catalog_dir(root)}/{POINTER}"
    shards = [g for g in gets if g.startswith(catalog_dir(root) + "/") and g != pointer]
    return gets.count(registry_path(store.bucket)), gets.count(pointer), len(shards)


def test_a_catalog_bundled_or_changed_later_is_seen_once_the_ttl_has_passed(
    store: Store, tmp_path: Path
) -> None:
    b, root = store.bucket, f"{store.bucket}/runs/r1"
    fs = store.make(catalog_ttl=60)
    now = [0.0]
    fs.catalogs.clock = lambda: now[0]
    assert fs.find(b) == []  # the first look: no registry yet
    _bundle(store, tmp_path / "one", root, {"a.dat": b"a" * 10})

    store.clear()
    now[0] = 59.0  # within the ttl: what was read is trusted, nothing is asked
    assert fs.find(b) == []
    assert _counts(store, root) == (0, 0, 0)

    store.clear()
    now[0] = 60.0  # the registry again, then the new catalog
    assert fs.find(b) == [f"{root}/a.dat"]
    registry, pointer, shards = _counts(store, root)
    assert (registry, pointer) == (1, 1)
    assert shards >= 1

    _bundle(store, tmp_path / "two", root, {"b.dat": b"b" * 10})  # another run adds b.dat
    store.clear()
    now[0] = 119.0
    assert fs.find(b) == [f"{root}/a.dat"]
    assert _counts(store, root) == (0, 0, 0)
    store.clear()
    now[0] = 120.0  # the pointer changed: the catalog is opened anew
    assert fs.find(b) == [f"{root}/a.dat", f"{root}/b.dat"]
    registry, pointer, shards = _counts(store, root)
    assert (registry, pointer) == (1, 1)
    assert shards >= 1

    store.clear()
    now[0] = 500.0  # nothing changed: one GET each, the shards loaded are kept
    assert fs.find(b) == [f"{root}/a.dat", f"{root}/b.dat"]
    assert fs.cat_file(f"{root}/b.dat") == b"b" * 10
    assert _counts(store, root) == (1, 1, 0)


def test_invalidate_cache_forgets_the_registry_and_catalogs_at_once(
    store: Store, tmp_path: Path
) -> None:
    b, root = store.bucket, f"{store.bucket}/runs/r1"
    fs = store.make(catalog_ttl=math.inf)  # trusted until invalidated
    assert fs.find(b) == []
    _bundle(store, tmp_path / "one", root, {"a.dat": b"a" * 10})
    assert fs.find(b) == []
    store.clear()
    fs.invalidate_cache()
    assert fs.find(b) == [f"{root}/a.dat"]
    registry, pointer, _ = _counts(store, root)
    assert (registry, pointer) == (1, 1)
    _bundle(store, tmp_path / "two", root, {"b.dat": b"b"})
    fs.invalidate_cache(b)  # a bucket's: its catalogs too
    assert fs.find(b) == [f"{root}/a.dat", f"{root}/b.dat"]


def test_catalog_ttl_must_be_seconds_and_survives_json(store: Store) -> None:
    from fsspec.spec import AbstractFileSystem

    with pytest.raises(ValueError, match="catalog_ttl must be a number of seconds"):
        store.make(catalog_ttl=-1)
    rebuilt = AbstractFileSystem.from_json(store.make(catalog_ttl=math.inf).to_json())
    assert rebuilt.catalogs.ttl == math.inf
