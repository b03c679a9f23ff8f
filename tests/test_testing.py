"""The emulated archive (archivefs.testing), driven over HTTP through boto3 and s3fs."""

from __future__ import annotations

import contextlib
import errno
import random
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import botocore.exceptions
import pytest
import s3fs
from botocore.config import Config

from archivefs.errors import ArchiveError, ObjectNotFoundError, UnknownStorageClassError
from archivefs.testing import OPS, EmulatedArchive, RequestRecord
from archivefs.testing._counters import classify
from archivefs.testing._shim import lookup

if TYPE_CHECKING:
    from pathlib import Path

DATA = bytes(range(256)) * 40  # 10,240 bytes
NO_RETRIES = Config(retries={"mode": "standard", "total_max_attempts": 1})


@pytest.fixture
def s3(archive: EmulatedArchive) -> Any:
    """A boto3 client that never retries, so every fault is visible."""
    return archive.client(NO_RETRIES)


@pytest.fixture
def fs(s3_storage_options: dict[str, Any]) -> s3fs.S3FileSystem:
    return s3fs.S3FileSystem(**s3_storage_options, skip_instance_cache=True)


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(0.02)


def error_code(excinfo: pytest.ExceptionInfo[botocore.exceptions.ClientError]) -> tuple[int, str]:
    response = excinfo.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


def restore(s3: Any, bucket: str, key: str, days: int | None = 1, tier: str | None = None) -> int:
    request: dict[str, Any] = {} if days is None else {"Days": days}
    if tier is not None:
        request["GlacierJobParameters"] = {"Tier": tier}
    out = s3.restore_object(Bucket=bucket, Key=key, RestoreRequest=request)
    return int(out["ResponseMetadata"]["HTTPStatusCode"])


def restore_header(s3: Any, bucket: str, key: str) -> str | None:
    value: str | None = s3.head_object(Bucket=bucket, Key=key).get("Restore")
    return value


def listing(s3: Any, bucket: str, **kwargs: Any) -> dict[str, Any]:
    out = s3.list_objects_v2(Bucket=bucket, **kwargs)
    return {entry["Key"]: entry.get("RestoreStatus") for entry in out.get("Contents", [])}


def expiry_of(header: str) -> datetime:
    match = re.search(r'expiry-date="([^"]+)"', header)
    assert match is not None, header
    return parsedate_to_datetime(match.group(1))


def backdate(archive: EmulatedArchive, bucket: str, key: str, hours: float) -> None:
    """Make moto believe the key's restore state last changed ``hours`` ago."""
    fake = lookup(archive.region, bucket, key)
    fake._time_progressed = datetime.now() - timedelta(hours=hours)


# -- lifecycle and connection -----------------------------------------------------------------


def test_endpoint_is_loopback_on_an_ephemeral_port(archive: EmulatedArchive) -> None:
    match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)", archive.endpoint_url)
    assert match is not None
    assert int(match.group(1)) > 0
    assert archive.storage_options() == {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": archive.endpoint_url, "region_name": "us-east-1"},
    }
    assert "testing" not in repr(archive)


def test_start_is_idempotent_and_a_second_archive_is_refused(
    emulated_archive: EmulatedArchive,
) -> None:
    assert emulated_archive.start() is emulated_archive
    other = EmulatedArchive()
    with pytest.raises(ArchiveError, match="already running") as excinfo:
        other.start()
    assert "Fix:" in str(excinfo.value)
    other.stop()  # never started: a no-op


def test_stop_closes_the_port_and_start_serves_again(emulated_archive: EmulatedArchive) -> None:
    old = emulated_archive.endpoint_url
    emulated_archive.stop()
    try:
        host, port = old.removeprefix("http://").split(":")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((host, int(port)), timeout=5).close()
        with pytest.raises(ArchiveError, match="not running"):
            emulated_archive.create_bucket("after-stop")
    finally:
        emulated_archive.start()
    emulated_archive.create_bucket("after-restart")
    client = emulated_archive.client()
    assert [b["Name"] for b in client.list_buckets()["Buckets"]] == ["after-restart"]


def test_server_thread_is_a_daemon(emulated_archive: EmulatedArchive) -> None:
    thread = emulated_archive._thread
    assert thread is not None
    assert thread._thread is not None
    assert thread._thread.daemon


