"""Coalesced bundle-member reads: cat, cat_ranges and get of many members, counted at the server."""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

import fsspec.asyn
import pytest

from archivefs.catalog import ByPrefix, Catalog
from archivefs.catalog.layout import catalog_dir
from archivefs.errors import (
    ArchiveError,
    BundleChangedError,
    ChecksumMismatchError,
    MissingBundleError,
    ObjectArchivedError,
    ObjectNotFoundError,
)
from archivefs.member_reads import BLOCK, Part, plan_blocks
from tests.reliability._support import bundle, make_tree, s3

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive


# -- the planner (pure) ----------------------------------------------------------------------


def test_adjacent_parts_merge_up_to_a_block_and_each_part_has_one_block() -> None:
    parts = [("b1", Part(i, i * 1100, i * 1100 + 1000)) for i in range(20)]  # 100-byte gaps
    parts += [("b2", Part(100, 0, 10)), ("b2", Part(101, 10_000, 10_010))]  # a gap > MAX_GAP
    parts += [("b3", Part(200, 0, 3 * BLOCK)), ("b3", Part(201, 5, 5))]  # big; empty
    blocks = plan_blocks(parts, max_block=5_000)
    spans = sorted((b.bundle, b.start, b.end) for b in blocks)
    assert spans[:5] == [("b1", i * 4400, i * 4400 + 4300) for i in range(5)]
    assert spans[5:] == [("b2", 0, 10), ("b2", 10_000, 10_010), ("b3", 0, 3 * BLOCK)]
    served = sorted(p.index for b in blocks for p in b.parts)
    assert served == [*range(20), 100, 101, 200]
    for block in blocks:
        assert all(block.start <= p.first and p.last <= block.end for p in block.parts)


# -- against the emulated archive ------------------------------------------------------------


@pytest.fixture
def afs(make_fs: Callable[..., ArchiveFileSystem]) -> ArchiveFileSystem:
    return make_fs()


