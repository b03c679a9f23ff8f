"""Member operations on the catalog's arrays give exactly what the per-member code gave.

Generated trees (unicode names, names that sort between a directory and its
members, files beside folders of the same stem, plain hot objects) are put
into a real catalog on the emulated server; every ``find`` (names and
detail, with ``maxdepth``/``withdirs``), ``glob``, ``du`` and ``plan`` of the
filesystem is compared with a filesystem that answers them the
straightforward way: fsspec's own walk over ``ls``, one dict per member,
one lookup per member when planning.
"""

from __future__ import annotations

import gc
import json
import pickle
import sys
import tracemalloc
import uuid
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from fsspec.asyn import AsyncFileSystem, sync
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from archivefs.catalog import BundleInfo, Catalog, MemberInfo
from archivefs.catalog import members as catalog_members
from archivefs.catalog.layout import catalog_dir, registry_path
from archivefs.catalog.registry import dump_registry
from archivefs.entries import bundle_template
from archivefs.entries import member_entry as _member_entry
from archivefs.filesystem import ArchiveFileSystem
from archivefs.model import StorageClass

if TYPE_CHECKING:
    from types import FrameType

    from archivefs.catalog.members import Picks
    from archivefs.model import ObjectState
    from archivefs.plans import Plan
    from archivefs.testing import EmulatedArchive

PARTS = st.sampled_from(["a", "b", "a-b", "ab", "é", "e\u0301", "中", "z.nc", "a.b"])
TREES = st.lists(
    st.lists(PARTS, min_size=1, max_size=4).map("/".join), min_size=1, max_size=40, unique=True
)


def reference_find(catalog: Catalog, path: str) -> dict[str, dict[str, Any]]:
    """find(path) inside a catalog root as it was: a lookup and a dict per member."""
    entries = []
    for name in catalog.find(path):
        member = catalog.lookup(name)
        assert member is not None
        entries.append(_member_entry(member, catalog.bundles[member.bundle].storage_class))
    prefix = path.rstrip("/") + "/"
    entries += [
        catalog_members.plain_entry(p, size, catalog.hot_class)
        for p, size in catalog.plain.items()
        if p.startswith(prefix) or p == path
    ]
    files = {e["name"]: e for e in entries}
    return {n: files[n] for n in sorted(files)}


def reference_listing(catalog: Catalog, path: str) -> list[dict[str, Any]]:
    """ls inside a catalog root as it was: Catalog.ls and one MemberInfo per member."""
    files, dirs = catalog.ls(path)
    entries = [_member_entry(m, catalog.bundles[m.bundle].storage_class) for m in files]
    names = set(dirs)
    prefix = path.rstrip("/") + "/"
    for plain, size in catalog.plain.items():
        if plain.startswith(prefix):
            rest = plain[len(prefix) :]
            if "/" in rest:
                names.add(prefix + rest.split("/", 1)[0])
            else:
                entries.append(catalog_members.plain_entry(plain, size, catalog.hot_class))
    entries += [{"name": d, "size": 0, "type": "directory"} for d in sorted(names)]
    return entries


class Straightforward(ArchiveFileSystem):
    """The same filesystem answering member operations one member at a time."""

    async def _find(
        self, path: str, maxdepth: int | None = None, withdirs: bool = False, **kwargs: Any
    ) -> Any:
        path = self._strip_protocol(path)
        if maxdepth is not None or withdirs:
            kwargs.setdefault("probe_bundles", False)
            kwargs.pop("prefix", None)
            found = await AsyncFileSystem._find(self, path, maxdepth, withdirs, **kwargs)
            if kwargs.get("detail"):  # a member with no names below it: fsspec says {}
                return {name: info or await self._info(name) for name, info in found.items()}
            return found
        found = await self.catalogs.root_for(path)
        assert found is not None
        files = reference_find(found[1], path)
        return files if kwargs.get("detail") else list(files)

    def glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        return sync(self.loop, self._glob, path, maxdepth=maxdepth, **kwargs)

    async def _glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        return await AsyncFileSystem._glob(self, path, maxdepth=maxdepth, **kwargs)

    async def _du(
        self, path: str, total: bool = True, maxdepth: int | None = None, **kwargs: Any
    ) -> Any:
        sizes = {}
        for name in await self._find(path, maxdepth=maxdepth, **kwargs):
            sizes[name] = (await self._info(name))["size"]
        return sum(sizes.values()) if total else sizes

    async def _pick_below(
        self, catalog: Catalog, path: str, members: Picks, states: dict[str, ObjectState]
    ) -> int:
        return await self._sort_files(await self._find(path, detail=True), members, states)