def test_requests_print_nothing(
    archive: EmulatedArchive, bucket: str, s3: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    archive.put_object(bucket, "k", b"x")
    s3.get_object(Bucket=bucket, Key="k")["Body"].read()
    with pytest.raises(botocore.exceptions.ClientError):
        s3.get_object(Bucket=bucket, Key="missing")
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_reset_empties_everything_and_restores_settings(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    archive.set_restore_delay(30)
    archive.seconds_per_day = 1.0
    archive.restore_status_in_listings = False
    assert restore(s3, bucket, "g") == 202
    archive.faults.throttle(ops=["HEAD"])
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_object(Bucket=bucket, Key="g")
    archive.reset()
    assert archive.requests.records == []
    assert archive.faults.injected == 0
    assert (archive.restore_delay, archive.seconds_per_day) == (0.0, 86400.0)
    assert archive.restore_status_in_listings is True
    assert s3.list_buckets()["Buckets"] == []
    archive.create_bucket(bucket)  # same name, fresh state: no fault, restores at once
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    assert restore(s3, bucket, "g") == 202
    assert s3.get_object(Bucket=bucket, Key="g")["Body"].read() == DATA


def test_bad_settings_are_refused(archive: EmulatedArchive) -> None:
    with pytest.raises(ValueError, match="restore_delay"):
        archive.set_restore_delay(-1)
    with pytest.raises(ValueError, match="seconds_per_day"):
        archive.seconds_per_day = 0
    with pytest.raises(ValueError, match="restore_delay"):
        EmulatedArchive(restore_delay=float("nan"))


# -- seeding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "storage_class",
    ["STANDARD", "STANDARD_IA", "ONEZONE_IA", "GLACIER_IR", "INTELLIGENT_TIERING", "GLACIER"],
)
def test_put_object_stores_the_class(
    archive: EmulatedArchive, bucket: str, s3: Any, storage_class: str
) -> None:
    archive.put_object(bucket, "k", DATA, storage_class=storage_class)
    assert archive.requests.records == []  # seeding is not counted
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head.get("StorageClass", "STANDARD") == storage_class
    assert head["ContentLength"] == len(DATA)


def test_put_objects_seeds_thousands_and_lists_them(
    archive: EmulatedArchive, bucket: str, fs: s3fs.S3FileSystem
) -> None:
    archive.put_objects(
        bucket,
        {f"d/{i:04d}": bytes([i % 256]) * (i % 5) for i in range(2000)},
        storage_class="DEEP_ARCHIVE",
    )
    entries = fs.ls(f"{bucket}/d", detail=True)
    assert len(entries) == 2000
    assert {e["StorageClass"] for e in entries} == {"DEEP_ARCHIVE"}
    assert sum(e["size"] for e in entries) == sum(i % 5 for i in range(2000))
    assert archive.requests.count("LIST") == 2  # 1,000 keys per page


def test_seeding_errors_name_the_object_and_the_fix(archive: EmulatedArchive, bucket: str) -> None:
    with pytest.raises(UnknownStorageClassError, match="only to INTELLIGENT_TIERING"):
        archive.put_object(
            bucket, "k", b"x", storage_class="GLACIER", archive_access="ARCHIVE_ACCESS"
        )
    with pytest.raises(UnknownStorageClassError, match="DEEP_ARCHIVE_ACCESS"):
        archive.put_object(
            bucket, "k", b"x", storage_class="INTELLIGENT_TIERING", archive_access="X"
        )
    with pytest.raises(UnknownStorageClassError, match="unknown storage class"):
        archive.put_object(bucket, "k", b"x", storage_class="COLD")
    with pytest.raises(ObjectNotFoundError, match="create_bucket") as excinfo:
        archive.put_objects("no-such-bucket", {"k": b"x"})
    assert excinfo.value.path == "no-such-bucket"
    with pytest.raises(ObjectNotFoundError, match="create_bucket"):
        archive.put_object("no-such-bucket", "k", b"x")


# -- restores -------------------------------------------------------------------------------


def test_restore_takes_the_delay_counted_from_the_request(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    backdate(archive, bucket, "g", hours=2)  # an object archived long ago
    assert restore_header(s3, bucket, "g") is None
    assert restore(s3, bucket, "g") == 202
    assert restore_header(s3, bucket, "g") == 'ongoing-request="true"'
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        s3.get_object(Bucket=bucket, Key="g")
    assert error_code(excinfo) == (403, "InvalidObjectState")
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]) == {
        "g": {"IsRestoreInProgress": True}
    }


