"""Bundles (zip, stored, ZIP64), names, the catalog and grouping policies."""

from __future__ import annotations

import io
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path
from typing import Any

import fsspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archivefs.catalog import (
    BundleInfo,
    ByChunkNeighbourhood,
    ByKey,
    ByPrefix,
    Catalog,
    Source,
    SourceItem,
    check_member,
    chunk_key,
    normalize_member_name,
    read_entries,
    safe_target_path,
    write_bundle,
)
from archivefs.catalog import bundle as bundle_module
from archivefs.errors import BundleError, CatalogError, ChecksumMismatchError
from archivefs.model import StorageClass


def source(name: str, data: bytes, mtime: float = 1_700_000_000.0) -> Source:
    return Source(name, len(data), mtime, lambda: io.BytesIO(data))


def build(members: dict[str, bytes]) -> tuple[bytes, list[Any]]:
    out = io.BytesIO()
    entries = write_bundle([source(n, d) for n, d in members.items()], out)
    return out.getvalue(), entries


def fetcher(data: bytes) -> Any:
    return lambda start, end: data[start:end]


# -- names --------


@pytest.mark.parametrize(
    "bad", ["", "../etc/passwd", "a/../../b", "/abs", "C:/x", "a\\b", "a\0b", "a//b", "./a", "x\n"]
)
def test_unsafe_names_are_refused(bad: str) -> None:
    with pytest.raises(BundleError, match="member name"):
        normalize_member_name(bad)


def test_names_are_nfc_and_length_limited() -> None:
    assert normalize_member_name("cafe\u0301/x") == "caf\u00e9/x"
    with pytest.raises(BundleError, match="1024"):
        normalize_member_name("a" * 1025)


def test_safe_target_path_never_escapes(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    assert safe_target_path(tmp_path / "root", "a/b") == (tmp_path / "root" / "a" / "b")
    with pytest.raises(BundleError, match="outside"):
        safe_target_path(tmp_path / "root", "link/escape")


# -- the bundle format --------


def test_bundle_is_a_standard_zip_with_stored_members(tmp_path: Path) -> None:
    members = {"b/two.txt": b"two" * 1000, "a/one.bin": bytes(range(256)), "empty": b""}
    data, entries = build(members)
    assert [e.name for e in entries] == ["a/one.bin", "b/two.txt", "empty"]  # sorted
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            assert archive.read(info) == members[info.filename]
    for entry in entries:  # each member is one ranged read at its data offset
        assert data[entry.data_offset : entry.data_offset + entry.length] == members[entry.name]
    assert read_entries(fetcher(data), len(data)) == [
        e.__class__(e.name, e.header_offset, e.data_offset, e.length, e.crc32, None, e.mtime)
        for e in read_entries(fetcher(data), len(data))
    ]
    path = tmp_path / "b.zip"
    path.write_bytes(data)
    with fsspec.open(f"zip://a/one.bin::file://{path}") as f:
        assert f.read() == members["a/one.bin"]
    unzip = subprocess.run(["unzip", "-t", str(path)], capture_output=True, check=False)
    if unzip.returncode != 127 and b"not found" not in unzip.stderr:
        assert unzip.returncode == 0, unzip.stdout


def test_output_is_deterministic() -> None:
    members = {"x": b"1", "y": b"22"}
    assert build(members)[0] == build(dict(reversed(members.items())))[0]


def test_bad_bundles_are_refused() -> None:
    with pytest.raises(BundleError, match="at least one member"):
        write_bundle([], io.BytesIO())
    with pytest.raises(BundleError, match="both named"):
        write_bundle([source("caf\u00e9", b"1"), source("cafe\u0301", b"2")], io.BytesIO())
    changing = Source("grew", 1, 0, lambda: io.BytesIO(b"more than one"))
    with pytest.raises(BundleError, match="changed while being bundled"):
        write_bundle([changing], io.BytesIO())


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.text(
            alphabet=st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="/\\"),
            min_size=1,
            max_size=20,
        ).filter(lambda n: n not in (".", "..")),
        st.binary(max_size=300),
        min_size=1,
        max_size=8,
    )
)
def test_round_trip_arbitrary_members(members: dict[str, bytes]) -> None:
    normal = {}
    for name, data in members.items():
        normal.setdefault(normalize_member_name(name), data)
    data, written = build(normal)
    parsed = read_entries(fetcher(data), len(data))
    assert [(e.name, e.data_offset, e.length, e.crc32) for e in parsed] == [
        (e.name, e.data_offset, e.length, e.crc32) for e in written
    ]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for entry in written:
            assert archive.read(entry.name) == normal[entry.name]
            assert zlib.crc32(normal[entry.name]) == entry.crc32