def make_catalog(root: str, names: list[str], plain: list[str]) -> Catalog:
    bundles = [
        BundleInfo(f"{root}/.archivefs/bundles/b{i}.zip", 1000, klass, 1, "00" * 32)
        for i, klass in enumerate([StorageClass.DEEP_ARCHIVE, StorageClass.STANDARD])
    ]
    members = [
        MemberInfo(
            f"{root}/{name}",
            bundles[i % 2].key,
            64 * i,
            i + 1,
            i,
            f"{i:064x}",
            StorageClass.STANDARD,
            1.7e9 + i,
        )
        for i, name in enumerate(names)
    ]
    catalog = Catalog(members, bundles)
    if plain:
        catalog = catalog.with_plain({f"{root}/{p}": 7 for p in plain})
    return catalog


GLOBS = (
    "*",
    "*/*",
    "a*",
    "a*/*",
    "**/*.nc",
    "*/a*/**",
    "中*",
    "*/",
    "**",
    "**/",
    "a/**",
    "[ab]*/*",
    "?/*",
    "a/?",
    "*/*/*.b",
    "a-?/**/z.nc",
    "[!a]*",
)


def queries(root: str, names: list[str]) -> list[str]:
    """The root, every directory and member, and name stems that are no directory."""
    out = {root, f"{root}/a", f"{root}/e", f"{root}/a-", f"{root}/nothing"}
    for name in names:
        parts = name.split("/")
        out.update(f"{root}/{'/'.join(parts[:i])}" for i in range(1, len(parts) + 1))
    return sorted(out)


@settings(max_examples=30, deadline=None)
@given(names=TREES, plain=st.lists(st.sampled_from(["a/zarr.json", "b", "q/r/.zattrs"])))
def test_listing_and_find_match_the_per_member_code(names: list[str], plain: list[str]) -> None:
    root = "bucket/root"
    catalog = make_catalog(root, names, plain)
    for path in queries(root, names):
        assert catalog_members.find_entries(catalog, path) == reference_find(catalog, path)
        assert catalog_members.find_names(catalog, path) == list(reference_find(catalog, path))
        assert catalog_members.listing(catalog, path) == reference_listing(catalog, path)
        assert catalog_members.du_total(catalog, path) == sum(
            e["size"] for e in reference_find(catalog, path).values()
        )


@settings(max_examples=30, deadline=None)
@given(names=TREES, bounds=st.tuples(st.integers(0, 40), st.integers(0, 40)))
def test_depths_of_a_range_are_the_slice_of_all_depths(
    names: list[str], bounds: tuple[int, int]
) -> None:
    # a walk under a prefix asks for its rows' depths only (a glob of 1% of a large
    # catalog must not look at the rest); the answer is the same slice as ever
    catalog = make_catalog("bucket/root", names, [])
    expected = [p.count("/") for p in catalog.paths]
    start, end = min(bounds), max(bounds)
    assert catalog.depths(start, end).tolist() == expected[start:end]
    assert catalog.depths().tolist() == expected  # all rows: computed and kept
    assert catalog.depths(start, end).tolist() == expected[start:end]  # from what was kept


