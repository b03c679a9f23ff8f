"""Entries per target (issue 48): an ``info``/``ls`` entry is the target filesystem's own
entry (s3fs's, adlfs's, gcsfs's) plus archivefs's keys, and every provider's folder
markers are folders, on each provider's emulated twin."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import fsspec
import pytest

from archivefs.catalog import ByPrefix
from archivefs.catalog.writer import bundle_tree
from archivefs.cli.render import jsonable
from archivefs.entries import ARCHIVE_KEYS
from tests.support.providers import seed

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.providers import Provider

DATA = b"0123456789"


def test_an_entry_is_the_targets_own_plus_archivefs_keys(provider: Provider) -> None:
    seed(provider, {"run/a.txt": DATA}, provider.spec.hot_class)
    folder = f"{provider.bucket}/run"
    path = f"{folder}/a.txt"
    target, fs = provider.raw(), provider.fs()

    own, ours = target.info(path), fs.info(path)
    assert set(own) - set(ours) == set(), f"{provider.name}: info lacks the target's keys"
    assert set(ARCHIVE_KEYS) <= set(ours)
    assert (ours["name"], ours["size"], ours["type"]) == (path, len(DATA), "file")
    assert ours["storage_class"] == provider.spec.hot_class
    assert (ours["access"], ours["restore"]) == ("immediate", "hot")

    (own_listed,) = target.ls(folder, detail=True)
    (listed,) = fs.ls(folder, detail=True)
    assert set(own_listed) - set(listed) == set(), f"{provider.name}: ls lacks the target's keys"
    assert set(ARCHIVE_KEYS) <= set(listed)
    # names keep the caller's path form (ocifs's listings say bucket@namespace/key)
    assert listed["name"] == path
    assert own_listed["name"].split("/", 1)[1] == "run/a.txt"


def test_a_members_entry_has_the_keys_of_the_targets_entries(
    provider: Provider, tmp_path: Path
) -> None:
    """A bundle member's ``info``/``ls``/``find`` entry carries every key the target's
    entry of a real object has (s3fs's ``ETag``, adlfs's ``etag`` and ``metadata``,
    gcsfs's ``generation``, ocifs's ``storageTier``...) plus archivefs's and the member's
    own (``bundle``, ``crc32``, ``mtime``); the target's name for the class says its
    bundle's class."""
    seed(provider, {"plain/a.txt": DATA}, provider.spec.hot_class)
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "m.dat").write_bytes(DATA)
    target, bucket = provider.raw(), provider.bucket
    bundle_tree(fsspec.filesystem("file"), str(src), target, f"{bucket}/k",
                policy=ByPrefix(depth=1), storage_class=provider.spec.hot_class)  # fmt: skip
    own_info = target.info(f"{bucket}/plain/a.txt")
    (own_listed,) = target.ls(f"{bucket}/plain", detail=True)
    fs = provider.fs()
    member = f"{bucket}/k/d/m.dat"
    (listed,) = fs.ls(f"{bucket}/k/d", detail=True)
    found = fs.find(f"{bucket}/k/d", detail=True)[member]
    for entry, own in ((fs.info(member), own_info), (listed, own_listed), (found, own_listed)):
        assert set(own) - set(entry) == set(), provider.name
        assert set(ARCHIVE_KEYS) | {"bundle", "crc32", "mtime"} <= set(entry)
        assert (entry["name"], entry["size"], entry["type"]) == (member, len(DATA), "file")
        for key in ("StorageClass", "storageClass", "storageTier"):  # the target's name
            if key in own:
                assert entry[key] == provider.spec.hot_class, key
    assert fs.cat_file(member) == DATA


