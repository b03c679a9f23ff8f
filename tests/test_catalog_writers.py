"""Many writers, one archive: bundling runs into one bucket at the same time lose nothing.

Each round starts three ``bundle`` runs at once on their own threads and
filesystem instances: two into the same root, one into a root of its own in the
same bucket. Every member of every run must then be in the catalog and read back,
every bundle a catalog names must exist, and the bucket's registry must list every
root. Against the real servers: moto (S3), Azurite, the GCS emulator, the Oracle
fake, radosgw, and a local directory.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.catalog import Catalog
from archivefs.catalog.grouping import ByPrefix
from archivefs.catalog.index import POINTER, POINTER_CHECKSUM, pointer_digest
from archivefs.catalog.layout import catalog_dir, registry_path
from archivefs.catalog.writer import bundle_tree, rebuild_catalog
from archivefs.errors import CatalogError
from archivefs.stores.conditional import is_local, read_versioned, write_versioned
from tests.support.groups import RGW_GROUP

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

ROUNDS = 20
HOT = {"s3": "STANDARD", "azure": "Hot", "gcs": "STANDARD", "oracle": "Standard"}


# provider: (its fixture of emulated servers, its bucket fixture, fsspec protocol, hot class)
SERVERS = {
    "s3": ("archive", "bucket", "s3", "STANDARD"),
    "azure": ("azure_archive", "azure_container", "az", "Hot"),
    "gcs": ("gcs_archive", "gcs_bucket", "gs", "STANDARD"),
    "oracle": ("oracle_archive", "oracle_bucket", "oci", "Standard"),
    "rgw": ("local_rgw", "rgw_bucket", "s3", "STANDARD"),  # If-Match needs the unquoted ETag
}


@pytest.fixture(
    params=[*(p if p != "rgw" else pytest.param(p, marks=RGW_GROUP) for p in SERVERS), "local"]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Callable[[], Any], str, str]:
    """(a new raw filesystem each call, a bucket or directory, the hot class to bundle in)."""
    if request.param == "local":
        directory = tmp_path / "dest"
        directory.mkdir()
        return lambda: fsspec.filesystem("file"), str(directory), "STANDARD"
    server, bucket_fixture, protocol, klass = SERVERS[request.param]
    options = request.getfixturevalue(server).storage_options()
    bucket = request.getfixturevalue(bucket_fixture)

    def new_fs() -> Any:
        return fsspec.filesystem(protocol, skip_instance_cache=True, **options)

    return new_fs, bucket, klass


def _tree(root: Path, tag: str, n: int = 6) -> dict[str, bytes]:
    files = {f"{tag}/d{i % 2}/f{i}.dat": f"{tag} file {i} ".encode() * (20 + i) for i in range(n)}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def _in_bucket(fs: Any, path: str) -> str:
    """``path`` without its protocol and bucket (ocifs lists ``bucket@namespace/...``)."""
    return str(fs._strip_protocol(path)).split("/", 1)[1]


def _race(runs: list[tuple[Path, Any, str, str]]) -> list[BaseException]:
    """Start ``bundle_tree`` for every (src, fs, dest, class) at once; the errors raised."""
    start = threading.Barrier(len(runs))
    errors: list[BaseException] = []

    def run(src: Path, fs: Any, dest: str, klass: str) -> None:
        start.wait()
        try:
            bundle_tree(
                fsspec.filesystem("file"), str(src), fs, dest,
                storage_class=klass, policy=ByPrefix(depth=2),
            )  # fmt: skip
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=args) for args in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_bundle_runs_keep_every_member(
    store: tuple[Callable[[], Any], str, str], tmp_path: Path
) -> None:
    new_fs, bucket, klass = store
    fs = new_fs()
    # the three writers' own instances, made once (a client each: its start-up, not the
    # race, took most of a round), each round starting with no listing cached
    writers = [new_fs() for _ in range(3)]
    shared = f"{bucket}/shared"
    expected: dict[str, bytes] = {}
    roots = []
    for n in range(ROUNDS):
        for writer in writers:
            writer.invalidate_cache()
        sources = [tmp_path / f"r{n}" / side for side in ("a", "b", "c")]
        trees = []
        for src in sources:
            src.mkdir(parents=True)
            trees.append(_tree(src, f"{src.name}{n}"))
        own = f"{bucket}/own{n}"
        roots.append(own)
        errors = _race(
            [
                (sources[0], writers[0], shared, klass),
                (sources[1], writers[1], shared, klass),
                (sources[2], writers[2], own, klass),
            ]
        )
        assert errors == []
        expected.update({f"{shared}/{k}": v for tree in trees[:2] for k, v in tree.items()})
        catalog = Catalog.load(fs, catalog_dir(shared))
        assert sorted(catalog.paths) == sorted(expected), f"round {n}"
        own_catalog = Catalog.load(fs, catalog_dir(own))
        assert sorted(own_catalog.paths) == sorted(f"{own}/{k}" for k in trees[2])
        # nothing a catalog names was deleted: one listing of the root, not a HEAD a bundle
        fs.invalidate_cache()
        present = {_in_bucket(fs, p) for p in fs.find(shared)}
        fs.invalidate_cache()  # the next round's loads see the next round's files
        assert [b for b in catalog.bundles if _in_bucket(fs, b) not in present] == []
    # every member of every run reads back from its bundle at its offset and length (one
    # read a bundle, sliced, not a ranged request a member)
    bundles: dict[str, bytes] = {}
    for path, data in expected.items():
        member = catalog.lookup(path)
        assert member is not None
        if member.bundle not in bundles:
            bundles[member.bundle] = fs.cat_file(member.bundle)
        assert bundles[member.bundle][member.offset : member.offset + member.length] == data
    if not is_local(fs):  # every root is in the registry (no lost registry update)
        registry = json.loads(fs.cat_file(registry_path(bucket)))["roots"]
        assert sorted(registry) == sorted([shared, *roots])


def test_a_catalog_that_cannot_be_read_stops_the_run_and_is_kept(
    store: tuple[Callable[[], Any], str, str], tmp_path: Path
) -> None:
    # a damaged pointer, or one of a newer write format, is never taken for "no catalog":
    # the run stops before it uploads anything, and the pointer is left as it was
    new_fs, bucket, klass = store
    fs = new_fs()
    dest = f"{bucket}/root"
    first = tmp_path / "first"
    first.mkdir()
    _tree(first, "x")
    bundle_tree(fsspec.filesystem("file"), str(first), fs, dest, storage_class=klass)
    pointer_path = f"{catalog_dir(dest)}/{POINTER}"
    pointer = json.loads(fs.cat_file(pointer_path))
    second = tmp_path / "second"
    second.mkdir()
    _tree(second, "y")
    newer = {**pointer, "write_format": 99}
    newer[POINTER_CHECKSUM] = pointer_digest(newer)
    for damaged, message in (
        (b'{"version": 2, "shards": [', "not valid JSON"),
        (json.dumps(newer).encode(), "newer archivefs"),
    ):
        fs.pipe_file(pointer_path, damaged)
        before = sorted(fs.find(bucket))
        with pytest.raises(CatalogError, match=message) as caught:
            bundle_tree(
                fsspec.filesystem("file"), str(second), fs, dest,
                storage_class=klass, orphans="delete", orphan_age=0,
            )  # fmt: skip
        assert caught.value.fix  # names what to do
        assert fs.cat_file(pointer_path) == damaged  # kept as it was
        assert sorted(fs.find(bucket)) == before  # nothing uploaded, nothing deleted
    newer_catalog = Catalog.load(fs, catalog_dir(dest))  # still readable by this release
    assert len(newer_catalog) == 6


def test_a_pointer_that_went_back_is_not_saved_over(
    store: tuple[Callable[[], Any], str, str], tmp_path: Path
) -> None:
    # generations: each save adds one; a writer that finds an older generation than the
    # one it read (a pointer put back from a copy while it ran) refuses to save over it
    new_fs, bucket, klass = store
    fs = new_fs()
    directory = catalog_dir(f"{bucket}/root")
    src = tmp_path / "src"
    src.mkdir()
    _tree(src, "x")
    bundle_tree(fsspec.filesystem("file"), str(src), fs, f"{bucket}/root", storage_class=klass)
    path = f"{directory}/{POINTER}"
    old_raw = fs.cat_file(path)
    catalog, version = Catalog.read_for_update(fs, directory)
    assert version is not None
    assert version.generation == 1
    version = catalog.commit(fs, directory, over=version, save_id="mine")
    assert version.generation == 2
    current = read_versioned(fs, path)
    assert current is not None
    assert write_versioned(fs, path, old_raw, current[1])  # put the generation-1 copy back
    _, back = Catalog.read_for_update(fs, directory)
    assert back is not None
    assert back.generation == 1
    assert not write_versioned(fs, path, b"{}", current[1])  # a stale version writes nothing
    from archivefs.catalog.writer import _CatalogWriter

    writer = _CatalogWriter(fs, directory, catalog, version)  # it read generation 2
    with pytest.raises(CatalogError, match="went back"):
        writer.save()
    assert fs.cat_file(path) == old_raw


def test_nfc_and_nfd_spellings_of_one_name_are_one_member(tmp_path: Path) -> None:
    # members are recorded under their NFC spelling: a run that bundles the NFD spelling
    # is warned, and a later run's file of the same NFC name replaces it (a re-bundle)
    local = fsspec.filesystem("file")
    dest = str(tmp_path / "dest")
    for n, (name, data) in enumerate((("cafe\u0301.dat", b"nfd"), ("caf\u00e9.dat", b"nfc"))):
        src = tmp_path / f"src{n}"
        src.mkdir()
        (src / name).write_bytes(data)
        if n == 0:
            with pytest.warns(UserWarning, match="not in Unicode NFC"):
                bundle_tree(local, str(src), local, dest, storage_class="STANDARD")
        else:
            bundle_tree(local, str(src), local, dest, storage_class="STANDARD")
    catalog = Catalog.load(local, catalog_dir(dest))
    assert list(catalog.paths) == [f"{dest}/caf\u00e9.dat"]
    member = catalog.lookup(f"{dest}/caf\u00e9.dat")
    assert member is not None
    assert local.cat_file(member.bundle, start=member.offset, end=member.offset + 3) == b"nfc"


def test_a_registry_that_cannot_be_read_stops_the_run_and_rebuild_repairs_it(
    store: tuple[Callable[[], Any], str, str], tmp_path: Path
) -> None:
    new_fs, bucket, klass = store
    fs = new_fs()
    if is_local(fs):
        pytest.skip("a local directory has no bucket registry")
    src = tmp_path / "src"
    src.mkdir()
    _tree(src, "x")
    dest = f"{bucket}/root"
    bundle_tree(fsspec.filesystem("file"), str(src), fs, dest, storage_class=klass)
    registry = registry_path(bucket)
    fs.pipe_file(registry, b"<html>not a registry</html>")
    more = tmp_path / "more"
    more.mkdir()
    _tree(more, "y")
    before = sorted(fs.find(bucket))
    with pytest.raises(CatalogError, match="registry is not valid JSON"):
        bundle_tree(fsspec.filesystem("file"), str(more), fs, dest, storage_class=klass)
    assert sorted(fs.find(bucket)) == before  # refused before any upload
    assert fs.cat_file(registry) == b"<html>not a registry</html>"
    rebuild_catalog(fs, dest)  # the repair the error names
    assert json.loads(fs.cat_file(registry))["roots"] == [dest]