def test_bundle_groups_keep_the_order_of_choice() -> None:
    root = "bucket/root"
    catalog = make_catalog(root, [f"f{i}" for i in range(6)], [])
    picks = catalog_members.Picks()
    picks.add_rows(catalog, np.array([3, 1, 4]))
    picks.add(catalog, 1)  # chosen twice: kept once, where first chosen
    picks.add(catalog, 0)
    groups = catalog_members.by_bundle(catalog, np.array([3, 1, 4, 0]))
    assert [(g.bundle.rsplit("/", 1)[1], g.paths) for g in groups] == [
        ("b1.zip", [f"{root}/f3", f"{root}/f1"]),
        ("b0.zip", [f"{root}/f4", f"{root}/f0"]),
    ]
    assert picks.groups() == groups
    assert [g.read_bytes for g in groups] == [4 + 2, 5 + 1]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.one_of(
        st.lists(st.integers(0, 29), min_size=1, unique=True),
        st.tuples(st.integers(0, 29), st.integers(1, 30)).map(
            lambda r: list(range(r[0], min(30, r[0] + r[1])))  # a find of a prefix
        ),
    ),
    stretch=st.sampled_from([1, 4, 30]),
    backwards=st.booleans(),
)
def test_bundle_groups_match_a_pass_member_by_member(
    rows: list[int], stretch: int, backwards: bool
) -> None:
    """Bundles holding stretches of sorted paths (sliced) or scattered ones (row by row),
    in the order of the paths or against it (bundles appended later)."""
    root = "bucket/root"
    bundles = [
        BundleInfo(
            f"{root}/.archivefs/bundles/b{j:02d}.zip", 1000, StorageClass.GLACIER, 1, "00" * 32
        )
        for j in range(30)
    ]
    catalog = Catalog(
        [
            MemberInfo(
                f"{root}/f{i:02d}",
                bundles[(29 - i if backwards else i) // stretch].key,
                0,
                i + 1,
                0,
                "00" * 32,
                StorageClass.GLACIER,
                1.7e9,
            )
            for i in range(30)
        ],
        bundles,
    )
    want: dict[str, tuple[list[str], int]] = {}
    for row in rows:
        member = catalog.lookup(catalog.paths[row])
        assert member is not None
        paths, size = want.get(member.bundle, ([], 0))
        want[member.bundle] = ([*paths, member.path], size + member.length)
    groups = catalog_members.by_bundle(catalog, np.array(rows))
    assert [(g.bundle, g.paths, g.read_bytes) for g in groups] == [
        (bundle, paths, size) for bundle, (paths, size) in want.items()
    ]


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(st.sampled_from(["a", "b/", "c//d", "e/f", "g\nh/", "i"]), min_size=1),
    bounds=st.tuples(st.integers(0, 12), st.integers(0, 12)),
)
def test_empty_parts_are_found_in_any_range(names: list[str], bounds: tuple[int, int]) -> None:
    """Ranges checked on their own (before the whole catalog's rows are kept) and after."""
    catalog = make_catalog("b/r", [f"{i:02d}/{name}" for i, name in enumerate(names)], [])
    start, end = min(bounds), min(max(bounds), len(names))
    want = any(p.endswith("/") or "//" in p for p in catalog.paths[start:end])
    alone = catalog_members._odd(catalog, start, end)
    assert alone == want or (alone and "\n" in "".join(catalog.paths[start:end]))
    catalog_members._odd(catalog, 0, len(catalog.paths))  # the whole catalog's rows, kept
    assert catalog_members._odd(catalog, start, end) == want


