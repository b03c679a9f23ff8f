"""Claims in the bucket: hosts that share no journal still pay each restore once (issue 17.1).

Each process stands for a host: its own journal directory, no shared file.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.restore.claims import BucketClaims, Claim, claim_path, ledger_path
from tests.reliability._support import make_fs, seed_cold
from tests.support.counts import assert_each_once, s3_restores
from tests.support.processes import kill_each_when

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

WORKER = Path(__file__).with_name("_crash_worker.py")

pytestmark = pytest.mark.timeout(900)


def _host(archive: EmulatedArchive, tmp_path: Path, name: str, paths: list[str]) -> dict[str, Any]:
    return {
        "mode": "restore",
        "storage_options": archive.storage_options(),
        "journal": str(tmp_path / name / "journal.sqlite"),  # one journal per "host"
        "paths": paths,
        "concurrency": 16,
        "bucket_claims": True,
    }


def test_claims_say_who_asked_for_what_and_carry_no_credentials(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    data = seed_cold(archive, bucket, 3)
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    fs.restore(sorted(data), tier="Bulk", days=2)
    raw = archive.client().get_object(Bucket=bucket, Key=ledger_path(bucket).split("/", 1)[1])
    body = raw["Body"].read()
    options = archive.storage_options()
    for secret in (options.get("key"), options.get("secret")):
        assert not secret or secret.encode() not in body
    claims = sync(fs.loop, BucketClaims(fs.store).read_many, sorted(data))
    for path in data:
        claim = claims[path]
        assert claim is not None
        assert (claim.key, claim.tier, claim.days) == (path, "Bulk", 2)
        assert claim.expected_ready_at is not None
        assert claim.expected_ready_at > claim.claimed_at
    assert fs.ls(bucket, detail=False) == [f"{bucket}/o"]  # claims stay out of listings
    assert archive.requests.count("PUT") == 1  # one ledger PUT for the three groups


def test_a_claim_on_an_archived_group_whose_claimer_died_is_taken_over_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    data = seed_cold(archive, bucket, 1)
    (path,) = data
    dead = Claim(path, "Standard", 1, "ghost-host:1", claimed_at=0.0, expected_ready_at=None)
    dead = replace(dead, lease_s=1.0)  # its lease: 1 s after the store wrote it
    archive.client().put_object(
        Bucket=bucket, Key=claim_path(path).split("/", 1)[1], Body=dead.to_bytes()
    )
    time.sleep(2.5)  # over by the store's clock (its times have whole seconds)
    hosts = [make_fs(archive, tmp_path / f"h{i}", bucket_claims=True) for i in range(3)]
    for fs in hosts:
        fs.restore(path)
    assert archive.requests.count("RestoreObject", status=202) == 1
    assert archive.requests.count("RestoreObject") == 1
    raw = archive.client().get_object(Bucket=bucket, Key=claim_path(path).split("/", 1)[1])
    taken = Claim.parse(raw["Body"].read())
    assert taken is not None
    assert taken.requester != dead.requester


KILL_TRIALS = 16
TRIALS_AT_ONCE = 4  # side by side, each in its own bucket: their waits (start, lease) overlap


def test_callers_waiting_on_a_killed_hosts_claims_take_them_over_after_its_lease(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    # issue #30 item 5: a host SIGKILLed mid-submission leaves claims it never sent; a
    # caller already waiting on them took none over (19-105 of 300 groups stayed
    # archived in 5 of 16 trials). Now, in each trial, the waiting caller takes the dead
    # host's claims over when their lease ends, and every group is paid exactly once.
    archive.set_restore_delay(0.5)
    rng = random.Random(30)
    for first in range(0, KILL_TRIALS, TRIALS_AT_ONCE):
        trials = range(first, min(first + TRIALS_AT_ONCE, KILL_TRIALS))
        data: dict[int, dict[str, bytes]] = {}
        victims = []
        for trial in trials:
            own = f"{bucket}-{trial}"
            archive.create_bucket(own)
            data[trial] = seed_cold(archive, own, 20, prefix=f"t{trial}")
            paths = sorted(data[trial])
            victim = {
                **_host(archive, tmp_path, f"victim{trial}", paths),
                "concurrency": 1,
                "claim_lease": 2.0,
            }
            kill_at = rng.randint(1, len(paths) - 2)  # of this trial's restores

            def reached(own: str = own, at: int = kill_at) -> bool:
                return archive.requests.count("RestoreObject", bucket=own) >= at

            victims.append((victim, reached))
        # every victim gone and the server idle before any survivor starts
        assert all(kill_each_when(WORKER, victims, server=archive))

        def survive(trial: int, data: dict[int, dict[str, bytes]] = data) -> None:
            survivor = make_fs(
                archive, tmp_path / f"survivor{trial}", bucket_claims=True, claim_lease=2.0
            )
            survivor.restore(sorted(data[trial]), wait=True, timeout=300)

        with ThreadPoolExecutor(len(trials)) as pool:
            list(pool.map(survive, trials))
        archive.wait_idle()
        started = s3_restores(archive)
        for trial in trials:
            mine = {p: n for p, n in started.items() if p in data[trial]}
            assert_each_once(mine, sorted(data[trial]))


def test_claim_lease_must_be_a_positive_number(archive: EmulatedArchive, tmp_path: Path) -> None:
    from archivefs.errors import InvalidOptionsError

    for bad in (0, -1, float("nan"), float("inf"), "10"):
        with pytest.raises(InvalidOptionsError, match="claim_lease"):
            make_fs(archive, tmp_path, bucket_claims=True, claim_lease=bad)
