"""The bucket's claims ledger: claims of a batch of groups in one conditional write
(issue 35.3), with the guarantees of per-group claims: one paid restore per group across
hosts, take-over of a dead claimer's groups, older versions' claims honoured.

Each ``ArchiveFileSystem`` (or worker process) with its own journal stands for a host;
every count is the emulated archive's, server side.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.errors import ArchiveError
from archivefs.restore.claims import BucketClaims, claim_path, ledger_path
from tests.reliability._support import FAST_RETRIES, make_fs, options, seed_cold
from tests.support.counts import assert_each_once, s3_restores
from tests.support.processes import finish_workers, start_workers

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

WORKER = Path(__file__).with_name("_crash_worker.py")
GROUPS = 200

pytestmark = pytest.mark.timeout(600)


def _key(path: str) -> str:
    return path.split("/", 1)[1]


def _ledger(archive: EmulatedArchive, bucket: str) -> dict[str, Any]:
    raw = archive.client().get_object(Bucket=bucket, Key=_key(ledger_path(bucket)))
    ledger: dict[str, Any] = json.loads(raw["Body"].read())
    return ledger


def _counts(archive: EmulatedArchive) -> dict[str, int]:
    return {op: archive.requests.count(op) for op in ("LIST", "HEAD", "GET", "PUT")}


def test_a_restore_of_200_groups_pays_three_claim_requests_in_all(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    plain = sorted(seed_cold(archive, bucket, GROUPS, prefix="plain"))
    claimed = sorted(seed_cold(archive, bucket, GROUPS, prefix="claimed"))
    archive.requests.clear()
    make_fs(archive, tmp_path / "a", bucket_claims=False).restore(plain)
    without = _counts(archive), len(archive.requests.records)
    assert archive.requests.count("RestoreObject", status=202) == GROUPS
    archive.requests.clear()
    make_fs(archive, tmp_path / "b", bucket_claims=True).restore(claimed)
    with_claims = _counts(archive), len(archive.requests.records)
    assert archive.requests.count("RestoreObject", status=202) == GROUPS
    # one LIST of the claims folder, one GET of the ledger (none yet: 404), one PUT
    assert {op: with_claims[0][op] - without[0][op] for op in without[0]} == {
        "LIST": 1,
        "HEAD": 0,
        "GET": 1,
        "PUT": 1,
    }
    assert with_claims[1] - without[1] == 3
    assert with_claims[1] <= 1.1 * GROUPS  # the whole restore, planning included
    assert sorted(_ledger(archive, bucket)["batches"][0]["keys"]) == [_key(p) for p in claimed]


def test_two_processes_racing_on_overlapping_batches_send_one_restore_per_group(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)  # nothing completes while the hosts race
    paths = sorted(seed_cold(archive, bucket, GROUPS))
    selections = [paths[: GROUPS * 3 // 4], paths[GROUPS // 4 :]]  # half of them in both
    archive.requests.clear()
    configs = []
    for i, selection in enumerate(selections):
        journal = tmp_path / f"host{i}" / "journal.sqlite"
        journal.parent.mkdir(parents=True)
        configs.append(
            {
                "mode": "restore",
                "storage_options": archive.storage_options(),
                "journal": str(journal),
                "paths": selection,
                "concurrency": 16,
                "bucket_claims": True,
            }
        )
    finish_workers(start_workers(WORKER, configs))
    archive.wait_idle()
    assert_each_once(s3_restores(archive), paths)
    assert archive.requests.count("RestoreObject") == GROUPS  # not one sent twice
    ledger = _ledger(archive, bucket)
    keys = [k for batch in ledger["batches"] for k in batch["keys"]]
    assert sorted(keys) == [_key(p) for p in paths]  # each group in exactly one batch
    # each host: a LIST, and a GET and a PUT of the ledger (again after a lost race)
    writes = archive.requests.count("PUT")
    assert 2 <= writes <= 4
    assert archive.requests.count("PUT", status=200) == 2
    claim_requests = archive.requests.count("LIST") + archive.requests.count("GET") + writes
    assert claim_requests <= 0.1 * sum(len(s) for s in selections)


def _plant_ledger(archive: EmulatedArchive, bucket: str, batches: list[dict[str, Any]]) -> None:
    body = json.dumps({"version": 2, "batches": batches}).encode()
    archive.client().put_object(Bucket=bucket, Key=_key(ledger_path(bucket)), Body=body)


def _batch(keys: list[str], *, requester: str = "ghost-host:1", lease_s: float = 900.0) -> Any:
    return {
        "id": "b0",
        "claimer": "c0",
        "requester": requester,
        "tier": "Standard",
        "days": 1,
        "lease_s": lease_s,
        "claimed_at": 0.0,
        "expected_ready_at": None,
        "age": 0.0,
        "keys": [_key(k) for k in keys],
    }


def test_a_ledger_batch_whose_claimer_died_is_taken_over_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 3))
    _plant_ledger(archive, bucket, [_batch(paths[:2], lease_s=1.0)])  # dead, lease 1 s
    time.sleep(2.5)  # over by the store's clock (its times have whole seconds)
    hosts = [make_fs(archive, tmp_path / f"h{i}", bucket_claims=True) for i in range(3)]
    for fs in hosts:
        fs.restore(paths)
    assert_each_once(s3_restores(archive), paths)
    assert archive.requests.count("RestoreObject") == 3
    assert archive.requests.count("HEAD") == 2  # the first host's look at the two lapsed
    held = {k: b["requester"] for b in _ledger(archive, bucket)["batches"] for k in b["keys"]}
    assert sorted(held) == [_key(p) for p in paths]
    assert "ghost-host:1" not in held.values()  # taken over, and the dead batch dropped


def test_a_live_ledger_batch_of_another_host_is_respected(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 3))
    _plant_ledger(archive, bucket, [_batch(paths[:2], requester="other-host:7")])
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    archive.requests.clear()
    result = fs.restore(paths)
    assert result.requests_sent == 1
    assert s3_restores(archive) == {paths[2]: 1}
    assert archive.requests.count("HEAD") == 0  # live: its state is not even looked at
    claims = sync(fs.loop, BucketClaims(fs.store).read_many, paths)
    assert [claims[p].requester for p in paths[:2]] == ["other-host:7"] * 2  # type: ignore[union-attr]


def test_a_ledger_write_whose_answer_was_lost_is_this_callers_claim(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 3))
    fast = options(archive, **FAST_RETRIES)
    fs = make_fs(archive, tmp_path, bucket_claims=True, target_options=fast)
    fs.store.fs.retries = 1  # s3fs's own loop too: one attempt, a lost answer stays lost
    archive.requests.clear()
    archive.faults.reset_connection(count=1, ops=["PUT"], after_bytes=1)  # served, lost
    result = fs.restore(paths)
    assert archive.faults.injected == 1
    assert archive.requests.count("PUT", status=200) == 1  # the ledger write landed
    assert result.requests_sent == 3  # and was recognised as this caller's
    assert_each_once(s3_restores(archive), paths)
    assert fs.restore(paths).requests_sent == 0


@pytest.mark.parametrize(
    "body",
    [b"{not json", b'{"version": 3, "batches": []}', b'{"version": 2, "batches": [{}]}'],
    ids=["damaged", "newer", "bad-batch"],
)
def test_a_ledger_that_cannot_be_read_whole_is_neither_trusted_nor_replaced(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, body: bytes
) -> None:
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 2))
    archive.client().put_object(Bucket=bucket, Key=_key(ledger_path(bucket)), Body=body)
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    with pytest.raises(ArchiveError) as raised:
        fs.restore(paths)
    message = str(raised.value)
    assert ledger_path(bucket) in message
    assert "Fix:" in message
    assert archive.requests.count("RestoreObject") == 0
    assert archive.requests.count("PUT", key=_key(ledger_path(bucket))) == 1  # ours only
    raw = archive.client().get_object(Bucket=bucket, Key=_key(ledger_path(bucket)))
    assert raw["Body"].read() == body


def test_per_group_claims_of_an_older_version_are_honoured_after_an_upgrade(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """A restore begun by a version that wrote one claim object per group, resumed by
    this one: the live ones are respected, the rest claimed in the ledger; paid once."""
    archive.set_restore_delay(3600.0)
    paths = sorted(seed_cold(archive, bucket, 5))
    for path in paths[:2]:
        claim = {
            "version": 1,
            "key": path,
            "tier": "Standard",
            "days": 1,
            "requester": "old-host:7",
            "claimed_at": time.time(),
            "expected_ready_at": None,
        }
        body = json.dumps(claim).encode()
        archive.client().put_object(Bucket=bucket, Key=_key(claim_path(path)), Body=body)
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    archive.requests.clear()
    assert fs.restore(paths).requests_sent == 3
    assert s3_restores(archive) == {p: 1 for p in paths[2:]}
    assert archive.requests.count("LIST") - 1 <= 1  # the plan's listing, the claims folder
    gets = [r.key for r in archive.requests.records if r.op == "GET" and "/claims/" in r.key]
    assert sorted(gets) == sorted(
        [*(_key(claim_path(p)) for p in paths[:2]), _key(ledger_path(bucket))]
    )  # the two older claims, the ledger
    assert archive.requests.count("PUT") == 1  # the ledger
    claims = sync(fs.loop, BucketClaims(fs.store).read_many, paths)
    assert {p: c.requester for p, c in claims.items() if c is not None} == {
        **{p: "old-host:7" for p in paths[:2]},
        **{p: claims[p].requester for p in paths[2:]},  # type: ignore[union-attr]
    }
    assert all(claims[p] is not None and claims[p].requester != "old-host:7" for p in paths[2:])