@pytest.fixture
def stores(archive: EmulatedArchive) -> tuple[ArchiveFileSystem, ArchiveFileSystem]:
    def make(cls: type[ArchiveFileSystem]) -> ArchiveFileSystem:
        return cls(
            target_options=archive.storage_options(),
            journal=False,
            restore_status_in_listings=True,
            skip_instance_cache=True,
        )

    return make(ArchiveFileSystem), make(Straightforward)


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=TREES, plain=st.lists(st.sampled_from(["a/zarr.json", "q/r/.zattrs"])))
# a member that is also a folder, with nothing within a walk's depth below it: once a
# KeyError ('type') in glob("a/**", maxdepth=2, withdirs=False), found by a busy run
@example(names=["a", "a/a/a/a"], plain=[])
def test_filesystem_member_operations_match_the_straightforward_ones(
    archive: EmulatedArchive,
    stores: tuple[ArchiveFileSystem, ArchiveFileSystem],
    names: list[str],
    plain: list[str],
) -> None:
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    archive.create_bucket(bucket)
    root = f"{bucket}/root"
    catalog = make_catalog(root, names, plain)
    for key, info in catalog.bundles.items():  # in the class the catalog records
        archive.put_objects(
            bucket, {key.split("/", 1)[1]: b"x" * 1000}, storage_class=info.storage_class.value
        )
    for path in catalog.plain:
        archive.put_objects(bucket, {path.split("/", 1)[1]: b"x" * 7})
    fast, slow = stores
    catalog.save(fast.fs, catalog_dir(root))
    fast.fs.pipe_file(registry_path(bucket), dump_registry([root]))
    for fs in (fast, slow):
        fs.catalogs.invalidate()
    requests = archive.requests
    for path in queries(root, names):
        for maxdepth in (None, 1, 2, 3):
            for withdirs in (False, True):
                for detail in (False, True):
                    got = fast.find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail)
                    want = slow.find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail)
                    assert got == want, (path, maxdepth, withdirs, detail)
        assert fast.du(path) == slow.du(path)
        if fast.find(path):
            plan, reference = fast.plan(path), slow.plan(path)
            assert [(g.key, g.paths, g.read_bytes) for g in plan.groups] == [
                (g.key, g.paths, g.read_bytes) for g in reference.groups
            ]
    for pattern in GLOBS:
        full = f"{root}/{pattern}"
        assert fast.glob(full, detail=True) == slow.glob(full, detail=True), pattern
        for maxdepth, withdirs in ((None, True), (None, False), (1, True), (2, False)):
            if "**" not in pattern and maxdepth is not None:
                continue  # fsspec's glob reads maxdepth only with **
            # names: from the catalog's sorted paths, with no info dict
            got = fast.glob(full, maxdepth=maxdepth, withdirs=withdirs)
            assert got == slow.glob(full, maxdepth=maxdepth, withdirs=withdirs), pattern
        # a glob's plan, from the catalog's arrays: the files it names, one by one (a plan
        # takes paths as fsspec strips them: "**/" is "**")
        files = globbed_files(slow, full.rstrip("/"))
        if files:
            assert plan_groups(fast.plan(full)) == plan_groups(slow.plan(files)), pattern
    requests.clear()
    fast.du(root)
    assert requests.counts().get("HEAD", 0) == 0  # sizes from the catalog, no HEAD per member


def globbed_files(fs: ArchiveFileSystem, pattern: str) -> list[str]:
    """The files a plan of ``pattern`` takes, found the straightforward way: the glob's
    files, and every file below a directory it matches that none of them lies in."""
    matches = fs.glob(pattern, detail=True)
    files = {name for name, entry in matches.items() if entry["type"] == "file"}
    covered = {name.rsplit("/", i)[0] for name in files for i in range(1, name.count("/") + 1)}
    for name, entry in matches.items():
        if entry["type"] == "directory" and name not in covered:
            files.update(fs.find(name))
    return sorted(files)


def plan_groups(plan: Plan) -> list[tuple[str, list[str], int]]:
    return sorted((g.key, sorted(g.paths), g.read_bytes) for g in plan.groups)


def test_member_info_dicts_are_ordinary_dicts() -> None:
    """They share one key table to save memory, and behave as any other dict."""
    catalog = make_catalog("b/root", ["a/x", "a/y"], [])
    first, second = catalog_members.member_entries(catalog, slice(0, 2))
    assert type(first) is dict
    assert first == reference_find(catalog, "b/root")["b/root/a/x"]
    assert list(first)[:3] == ["name", "size", "type"]
    assert sys.getsizeof(first) < sys.getsizeof(dict(first))  # one key table for all
    first["extra"] = 1  # one caller's change stays its own
    del first["crc32"]
    assert "extra" not in second
    assert "crc32" in second
    assert pickle.loads(pickle.dumps(second)) == second
    assert json.loads(json.dumps(second)) == second