def test_restore_completes_after_the_delay(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.set_restore_delay(0.3)
    archive.seconds_per_day = 1000.0
    archive.put_object(bucket, "g", DATA, storage_class="DEEP_ARCHIVE")
    requested = datetime.now(UTC)
    assert restore(s3, bucket, "g", days=2) == 202
    wait_until(lambda: restore_header(s3, bucket, "g") != 'ongoing-request="true"')
    header = restore_header(s3, bucket, "g")
    assert header is not None
    assert header.startswith('ongoing-request="false", expiry-date=')
    # expiry counts from completion: at least the delay plus two 1000-second days
    assert expiry_of(header) - requested >= timedelta(seconds=2000.3)
    got = s3.get_object(Bucket=bucket, Key="g", Range="bytes=10-19")["Body"].read()
    assert got == DATA[10:20]


def test_with_restore_windows_each_class_and_tier_takes_its_own_window(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    """`archivefs serve`'s emulator: Deep Archive Standard (12 h) takes the delay, and every
    other class and tier its own window on that scale (GLACIER Expedited, 5 min: 1/144 of it),
    also after a speed upgrade; the default (one delay for every restore) is unchanged."""
    archive.set_restore_delay(720)  # GLACIER Expedited: 5 s; Deep Archive Standard: 720 s
    archive.restore_windows = True
    archive.put_objects(bucket, {"fast": DATA, "upgraded": DATA}, storage_class="GLACIER")
    archive.put_object(bucket, "deep", DATA, storage_class="DEEP_ARCHIVE")
    assert restore(s3, bucket, "fast", tier="Expedited") == 202
    assert restore(s3, bucket, "upgraded", tier="Bulk") == 202  # 12 h: 240 s ...
    assert restore(s3, bucket, "upgraded", tier="Expedited") == 202  # ... upgraded: 5 s
    assert restore(s3, bucket, "deep", tier="Standard") == 202
    wait_until(lambda: restore_header(s3, bucket, "fast") != 'ongoing-request="true"', 120)
    wait_until(lambda: restore_header(s3, bucket, "upgraded") != 'ongoing-request="true"', 120)
    assert restore_header(s3, bucket, "deep") == 'ongoing-request="true"'  # 12 minutes to go
    archive.reset()
    assert archive.restore_windows is False


def test_start_restores_seeds_restores_in_flight_that_complete_as_requested_ones(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(30)
    archive.seconds_per_day = 1000.0
    archive.put_objects(bucket, {"a": DATA, "b": DATA, "hot": DATA}, storage_class="GLACIER")
    archive.put_object(bucket, "std", DATA)
    archive.start_restores(bucket, ["a", "b"], days=2)
    assert archive.requests.counts() == {}  # seeding: nothing sent, nothing counted
    assert restore_header(s3, bucket, "a") == 'ongoing-request="true"'
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"])["b"] == {
        "IsRestoreInProgress": True
    }
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "a")  # in flight, as after an accepted request
    assert error_code(excinfo) == (409, "RestoreAlreadyInProgress")
    for bad in (["std"], ["a"], ["missing"]):  # not archived; restore started; no object
        with pytest.raises((ArchiveError, ObjectNotFoundError), match=bad[0]):
            archive.start_restores(bucket, bad)
    requested = datetime.now(UTC)
    archive.set_restore_delay(0.3)  # applies to restores in flight
    wait_until(lambda: restore_header(s3, bucket, "b") != 'ongoing-request="true"')
    header = restore_header(s3, bucket, "b")
    assert header is not None
    assert expiry_of(header) - requested >= timedelta(seconds=2000)
    assert s3.get_object(Bucket=bucket, Key="b")["Body"].read() == DATA
    assert restore_header(s3, bucket, "hot") is None


def test_listing_head_and_get_agree_at_every_moment(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(0.3)
    for key in ("a", "b"):
        archive.put_object(bucket, key, DATA, storage_class="GLACIER")
        assert restore(s3, bucket, key) == 202

    def listed_restored(key: str) -> bool:
        status = listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"])[key]
        return bool(status) and status["IsRestoreInProgress"] is False

    # seen restored in a listing first: HEAD and GET agree at once, and stay so
    wait_until(lambda: listed_restored("a"))
    assert restore_header(s3, bucket, "a").startswith('ongoing-request="false"')
    assert s3.get_object(Bucket=bucket, Key="a")["Body"].read() == DATA
    # seen restored by HEAD first: the listing agrees with its expiry date
    wait_until(lambda: restore_header(s3, bucket, "b") != 'ongoing-request="true"')
    status = listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"])["b"]
    assert status["IsRestoreInProgress"] is False
    assert status["RestoreExpiryDate"] == expiry_of(restore_header(s3, bucket, "b"))


def test_duplicate_restore_in_progress_is_409(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    assert restore(s3, bucket, "g") == 202
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "g")
    assert error_code(excinfo) == (409, "RestoreAlreadyInProgress")
    assert archive.requests.count("RestoreObject", status=409) == 1


def test_restore_without_days_is_refused(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "g", days=None)
    assert error_code(excinfo) == (400, "InvalidArgument")
    assert restore_header(s3, bucket, "g") is None


def test_restore_of_a_hot_object_is_refused(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "k", DATA, storage_class="GLACIER_IR")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "k")
    assert error_code(excinfo) == (403, "InvalidObjectState")


def test_concurrent_restores_accept_exactly_one(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    start = threading.Barrier(8)

    def one() -> None:
        start.wait()
        with contextlib.suppress(botocore.exceptions.ClientError):
            restore(s3, bucket, "g")

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(r.status for r in archive.requests.records)
    assert statuses == [202] + [409] * 7


def test_restore_of_a_restored_object_is_200_and_extends_expiry(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.seconds_per_day = 100.0
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    assert restore(s3, bucket, "g", days=1) == 202
    first = expiry_of(restore_header(s3, bucket, "g"))
    assert restore(s3, bucket, "g", days=5) == 200
    second = expiry_of(restore_header(s3, bucket, "g"))
    assert second - first >= timedelta(seconds=399)  # now + 500 s vs (earlier) + 100 s


def test_restored_copy_expires_and_the_object_is_archived_again(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.seconds_per_day = 0.5
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    assert restore(s3, bucket, "g") == 202
    assert restore_header(s3, bucket, "g") is not None

    def archived() -> bool:
        try:
            s3.get_object(Bucket=bucket, Key="g")["Body"].read()
        except botocore.exceptions.ClientError as exc:
            return bool(exc.response["Error"]["Code"] == "InvalidObjectState")
        return False

    wait_until(archived)
    assert restore_header(s3, bucket, "g") is None
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]) == {"g": None}
    assert restore(s3, bucket, "g") == 202  # a fresh restore, not an extension


def test_expire_restore_ends_the_copy_now(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    with pytest.raises(ArchiveError, match="no restored copy") as excinfo:
        archive.expire_restore(bucket, "g")
    assert excinfo.value.path == f"{bucket}/g"
    with pytest.raises(ObjectNotFoundError):
        archive.expire_restore(bucket, "missing")
    assert restore(s3, bucket, "g") == 202
    assert s3.get_object(Bucket=bucket, Key="g")["Body"].read() == DATA
    archive.expire_restore(bucket, "g")
    assert restore_header(s3, bucket, "g") is None
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket=bucket, Key="g")
    assert error_code(caught) == (403, "InvalidObjectState")


def test_overwriting_a_restoring_object_forgets_the_restore(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    assert restore(s3, bucket, "g") == 202
    s3.put_object(Bucket=bucket, Key="g", Body=b"new", StorageClass="GLACIER")
    assert restore_header(s3, bucket, "g") is None
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]) == {"g": None}
    assert restore(s3, bucket, "g") == 202


def test_restore_status_in_listings_states_and_switch(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    odd = "dir/a b+é&<.bin"  # needs URL and XML escaping in the listing
    archive.put_object(bucket, "hot", DATA)
    archive.put_object(bucket, "archived", DATA, storage_class="GLACIER")
    archive.put_object(bucket, odd, DATA, storage_class="GLACIER")
    archive.put_object(bucket, "restoring", DATA, storage_class="DEEP_ARCHIVE")
    assert restore(s3, bucket, odd) == 202
    expiry = expiry_of(restore_header(s3, bucket, odd))
    archive.set_restore_delay(30)
    assert restore(s3, bucket, "restoring") == 202
    expected = {
        "archived": None,
        odd: {"IsRestoreInProgress": False, "RestoreExpiryDate": expiry},
        "hot": None,
        "restoring": {"IsRestoreInProgress": True},
    }
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]) == expected
    listed_v1 = s3.list_objects(Bucket=bucket, OptionalObjectAttributes=["RestoreStatus"])
    assert {e["Key"]: e.get("RestoreStatus") for e in listed_v1["Contents"]} == expected
    assert set(listing(s3, bucket).values()) == {None}  # not asked: not given
    archive.restore_status_in_listings = False  # like Ceph RGW and MinIO
    assert set(listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]).values()) == {None}


