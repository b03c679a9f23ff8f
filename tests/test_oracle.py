"""Oracle Cloud Archive Storage: the provider's rules, the store over ocifs, the fake's answers.

Real HTTP through ocifs and the OCI SDK to ``archivefs.testing``'s fake Object
Storage endpoint; every count is the fake's, server side.
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.errors import (
    AccessDeniedError,
    InvalidRestoreRequestError,
    NotArchivedError,
    ObjectArchivedError,
    ObjectNotFoundError,
    RestoreInProgressError,
)
from archivefs.model import StorageClass
from archivefs.providers import ORACLE, provider_for_protocol
from archivefs.providers.oracle import check_restore_objects

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedOracleArchive


def test_the_provider_in_oracles_names() -> None:
    assert provider_for_protocol("oci") is ORACLE
    assert [c.name for c in ORACLE.classes] == ["Standard", "InfrequentAccess", "Archive"]
    archive = StorageClass.parse("archive", provider="oracle")
    assert (archive.provider, archive.needs_restore) == ("oracle", True)
    assert archive.min_storage_days == 90
    infrequent = StorageClass.parse("InfrequentAccess", provider="oracle")
    assert (infrequent.has_retrieval_fee, infrequent.min_storage_days) == (True, 31)
    assert StorageClass.parse("Archive").provider == "azure"  # listed first: keeps the name
    assert ORACLE.window("Archive", "Standard").max_s == 3600  # "at most an hour"


@pytest.mark.parametrize(
    ("days", "hours", "sent"), [(1, None, 24), (10, None, 240), (None, None, 24), (3, 5, 5)]
)
def test_hours_sent_are_days_times_24_or_the_hours_given(
    days: int | None, hours: int | None, sent: int
) -> None:
    assert check_restore_objects("Archive", "Standard", days, hours=hours) == sent


def test_rules_refuse_before_sending() -> None:
    with pytest.raises(NotArchivedError, match="Standard tier, which reads at once"):
        check_restore_objects("Standard", "Standard", 1, path="b/k")
    with pytest.raises(InvalidRestoreRequestError, match="no restore tiers; 'Bulk'"):
        check_restore_objects("Archive", "Bulk", 1)
    with pytest.raises(InvalidRestoreRequestError, match="1 to 240 hours; 264 hours"):
        check_restore_objects("Archive", "Standard", 11)
    with pytest.raises(InvalidRestoreRequestError, match="0 hours"):
        check_restore_objects("Archive", "Standard", 1, hours=0)


def test_head_gives_the_time_a_restored_copy_returns_to_archive(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.put_object(oracle_bucket, "a.bin", b"data", tier="Archive")
    fs = make_oci(store_options={"hours": 5})
    fs.restore(f"{oracle_bucket}/a.bin")
    oracle_archive.complete_restores()
    oracle_archive.requests.clear()
    state = fs.state(f"{oracle_bucket}/a.bin")
    assert state.restore.value == "restored"
    assert state.restore_expiry is not None
    left = state.restore_expiry.timestamp() - time.time()
    assert 4 * 3600 < left <= 5 * 3600  # hours=5 was sent
    assert oracle_archive.requests.counts() == {"HeadObject": 1}


def test_a_restored_copy_expires_after_its_hours(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.seconds_per_hour = 0.2  # time-scaled: 1 hour = 0.2 s
    oracle_archive.restore_delay = 0.0
    oracle_archive.put_object(oracle_bucket, "a.bin", b"data", tier="Archive")
    fs = make_oci(store_options={"hours": 1})
    fs.restore(f"{oracle_bucket}/a.bin")
    assert oracle_archive.archival_state(oracle_bucket, "a.bin") == "Restored"
    assert fs.cat_file(f"{oracle_bucket}/a.bin") == b"data"
    time.sleep(0.3)  # past the copy's 1 (scaled) hour: not a speed assumption
    assert oracle_archive.archival_state(oracle_bucket, "a.bin") == "Archived"
    with pytest.raises(ObjectArchivedError):
        fs.cat_file(f"{oracle_bucket}/a.bin")


def test_raise_policy_reads_nothing_and_restores_nothing(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.put_object(oracle_bucket, "a.bin", b"data", tier="Archive")
    fs = make_oci()
    oracle_archive.requests.clear()
    with pytest.raises(ObjectArchivedError, match="archived in Archive") as caught:
        fs.cat(f"{oracle_bucket}/a.bin")
    assert "oci://" in str(caught.value)
    cause = caught.value.__cause__
    assert cause is not None
    assert type(cause.__cause__).__module__ == "oci.exceptions"  # raised from the SDK's
    assert oracle_archive.requests.count("RestoreObjects") == 0
    reads = [(r.name, r.status) for r in oracle_archive.requests.records if r.op == "GetObject"]
    # the catalog registry is looked up once (absent), then the read: 409 NotRestored
    assert reads == [(".archivefs/catalogs.json", 404), ("a.bin", 409)]


def test_restore_policy_sends_one_restore_then_none(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.restore_delay = 3600.0
    oracle_archive.put_object(oracle_bucket, "a.bin", b"data", tier="Archive")
    fs = make_oci(on_archived="restore")
    with pytest.raises(RestoreInProgressError, match="restore requested"):
        fs.cat(f"{oracle_bucket}/a.bin")
    assert oracle_archive.requests.count("RestoreObjects", status=202) == 1
    with pytest.raises(RestoreInProgressError, match="already in progress"):
        fs.cat(f"{oracle_bucket}/a.bin")
    assert oracle_archive.requests.count("RestoreObjects") == 1  # restoring: nothing sent
    assert oracle_archive.restores == {f"{oracle_bucket}/a.bin": 1}


def test_wait_policy_reads_after_the_restore(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.put_object(oracle_bucket, "a.bin", b"payload", tier="Archive")
    fs = make_oci(on_archived="wait", wait_timeout=120)
    assert fs.cat(f"{oracle_bucket}/a.bin") == b"payload"
    assert oracle_archive.requests.count("RestoreObjects") == 1
    assert fs.info(f"{oracle_bucket}/a.bin", refresh=True)["restore"] == "restored"


def test_missing_bucket_and_object_are_clear_errors(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    fs = make_oci()
    with pytest.raises(ObjectNotFoundError, match="bucket 'no-such-bucket' does not exist"):
        fs.ls("no-such-bucket/x")
    with pytest.raises(ObjectNotFoundError, match="no such object"):
        fs.cat(f"{oracle_bucket}/missing.bin")
    with pytest.raises(ObjectNotFoundError, match="do not exist"):
        fs.restore([f"{oracle_bucket}/missing.bin"])


def test_bucket_info_is_one_headbucket_and_glob_reads_one_listing(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.put_objects(oracle_bucket, {f"run/{i}": b"x" for i in range(5)}, "Archive")
    fs = make_oci()
    oracle_archive.requests.clear()
    assert fs.info(oracle_bucket)["type"] == "directory"
    assert oracle_archive.requests.counts() == {"HeadBucket": 1}
    oracle_archive.requests.clear()
    assert len(fs.glob(f"{oracle_bucket}/run/*")) == 5
    # the catalog registry (absent); fsspec's glob asks _isdir and then info() of "run",
    # answered once for the walk (HeadObject 404, then a one-object ListObjects); then
    # one ListObjects answers all five
    assert oracle_archive.requests.counts() == {"GetObject": 1, "HeadObject": 1, "ListObjects": 2}
    assert oracle_archive.requests.count("HeadObject", name="run", status=404) == 1


def test_a_missing_or_wrong_oci_config_is_an_archivefs_error(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    with pytest.raises(AccessDeniedError, match=r"OCI configuration .*\(ConfigFileNotFound\)"):
        make_oci(target_options={"config": "/nonexistent/oci-config"})
    options = oracle_archive.storage_options()
    options["config"] = {**options["config"], "fingerprint": ":".join(["aa"] * 16)}
    with pytest.raises(AccessDeniedError, match="NotAuthenticated"):
        make_oci(target_options=options).ls(oracle_bucket)
    assert oracle_archive.requests.count(status=401) >= 1


def test_adapter_options_and_tiers_are_checked_before_any_request(
    oracle_archive: EmulatedOracleArchive, make_oci: Callable[..., Any]
) -> None:
    with pytest.raises(ValueError, match=r"outside Oracle's 1\.\.240\. Fix"):
        make_oci(store_options={"hours": 241})
    with pytest.raises(ValueError, match=r"unknown option\(s\) tries\. Fix"):
        make_oci(store_options={"retry": {"tries": 3}})
    with pytest.raises(ValueError, match=r"'batch_size' is not an option of the oracle adapter"):
        make_oci(store_options={"batch_size": 10})
    with pytest.raises(
        InvalidRestoreRequestError, match="has one restore speed, 'Standard'; not 'Bulk'"
    ):
        make_oci(tier="Bulk")
    assert oracle_archive.requests.counts() == {}


# -- the fake itself: answers a client would get from Oracle -------------------------------


def _raw(archive: EmulatedOracleArchive, method: str, path: str, body: Any = None) -> Any:
    """An unsigned request straight to the fake (no SDK): it must be refused."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(archive.endpoint + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_fake_refuses_unsigned_requests(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str
) -> None:
    status, body = _raw(oracle_archive, "GET", f"/n/archivefs/b/{oracle_bucket}/o")
    assert (status, body["code"]) == (401, "NotAuthenticated")
    assert oracle_archive.requests.count("ListObjects", status=401) == 1


