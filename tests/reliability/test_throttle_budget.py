"""Persistent throttling: retries are layered once, attempts per object bounded, giving up in time.

Before: tenacity (10) x s3fs (5) x botocore (legacy 5) attempts per request, 75-100
RestoreObject requests per object, 10,475 for 130 objects over 427 s.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from fsspec.asyn import sync

from archivefs.errors import RestoreFailedError, StoreUnavailableError
from archivefs.restore.submitter import RetryPolicy
from archivefs.stores.s3 import MAX_ATTEMPTS, RETRY_MODE
from tests.reliability._support import make_fs, options, seed_cold

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

OBJECTS = 130
GIVE_UP = RetryPolicy().give_up_after
CONCURRENCY = 4  # the bound scales with it; the default (64) is measured in docs/guarantees.md
ROUNDS = RetryPolicy().rounds  # a throttled group is tried again once, if not given up
BOUND = (CONCURRENCY + GIVE_UP) * MAX_ATTEMPTS * ROUNDS


def test_persistent_slowdown_is_bounded_per_object_and_per_run(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    cold = seed_cold(archive, bucket, OBJECTS)
    fs = make_fs(archive, tmp_path, concurrency=CONCURRENCY)  # default client configuration
    archive.faults.throttle(ops=["RestoreObject"])
    started = time.monotonic()
    with pytest.raises(RestoreFailedError) as failed:
        fs.restore(sorted(cold))
    elapsed = time.monotonic() - started
    attempts = Counter(r.key for r in archive.requests.records if r.op == "RestoreObject")
    total = sum(attempts.values())
    assert max(attempts.values()) <= MAX_ATTEMPTS * ROUNDS  # per object: botocore's, twice at most
    assert total <= BOUND  # per run: the requests in flight when the submitter gave up
    assert total < OBJECTS * MAX_ATTEMPTS
    assert len(attempts) < OBJECTS  # the rest were never sent
    assert elapsed < 600  # gives up in bounded time (generous: a busy 2-core machine)
    assert len(failed.value.failures) == OBJECTS
    assert "not sent: the store kept throttling" in "\n".join(failed.value.failures.values())

    archive.faults.clear()  # the store recovers: the same call sends each object once
    archive.requests.clear()
    fs.restore(sorted(cold))
    assert archive.requests.count("RestoreObject", status=202) == OBJECTS
    assert archive.requests.count("RestoreObject") == OBJECTS


def test_a_probe_is_retried_by_one_layer_only(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "cold.bin", b"x" * 100, storage_class="GLACIER")
    fs = make_fs(archive, tmp_path)
    archive.faults.throttle(ops=["HEAD"])
    with pytest.raises(StoreUnavailableError):
        sync(fs.loop, fs.store.head, f"{bucket}/cold.bin")
    assert archive.requests.count("HEAD") == MAX_ATTEMPTS  # was 5 x 5 (s3fs x botocore)
    assert fs.fs.config_kwargs["retries"] == {
        "mode": RETRY_MODE,
        "total_max_attempts": MAX_ATTEMPTS,
    }


def test_a_retry_configuration_the_caller_gives_is_kept(
    archive: EmulatedArchive, tmp_path: Path
) -> None:
    mine = {"retries": {"mode": "standard", "max_attempts": 2}}
    fs = make_fs(archive, tmp_path, target_options=options(archive, config_kwargs=mine))
    assert fs.fs.config_kwargs["retries"] == {"mode": "standard", "max_attempts": 2}