def test_restore_through_s3fs(archive: EmulatedArchive, bucket: str, fs: s3fs.S3FileSystem) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    with pytest.raises(PermissionError):
        fs.cat_file(f"{bucket}/g")
    fs.call_s3("restore_object", Bucket=bucket, Key="g", RestoreRequest={"Days": 1})
    with pytest.raises(OSError, match="in progress") as excinfo:  # s3fs maps 409 to EBUSY
        fs.call_s3("restore_object", Bucket=bucket, Key="g", RestoreRequest={"Days": 1})
    assert excinfo.value.errno == errno.EBUSY
    assert isinstance(excinfo.value.__cause__, botocore.exceptions.ClientError)
    listed = fs.call_s3(
        "list_objects_v2", Bucket=bucket, OptionalObjectAttributes=["RestoreStatus"]
    )
    assert listed["Contents"][0]["RestoreStatus"] == {"IsRestoreInProgress": True}
    assert fs.call_s3("head_object", Bucket=bucket, Key="g")["Restore"] == 'ongoing-request="true"'
    archive.set_restore_delay(0.2)  # moto's transition applies to restores in flight
    wait_until(
        lambda: (
            fs.call_s3("head_object", Bucket=bucket, Key="g")["Restore"] != 'ongoing-request="true"'
        )
    )
    assert fs.cat_file(f"{bucket}/g", start=100, end=200) == DATA[100:200]


# -- Intelligent-Tiering archive tiers ---------------------------------------------------------


@pytest.mark.parametrize("tier", ["ARCHIVE_ACCESS", "DEEP_ARCHIVE_ACCESS"])
def test_intelligent_tiering_archive_tier(
    archive: EmulatedArchive, bucket: str, s3: Any, tier: str
) -> None:
    archive.set_restore_delay(0.3)
    archive.put_object(bucket, "it", DATA, storage_class="INTELLIGENT_TIERING", archive_access=tier)
    head = s3.head_object(Bucket=bucket, Key="it")
    assert (head["StorageClass"], head["ArchiveStatus"], head.get("Restore")) == (
        "INTELLIGENT_TIERING",
        tier,
        None,
    )
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        s3.get_object(Bucket=bucket, Key="it")
    assert error_code(excinfo) == (403, "InvalidObjectState")
    assert excinfo.value.response["Error"]["AccessTier"] == tier
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "it", days=1)
    assert error_code(excinfo) == (400, "InvalidArgument")
    assert restore(s3, bucket, "it", days=None) == 202
    head = s3.head_object(Bucket=bucket, Key="it")
    assert (head["ArchiveStatus"], head["Restore"]) == (tier, 'ongoing-request="true"')
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]) == {
        "it": {"IsRestoreInProgress": True}
    }
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "it", days=None)
    assert error_code(excinfo) == (409, "RestoreAlreadyInProgress")
    wait_until(lambda: "ArchiveStatus" not in s3.head_object(Bucket=bucket, Key="it"))
    head = s3.head_object(Bucket=bucket, Key="it")
    assert "Restore" not in head  # back in the frequent tier: no expiry
    assert s3.get_object(Bucket=bucket, Key="it")["Body"].read() == DATA
    assert listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"]) == {"it": None}
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "it", days=None)  # nothing left to restore
    assert error_code(excinfo) == (403, "InvalidObjectState")


def test_intelligent_tiering_through_s3fs(
    archive: EmulatedArchive, bucket: str, fs: s3fs.S3FileSystem
) -> None:
    archive.put_objects(
        bucket,
        {"a": DATA, "b": DATA},
        storage_class="INTELLIGENT_TIERING",
        archive_access="ARCHIVE_ACCESS",
    )
    with pytest.raises(PermissionError):
        fs.cat_file(f"{bucket}/a")
    assert fs.call_s3("head_object", Bucket=bucket, Key="b")["ArchiveStatus"] == "ARCHIVE_ACCESS"
    fs.call_s3("restore_object", Bucket=bucket, Key="a", RestoreRequest={})
    assert fs.cat_file(f"{bucket}/a") == DATA  # delay 0: restored at once
    with pytest.raises(PermissionError):
        fs.cat_file(f"{bucket}/b")