@pytest.mark.parametrize("first", ["azure", "gcs", "oracle", "s3"])
def test_each_providers_members_share_their_key_table_whichever_came_first(first: str) -> None:
    """Each provider's entries end in their target's keys: one provider's members made
    before another's must not cost the other's their shared key table (on CPython, a
    class's instances share keys only while all set the same keys in the same order), and
    an entry is never larger than an ordinary dict of the same items."""
    archived = {"azure": "Archive", "gcs": "ARCHIVE", "oracle": "Archive", "s3": "DEEP_ARCHIVE"}
    for provider in [first, *sorted(set(archived) - {first})]:
        klass = StorageClass(archived[provider], provider=provider)
        entry = bundle_template(f"{provider}-bundle", klass, None).copy()
        entry["name"] = "b/root/x"
        assert sys.getsizeof(entry) <= sys.getsizeof(dict(entry)), provider
        if len(entry) < 29:  # CPython shares no key table beyond 29 keys (gcsfs has 30)
            assert sys.getsizeof(entry) < sys.getsizeof(dict(entry)), provider


def test_a_glob_of_names_builds_no_dict_per_member(
    archive: EmulatedArchive, stores: tuple[ArchiveFileSystem, ArchiveFileSystem]
) -> None:
    """Below a catalog, a glob that returns names matches the catalog's sorted paths: it
    allocates its answer (a list) and a depth per member, no (name, info) pair, dict or
    sort per member as fsspec's glob does (120 bytes per member that way)."""
    n = 20_000
    fs = stores[0]
    root = saved(archive, fs, [f"d{i // 1000:02d}/f{i:05d}.nc" for i in range(n)])
    fs.glob(f"{root}/*/*.nc")  # the catalog loaded, its rows checked for empty parts once
    peaks = {}
    for detail in (False, True):
        tracemalloc.start()
        found = fs.glob(f"{root}/*/*.nc", detail=detail)
        peaks[detail] = tracemalloc.get_traced_memory()[1] / n
        tracemalloc.stop()
        assert len(found) == n
    assert peaks[False] < 32  # bytes per member: 8 for the answer, 8-16 for depths
    assert peaks[False] < 0.1 * peaks[True]


def saved(archive: EmulatedArchive, fs: ArchiveFileSystem, names: list[str]) -> str:
    """A catalog of ``names`` (bundles in the archive) registered in a new bucket; its root."""
    bucket = f"t-{uuid.uuid4().hex[:12]}"
    archive.create_bucket(bucket)
    root = f"{bucket}/root"
    catalog = make_catalog(root, names, [])
    for key, info in catalog.bundles.items():  # in the class the catalog records
        archive.put_objects(
            bucket, {key.split("/", 1)[1]: b"x" * 1000}, storage_class=info.storage_class.value
        )
    catalog.save(fs.fs, catalog_dir(root))
    fs.fs.pipe_file(registry_path(bucket), dump_registry([root]))
    return root


