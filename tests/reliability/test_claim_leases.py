"""Claims in the bucket under faults: unreadable claims, leases by the server's clock,
waiting callers that take over dead claims, throttled and lost claim writes (issue 30).

Each ``ArchiveFileSystem`` with its own journal stands for a host; every count is the
emulated archive's, server side.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.errors import ArchiveError
from archivefs.restore.claims import BucketClaims, Claim, claim_path, ledger_path
from tests.reliability._support import FAST_RETRIES, make_fs, options, seed_cold

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.restore.claims import ClaimOutcome
    from archivefs.testing import EmulatedArchive

pytestmark = pytest.mark.timeout(300)


def _key(path: str) -> str:
    """The claim object's key in its bucket."""
    return claim_path(path).split("/", 1)[1]


def _plant(
    archive: EmulatedArchive,
    path: str,
    *,
    requester: str = "other-host:7",
    claimed_at: float | None = None,
    lease_s: float | None = None,
    body: bytes | None = None,
) -> None:
    """A claim of another host on ``path``, written to the store just now."""
    raw: dict[str, Any] = {
        "version": 1,
        "key": path,
        "tier": "Standard",
        "days": 1,
        "requester": requester,
        "claimed_at": time.time() if claimed_at is None else claimed_at,
        "expected_ready_at": None,
    }
    if lease_s is not None:
        raw["lease_s"] = lease_s
    bucket = path.split("/", 1)[0]
    data = json.dumps(raw).encode() if body is None else body
    archive.client().put_object(Bucket=bucket, Key=_key(path), Body=data)


def _claim(fs: ArchiveFileSystem, claims: BucketClaims, paths: list[str]) -> ClaimOutcome:
    """``claims`` of the archived ``paths``, as a restore of them would claim them."""
    plan = fs.engine.plan_known(fs.probe(paths))
    return sync(fs.loop, lambda: claims.claim(plan.to_restore, tier="Standard", days=1))


def test_a_claim_that_cannot_be_read_is_not_restored_and_claims_stay_on(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    first, second = sorted(seed_cold(archive, bucket, 2))
    _plant(archive, first)
    _plant(archive, second)
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    archive.faults.error(403, "AccessDenied", ops=["GET"])  # the claim cannot be read
    with pytest.raises(ArchiveError) as raised:
        fs.restore(first)
    message = str(raised.value)
    assert claim_path(first) in message  # names the claim object,
    assert "could not be read" in message  # the problem
    assert "Fix:" in message
    assert "GetObject" in message
    assert archive.requests.count("RestoreObject") == 0  # a live claim may be behind it
    archive.faults.clear()
    fs.restore(second)  # claims still on for the bucket: the live claim is respected
    assert archive.requests.count("RestoreObject") == 0
    archive.faults.error(403, "AccessDenied", ops=["GET"])
    with pytest.raises(ArchiveError):
        fs.restore(first)  # its claim still unreadable: still not sent
    archive.faults.clear()
    assert archive.requests.count("RestoreObject") == 0


def test_a_claimer_whose_clock_is_2000_s_behind_keeps_its_claim(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 3))
    for path in paths:  # just written, by a host whose clock says 2,000 s ago
        _plant(archive, path, claimed_at=time.time() - 2000.0)
    archive.requests.clear()
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    fs.restore(paths)
    assert archive.requests.count("RestoreObject") == 0  # the lease runs by the store's clock
    assert archive.requests.count("PUT", status=200) == 0  # and nothing was taken over