def test_overwriting_an_archive_tier_object_makes_it_hot(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.put_object(
        bucket, "it", DATA, storage_class="INTELLIGENT_TIERING", archive_access="ARCHIVE_ACCESS"
    )
    s3.put_object(Bucket=bucket, Key="it", Body=b"new", StorageClass="INTELLIGENT_TIERING")
    assert "ArchiveStatus" not in s3.head_object(Bucket=bucket, Key="it")
    assert s3.get_object(Bucket=bucket, Key="it")["Body"].read() == b"new"


def test_copy_from_an_archive_tier_is_refused(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.put_object(
        bucket, "it", DATA, storage_class="INTELLIGENT_TIERING", archive_access="ARCHIVE_ACCESS"
    )
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "it"})
    assert error_code(excinfo) == (403, "InvalidObjectState")


# -- faults ---------------------------------------------------------------------------------


def test_throttle_count_and_ops(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "k", DATA)
    archive.faults.throttle(count=2, ops=["GET"])
    assert s3.head_object(Bucket=bucket, Key="k")["ContentLength"] == len(DATA)
    for _ in range(2):
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            s3.get_object(Bucket=bucket, Key="k")
        assert error_code(excinfo) == (503, "SlowDown")
        assert excinfo.value.response["Error"]["Message"] == "Please reduce your request rate."
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == DATA
    assert archive.faults.injected == 2
    assert [(r.op, r.status) for r in archive.requests.records] == [
        ("HEAD", 200),
        ("GET", 503),
        ("GET", 503),
        ("GET", 200),
    ]


def test_throttle_fraction_is_seeded(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "k", b"x")
    archive.faults.throttle(fraction=0.5, seed=7)
    outcomes = []
    for _ in range(40):
        try:
            s3.head_object(Bucket=bucket, Key="k")
            outcomes.append(200)
        except botocore.exceptions.ClientError as exc:
            outcomes.append(exc.response["ResponseMetadata"]["HTTPStatusCode"])
    draws = random.Random(7)
    assert outcomes == [503 if draws.random() < 0.5 else 200 for _ in range(40)]
    assert archive.faults.injected == outcomes.count(503)
    assert archive.requests.count("HEAD", status=503) == outcomes.count(503)


def test_throttled_restore_restores_nothing(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.set_restore_delay(30)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    archive.faults.throttle(count=1, ops=["RestoreObject"])
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        restore(s3, bucket, "g")
    assert error_code(excinfo) == (503, "SlowDown")
    assert restore_header(s3, bucket, "g") is None
    assert restore(s3, bucket, "g") == 202


def test_error_injects_any_status_and_code(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "k", DATA)
    archive.faults.error(count=1)
    archive.faults.error(403, "AccessDenied", count=1, ops=["LIST"])
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        s3.get_object(Bucket=bucket, Key="k")
    assert error_code(excinfo) == (500, "InternalError")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        s3.list_objects_v2(Bucket=bucket)
    assert error_code(excinfo) == (403, "AccessDenied")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == DATA
    archive.faults.clear()
    assert archive.faults.injected == 0


def test_reset_connection_before_the_response(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.put_object(bucket, "k", DATA)
    archive.faults.reset_connection(count=1)
    with pytest.raises(botocore.exceptions.ConnectionClosedError):
        s3.get_object(Bucket=bucket, Key="k")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == DATA
    first = archive.requests.records[0]
    assert (first.op, first.status, first.bytes_sent) == ("GET", 0, 0)


def test_reset_connection_after_some_bytes(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "k", DATA)
    archive.faults.reset_connection(count=1, after_bytes=1000, ops=["GET"])
    response = s3.get_object(Bucket=bucket, Key="k")  # status and headers arrive
    assert response["ContentLength"] == len(DATA)
    with pytest.raises(botocore.exceptions.ResponseStreamingError):
        response["Body"].read()
    record = archive.requests.records[0]
    assert (record.status, record.bytes_sent) == (200, 1000)


def test_s3fs_retries_through_throttling_and_resets(
    archive: EmulatedArchive, bucket: str, fs: s3fs.S3FileSystem
) -> None:
    archive.put_object(bucket, "k", DATA)
    archive.faults.throttle(count=1, ops=["GET"])
    archive.faults.reset_connection(count=1, ops=["GET"])
    assert fs.cat_file(f"{bucket}/k") == DATA
    assert [r.status for r in archive.requests.records if r.op == "GET"] == [503, 0, 200]
    assert archive.faults.injected == 2


def test_harness_requests_are_never_faulted_or_counted(
    archive: EmulatedArchive, bucket: str
) -> None:
    archive.faults.throttle()  # every request
    archive.put_object(bucket, "k", DATA)
    archive.create_bucket(f"{bucket}-2")
    assert archive.faults.injected == 0
    assert len(archive.requests) == 0


def test_bad_fault_rules_are_refused(archive: EmulatedArchive) -> None:
    with pytest.raises(ValueError, match="count"):
        archive.faults.throttle(count=0)
    with pytest.raises(ValueError, match="fraction"):
        archive.faults.throttle(fraction=1.5)
    with pytest.raises(ValueError, match="unknown operation"):
        archive.faults.throttle(ops=["Get"])
    with pytest.raises(ValueError, match="status"):
        archive.faults.error(200)
    with pytest.raises(ValueError, match="after_bytes"):
        archive.faults.reset_connection(after_bytes=-1)


# -- counters -------------------------------------------------------------------------------


def test_operations_are_counted_by_name(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "g", b"g", storage_class="GLACIER")
    s3.put_object(Bucket=bucket, Key="a", Body=DATA)
    s3.head_object(Bucket=bucket, Key="a")
    s3.get_object(Bucket=bucket, Key="a")["Body"].read()
    s3.list_objects_v2(Bucket=bucket)
    s3.copy_object(Bucket=bucket, Key="b", CopySource={"Bucket": bucket, "Key": "a"})
    s3.delete_object(Bucket=bucket, Key="b")
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}]})
    s3.restore_object(Bucket=bucket, Key="g", RestoreRequest={"Days": 1})
    upload = s3.create_multipart_upload(Bucket=bucket, Key="m")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="m", UploadId=upload, PartNumber=1, Body=b"p")
    s3.complete_multipart_upload(
        Bucket=bucket,
        Key="m",
        UploadId=upload,
        MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]},
    )
    other = s3.create_multipart_upload(Bucket=bucket, Key="n")["UploadId"]
    s3.abort_multipart_upload(Bucket=bucket, Key="n", UploadId=other)
    s3.create_bucket(Bucket=f"{bucket}-x")
    s3.head_bucket(Bucket=bucket)
    s3.get_bucket_location(Bucket=bucket)
    s3.get_object_tagging(Bucket=bucket, Key="m")
    assert archive.requests.counts() == {
        "PUT": 1,
        "HEAD": 1,
        "GET": 1,
        "LIST": 1,
        "COPY": 1,
        "DELETE": 1,
        "DeleteObjects": 1,
        "RestoreObject": 1,
        "CreateMultipartUpload": 2,
        "UploadPart": 1,
        "CompleteMultipartUpload": 1,
        "AbortMultipartUpload": 1,
        "CreateBucket": 1,
        "HeadBucket": 1,
        "GetBucketLocation": 1,
        "Other": 1,
    }
    assert set(archive.requests.counts()) == set(OPS)
    assert archive.requests.count(bucket=bucket, key="m") == 4
    assert archive.requests.count("RestoreObject", bucket=bucket, key="g", status=202) == 1