def test_the_fake_restore_answers(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str
) -> None:
    from oci.exceptions import ServiceError
    from oci.object_storage.models import RestoreObjectsDetails
    from oci.retry import NoneRetryStrategy

    oracle_archive.restore_delay = 3600.0
    oracle_archive.put_object(oracle_bucket, "a", b"x", tier="Archive")
    oracle_archive.put_object(oracle_bucket, "s", b"x", tier="Standard")
    client = fsspec.filesystem(
        "oci", skip_instance_cache=True, **oracle_archive.storage_options()
    ).oci_client

    def restore(name: str, hours: int | None = None) -> int:
        details = RestoreObjectsDetails(object_name=name, hours=hours)
        try:
            response = client.restore_objects(
                "archivefs", oracle_bucket, details, retry_strategy=NoneRetryStrategy()
            )
        except ServiceError as error:
            return int(error.status)
        return int(response.status)

    assert restore("a", 241) == 400  # hours 1..240
    assert restore("s") == 400  # not in the Archive tier
    assert restore("nope") == 404
    assert restore("a") == 202  # hours left out: Oracle's default, 24
    assert restore("a") == 409  # a restore is in progress
    oracle_archive.complete_restores()
    assert restore("a", 2) == 200  # restored: a new readable period, no new restore
    assert oracle_archive.restores == {f"{oracle_bucket}/a": 1}
    assert oracle_archive.requests.count("RestoreObjects") == 6