def _tree(root: Path, bundles: int, members: int, size: int) -> dict[str, bytes]:
    rng = random.Random(7)
    files = {
        f"d{b}/f{i:04d}.dat": rng.randbytes(size) for b in range(bundles) for i in range(members)
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def _packed(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    files: dict[str, bytes] | None = None,
    **kw: object,
) -> tuple[dict[str, bytes], str, Catalog]:
    """A bundled tree (one bundle per top folder) at ``bucket/packed``, and its catalog."""
    root = f"{bucket}/packed"
    if files is None:
        files = make_tree(tmp_path / "src", 40, dirs=4)
    bundle(tmp_path / "src", s3(archive), root, policy=ByPrefix(depth=1, target_size=2**40), **kw)
    catalog = Catalog.load(s3(archive), catalog_dir(root))
    return {f"{root}/{n}": d for n, d in files.items()}, root, catalog


def _served(catalog: Catalog, paths: list[str]) -> int:
    """The bytes one ranged read per bundle serves: first member's data to the last's end."""
    spans: dict[str, tuple[int, int]] = {}
    for path in paths:
        m = catalog.lookup(path)
        assert m is not None
        lo, hi = spans.get(m.bundle, (m.offset, m.offset + m.length))
        spans[m.bundle] = (min(lo, m.offset), max(hi, m.offset + m.length))
    return sum(hi - lo for lo, hi in spans.values())


def _ready(afs: ArchiveFileSystem, archive: EmulatedArchive, root: str) -> None:
    """Load the catalog (registry, pointer, file) outside the measurement."""
    fsspec.asyn.sync(afs.loop, afs.catalogs.locate, root)
    archive.requests.clear()


@pytest.mark.parametrize("verb", ["cat", "cat_ranges", "get"])
def test_every_member_of_n_bundles_is_one_get_per_bundle(
    archive: EmulatedArchive,
    bucket: str,
    afs: ArchiveFileSystem,
    tmp_path: Path,
    verb: str,
) -> None:
    files, root, catalog = _packed(archive, bucket, tmp_path)
    assert len(catalog.bundles) == 4
    paths = sorted(files)
    _ready(afs, archive, root)
    if verb == "cat":
        got = afs.cat(paths)
    elif verb == "cat_ranges":
        got = dict(zip(paths, afs.cat_ranges(paths, None, None, on_error="raise"), strict=True))
    else:
        afs.get(f"{root}/", str(tmp_path / "out") + "/", recursive=True)
        got = {p: (tmp_path / "out" / p[len(root) + 1 :]).read_bytes() for p in paths}
    assert got == files
    assert archive.requests.counts() == {"GET": 4}
    assert archive.requests.bytes_sent("GET") == _served(catalog, paths)
    assert _served(catalog, paths) - sum(map(len, files.values())) < 100 * len(files)  # headers


def test_a_bundle_larger_than_a_block_takes_one_get_per_8_mib(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    files, root, catalog = _packed(
        archive, bucket, tmp_path, _tree(tmp_path / "src", 2, 100, 100 * 1024)
    )
    paths = sorted(files)
    (key,) = {catalog.lookup(p).bundle for p in paths if p.startswith(f"{root}/d0/")}  # type: ignore[union-attr]
    _ready(afs, archive, root)
    assert afs.cat(paths) == files
    per_bundle = math.ceil(100 * 100 * 1024 / BLOCK)  # 2 for 9.8 MiB of members
    assert archive.requests.counts() == {"GET": 2 * per_bundle}
    assert archive.requests.count("GET", key=key.split("/", 1)[1]) == per_bundle
    assert archive.requests.bytes_sent("GET") - sum(map(len, files.values())) < 100 * len(files)
    assert afs.read_stats.bytes_delivered == sum(map(len, files.values()))


def test_ranges_inside_members_are_coalesced_and_cut_exactly(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    files, root, _ = _packed(archive, bucket, tmp_path)
    paths = sorted(p for p in files if "/d1/" in p)
    _ready(afs, archive, root)
    # nearly whole members (gaps of a zip header and a few bytes), and an empty range
    starts, ends = [3, None, -1000, 7] * 2, [-2, -1, None, 7] * 2
    got = afs.cat_ranges(paths[:8], starts, ends)
    assert got == [files[p][s:e] for p, s, e in zip(paths[:8], starts, ends, strict=True)]
    assert archive.requests.counts() == {"GET": 1}


def test_members_mixed_with_plain_objects_and_missing_paths(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    files, root, _ = _packed(archive, bucket, tmp_path)
    archive.put_object(bucket, "plain.txt", b"plain")
    paths = [*sorted(files)[:5], f"{bucket}/plain.txt", f"{bucket}/absent.txt"]
    _ready(afs, archive, root)
    got = afs.cat(paths, on_error="return")
    assert [got[p] for p in paths[:6]] == [*(files[p] for p in paths[:5]), b"plain"]
    assert isinstance(got[f"{bucket}/absent.txt"], ObjectNotFoundError)
    with pytest.raises(ObjectNotFoundError):
        afs.cat(paths)


def _bundle_of(catalog: Catalog, path: str) -> str:
    member = catalog.lookup(path)
    assert member is not None
    return member.bundle


def test_a_missing_bundle_fails_only_its_members_as_damage(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    files, root, catalog = _packed(archive, bucket, tmp_path)
    paths = sorted(files)
    gone = _bundle_of(catalog, paths[0])
    s3(archive).rm(gone)
    _ready(afs, archive, root)
    got = afs.cat(paths, on_error="return")
    for path in paths:
        if _bundle_of(catalog, path) == gone:
            error = got[path]
            assert isinstance(error, MissingBundleError)
            assert not isinstance(error, FileNotFoundError)
            assert gone in str(error)
            assert "rebuild" in str(error)
        else:
            assert got[path] == files[path]
    assert archive.requests.count("GET") == 4
    for fails in (lambda: afs.cat(paths), lambda: afs.get(paths, str(tmp_path / "o") + "/")):
        with pytest.raises(MissingBundleError):
            fails()


def test_a_changed_bundle_never_serves_other_bytes(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    files, root, catalog = _packed(archive, bucket, tmp_path)
    paths = sorted(files)
    changed = _bundle_of(catalog, paths[0])
    raw = s3(archive)
    data = bytearray(raw.cat_file(changed))
    first = catalog.lookup(paths[0])
    assert first is not None
    data[first.offset] ^= 0xFF  # same size, other content: a new ETag
    raw.pipe_file(changed, bytes(data))
    _ready(afs, archive, root)
    got = afs.cat(paths, on_error="return")
    for path in paths:
        if _bundle_of(catalog, path) == changed:
            assert isinstance(got[path], BundleChangedError)
        else:
            assert got[path] == files[path]
    # the new ETag accepted (as after a verified copy): the CRC of each member still guards
    afs._verified_etags[changed] = raw.info(changed)["ETag"]
    got = afs.cat(paths, on_error="return")
    assert isinstance(got[paths[0]], ChecksumMismatchError)
    assert all(
        got[p] == files[p] for p in paths[1:] if _bundle_of(catalog, p) == changed
    )  # its neighbours in the same GET are intact, and served


def test_an_archived_bundle_is_one_get_and_one_head_for_all_its_members(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    files, root, _ = _packed(archive, bucket, tmp_path, storage_class="GLACIER")
    afs = make_fs()
    paths = sorted(p for p in files if "/d2/" in p)
    _ready(afs, archive, root)
    got = afs.cat(paths, on_error="return")
    assert all(isinstance(got[p], ObjectArchivedError) for p in paths)
    assert not any(isinstance(got[p], FileNotFoundError) for p in paths)
    assert f"reading member {paths[0]!r} and {len(paths) - 1} other members" in str(got[paths[0]])
    assert archive.requests.counts() == {"GET": 1, "HEAD": 1}
    assert all(isinstance(got[p], ArchiveError) for p in paths)


@pytest.mark.parametrize("verb", ["get", "prefetch_to"])
def test_a_thousand_small_members_take_one_get_per_8_mib_on_every_path(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path, verb: str
) -> None:
    files, root, catalog = _packed(
        archive, bucket, tmp_path, _tree(tmp_path / "src", 1, 1000, 20 * 1024)
    )
    assert len(catalog.bundles) == 1
    paths = sorted(files)
    _ready(afs, archive, root)
    out = tmp_path / "out"
    if verb == "get":
        afs.get(f"{root}/", str(out) + "/", recursive=True)
        got = {p: (out / p[len(root) + 1 :]).read_bytes() for p in paths}
    else:
        afs.prefetch(paths, to=out)
        got = {p: (out / p).read_bytes() for p in paths}
    assert got == files
    assert archive.requests.count("GET") == math.ceil(_served(catalog, paths) / BLOCK)  # 3
    assert sum(map(len, files.values())) <= archive.requests.bytes_sent("GET")
    assert archive.requests.bytes_sent("GET") <= _served(catalog, paths)
    assert not [p for p in out.rglob("*") if ".archivefs-partial-" in p.name]


def test_a_large_member_gets_from_a_promoted_copy_of_its_bundle(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    size = BLOCK + 12345  # above BLOCK: read in ranged parts, not coalesced
    files, _, catalog = _packed(archive, bucket, tmp_path, _tree(tmp_path / "src", 1, 2, size))
    (key,) = catalog.bundles
    data = s3(archive).cat_file(key)
    hot = tmp_path / "hot"
    (hot / key).parent.mkdir(parents=True)
    (hot / key).write_bytes(data)  # the bundle promoted; then its restored copy expired
    archive.put_object(bucket, key.split("/", 1)[1], data, storage_class="GLACIER")
    afs = make_fs(hot=str(hot), part_size=2**20)
    path = sorted(files)[0]
    archive.requests.clear()
    afs.get(path, str(tmp_path / "out"))
    assert (tmp_path / "out").read_bytes() == files[path]
    assert archive.requests.count("GET", key=key.split("/", 1)[1]) == 0
