"""Catalog reads (issue 47): every catalog object is read within a byte bound, never through
a target's listing cache, and a lost shard is damage, not a concurrent change."""

from __future__ import annotations

import json
import tracemalloc
import zlib
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.catalog import ByPrefix, Catalog, shards
from archivefs.catalog.index import MAX_POINTER_BYTES, POINTER, POINTER_CHECKSUM, pointer_digest
from archivefs.catalog.layout import catalog_dir, registry_path
from archivefs.catalog.registry import MAX_REGISTRY_BYTES, dump_registry
from archivefs.catalog.writer import bundle_tree
from archivefs.errors import CatalogError
from tests.reliability._support import make_tree, s3

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive

POLICY = ByPrefix(depth=1)


def _pointer_key(root: str) -> str:
    """The pointer's key in request records (no bucket)."""
    return f"{catalog_dir(root)}/{POINTER}".split("/", 1)[1]


def _bundle(src: Path, fs: Any, root: str) -> Any:
    return bundle_tree(fsspec.filesystem("file"), str(src), fs, root, policy=POLICY,
                       storage_class="STANDARD")  # fmt: skip


def _bomb(inflated: int, declared: int) -> bytes:
    """A shard whose header declares ``declared`` bytes of arrays and whose zlib stream
    inflates to ``inflated`` zero bytes (built a MiB at a time: small, fast)."""
    packer = zlib.compressobj(9)
    chunk, body = b"\0" * (1 << 20), []
    for _ in range(inflated >> 20):
        body.append(packer.compress(chunk))
    body.append(packer.flush())
    header = json.dumps({"arrays": [["paths", "|u1", declared]], "raw": []}).encode()
    return b"".join((shards.MAGIC, len(header).to_bytes(4, "little"), header, *body))


def _replace_shard(fs: Any, root: str, data: bytes) -> str:
    """Put ``data`` in place of the catalog's first shard, its pointer entry's checksum and
    the pointer's own checksum made to match (a hostile writer, not damage in transit)."""
    import hashlib

    path = f"{catalog_dir(root)}/{POINTER}"
    pointer = json.loads(fs.cat_file(path))
    entry = pointer["shards"][0]
    fs.pipe_file(f"{catalog_dir(root)}/{entry['file']}", data)
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    pointer[POINTER_CHECKSUM] = pointer_digest(pointer)
    fs.pipe_file(path, json.dumps(pointer).encode())
    return f"{catalog_dir(root)}/{entry['file']}"


def test_a_shard_that_inflates_past_its_header_costs_at_most_what_it_declares() -> None:
    bomb = _bomb(256 << 20, 1 << 20)  # 256 MiB of zeros, ~260 kB stored; declares 1 MiB
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(CatalogError, match="inflates past the 1048576 bytes"):
            shards.decode_shard(bomb, "b/.archivefs/catalog/shard-x.bin")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # the declared MiB (+1 byte), not 256 MiB


def test_a_shard_declaring_more_than_the_bound_is_not_inflated() -> None:
    bomb = _bomb(1 << 20, shards.MAX_SHARD_BYTES + 1)
    with pytest.raises(CatalogError, match="declares 67108865 bytes of arrays, more than the 64"):
        shards.decode_shard(bomb, "b/.archivefs/catalog/shard-x.bin")