@pytest.mark.parametrize(
    "body",
    [
        b'{"key": "k", "tier": "Standard", "days": 1, "requester": "h:1", '
        b'"claimed_at": 1e300, "expected_ready_at": null}',
        b'{"key": "k", "tier": "Standard", "days": 1, "requester": "h:1", '
        b'"claimed_at": NaN, "expected_ready_at": null}',
        b'{"key": "k", "tier": "Standard", "days": 1, "requester": "h:1", '
        b'"claimed_at": Infinity, "expected_ready_at": null}',
        b'{"key": "k", "tier": "Standard", "days": 1, "requester": "h:1", '
        b'"claimed_at": 0, "expected_ready_at": null, "lease_s": Infinity}',
    ],
    ids=["future", "nan", "infinity", "infinite-lease"],
)
def test_a_claim_dated_in_the_future_or_not_a_number_ends_with_its_lease(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, body: bytes
) -> None:
    archive.set_restore_delay(3600.0)
    (path,) = seed_cold(archive, bucket, 1)
    _plant(archive, path, body=body)
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    claims = BucketClaims(fs.store, lease_seconds=5.0)
    first = _claim(fs, claims, [path])
    assert (first.won, first.lost, first.failed) == ([], [path], {})  # within its lease
    time.sleep(6.5)  # the lease is over by the store's clock (whole seconds)
    outcome = _claim(fs, claims, [path])
    assert (outcome.won, outcome.lost, outcome.failed) == ([path], [], {})
    raw = archive.client().get_object(Bucket=bucket, Key=_key(path))["Body"].read()
    taken = Claim.parse(raw)
    assert taken is not None
    assert taken.requester != "h:1"