@pytest.mark.parametrize(
    ("method", "path", "query", "copy", "op"),
    [
        ("GET", "/", "", False, "Other"),
        ("GET", "/b", "list-type=2&prefix=x", False, "LIST"),
        ("GET", "/b", "", False, "LIST"),
        ("GET", "/b", "versions", False, "Other"),
        ("GET", "/b", "location", False, "GetBucketLocation"),
        ("GET", "/b/k", "versionId=1&partNumber=2", False, "GET"),
        ("GET", "/b/k", "uploadId=u", False, "Other"),
        ("GET", "/b/k", "tagging", False, "Other"),
        ("PUT", "/b/k", "partNumber=1&uploadId=u", True, "Other"),
        ("PUT", "/b/k", "acl", False, "Other"),
        ("PUT", "/b", "versioning", False, "Other"),
        ("POST", "/b/k", "select&select-type=2", False, "Other"),
        ("DELETE", "/b", "", False, "Other"),
    ],
)
def test_classify_edge_cases(method: str, path: str, query: str, copy: bool, op: str) -> None:
    from urllib.parse import parse_qs

    bucket, _, key = path.lstrip("/").partition("/")
    parsed = parse_qs(query, keep_blank_values=True)
    assert classify(method, bucket or None, key or None, parsed, copy_source=copy) == op


def test_bytes_sent_is_what_the_client_received(
    archive: EmulatedArchive, bucket: str, fs: s3fs.S3FileSystem
) -> None:
    archive.put_object(bucket, "k", DATA)
    assert fs.cat_file(f"{bucket}/k", start=1000, end=1500) == DATA[1000:1500]
    assert fs.cat_file(f"{bucket}/k") == DATA
    assert archive.requests.bytes_sent("GET") == 500 + len(DATA)
    assert [r.range for r in archive.requests.records if r.op == "GET"] == ["bytes=1000-1499", None]
    assert archive.requests.bytes_sent("HEAD") == 0
    with urllib.request.urlopen(f"{archive.endpoint_url}/{bucket}?list-type=2") as response:
        body = response.read()
    assert archive.requests.bytes_sent("LIST", bucket=bucket) == len(body) > 0


def test_request_records_carry_every_field(archive: EmulatedArchive, bucket: str, s3: Any) -> None:
    archive.put_object(bucket, "dir/a b", DATA)
    before = time.time()
    s3.get_object(Bucket=bucket, Key="dir/a b", Range="bytes=0-9")["Body"].read()
    record = archive.requests.records[0]
    assert isinstance(record, RequestRecord)
    assert record.time >= before - 1
    assert record == RequestRecord(
        op="GET",
        method="GET",
        bucket=bucket,
        key="dir/a b",
        status=206,
        bytes_sent=10,
        range="bytes=0-9",
        time=record.time,
    )
    with pytest.raises(ValueError, match="unknown operation"):
        archive.requests.count("Get")
    archive.requests.clear()
    assert archive.requests.counts() == {}


# -- pytest plugin ----------------------------------------------------------------------------


def test_fixtures(
    emulated_archive: EmulatedArchive,
    archive: EmulatedArchive,
    bucket: str,
    s3_storage_options: dict[str, Any],
    s3: Any,
) -> None:
    assert archive is emulated_archive
    assert re.fullmatch(r"test-[0-9a-f]{16}", bucket)
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    assert s3_storage_options == archive.storage_options()