def test_zip64_offsets_beyond_4_gib_round_trip() -> None:
    """The central directory of a 6 GiB bundle, written and parsed without 6 GiB of data."""
    big = 5 * 2**30
    entries = [
        bundle_module.Entry("big", 0, 53, big, 7, None, 0.0),
        bundle_module.Entry("after", 53 + big + 24, 53 + big + 24 + 55, 10, 9, None, 0.0),
    ]
    start = entries[1].data_offset + 10 + 24
    sink = io.BytesIO()
    counter = bundle_module._Counter(sink)
    counter.offset = start
    bundle_module._write_central_directory(counter, entries)
    tail = sink.getvalue()
    size = start + len(tail)

    def fetch(a: int, b: int) -> bytes:
        assert a >= start - 0xFFFF - 200, "only the tail is read"
        return bytes(max(0, start - a)) + tail[max(a - start, 0) : b - start]

    parsed = read_entries(fetch, size)
    assert [(e.name, e.header_offset, e.length) for e in parsed] == [
        ("after", entries[1].header_offset, 10),
        ("big", 0, big),
    ] or [(e.name, e.header_offset, e.length) for e in parsed] == [
        ("big", 0, big),
        ("after", entries[1].header_offset, 10),
    ]


def test_hostile_zips_are_refused(tmp_path: Path) -> None:
    compressed = io.BytesIO()
    with zipfile.ZipFile(compressed, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a", b"x" * 1000)
    data = compressed.getvalue()
    with pytest.raises(BundleError, match="compressed"):
        read_entries(fetcher(data), len(data))
    escaping = io.BytesIO()
    with zipfile.ZipFile(escaping, "w") as archive:
        archive.writestr("../../evil", b"x")
    data = escaping.getvalue()
    with pytest.raises(BundleError, match="member name"):
        read_entries(fetcher(data), len(data))
    good, _ = build({"a": b"1" * 100, "b": b"2" * 100})
    with pytest.raises(BundleError, match="no end-of-central-directory"):
        read_entries(fetcher(good[:-60]), len(good) - 60)  # truncated
    with pytest.raises(BundleError, match="too small"):
        read_entries(fetcher(b"PK"), 2)
    # a central directory that claims a member overlapping the next one
    overlapping = bytearray(good)
    at = overlapping.find(b"PK\x01\x02")
    extra_at = at + 46 + 1 + 4  # name 'a', then the ZIP64 extra's header
    struct.pack_into("<QQ", overlapping, extra_at, 10_000, 10_000)
    with pytest.raises(BundleError, match="overlaps"):
        read_entries(fetcher(bytes(overlapping)), len(overlapping))


def test_checksums_catch_flipped_bytes() -> None:
    data, entries = build({"m": b"important" * 10})
    entry = entries[0]
    good = data[entry.data_offset : entry.data_offset + entry.length]
    assert check_member(good, entry.crc32, name="m", bundle="b", sha256=entry.sha256) == good
    flipped = bytes([good[0] ^ 1]) + good[1:]
    with pytest.raises(ChecksumMismatchError, match="'m'"):
        check_member(flipped, entry.crc32, name="m", bundle="b")


# -- the catalog --------


def make_catalog(n: int = 50) -> Catalog:
    data, entries = build({f"d{i % 3}/f{i:03d}": bytes([i % 256]) * i for i in range(n)})
    info = BundleInfo(
        "bkt/root/.archivefs/bundles/b.zip",
        len(data),
        StorageClass.GLACIER,
        len(entries),
        "ab" * 32,
    )
    return Catalog.from_entries(info, entries, "bkt/root")


def test_catalog_lookup_ls_find() -> None:
    catalog = make_catalog()
    member = catalog.lookup("bkt/root/d1/f004")
    assert member is not None
    assert (member.length, member.bundle) == (4, "bkt/root/.archivefs/bundles/b.zip")
    assert catalog.lookup("bkt/root/nope") is None
    files, dirs = catalog.ls("bkt/root")
    assert files == []
    assert dirs == ["bkt/root/d0", "bkt/root/d1", "bkt/root/d2"]
    assert len(catalog.find("bkt/root/d2")) == len([i for i in range(50) if i % 3 == 2])
    assert catalog.isdir("bkt/root/d0")
    assert len(catalog.members_of("bkt/root/.archivefs/bundles/b.zip")) == 50


@pytest.mark.parametrize("url", ["memory://cat-test", "file"])
def test_catalog_saves_atomically_and_detects_corruption(url: str, tmp_path: Path) -> None:
    fs, root = (
        fsspec.url_to_fs(url) if url != "file" else (fsspec.filesystem("file"), str(tmp_path))
    )
    catalog = make_catalog()
    written = catalog.save(fs, f"{root}/catalog")
    loaded = Catalog.load(fs, f"{root}/catalog")
    assert list(loaded.members()) == list(catalog.members())
    assert loaded.bundles == catalog.bundles
    # shards are named by their content: saving the same catalog again reuses the file
    assert catalog.save(fs, f"{root}/catalog") == written
    second = catalog.without([next(catalog.members()).path]).save(fs, f"{root}/catalog")
    assert second != written
    assert not fs.exists(written)  # a changed catalog replaces the shard and removes the old
    fs.pipe_file(second, fs.cat_file(second)[:-10] + b"0123456789")
    with pytest.raises(CatalogError, match="does not match its checksum"):
        Catalog.load(fs, f"{root}/catalog")
    with pytest.raises(CatalogError, match="no catalog here"):
        Catalog.load(fs, f"{root}/elsewhere")


def test_catalog_refuses_duplicate_paths() -> None:
    with pytest.raises(CatalogError, match="both at"):
        make_catalog().merge(make_catalog())


# -- grouping --------


items_strategy = st.lists(
    st.builds(
        SourceItem,
        path=st.from_regex(r"[a-c]{1,2}/[a-c]{1,2}/[0-9]{1,3}", fullmatch=True),
        size=st.integers(0, 5000),
    ),
    unique_by=lambda i: i.path,
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(items_strategy, st.integers(1, 20_000), st.integers(1, 10))
def test_every_item_lands_in_exactly_one_group(
    items: list[SourceItem], target: int, cap: int
) -> None:
    for policy in (
        ByPrefix(depth=1, target_size=target, max_members=cap),
        ByKey(func=lambda p: p[-1], target_size=target, max_members=cap),
    ):
        groups = policy.group(items)
        placed = [i.path for g in groups for i in g]
        assert sorted(placed) == sorted(i.path for i in items)
        assert all(len(g) <= cap for g in groups)
        assert all(sum(i.size for i in g) <= target or len(g) == 1 for g in groups)
        assert groups == policy.group(list(reversed(items)))  # deterministic


def test_chunk_neighbourhood_groups_time_windows_and_keeps_metadata_hot() -> None:
    items = [SourceItem(f"t/c/{t}/0/0", 100) for t in range(25)]
    items += [SourceItem("t/zarr.json", 10), SourceItem("zarr.json", 10)]
    policy = ByChunkNeighbourhood(dim_index=0, window=10)
    groups = policy.group(items)
    assert [len(g) for g in groups] == [10, 10, 5]
    assert {i.path for i in policy.keep_hot(items)} == {"t/zarr.json", "zarr.json"}
    assert chunk_key("t/c/3/0/1") == ("t", (3, 0, 1))
    assert chunk_key("t/3.0.1") == ("t", (3, 0, 1))
    assert chunk_key("t/zarr.json") is None