def test_the_fake_pages_listings_at_1000_with_next_start(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str
) -> None:
    oracle_archive.put_objects(oracle_bucket, {f"p/{i:04d}": b"" for i in range(1001)})
    oracle_archive.put_object(oracle_bucket, "p/q/deep", b"")
    client = fsspec.filesystem(
        "oci", skip_instance_cache=True, **oracle_archive.storage_options()
    ).oci_client
    first = client.list_objects("archivefs", oracle_bucket, prefix="p/", delimiter="/").data
    assert (len(first.objects), first.prefixes, first.next_start_with) == (1000, [], "p/1000")
    rest = client.list_objects(
        "archivefs", oracle_bucket, prefix="p/", delimiter="/", start="p/1000"
    ).data
    assert ([o.name for o in rest.objects], rest.prefixes, rest.next_start_with) == (
        ["p/1000"],
        ["p/q/"],
        None,
    )
    assert oracle_archive.requests.counts() == {"ListObjects": 2}


def test_the_testing_page_example_runs(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str
) -> None:
    """docs/testing.md's Oracle example, as written, against the fixtures it names."""
    import re
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "testing.md").read_text(encoding="utf-8")
    section = page.split("## Oracle Cloud Archive Storage", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/testing.md", "exec"), namespace)
    namespace["test_restore_then_read"](oracle_archive, oracle_bucket)


def test_pickles_and_round_trips_through_json(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    """Dask pickles the filesystem, zarr/fsspec may rebuild it from JSON: both still read.

    ocifs writes its retry strategy into the ``config_kwargs`` dict it is given; the
    filesystem hands it a copy, so the options stay plain JSON.
    """
    import pickle

    from fsspec.spec import AbstractFileSystem

    oracle_archive.put_object(oracle_bucket, "a.bin", b"data")
    fs = make_oci()
    assert pickle.loads(pickle.dumps(fs)).cat_file(f"{oracle_bucket}/a.bin") == b"data"
    rebuilt = AbstractFileSystem.from_json(fs.to_json())
    assert rebuilt.cat_file(f"{oracle_bucket}/a.bin") == b"data"


def test_info_after_a_listing_gives_a_restored_objects_expiry(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    oracle_archive.put_object(oracle_bucket, "d/a.bin", b"data", tier="Archive")
    oracle_archive.put_object(oracle_bucket, "d/b.bin", b"hot")
    make_oci(store_options={"hours": 5}).restore(f"{oracle_bucket}/d/a.bin")
    oracle_archive.complete_restores()
    fs = make_oci()
    [listed] = [e for e in fs.ls(f"{oracle_bucket}/d", detail=True) if e["name"].endswith("/a.bin")]
    assert listed["restore_expiry"] is None  # ListObjects does not carry it
    oracle_archive.requests.clear()
    info = fs.info(f"{oracle_bucket}/d/a.bin")
    assert info["restore"] == "restored"
    assert info["restore_expiry"] is not None
    assert 4 * 3600 < info["restore_expiry"].timestamp() - time.time() <= 5 * 3600
    assert fs.info(f"{oracle_bucket}/d/b.bin")["restore"] == "hot"  # from the listing
    assert oracle_archive.requests.counts() == {"HeadObject": 1}


def test_ranges_read_as_on_s3_each_one_ranged_getobject(
    oracle_archive: EmulatedOracleArchive, oracle_bucket: str, make_oci: Callable[..., Any]
) -> None:
    data = bytes(range(256)) * 4
    oracle_archive.put_object(oracle_bucket, "plain.bin", data)
    fs = make_oci()
    path = f"{oracle_bucket}/plain.bin"
    fs.info(path)
    oracle_archive.requests.clear()
    assert fs.cat_file(path, start=10, end=20) == data[10:20]
    assert fs.cat_file(path, start=1000, end=5000) == data[1000:]  # past the end: what's there
    # before: ocifs's cat_file opened the file for each, a HeadObject and a readahead block
    assert oracle_archive.requests.count("HeadObject") == 0
    assert oracle_archive.requests.count("GetObject") == 2
    assert fs.cat_file(path, start=-4) == data[-4:]  # a suffix range: ocifs's own read
    with fs.open(path, "rb", block_size=64) as f:
        f.seek(500)
        assert f.read(30) == data[500:530]