def test_callers_already_waiting_take_over_a_dead_claim_when_its_lease_ends(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    archive.set_restore_delay(1.0)
    data = seed_cold(archive, bucket, 4)
    paths = sorted(data)
    for path in paths:  # a host claimed them, then died before sending: a 5 s lease
        _plant(archive, path, requester="dead-host:13", lease_s=5.0)
    hosts = [make_fs(archive, tmp_path / f"h{i}", bucket_claims=True) for i in range(2)]
    with ThreadPoolExecutor(2) as pool:  # both wait at once, each with its own journal
        results = list(pool.map(lambda fs: fs.restore(paths, wait=True, timeout=90), hosts))
    assert [sorted(r.ready) for r in results] == [paths, paths]
    assert archive.requests.count("RestoreObject", status=202) == len(paths)
    assert archive.requests.count("RestoreObject") == len(paths)  # one per group, in all
    for path in paths:
        taken = Claim.parse(
            archive.client().get_object(Bucket=bucket, Key=_key(path))["Body"].read()
        )
        assert taken is not None
        assert taken.requester != "dead-host:13"


def test_a_read_waiting_on_a_dead_claim_restores_once_its_lease_ends(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(1.0)
    data = seed_cold(archive, bucket, 1)
    (path,) = data
    _plant(archive, path, requester="dead-host:13", lease_s=5.0)
    fs = make_fs(archive, tmp_path, bucket_claims=True, on_archived="wait", wait_timeout=90)
    assert fs.cat_file(path) == data[path]
    assert archive.requests.count("RestoreObject") == 1


def test_claims_that_could_not_be_written_are_given_back_and_sent_by_the_next_call(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 3))
    fast = options(archive, **FAST_RETRIES)
    fs = make_fs(archive, tmp_path, bucket_claims=True, target_options=fast)
    archive.faults.throttle(ops=["PUT"])  # every claim PUT: 503 SlowDown, past the retries
    with pytest.raises(ArchiveError) as raised:
        fs.restore(paths)
    assert "could not be written" in str(raised.value)
    assert ledger_path(bucket) in str(raised.value)  # names the claims ledger
    assert archive.requests.count("RestoreObject") == 0
    archive.faults.clear()
    result = fs.restore(paths)  # the same call again, at once: nothing is held back
    assert result.requests_sent == len(paths)
    assert archive.requests.count("RestoreObject", status=202) == len(paths)


def test_a_take_over_whose_answer_was_lost_is_recognised_as_this_callers_claim(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    (path,) = seed_cold(archive, bucket, 1)
    _plant(archive, path, requester="dead-host:13", lease_s=1.0)
    time.sleep(2.5)  # its lease is over by the store's clock
    archive.requests.clear()
    fast = options(archive, **FAST_RETRIES)
    fs = make_fs(archive, tmp_path, bucket_claims=True, target_options=fast)
    fs.store.fs.retries = 1  # s3fs's own loop too: one attempt, a lost answer stays lost
    # both claim PUTs (the create, then the take-over) are served, and their answers lost
    archive.faults.reset_connection(count=2, ops=["PUT"], after_bytes=1)
    result = fs.restore(path)
    assert archive.faults.injected == 2
    assert archive.requests.count("PUT", status=200) == 1  # the take-over landed (a retry
    # of a request whose answer was lost, if the client sends one, fails its If-Match: 412)
    assert result.requests_sent == 1  # the take-over landed: this caller sends
    assert archive.requests.count("RestoreObject", status=202) == 1
    raw = archive.client().get_object(Bucket=bucket, Key=_key(path))["Body"].read()
    taken = Claim.parse(raw)
    assert taken is not None
    assert taken.requester != "dead-host:13"


def test_a_claim_object_larger_than_a_claim_is_read_only_in_part_and_is_damaged(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    (path,) = seed_cold(archive, bucket, 1)
    claim = Claim(path, "Standard", 1, "other-host:7", time.time(), None)
    _plant(archive, path, body=claim.to_bytes() + b" " * 2**20)  # valid JSON, 1 MiB
    archive.requests.clear()
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    claims = BucketClaims(fs.store)
    assert sync(fs.loop, claims.read, path) is None  # damaged: larger than any claim
    outcome = _claim(fs, claims, [path])
    assert (outcome.won, outcome.lost, outcome.failed) == ([], [path], {})  # within its lease
    assert archive.requests.count("GET", key=_key(path)) == 2
    # never the whole MiB (beside the claim: the ledger's 404 and the folder's listing)
    assert archive.requests.bytes_sent("GET") <= 2 * 64 * 1024 + 1024


def test_an_empty_claim_object_is_a_damaged_claim_not_an_error(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    (path,) = seed_cold(archive, bucket, 1)
    _plant(archive, path, body=b"")  # a ranged GET of it is 416: it is read whole instead
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    claims = BucketClaims(fs.store)
    assert sync(fs.loop, claims.read, path) is None
    outcome = _claim(fs, claims, [path])
    assert (outcome.won, outcome.lost, outcome.failed) == ([], [path], {})  # within its lease


def test_a_lease_that_ends_while_its_restore_runs_does_not_hasten_the_polls(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    archive.set_restore_delay(8.0)
    (path,) = seed_cold(archive, bucket, 1)
    _plant(archive, path, requester="other-host:7", lease_s=4.0)
    archive.requests.clear()
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(fs.restore, path, wait=True, timeout=120)
        deadline = time.monotonic() + 60
        while archive.requests.count("GET") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # until the waiter has read the live claim
        archive.client().restore_object(  # then the claimer sends its restore
            Bucket=bucket, Key=path.split("/", 1)[1], RestoreRequest={"Days": 1}
        )
        waiting.result()
    assert archive.requests.count("RestoreObject") == 1  # the claimer's only
    assert archive.requests.count("PUT", status=200) == 0  # nothing taken over
    # polls at the schedule's pace (about 20 here), not back to back once the lease is
    # over (285 rounds before the fix)
    assert fs.engine.poll_rounds < 100


def test_where_claims_cannot_be_written_live_claims_of_other_hosts_still_hold(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    archive.set_restore_delay(3600.0)
    claimed, free = sorted(seed_cold(archive, bucket, 2))
    _plant(archive, claimed)  # another host's live claim
    archive.requests.clear()
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    archive.faults.error(403, "AccessDenied", ops=["PUT"])  # a bucket this identity only reads
    with caplog.at_level("WARNING", logger="archivefs.restore.claims"):
        result = fs.restore([claimed, free])
    assert result.submitted.skipped == [claimed]  # waited for, not sent
    assert sorted(result.submitted.sent) == [free]  # no claim on it: the journal alone
    assert archive.requests.count("RestoreObject") == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "cannot write restore claims" in warnings[0]
    assert "reading the claims of other hosts" in warnings[0]