def test_a_zip_bomb_shard_in_a_bucket_is_a_catalog_error_for_readers_and_writers(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    make_tree(tmp_path / "src", 12)
    fs3, root = s3(archive), f"{bucket}/z"
    _bundle(tmp_path / "src", fs3, root)
    shard = _replace_shard(fs3, root, _bomb(1 << 30, 4096))  # 1 GiB inflated, ~1 MB stored
    with pytest.raises(CatalogError, match="inflates past") as raised:
        Catalog.load(fs3, catalog_dir(root))
    assert raised.value.path == shard
    assert "archivefs catalog rebuild" in str(raised.value)
    archive.requests.clear()
    with pytest.raises(CatalogError, match="inflates past"):
        _bundle(tmp_path / "src", fs3, root)  # a writer stops before uploading anything
    assert archive.requests.count("PUT") == 0


def test_a_pointer_past_the_bound_is_refused_reading_at_most_the_bound(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    make_tree(tmp_path / "src", 8)
    fs3, root = s3(archive), f"{bucket}/p"
    _bundle(tmp_path / "src", fs3, root)
    path = f"{catalog_dir(root)}/{POINTER}"
    pointer = json.loads(fs3.cat_file(path))
    huge = json.dumps(pointer).encode()[:-1] + b', "pad": "' + b"x" * MAX_POINTER_BYTES + b'"}'
    fs3.pipe_file(path, huge)
    for read in (
        lambda: Catalog.load(fs3, catalog_dir(root)),
        lambda: Catalog.read_for_update(fs3, catalog_dir(root)),
    ):
        archive.requests.clear()
        with pytest.raises(CatalogError, match="larger than 16,777,216 bytes") as raised:
            read()
        assert raised.value.path == path
        assert archive.requests.count("GET") == 1
        assert archive.requests.bytes_sent("GET") <= MAX_POINTER_BYTES + 1


def test_a_filesystem_reads_a_pointer_past_the_bound_no_further_than_the_bound(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    make_fs: Callable[..., ArchiveFileSystem],
) -> None:
    """The face's catalog view (registry, pointer, shards) reads through the store adapter
    within the same bounds: a pointer past its bound costs one GET of at most the bound."""
    make_tree(tmp_path / "src", 8)
    fs3, root = s3(archive), f"{bucket}/p"
    _bundle(tmp_path / "src", fs3, root)
    path = f"{catalog_dir(root)}/{POINTER}"
    pointer = json.loads(fs3.cat_file(path))
    huge = json.dumps(pointer).encode()[:-1] + b', "pad": "' + b"x" * 2 * MAX_POINTER_BYTES + b'"}'
    fs3.pipe_file(path, huge)
    fs = make_fs()
    archive.requests.clear()
    with pytest.raises(CatalogError, match="larger than 16,777,216 bytes"):
        fs.ls(root, detail=True)
    assert archive.requests.count("GET", key=_pointer_key(root)) == 1
    assert archive.requests.bytes_sent("GET") <= MAX_POINTER_BYTES + 1 + 4096  # + the registry


def test_a_registry_past_the_readers_bound_is_not_changed(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    make_fs: Callable[..., ArchiveFileSystem],
) -> None:
    """A change to the registry reads it within the bound every filesystem reads it with
    (it read up to 256 MiB, so a writer grew a registry that no reader accepts): one GET
    of at most the bound, and nothing written."""
    make_tree(tmp_path / "src", 4)
    fs3, root = s3(archive), f"{bucket}/p"
    _bundle(tmp_path / "src", fs3, root)
    many = [f"{bucket}/r{i:08d}" for i in range(MAX_REGISTRY_BYTES // 16)]  # valid, too long
    registry = registry_path(bucket)
    fs3.pipe_file(registry, dump_registry([root, *many]))
    assert fs3.size(registry) > MAX_REGISTRY_BYTES
    fs = make_fs()
    archive.requests.clear()
    with pytest.raises(CatalogError, match="larger than 16,777,216 bytes") as raised:
        fs.unregister_catalog(root)
    assert raised.value.path == registry
    assert archive.requests.count("PUT") == 0
    assert archive.requests.count("GET") == 1
    assert archive.requests.bytes_sent("GET") <= MAX_REGISTRY_BYTES + 1


def _relative_files(src: Path) -> set[str]:
    return {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()}


def test_one_cached_s3fs_instance_sees_another_writers_appends(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """fsspec hands a notebook one s3fs instance per set of options; its listing cache must
    never answer a catalog read (the orphan pass and a save's clean-up list the catalog)."""
    for i, name in enumerate(("one", "two", "three")):
        make_tree(tmp_path / name, 12, seed=i)
    (tmp_path / "two" / "d0").rename(tmp_path / "two" / "e0")
    (tmp_path / "three" / "d1").rename(tmp_path / "three" / "g1")
    cached = fsspec.filesystem("s3", **archive.storage_options())
    assert fsspec.filesystem("s3", **archive.storage_options()) is cached
    root = f"{bucket}/c"
    _bundle(tmp_path / "one", cached, root)
    _bundle(tmp_path / "two", s3(archive), root)  # another writer appends
    _bundle(tmp_path / "three", cached, root)  # the same cached instance bundles again
    _bundle(tmp_path / "two", s3(archive), root)  # the other writer again
    catalog = Catalog.load(cached, catalog_dir(root))
    names = set().union(*(_relative_files(tmp_path / n) for n in ("one", "two", "three")))
    assert {m.path for m in catalog.members()} == {f"{root}/{n}" for n in names}
    member = catalog.lookup(f"{root}/g1/f0001.dat")
    assert member is not None
    data = cached.cat_file(member.bundle, start=member.offset, end=member.offset + member.length)
    assert data == (tmp_path / "three" / "g1" / "f0001.dat").read_bytes()


def test_a_lost_shard_is_damage_with_the_rebuild_fix_not_a_concurrent_change(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    make_tree(tmp_path / "src", 12)
    fs3, root = s3(archive), f"{bucket}/d"
    _bundle(tmp_path / "src", fs3, root)
    pointer = json.loads(fs3.cat_file(f"{catalog_dir(root)}/{POINTER}"))
    lost = f"{catalog_dir(root)}/{pointer['shards'][0]['file']}"
    fs3.rm_file(lost)  # nothing else runs: damage
    for read in (
        lambda: Catalog.read_for_update(fs3, catalog_dir(root)),  # what bundling reads
        lambda: Catalog.load(fs3, catalog_dir(root)),
        lambda: _bundle(tmp_path / "src", fs3, root),
    ):
        archive.requests.clear()
        with pytest.raises(CatalogError, match="the catalog is damaged") as raised:
            read()
        assert raised.value.path == lost
        assert "archivefs catalog rebuild" in str(raised.value)
        assert "kept changing" not in str(raised.value)
        assert archive.requests.count("GET", key=_pointer_key(root)) == 2  # read, read again