def test_plugin_isolates_tests(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makeconftest('pytest_plugins = ["archivefs.testing.pytest_plugin"]')
    pytester.makepyfile(
        """
        import s3fs

        def test_one(archive, bucket, s3_storage_options):
            s3fs.S3FileSystem(**s3_storage_options)  # cached by fsspec
            archive.put_object(bucket, "k", b"x", storage_class="GLACIER")
            archive.set_restore_delay(60)
            archive.faults.throttle()

        def test_two(archive, s3_storage_options):
            assert s3fs.S3FileSystem._cache == {}
            assert archive.restore_delay == 0.0
            assert archive.faults.injected == 0
            assert archive.client().list_buckets()["Buckets"] == []
            assert len(archive.requests) == 1
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def _restore_with_tier(s3: Any, bucket: str, key: str, tier: str, days: int | None = 1) -> int:
    request: dict[str, Any] = {"GlacierJobParameters": {"Tier": tier}}
    if days is not None:
        request["Days"] = days
    out = s3.restore_object(Bucket=bucket, Key=key, RestoreRequest=request)
    return int(out["ResponseMetadata"]["HTTPStatusCode"])


def test_expedited_is_refused_for_deep_archive_and_the_deep_archive_access_tier(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.put_object(bucket, "d", DATA, storage_class="DEEP_ARCHIVE")
    archive.put_object(
        bucket,
        "it",
        DATA,
        storage_class="INTELLIGENT_TIERING",
        archive_access="DEEP_ARCHIVE_ACCESS",
    )
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        _restore_with_tier(s3, bucket, "d", "Expedited")
    assert error_code(caught) == (400, "InvalidArgument")
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        _restore_with_tier(s3, bucket, "it", "Expedited", days=None)
    assert error_code(caught) == (400, "InvalidArgument")
    assert restore_header(s3, bucket, "d") is None  # nothing started
    assert _restore_with_tier(s3, bucket, "d", "Bulk") == 202
    assert _restore_with_tier(s3, bucket, "it", "Standard", days=None) == 202


def test_a_faster_tier_while_in_progress_is_an_upgrade_and_a_slower_one_a_409(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.set_restore_delay(3600.0)
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    assert _restore_with_tier(s3, bucket, "g", "Bulk") == 202
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        _restore_with_tier(s3, bucket, "g", "Bulk")  # the same tier again
    assert error_code(caught) == (409, "RestoreAlreadyInProgress")
    assert _restore_with_tier(s3, bucket, "g", "Standard") == 202  # upgrade
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        _restore_with_tier(s3, bucket, "g", "Bulk")  # no downgrade
    assert error_code(caught) == (409, "RestoreAlreadyInProgress")
    assert _restore_with_tier(s3, bucket, "g", "Expedited") == 202  # upgrade again
    assert restore_header(s3, bucket, "g") == 'ongoing-request="true"'


def test_expiry_is_request_time_plus_days_rounded_up_to_midnight_utc(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    archive.put_object(bucket, "g", DATA, storage_class="GLACIER")
    requested = datetime.now(UTC)
    assert restore(s3, bucket, "g", days=2) == 202
    expiry = expiry_of(restore_header(s3, bucket, "g") or "")
    midnight = (requested + timedelta(days=2)).replace(hour=0, minute=0, second=0, microsecond=0)
    expected = midnight + timedelta(days=1)
    # a request made in the last moments before midnight may round to the following day
    assert expiry in (expected, expected - timedelta(days=1))
    assert (expiry.hour, expiry.minute, expiry.second) == (0, 0, 0)
    assert expiry >= requested + timedelta(days=2)


# -- latency and the archive in its own process ----------------------------------------------


def test_latency_delays_every_request_and_each_record_says_so(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    assert archive.latency == 0.0
    archive.put_object(bucket, "k", DATA)  # harness seeding: never delayed nor counted
    archive.set_latency(0.05)
    start = time.perf_counter()
    for _ in range(3):
        s3.head_object(Bucket=bucket, Key="k")
    elapsed = time.perf_counter() - start
    assert elapsed >= 3 * 0.05  # a lower bound: a busy machine only adds to it
    assert [r.latency for r in archive.requests.records] == [0.05, 0.05, 0.05]
    archive.set_latency(0)
    s3.head_object(Bucket=bucket, Key="k")
    assert archive.requests.records[-1].latency == 0.0
    with pytest.raises(ValueError, match="latency"):
        archive.set_latency(-0.1)
    with pytest.raises(ValueError, match="latency"):
        EmulatedArchive(latency=float("inf"))
    archive.set_latency(0.5)
    archive.reset()  # back to the constructor's value
    assert archive.latency == 0.0


def test_concurrent_requests_are_each_delayed(archive: EmulatedArchive, bucket: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    archive.put_object(bucket, "k", DATA)
    archive.set_latency(0.05)
    client = archive.client(Config(max_pool_connections=8, retries={"max_attempts": 1}))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: client.head_object(Bucket=bucket, Key="k"), range(16)))
    records = archive.requests.records
    assert len(records) == 16
    assert all(r.latency == 0.05 for r in records)


def test_remote_archive_counts_and_delays_as_the_in_process_one() -> None:
    from archivefs.testing import RemoteArchive

    with RemoteArchive(latency=0.02, restore_delay=3600) as remote:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", remote.endpoint_url)
        assert remote.latency == 0.02
        remote.create_bucket("remote")
        remote.put_objects("remote", {f"o/{i}": DATA for i in range(5)}, storage_class="GLACIER")
        remote.put_object("remote", "hot", DATA)
        s3 = remote.client(NO_RETRIES)
        start = time.perf_counter()
        for i in range(5):
            assert restore(s3, "remote", f"o/{i}") == 202
        assert time.perf_counter() - start >= 5 * 0.02
        with pytest.raises(botocore.exceptions.ClientError) as excinfo:
            restore(s3, "remote", "o/0")
        assert error_code(excinfo) == (409, "RestoreAlreadyInProgress")
        assert listing(s3, "remote", OptionalObjectAttributes=["RestoreStatus"])["o/0"] == {
            "IsRestoreInProgress": True
        }
        assert s3.get_object(Bucket="remote", Key="hot")["Body"].read() == DATA
        assert remote.requests.counts() == {"RestoreObject": 6, "LIST": 1, "GET": 1}
        assert remote.requests.count("RestoreObject", status=202) == 5
        assert remote.requests.bytes_sent("GET") == len(DATA)
        assert len(remote.requests) == 8
        assert all(r.latency == 0.02 for r in remote.requests.records)
        remote.restore_status_in_listings = False
        assert listing(s3, "remote", OptionalObjectAttributes=["RestoreStatus"])["o/0"] is None
        remote.set_restore_delay(0)
        remote.expire_restore("remote", "o/1")
        assert restore_header(s3, "remote", "o/1") is None
        remote.seconds_per_day = 10.0
        assert remote.seconds_per_day == 10.0
        with pytest.raises(ObjectNotFoundError, match="create it first"):
            remote.put_objects("missing", {"a": b"1"})
        remote.set_latency(0.5)
        remote.reset()
        assert (remote.latency, remote.restore_delay, len(remote.requests)) == (0.02, 3600.0, 0)
        assert remote.restore_status_in_listings is True
    with pytest.raises(ArchiveError, match="not running"):
        remote.requests.count()


def test_listings_refuse_an_optional_attribute_s3_does_not_have(
    archive: EmulatedArchive, bucket: str, s3: Any
) -> None:
    """S3 checks the names in ``x-amz-optional-object-attributes`` (400 InvalidArgument for
    one it lacks); a server that ignores the header (Ceph RGW, MinIO, moto) answers 200."""
    archive.put_object(bucket, "archived", DATA, storage_class="GLACIER")
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        s3.list_objects_v2(Bucket=bucket, OptionalObjectAttributes=["NoSuchAttribute"])
    assert refused.value.response["Error"]["Code"] == "InvalidArgument"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    both = ["RestoreStatus", "NoSuchAttribute"]
    with pytest.raises(botocore.exceptions.ClientError, match="InvalidArgument"):
        s3.list_objects(Bucket=bucket, OptionalObjectAttributes=both)
    assert list(listing(s3, bucket, OptionalObjectAttributes=["RestoreStatus"])) == ["archived"]
    archive.restore_status_in_listings = False  # like Ceph RGW and MinIO: the header ignored
    listed = s3.list_objects_v2(Bucket=bucket, OptionalObjectAttributes=["NoSuchAttribute"])
    assert [e["Key"] for e in listed["Contents"]] == ["archived"]


def _ops_record(uri: str, agent: str) -> str:
    """One record of radosgw's ops log, as radosgw writes it (no newline of its own)."""
    import json as json_

    return json_.dumps({"uri": uri, "operation": "get_obj", "user_agent": agent})


def test_the_radosgw_request_log_reads_only_whole_new_records_and_counts_from_clear(
    tmp_path: Path,
) -> None:
    """``RGWRequestLog`` over an ops log that radosgw appends to from its own thread: a
    record still being written is left for the next read, and ``clear`` counts from its
    own marker request on, without reading the log."""
    from archivefs.testing import RGWRequestLog
    from archivefs.testing._rgw import HARNESS_AGENT

    log = tmp_path / "ops.log"
    log.write_bytes(b"")
    half: list[bytes] = []

    def record(uri: str, agent: str = "s3fs") -> bytes:
        return _ops_record(uri, agent).encode()

    def mark(marker: str) -> None:  # radosgw answers the harness's HEAD, then logs it
        with log.open("ab") as out:
            out.write(b"".join(half) + record(f"HEAD /harness/{marker}", HARNESS_AGENT))
        half.clear()

    requests = RGWRequestLog(log, mark)
    with log.open("ab") as out:
        out.write(record("GET /b/one") + b"\n" + record("GET /b/two")[:20])  # two: half written
    half.append(record("GET /b/two")[20:])
    assert [r["uri"] for r in requests.records()] == ["GET /b/one", "GET /b/two"]
    requests.clear()
    assert log.read_bytes().count(b"clear-") == 1  # one marker request, nothing read
    with log.open("ab") as out:
        out.write(record("GET /b/three"))
    assert [r["uri"] for r in requests.records()] == ["GET /b/three"]
    assert requests.count("GET") == 1


def test_the_radosgw_request_log_waits_for_a_clear_marker_logged_late(tmp_path: Path) -> None:
    """radosgw logs from its own thread: a read waits until the last ``clear``'s marker
    is logged too, even when it shows up after the read's own marker."""
    from archivefs.testing import RGWRequestLog
    from archivefs.testing._rgw import HARNESS_AGENT

    log = tmp_path / "ops.log"
    log.write_bytes(b"")
    cleared: list[str] = []

    def line(uri: str, agent: str = HARNESS_AGENT) -> str:
        return _ops_record(uri, agent) + "\n"

    def write(*lines: str) -> None:
        with log.open("a") as out:
            out.writelines(lines)

    def mark(marker: str) -> None:
        if marker.startswith("clear-"):
            cleared.append(marker)  # its record is written only after the read's marker
            return
        write(line("GET /b/before-clear", "s3fs"), line(f"HEAD /harness/{marker}"))
        late = (line(f"HEAD /harness/{cleared[-1]}"), line("GET /b/after-clear", "s3fs"))
        threading.Timer(0.2, write, late).start()

    requests = RGWRequestLog(log, mark)
    requests.clear()
    assert [r["uri"] for r in requests.records()] == ["GET /b/after-clear"]