def test_a_catalog_find_is_made_on_the_calling_thread(
    archive: EmulatedArchive, stores: tuple[ArchiveFileSystem, ArchiveFileSystem]
) -> None:
    """The catalog is read on fsspec's I/O loop, its names and info dicts are made on the
    caller's thread: a find or glob of 10^7 members never holds up the loop other reads
    share."""
    fs = stores[0]
    root = saved(archive, fs, [f"d{i % 3}/f{i:03d}" for i in range(30)])
    made: list[str] = []

    def watch(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_name in ("find_names", "find_entries", "glob_names"):
            made.append(frame.f_code.co_name)

    sys.setprofile(watch)  # this thread's calls only
    try:
        names = fs.find(root)
        detail = fs.find(f"s3://{root}/d1", detail=True)
        globbed = fs.glob(f"s3://{root}/*/f00*")
    finally:
        sys.setprofile(None)
    assert made == ["find_names", "find_entries", "glob_names"]
    assert len(names) == 30
    assert globbed == [n for n in names if n.rsplit("/", 1)[1].startswith("f00")]
    assert len(globbed) == 10
    assert sorted(detail) == [f"{root}/d1/f{i:03d}" for i in range(1, 30, 3)]
    # a walk, and a path outside any catalog, still go the loop's way, with the same answers
    assert fs.find(root, maxdepth=1, withdirs=True) == [root, *(f"{root}/d{i}" for i in range(3))]
    assert fs.find(root.split("/")[0] + "/elsewhere") == []


def test_catalog_and_plan_paths_are_out_of_the_gcs_sight(
    archive: EmulatedArchive, stores: tuple[ArchiveFileSystem, ArchiveFileSystem]
) -> None:
    """A loaded catalog's paths and a plan's are tuples of strings, which the cyclic GC
    stops walking: a list of 10^7 paths made every full collection in the process 0.2 s."""
    fs = stores[0]
    root = saved(archive, fs, [f"d{i % 3}/f{i:03d}" for i in range(30)])
    plan = fs.plan(root)
    catalog = sync(fs.loop, fs.catalogs.root_for, root)[1]
    gc.collect()
    assert plan.table.paths is not None
    assert not gc.is_tracked(plan.table.paths)
    assert not gc.is_tracked(plan.table.keys)
    assert not gc.is_tracked(catalog.paths)
    assert list(catalog.paths) == sorted(plan.paths)


def test_a_glob_below_a_catalog_runs_without_gc_collections(
    archive: EmulatedArchive, stores: tuple[ArchiveFileSystem, ArchiveFileSystem]
) -> None:
    """fsspec's glob makes a tuple per match to sort and filter; below a catalog (loaded
    first) that is CPU only, so the cyclic GC is paused instead of collecting over and over."""
    fs = stores[0]
    n = 20_000
    root = saved(archive, fs, [f"d{i // 1000:02d}/f{i:05d}.nc" for i in range(n)])
    fs.find(root)  # the catalog, loaded once
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        for detail in (False, True):
            gc.collect()
            collections.clear()
            found = fs.glob(f"s3://{root}/*/*.nc", detail=detail)
            assert len(found) == n
            assert len(collections) <= 1, (detail, collections)  # 20,000 tuples: ~28 without
    finally:
        gc.callbacks.remove(count)
    assert gc.isenabled()
    assert fs.glob(f"{root.split('/')[0]}/*") == [root]  # outside a catalog: fsspec's way


def test_a_glob_plan_of_100k_members_is_planned_in_bulk(
    archive: EmulatedArchive, stores: tuple[ArchiveFileSystem, ArchiveFileSystem]
) -> None:
    """Issue 49: ``fs.plan("root/**")`` over a bundled root takes the glob's members from the
    catalog's arrays into the bulk planner (called once), as a plan of the folder does: the
    Python calls it makes do not grow with the members (a lookup and an info dict per
    member, the glob's old way, made millions of calls at 10^5)."""
    n = 100_000
    fs = stores[0]
    root = saved(archive, fs, [f"d{i // 1000:03d}/f{i:06d}.nc" for i in range(n)])
    fs.plan(f"{root}/d000/f00000*")  # the catalog loaded, its rows checked once
    calls: list[str] = []

    def count(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and "archivefs" in frame.f_code.co_filename:  # not botocore's
            calls.append(frame.f_code.co_name)

    async def profile(on: bool) -> None:  # fsspec's I/O loop runs the plan: count there too
        sys.setprofile(count if on else None)

    sync(fs.loop, profile, True)
    sys.setprofile(count)
    try:
        plan = fs.plan(f"{root}/**")
    finally:
        sys.setprofile(None)
        sync(fs.loop, profile, False)
    assert len(plan.paths) == n
    assert sorted(plan.paths) == [f"{root}/d{i // 1000:03d}/f{i:06d}.nc" for i in range(n)]
    assert calls.count("make_plan") == 1
    # about 2,600 (catalog shards, bundles, requests); a lookup per member made 2.1 million
    assert len(calls) < 5_000, f"{len(calls)} calls of archivefs's code for {n} members"
    folder = fs.plan(root)  # the same plan as the folder's
    assert [(g.key, g.paths) for g in folder.groups] == [(g.key, g.paths) for g in plan.groups]