def test_folder_markers_are_folders(provider: Provider) -> None:
    """``dir/`` placeholders (and on Azure ADLS's ``hdi_isfolder`` blobs, any case) are
    folders to ``info``, ``ls`` and ``find``, never 0-byte files."""
    markers = {"run/empty/": b"", "run/sub/": b"", "run/sub/x.txt": DATA}
    seed(provider, markers, provider.spec.hot_class)
    bucket = provider.bucket
    folders = {f"{bucket}/run/empty", f"{bucket}/run/sub"}
    if provider.name == "azure":
        service = provider.server._direct()
        container = service.get_container_client(bucket)
        for name, key in (("run/adls", "hdi_isfolder"), ("run/Adls", "Hdi_isfolder")):
            container.upload_blob(name, b"", metadata={key: "true"})
            folders.add(f"{bucket}/{name}")
    fs = provider.fs()

    listed = {e["name"]: e["type"] for e in fs.ls(f"{bucket}/run", detail=True)}
    assert listed == dict.fromkeys(folders, "directory")
    for folder in folders:
        assert fs.info(folder)["type"] == "directory", folder
        assert fs.isdir(folder), folder
    assert fs.find(f"{bucket}/run") == [f"{bucket}/run/sub/x.txt"]
    # with its folders, as the target's find (adlfs, gcsfs, ocifs listed the empty
    # folders, archivefs's one recursive listing did not); gcsfs and s3fs also list an
    # S3-style "dir/" name, left out here
    withdirs = fs.find(f"{bucket}/run", withdirs=True)
    assert folders <= set(withdirs)
    own = provider.raw().find(f"{bucket}/run", withdirs=True)
    assert keys([n for n in withdirs if not n.endswith("/")]) == keys(
        [n for n in own if not n.endswith("/")]
    )


def keys(listing: list[str]) -> set[str]:
    """The keys of a listing's names (ocifs names its bucket ``bucket@namespace``)."""
    return {name.split("/", 1)[1] for name in listing}


def test_a_write_into_a_listed_folder_is_listed(provider: Provider, tmp_path: Path) -> None:
    """After ``ls`` of a folder, a write into it (open, pipe, put, touch) shows in the next
    ``ls`` of it (gcsfs's suite found the old listing returned), the wrapper's and its
    target's own (``fs.fs``: adlfs's pipe_file left its cached listing of the folder)."""
    seed(provider, {"run/a.txt": DATA}, provider.spec.hot_class)
    folder = f"{provider.bucket}/run"
    fs = provider.fs()
    expected = {f"{folder}/a.txt"}
    assert set(fs.ls(folder)) == expected
    assert keys(fs.fs.ls(folder)) == keys(list(expected))
    local = tmp_path / "local.txt"
    local.write_bytes(DATA)
    writes = {
        "piped": lambda p: fs.pipe(p, DATA),
        "put": lambda p: fs.put(str(local), p),
        "touched": lambda p: fs.touch(p),
    }
    with fs.open(f"{folder}/opened", "wb") as file:
        file.write(DATA)
    expected.add(f"{folder}/opened")
    assert set(fs.ls(folder)) == expected
    assert keys(fs.fs.ls(folder)) == keys(list(expected))
    for name, write in writes.items():
        path = f"{folder}/{name}"
        write(path)
        expected.add(path)
        assert set(fs.ls(folder)) == expected, name
        assert set(fs.ls(folder, detail=False)) == expected, name
        assert keys(fs.fs.ls(folder)) == keys(list(expected)), name


def test_ls_of_a_version_needs_a_version_aware_target(provider: Provider) -> None:
    """``ls(path, version_id=...)`` on a target that is not version aware raises, as adlfs
    does (it listed the current objects, as if the version had been found)."""
    seed(provider, {"run/a.txt": DATA}, provider.spec.hot_class)
    fs = provider.fs()
    for options in ({"version_id": "2022-01-01T00:00:00.0000000Z"}, {"versions": True}):
        with pytest.raises(ValueError, match="not version aware"):
            fs.ls(f"{provider.bucket}/run", **options)


def test_archivefs_ls_json_prints_every_targets_entries(provider: Provider) -> None:
    """``archivefs --json ls`` prints what ``list_entries`` gives, the target's own values
    included (adlfs's ``content_settings`` holds its MD5 as bytes)."""
    seed(provider, {"run/a.txt": DATA}, provider.spec.hot_class)
    fs = provider.fs()
    (entry,) = fs.list_entries(f"{provider.bucket}/run")
    printed = json.loads(json.dumps(jsonable(entry)))
    assert (printed["name"], printed["size"]) == (f"{provider.bucket}/run/a.txt", len(DATA))
    assert printed["storage_class"] == provider.spec.hot_class
