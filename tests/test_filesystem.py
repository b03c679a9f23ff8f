"""ArchiveFileSystem against the emulated archive (moto's server over HTTP)."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

import fsspec
import fsspec.asyn
import pytest
import s3fs

from archivefs import (
    ObjectArchivedError,
    RestoreInProgressError,
    RestoreTimeoutError,
)
from archivefs.access.reads import PLAIN_READS_AT_ONCE
from archivefs.errors import (
    AccessDeniedError,
    InvalidPathError,
    InvalidRestoreRequestError,
    NotArchivedError,
)
from archivefs.filesystem import ArchiveFileSystem
from tests.support.reads import LINES, check_missing_bucket_and_key, read_every_way

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

HOT_CLASSES = ["STANDARD", "STANDARD_IA", "ONEZONE_IA", "GLACIER_IR", "INTELLIGENT_TIERING"]
ARCHIVE_CLASSES = ["GLACIER", "DEEP_ARCHIVE"]
DATA = bytes(range(256)) * 40  # 10,240 bytes


@pytest.fixture
def afs(make_fs: Any) -> ArchiveFileSystem:
    fs: ArchiveFileSystem = make_fs()
    return fs


# -- construction and registration ---------------------------------------------------------


def test_protocols_are_registered_through_entry_points() -> None:
    assert fsspec.get_filesystem_class("archive") is ArchiveFileSystem
    assert fsspec.get_filesystem_class("archivefs") is ArchiveFileSystem


def test_fs_and_target_protocol_are_exclusive(archive: EmulatedArchive) -> None:
    inner = s3fs.S3FileSystem(**archive.storage_options())
    with pytest.raises(ValueError, match="either fs="):
        ArchiveFileSystem(target_protocol="s3", fs=inner, skip_instance_cache=True)


def test_bad_policy_and_days_are_refused(archive: EmulatedArchive) -> None:
    opts = archive.storage_options()
    with pytest.raises(ValueError, match="on_archived='later' is not a policy"):
        ArchiveFileSystem(target_options=opts, on_archived="later")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="days must be"):
        ArchiveFileSystem(target_options=opts, days=0)
    with pytest.raises(InvalidRestoreRequestError, match="unknown restore tier 'Fast'"):
        ArchiveFileSystem(target_options=opts, tier="Fast")


def test_settings_are_read_only_views_of_what_the_constructor_checked(
    archive: EmulatedArchive,
) -> None:
    """fsspec shares one instance among all who made it with the same options: a setting
    changed in place would change theirs too, and would not reach the parts made from it."""
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), tier="Bulk", days=3, max_cost=2.0
    )
    assert (fs.tier, fs.days, fs.on_archived, fs.hooks.max_cost) == ("Bulk", 3, "raise", 2.0)
    assert fs.price_sheet_name == "aws-us-east-1"  # the provider's own sheet
    for name, value in (("tier", "Expedited"), ("on_archived", "wait"), ("days", 7)):
        with pytest.raises(AttributeError, match=f"{name} is fixed .* make a new one with {name}="):
            setattr(fs, name, value)
    assert (fs.tier, fs.days, fs.on_archived) == ("Bulk", 3, "raise")
    held = dataclasses.replace(fs._settings, hot_options={"secret": "hot-s3cr3t"})
    assert "hot-s3cr3t" not in repr(held)  # options that may hold credentials are not shown


def test_chained_url_reads_through_fsspec_open(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a/hot.bin", DATA)
    with fsspec.open(
        f"archive::s3://{bucket}/a/hot.bin",
        s3=archive.storage_options(),
        archive={"journal": False, "skip_instance_cache": True},
    ) as f:
        assert f.read() == DATA
    fs, path = fsspec.core.url_to_fs(
        f"archivefs::s3://{bucket}/a/hot.bin", s3=archive.storage_options(), archivefs={}
    )
    assert isinstance(fs, ArchiveFileSystem)
    assert path == f"{bucket}/a/hot.bin"


# -- every storage class ---------------------------------------------------------------


@pytest.mark.parametrize("storage_class", HOT_CLASSES)
def test_classes_that_read_at_once(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, storage_class: str
) -> None:
    archive.put_object(bucket, "obj", DATA, storage_class=storage_class)
    info = afs.info(f"{bucket}/obj")
    assert info["storage_class"] == storage_class
    assert info["restore"] == "hot"
    assert info["size"] == len(DATA)
    assert info["type"] == "file"
    assert afs.cat_file(f"{bucket}/obj") == DATA
    assert afs.cat_file(f"{bucket}/obj", start=10, end=20) == DATA[10:20]


@pytest.mark.parametrize("storage_class", ARCHIVE_CLASSES)
def test_archived_read_raises_a_clear_error(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, storage_class: str
) -> None:
    archive.put_object(bucket, "cold/obj", DATA, storage_class=storage_class)
    assert afs.info(f"{bucket}/cold/obj")["restore"] == "archived"
    archive.requests.clear()
    with pytest.raises(ObjectArchivedError) as info:
        afs.cat_file(f"{bucket}/cold/obj")
    error = info.value
    assert isinstance(error, PermissionError)
    assert not isinstance(error, FileNotFoundError)  # zarr must never see a missing chunk
    message = str(error)
    assert f"{bucket}/cold/obj" in message
    assert storage_class in message
    assert f"fs.restore('{bucket}/cold/obj', tier='Standard', days=1)" in message
    assert " h" in message  # the expected wait
    assert error.storage_class == storage_class
    assert archive.requests.count("RestoreObject") == 0  # raise never pays


def test_intelligent_tiering_archive_access_is_archived(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_object(
        bucket, "it", DATA, storage_class="INTELLIGENT_TIERING", archive_access="ARCHIVE_ACCESS"
    )
    info = afs.info(f"{bucket}/it")
    assert info["restore"] == "archived"
    assert info["archive_access"] == "ARCHIVE_ACCESS"
    with pytest.raises(ObjectArchivedError, match="ARCHIVE_ACCESS"):
        afs.cat_file(f"{bucket}/it")
    result = afs.restore(f"{bucket}/it", wait=True, timeout=600)
    assert result.requests_sent == 1
    assert afs.cat_file(f"{bucket}/it") == DATA
    assert afs.info(f"{bucket}/it", refresh=True)["restore"] == "hot"


# -- restore states ----------------------------------------------------------------------


def test_restore_states_through_a_full_cycle(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.set_restore_delay(1.5)
    archive.seconds_per_day = 3.0
    archive.put_object(bucket, "obj", DATA, storage_class="GLACIER")
    path = f"{bucket}/obj"
    result = afs.restore(path, days=1)
    assert result.requests_sent == 1
    state = afs.state(path)
    assert state.restore.value == "restoring"
    with pytest.raises(RestoreInProgressError, match="in progress"):
        afs.cat_file(path)
    deadline = time.monotonic() + 20
    while afs.state(path).restore.value != "restored":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    info = afs.info(path, refresh=True)
    assert info["restore"] == "restored"
    assert info["restore_expiry"].tzinfo is not None
    assert afs.cat_file(path) == DATA
    while afs.state(path).restore.value != "archived":  # the copy expires after 1 "day"
        assert time.monotonic() < deadline + 10
        time.sleep(0.2)
    with pytest.raises(ObjectArchivedError):
        afs.cat_file(path)


def test_expired_copy_reads_as_archived(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_object(bucket, "obj", DATA, storage_class="DEEP_ARCHIVE")
    afs.restore(f"{bucket}/obj", wait=True, timeout=600)
    assert afs.cat_file(f"{bucket}/obj") == DATA
    archive.expire_restore(bucket, "obj")
    assert afs.state(f"{bucket}/obj").restore.value == "archived"
    with pytest.raises(ObjectArchivedError):
        afs.cat_file(f"{bucket}/obj")


# -- read policies -----------------------------------------------------------------------


def test_policy_restore_issues_one_request_and_says_when(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "obj", DATA, storage_class="GLACIER")
    fs = make_fs(on_archived="restore")
    with pytest.raises(RestoreInProgressError) as first:
        fs.cat_file(f"{bucket}/obj")
    assert first.value.ready_at is not None
    assert "restore requested" in str(first.value)
    assert archive.requests.count("RestoreObject") == 1
    with pytest.raises(RestoreInProgressError):
        fs.cat_file(f"{bucket}/obj")
    assert archive.requests.count("RestoreObject") == 1  # never paid twice


def test_policy_wait_restores_then_reads(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(1.0)
    archive.put_object(bucket, "obj", DATA, storage_class="DEEP_ARCHIVE")
    fs = make_fs(on_archived="wait", wait_timeout=600)
    assert fs.cat_file(f"{bucket}/obj", start=5, end=15) == DATA[5:15]
    assert archive.requests.count("RestoreObject") == 1
    with fs.open(f"{bucket}/obj") as f:
        assert f.read() == DATA
    assert archive.requests.count("RestoreObject") == 1


def test_policy_wait_times_out_with_a_clear_error(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(60)
    archive.put_object(bucket, "obj", DATA, storage_class="GLACIER")
    fs = make_fs(on_archived="wait", wait_timeout=1.0)
    with pytest.raises(RestoreTimeoutError, match="not finished after 1 s") as info:
        fs.cat_file(f"{bucket}/obj")
    assert "nothing is re-requested" in str(info.value)
    assert archive.requests.count("RestoreObject") == 1


# -- listings ------------------------------------------------------------------------------


def test_ls_of_1000_archived_objects_is_one_list_and_no_head(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_objects(
        bucket, {f"d/{i:04d}": b"x" * (i % 7) for i in range(1000)}, storage_class="GLACIER"
    )
    archive.requests.clear()
    entries = afs.ls(f"{bucket}/d", detail=True)
    assert len(entries) == 1000
    assert {e["restore"] for e in entries} == {"archived"}
    assert {e["storage_class"] for e in entries} == {"GLACIER"}
    assert archive.requests.count("LIST") == 1
    assert archive.requests.count("HEAD") == 0


def test_ls_reports_every_state_from_the_listing(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "s/hot", DATA)
    archive.put_object(bucket, "s/archived", DATA, storage_class="GLACIER")
    archive.put_object(bucket, "s/restoring", DATA, storage_class="GLACIER")
    afs.restore(f"{bucket}/s/restoring")
    archive.requests.clear()
    states = {e["name"].rsplit("/", 1)[1]: e["restore"] for e in afs.ls(f"{bucket}/s", detail=True)}
    assert states == {"hot": "hot", "archived": "archived", "restoring": "restoring"}
    assert archive.requests.count("HEAD") == 0
    assert archive.requests.count("LIST") == 1


def test_listing_without_restore_status_falls_back_to_head_for_archive_classes_only(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.restore_status_in_listings = False  # like Ceph RGW or MinIO
    archive.put_objects(bucket, {f"m/{i}": b"x" for i in range(5)}, storage_class="GLACIER")
    archive.put_objects(bucket, {f"m/h{i}": b"x" for i in range(7)})
    fs = make_fs(restore_status_in_listings=None)
    archive.requests.clear()
    entries = fs.ls(f"{bucket}/m", detail=True)
    assert len(entries) == 12
    # the listing, and the one LIST that asks whether listings carry restore status
    assert archive.requests.count("LIST") == 2
    assert archive.requests.count("HEAD") == 5
    archive.requests.clear()
    assert len(fs.ls(f"{bucket}/m", detail=True, refresh=True)) == 12
    assert archive.requests.counts() == {"LIST": 1, "HEAD": 5}  # asked once per filesystem


def test_find_and_glob_carry_states(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_objects(bucket, {f"x/{i}/f.nc": b"x" for i in range(3)}, storage_class="GLACIER")
    archive.put_object(bucket, "x/top.txt", b"t")
    found = afs.find(f"{bucket}/x", detail=True)
    assert sorted(found) == [f"{bucket}/x/{i}/f.nc" for i in range(3)] + [f"{bucket}/x/top.txt"]
    assert found[f"{bucket}/x/top.txt"]["restore"] == "hot"
    assert afs.glob(f"{bucket}/x/*/f.nc") == [f"{bucket}/x/{i}/f.nc" for i in range(3)]
    assert afs.isdir(f"{bucket}/x/1")
    assert afs.isfile(f"{bucket}/x/top.txt")


# -- reads match s3fs exactly --------------------------------------------------------------


def test_reads_match_s3fs_bytes_and_request_counts(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB
    archive.put_object(bucket, "big", payload)
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    path = f"{bucket}/big"

    def measure(fs: Any) -> tuple[list[bytes], dict[str, int], int]:
        archive.requests.clear()
        out = read_every_way(fs, path, tmp_path)
        return out, archive.requests.counts(), archive.requests.bytes_sent("GET")

    raw_out, raw_counts, raw_bytes = measure(raw)
    # the one GET per bucket that looks for catalogs, made once per filesystem
    fsspec.asyn.sync(afs.loop, afs.catalogs.catalogs, bucket)
    ours_out, our_counts, our_bytes = measure(afs)
    assert ours_out == raw_out
    assert ours_out[0] == payload
    assert our_counts == raw_counts
    assert our_bytes == raw_bytes


def test_a_folder_is_asked_about_once_per_walk(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    """find(withdirs=True), which get(recursive=True) runs, is one recursive listing of the
    folder (fsspec's walk asked _isdir(root) and _info(root), a HEAD and a LIST, before a
    LIST per folder; issue 49); nothing is remembered past the walk."""
    for i in range(3):
        archive.put_object(bucket, f"dir/f{i}", DATA)
    fsspec.asyn.sync(afs.loop, afs.catalogs.catalogs, bucket)  # the bucket's catalog lookup
    archive.requests.clear()
    afs.get(f"{bucket}/dir/", str(tmp_path / "got") + "/", recursive=True)
    archive.wait_idle()
    assert archive.requests.counts() == {"LIST": 1, "GET": 3}
    assert sorted(p.name for p in (tmp_path / "got").iterdir()) == ["f0", "f1", "f2"]
    archive.requests.clear()
    assert afs.info(f"{bucket}/dir")["type"] == "directory"  # asked again after the walk
    archive.wait_idle()
    assert archive.requests.count("HEAD") == 1


def test_a_whole_read_of_a_known_object_is_one_request(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, make_fs: Any
) -> None:
    """s3fs sends a HEAD (for the size) before a whole-object GET; archivefs does not when a
    listing, the catalog or a finished restore already told it the size and state."""
    archive.put_object(bucket, "d/hot", DATA)
    archive.put_object(bucket, "d/cold", DATA, storage_class="GLACIER")
    fsspec.asyn.sync(afs.loop, afs.catalogs.catalogs, bucket)  # the one-off catalog lookup
    archive.requests.clear()
    assert afs.cat_file(f"{bucket}/d/hot") == DATA  # nothing known: the HEAD s3fs would send
    assert archive.requests.counts() == {"HEAD": 1, "GET": 1}
    with pytest.raises(ObjectArchivedError):  # its HEAD says archived: no refused GET
        afs.cat_file(f"{bucket}/d/cold")
    assert archive.requests.counts() == {"HEAD": 2, "GET": 1}
    afs.ls(f"{bucket}/d")
    archive.requests.clear()
    assert afs.cat_file(f"{bucket}/d/hot") == DATA
    assert afs.cat([f"{bucket}/d/hot"]) == {f"{bucket}/d/hot": DATA}
    assert archive.requests.counts() == {"GET": 2}
    with pytest.raises(ObjectArchivedError):  # the listing said archived: one HEAD checks it
        afs.cat_file(f"{bucket}/d/cold")
    assert archive.requests.counts() == {"GET": 2, "HEAD": 1}
    assert archive.requests.count("RestoreObject") == 0

    # restored after the listing: the HEAD finds it readable and the read goes on
    fs = make_fs(on_archived="wait", wait_timeout=600)
    fs.ls(f"{bucket}/d")
    plan = fs.plan(f"{bucket}/d/cold")
    fs.restore(f"{bucket}/d/cold", wait=True, timeout=600)
    archive.requests.clear()
    assert fs.cat_file(f"{bucket}/d/cold") == DATA
    assert archive.requests.counts() == {"HEAD": 1, "GET": 1}
    # a restore that as_ready saw finish: one GET
    fresh = make_fs()
    fsspec.asyn.sync(fresh.loop, fresh.catalogs.catalogs, bucket)
    for group in fresh.as_ready(plan, timeout=600):
        archive.requests.clear()
        assert fresh.cat_file(group.key) == DATA
        assert archive.requests.counts() == {"GET": 1}


# -- throttling ------------------------------------------------------------------------------


def test_reads_survive_throttling(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_object(bucket, "obj", DATA)
    archive.faults.throttle(count=3, ops=["GET"])
    assert afs.cat_file(f"{bucket}/obj") == DATA
    assert archive.faults.injected == 3


def test_restores_survive_throttling_and_are_sent_once_each(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_objects(
        bucket, {f"t/{i:02d}": b"x" * i for i in range(40)}, storage_class="GLACIER"
    )
    archive.faults.throttle(fraction=0.3, ops=["RestoreObject"], seed=7)
    result = afs.restore(f"{bucket}/t/*", wait=True, timeout=600)
    assert len(result.plan) == 40
    assert archive.requests.count("RestoreObject", status=202) == 40
    assert archive.requests.count("RestoreObject", status=409) == 0
    throttled = archive.requests.count("RestoreObject", status=503)
    assert throttled == archive.faults.injected > 0
    assert all(afs.cat_file(f"{bucket}/t/{i:02d}") == b"x" * i for i in range(40))


# -- errors ----------------------------------------------------------------------------------


def test_missing_bucket_and_key(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    check_missing_bucket_and_key(afs, bucket)


def test_a_glob_that_cannot_list_raises_instead_of_matching_nothing(
    archive: EmulatedArchive,
    bucket: str,
    afs: ArchiveFileSystem,
    packed: tuple[dict[str, bytes], str],
) -> None:
    """fsspec's walk leaves out a folder whose listing fails, for any error, so a glob that
    was refused its listings answered [] as if nothing matched; only a folder that is gone
    is left out. Below a catalog root a glob lists nothing, so it answers all the same."""
    archive.put_objects(bucket, {f"x/{i}/f.nc": b"x" for i in range(3)})
    files, root = packed
    afs.find(root)  # the catalog, loaded
    archive.faults.error(403, "AccessDenied", ops=["LIST"])
    for call in (
        lambda: afs.glob(f"{bucket}/x/*/f.nc"),
        lambda: afs.glob(f"{bucket}/x/**", detail=True),
        lambda: afs.find(f"{bucket}/x", maxdepth=1),
    ):
        with pytest.raises(AccessDeniedError, match="x"):
            call()
    archive.requests.clear()
    folders = {
        "/".join(parts[:i]) for parts in (n.split("/") for n in files) for i in range(1, len(parts))
    }
    assert afs.glob(f"{root}/**") == sorted({root, *(f"{root}/{p}" for p in {*files, *folders})})
    assert archive.requests.count("LIST") == 0
    archive.faults.clear()
    assert afs.glob(f"{bucket}/x/*/f.nc") == [f"{bucket}/x/{i}/f.nc" for i in range(3)]
    assert afs.glob(f"{bucket}/gone/*") == []  # a folder that does not exist: no match


def test_bad_paths(afs: ArchiveFileSystem) -> None:
    with pytest.raises(InvalidPathError, match="empty path"):
        afs.restore("")
    with pytest.raises(InvalidPathError, match="names no bucket"):
        afs.state("/")


def test_days_are_checked_where_they_enter_as_the_constructor_checks_them(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    """``days=`` of plan/estimate/restore is refused unless a whole number >= 1, before
    any request: 0 was taken for the default, and -3 priced a negative restored copy."""
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    archive.requests.clear()
    for days in (0, -3, 1.5, True):
        for call in (afs.plan, afs.estimate, afs.restore, afs.prefetch):
            with pytest.raises(InvalidRestoreRequestError, match="days must be a whole number"):
                call(f"{bucket}/g", days=days)
    assert afs.plan(f"{bucket}/g", days=3).days == 3
    assert archive.requests.count("RestoreObject") == 0


def test_restore_requests_are_validated_before_anything_is_sent(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem
) -> None:
    archive.put_object(bucket, "deep", DATA, storage_class="DEEP_ARCHIVE")
    archive.put_object(bucket, "hot", DATA)
    archive.requests.clear()
    with pytest.raises(InvalidRestoreRequestError, match="Expedited tier is not available"):
        afs.restore(f"{bucket}/deep", tier="Expedited")
    with pytest.raises(InvalidRestoreRequestError, match="unknown restore tier"):
        afs.restore(f"{bucket}/deep", tier="Slow")
    with pytest.raises(InvalidRestoreRequestError, match="days must be between"):
        afs.restore(f"{bucket}/deep", days=2**31)  # above S3's bound
    with pytest.raises(NotArchivedError, match="STANDARD, which reads at once"):
        afs.restore(f"{bucket}/hot")
    assert archive.requests.count("RestoreObject") == 0
    # in a glob, hot objects are simply read: only the archived one is restored
    result = afs.restore(f"{bucket}/*")
    assert result.requests_sent == 1
    assert [g.action.value for g in sorted(result.plan, key=lambda g: g.key)] == [
        "restore",
        "read",
    ]


# -- hot store and promotion -------------------------------------------------------------


def test_promoted_copies_outlive_the_restore_and_read_from_the_hot_store(
    archive: EmulatedArchive, bucket: str, make_fs: Any, tmp_path: Path
) -> None:
    hot_dir = tmp_path / "hot"
    hot_dir.mkdir()
    archive.put_objects(
        bucket, {f"p/{i}": bytes([i]) * 100 for i in range(3)}, storage_class="GLACIER"
    )
    fs = make_fs(hot=str(hot_dir))
    fs.restore(f"{bucket}/p/*", promote=True, timeout=600)
    assert sorted(p.name for p in (hot_dir / bucket / "p").iterdir()) == ["0", "1", "2"]
    for i in range(3):
        archive.expire_restore(bucket, f"p/{i}")
    archive.requests.clear()
    assert fs.cat_file(f"{bucket}/p/1") == bytes([1]) * 100
    assert fs.cat_file(f"{bucket}/p/2", start=10, end=20) == bytes([2]) * 10
    assert archive.requests.count("GET") == 0


def test_promote_into_another_bucket_is_a_server_side_copy(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.create_bucket(f"{bucket}-hot")
    archive.put_object(bucket, "c", DATA, storage_class="DEEP_ARCHIVE")
    fs = make_fs(hot=f"s3://{bucket}-hot/promoted", hot_options=archive.storage_options())
    with pytest.raises(ObjectArchivedError):
        fs.promote(f"{bucket}/c")  # archived: nothing to copy yet
    fs.restore(f"{bucket}/c", wait=True, timeout=600)
    archive.requests.clear()
    assert fs.promote(f"{bucket}/c") == [f"{bucket}-hot/promoted/{bucket}/c"]
    assert archive.requests.count("COPY") == 1
    assert archive.requests.count("GET") == 0
    archive.expire_restore(bucket, "c")
    assert fs.cat_file(f"{bucket}/c") == DATA


# -- line reads: no backwards range at the end of a file --------------------------------------


def _catalog_read(key: str | None) -> bool:
    """A read of the registry or of a catalog's pointer or shards: since the catalog view
    reads each within its caller's bound, a ranged GET too, but no read of the file's bytes."""
    path = f"/{key or ''}"
    return path.endswith("/.archivefs/catalogs.json") or "/.archivefs/catalog/" in path


def _lines_read_without_416(archive: EmulatedArchive, fs: ArchiveFileSystem, path: str) -> None:
    archive.requests.clear()
    with fs.open(path) as handle:
        lines = list(handle)
        assert handle.readline() == b""  # at EOF: nothing, and no request
        assert handle.readline() == b""
    assert b"".join(lines) == LINES
    assert [line.endswith(b"\n") for line in lines] == [True, True, True]
    gets = [r for r in archive.requests.records if not _catalog_read(r.key)]
    assert [r.status for r in gets if r.op == "GET" and r.range] == [206]  # one ranged GET
    assert archive.requests.count("GET", status=416) == 0


def test_line_by_line_reads_of_objects_and_members(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    from tests.reliability._support import bundle, s3

    archive.put_object(bucket, "b.txt", LINES)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "b.txt").write_bytes(LINES)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/packed")
    _lines_read_without_416(archive, afs, f"{bucket}/b.txt")
    _lines_read_without_416(archive, afs, f"{bucket}/packed/b.txt")
    with afs.open(f"{bucket}/packed/b.txt", "r", encoding="utf-8") as text:
        assert text.readlines() == LINES.decode().splitlines(keepends=True)
    assert archive.requests.count("GET", status=416) == 0


# -- bundle members behave as files for every verb --------------------------------------------


@pytest.fixture
def packed(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> tuple[dict[str, bytes], str]:
    """A bundled tree at ``bucket/packed`` (STANDARD bundles) and its files by relative name."""
    from tests.reliability._support import bundle, make_tree, s3

    files = make_tree(tmp_path / "src", 8)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/packed")
    return files, f"{bucket}/packed"


def test_member_verbs_read_the_bundle_never_the_logical_path(
    archive: EmulatedArchive,
    afs: ArchiveFileSystem,
    packed: tuple[dict[str, bytes], str],
    tmp_path: Path,
) -> None:
    files, root = packed
    name = sorted(files)[0]
    path, data = f"{root}/{name}", files[name]
    bucket, key = path.split("/", 1)
    archive.put_object(bucket, key, b"a decoy object at the member's logical path")
    out = tmp_path / "out"
    out.mkdir()
    archive.requests.clear()
    afs.get(path, str(out / "get.dat"))
    afs.get_file(path, str(out / "get_file.dat"))
    afs.download(path, str(out / "download.dat"))
    afs.cp(path, f"{bucket}/copies/cp.dat")
    afs.cp_file(path, f"{bucket}/copies/cp_file.dat")
    for name_ in ("get.dat", "get_file.dat", "download.dat"):
        assert (out / name_).read_bytes() == data
    assert afs.cat_file(f"{bucket}/copies/cp.dat") == data
    assert afs.cat_file(f"{bucket}/copies/cp_file.dat") == data
    assert afs.head(path, 10) == data[:10]
    assert afs.tail(path, 10) == data[-10:]
    assert afs.cat_ranges([path, path], [0, 5], [4, 9]) == [data[0:4], data[5:9]]
    with afs.open(path, "r", encoding="latin-1", newline="") as text:
        assert text.read() == data.decode("latin-1")
    assert not [r for r in archive.requests.records if r.key == key]  # S3 never asked for it
    assert archive.requests.count("GET", status=416) == 0
    assert afs.du(root) == sum(len(v) for v in files.values())
    walked = {f"{d}/{f}" for d, _, fs_ in afs.walk(root) for f in fs_}
    assert walked == {f"{root}/{n}" for n in files}


def test_recursive_get_and_cp_of_a_bundled_folder(
    afs: ArchiveFileSystem, packed: tuple[dict[str, bytes], str], tmp_path: Path
) -> None:
    files, root = packed
    bucket = root.split("/", 1)[0]
    afs.get(f"{root}/", str(tmp_path / "got") + "/", recursive=True)
    got = {
        p.relative_to(tmp_path / "got").as_posix(): p.read_bytes()
        for p in (tmp_path / "got").rglob("*")
        if p.is_file()
    }
    assert got == files
    afs.cp(f"{root}/", f"{bucket}/copied/", recursive=True)
    copied = {p[len(f"{bucket}/copied/") :]: afs.cat_file(p) for p in afs.find(f"{bucket}/copied")}
    assert copied == files


def test_members_are_not_written_or_removed_one_by_one(
    afs: ArchiveFileSystem, packed: tuple[dict[str, bytes], str], tmp_path: Path
) -> None:
    files, root = packed
    path = f"{root}/{sorted(files)[0]}"
    (tmp_path / "new").write_bytes(b"new")
    for write in (
        lambda: afs.pipe_file(path, b"new"),
        lambda: afs.put_file(str(tmp_path / "new"), path),
        lambda: afs.put_file(str(tmp_path / "new"), path, storage_class="STANDARD"),
        lambda: afs.cp_file(f"{root}/{sorted(files)[1]}", path),
        lambda: afs.rm_file(path),
        lambda: afs.rm(f"{root}/d0", recursive=True),
    ):
        with pytest.raises(InvalidPathError, match="bundle"):
            write()
    assert afs.cat_file(path) == files[sorted(files)[0]]


def test_restore_of_a_glob_over_a_bundled_tree_restores_its_bundles(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    from archivefs.catalog import Catalog
    from archivefs.catalog.layout import catalog_dir
    from tests.reliability._support import bundle, make_tree, s3

    files = make_tree(tmp_path / "src", 12)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/archive", storage_class="GLACIER")
    bundles = Catalog.load(s3(archive), catalog_dir(f"{bucket}/archive")).bundles
    archive.requests.clear()
    result = afs.restore(f"{bucket}/archive/**", wait=True, timeout=600)
    assert archive.requests.count("RestoreObject") == result.requests_sent == len(bundles) == 4
    assert sorted(g.key for g in result.plan) == sorted(bundles)
    assert sorted(result.plan.paths) == sorted(f"{bucket}/archive/{n}" for n in files)
    assert afs.cat_file(f"{bucket}/archive/{sorted(files)[5]}") == files[sorted(files)[5]]


def test_find_and_glob_with_detail_give_members_their_bundles_probed_states(
    archive: EmulatedArchive, bucket: str, make_fs: Any, tmp_path: Path
) -> None:
    """``find(detail=True)`` and ``glob(detail=True)`` below a catalog root say what ``ls``
    says: a member of a restored bundle is restored (with its expiry), from one bulk probe
    of the cold bundles; before, they gave the state the class implies (archived)."""
    from archivefs.catalog import Catalog
    from archivefs.catalog.layout import catalog_dir
    from archivefs.errors import MissingBundleError
    from tests.reliability._support import bundle, make_tree, s3

    files = make_tree(tmp_path / "src", 12)
    root = f"{bucket}/archive"
    bundle(tmp_path / "src", s3(archive), root, storage_class="GLACIER")
    bundles = Catalog.load(s3(archive), catalog_dir(root)).bundles
    afs = make_fs()
    afs.restore(f"{root}/d1", wait=True, timeout=600)
    fresh = make_fs()
    fresh.find(root)  # the catalog, loaded
    archive.requests.clear()
    found = fresh.find(root, detail=True)
    assert archive.requests.counts() == {"LIST": 1}  # 4 GLACIER bundles: one bulk probe
    folders = [f"{root}/{d}" for d in ("d0", "d1", "d2", "d3")]
    listed = {e["name"]: e for d in folders for e in fresh.ls(d, detail=True)}
    keys = ("restore", "restore_expiry", "storage_class", "StorageClass", "access", "size")
    assert {n: {k: e[k] for k in keys} for n, e in found.items()} == {
        n: {k: e[k] for k in keys} for n, e in listed.items()
    }
    restored = {n for n, e in found.items() if e["restore"] == "restored"}
    assert restored == {f"{root}/{n}" for n in files if n.startswith("d1/")}
    assert all(found[n]["restore_expiry"] is not None for n in restored)
    assert {e["restore"] for n, e in found.items() if n not in restored} == {"archived"}
    globbed = fresh.glob(f"{root}/*/*.dat", detail=True)
    assert {n: e["restore"] for n, e in globbed.items()} == {
        n: e["restore"] for n, e in found.items()
    }
    assert fresh.find(f"{root}/d1", maxdepth=1, detail=True) == {
        n: e for n, e in found.items() if n.startswith(f"{root}/d1/")
    }
    # above the catalog root, the bucket's own listing holds the bundles' states
    assert {n: e["restore"] for n, e in fresh.find(bucket, detail=True).items() if n in found} == {
        n: e["restore"] for n, e in found.items()
    }
    # a bundle that is gone is damage, named, not an archived member
    gone = sorted(bundles)[0]
    s3(archive).rm_file(gone)
    with pytest.raises(MissingBundleError, match="does not exist"):
        make_fs().find(root, detail=True)


def test_rm_of_a_catalog_root_updates_the_registry_in_the_same_call(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Any,
    packed: tuple[dict[str, bytes], str],
    tmp_path: Path,
) -> None:
    import json

    from tests.reliability._support import bundle, make_tree, s3

    _files, root = packed
    other = make_tree(tmp_path / "other", 4, seed=1)
    bundle(tmp_path / "other", s3(archive), f"{bucket}/kept")
    archive.put_object(bucket, "plain/x.bin", DATA)
    make_fs().rm(root, recursive=True)
    registry = json.loads(s3(archive).cat_file(f"{bucket}/.archivefs/catalogs.json"))
    assert registry == {"roots": [f"{bucket}/kept"]}
    fresh = make_fs()
    assert not fresh.exists(f"{bucket}/nope")
    assert not fresh.exists(root)
    assert fresh.cat_file(f"{bucket}/plain/x.bin") == DATA
    name = sorted(other)[0]
    assert fresh.cat_file(f"{bucket}/kept/{name}") == other[name]


def test_a_registered_catalog_that_is_gone_fails_only_its_own_prefix(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Any,
    packed: tuple[dict[str, bytes], str],
) -> None:
    from archivefs.errors import CatalogError
    from tests.reliability._support import s3

    files, root = packed
    archive.put_object(bucket, "plain/x.bin", DATA)
    raw = s3(archive)
    raw.rm(f"{root}/.archivefs/catalog", recursive=True)  # deleted behind archivefs's back
    fs = make_fs()
    assert fs.cat_file(f"{bucket}/plain/x.bin") == DATA
    assert not fs.exists(f"{bucket}/nope")
    assert fs.ls(bucket, detail=False)
    with pytest.raises(CatalogError, match="catalog is registered at this root") as info:
        fs.cat_file(f"{root}/{sorted(files)[0]}")
    assert not isinstance(info.value, FileNotFoundError)
    assert "archivefs catalog rebuild" in str(info.value)
    assert f"fs.unregister_catalog('{root}')" in str(info.value)
    fs.unregister_catalog(root)
    assert not make_fs().exists(f"{root}/{sorted(files)[0]}")


def test_cp_of_an_archived_object_with_wait_restores_then_copies(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "cold/src.bin", DATA, storage_class="GLACIER")
    fs = make_fs(on_archived="wait", wait_timeout=600)
    archive.requests.clear()
    fs.cp(f"{bucket}/cold/src.bin", f"{bucket}/copy.bin")
    assert fs.cat_file(f"{bucket}/copy.bin") == DATA
    assert archive.requests.count("RestoreObject") == 1
    assert archive.requests.count("COPY", status=200) == 1


@pytest.mark.parametrize("code", ["InvalidObjectState", "ObjectNotInActiveTierError"])
def test_both_archived_codes_mean_archived(code: str) -> None:
    from botocore.exceptions import ClientError

    from archivefs.stores.translate import is_archived_error

    cause = ClientError({"Error": {"Code": code, "Message": "archived"}}, "CopyObject")
    error = PermissionError("archived")
    error.__cause__ = cause
    assert is_archived_error(error)


def test_listing_states_match_info_after_a_restore_one_probe_per_bundle(
    archive: EmulatedArchive, bucket: str, afs: ArchiveFileSystem, tmp_path: Path
) -> None:
    from archivefs.catalog import ByPrefix
    from tests.reliability._support import bundle, make_tree, s3

    files = make_tree(tmp_path / "src", 12, dirs=1)  # d0/f0000.dat ... in 3 bundles
    bundle(
        tmp_path / "src",
        s3(archive),
        f"{bucket}/g",
        storage_class="GLACIER",
        policy=ByPrefix(depth=1, target_size=12_000),
    )
    first = f"{bucket}/g/{sorted(files)[0]}"
    afs.restore(first, wait=True, timeout=600)
    archive.requests.clear()
    listing = {e["name"]: e for e in afs.ls(f"{bucket}/g/d0", detail=True)}
    bundles = {e["bundle"] for e in listing.values()}
    assert len(bundles) > 1
    assert archive.requests.counts() == {"LIST": 1}  # one bulk probe, not one per member
    restored = listing[first]["bundle"]
    for entry in listing.values():
        assert entry["restore"] == ("restored" if entry["bundle"] == restored else "archived")
    assert afs.info(first)["restore"] == listing[first]["restore"] == "restored"


def test_cat_ranges_of_many_plain_objects_keeps_a_bounded_number_in_flight(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    """1,000 reads at once stalled the event loop past a connection's 5 s to open (issue
    45's full-size benchmark): plain reads go PLAIN_READS_AT_ONCE at a time (counted in
    archivefs's own read, not timed), each answered, every object read once."""
    n = PLAIN_READS_AT_ONCE + 44
    archive.put_objects(bucket, {f"many/{i:04d}": f"object {i}".encode() for i in range(n)})
    fs = make_fs()
    reads = fs._crew.reads
    original = reads.cat_file
    flight = {"now": 0, "most": 0}

    async def counted(*args: Any, **kwargs: Any) -> Any:
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        try:
            return await original(*args, **kwargs)
        finally:
            flight["now"] -= 1

    reads.cat_file = counted
    paths = [f"{bucket}/many/{i:04d}" for i in range(n)]
    archive.requests.clear()
    got = fs.cat_ranges(paths, [0] * n, [len(f"object {i}") for i in range(n)])
    assert got == [f"object {i}".encode() for i in range(n)]
    assert flight["most"] == PLAIN_READS_AT_ONCE
    gets = [r.key for r in archive.requests.matching(op="GET") if r.key.startswith("many/")]
    assert sorted(gets) == [f"many/{i:04d}" for i in range(n)]
