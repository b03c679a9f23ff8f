"""Injected faults against the emulated archive: throttling, resets, 5xx, an outage.

Every test asserts what the server received: faults actually fired, the work
completed (or failed with a clear archivefs error) and no restore was paid twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.errors import RestoreFailedError, StoreUnavailableError
from archivefs.restore.engine import RestoreEngine
from archivefs.restore.journal import Journal, RecordState
from archivefs.restore.submitter import RetryPolicy
from archivefs.stores.s3 import S3Store
from tests.reliability._support import (
    FAST_RETRIES,
    assert_catalog_consistent,
    bundle,
    make_fs,
    make_tree,
    options,
    s3,
    seed_cold,
)

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

pytestmark = pytest.mark.timeout(120)


def _fast_engine(
    archive: EmulatedArchive, tmp_path: Path, wrap: Any = None, **retry: Any
) -> RestoreEngine:
    fs = s3(archive, asynchronous=False, **FAST_RETRIES)
    policy = RetryPolicy(give_up_after=retry.get("give_up_after", 3), pause=0.01, max_pause=0.05)
    journal = Journal(str(tmp_path / "journal.sqlite"), namespace=archive.endpoint_url)
    store = S3Store(fs, restore_status_in_listings=True)
    return RestoreEngine(
        store if wrap is None else wrap(store),
        journal=journal,
        retry=policy,
        concurrency=retry.get("concurrency", 64),
    )


# -- throttling bursts (SlowDown 503) on every operation type -----------------------------


@pytest.mark.parametrize("burst", [1, 2])
def test_throttled_get_head_list_then_served(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, burst: int
) -> None:
    archive.put_object(bucket, "d/a.bin", b"a" * 70_000)
    archive.put_object(bucket, "d/b.bin", b"b" * 10)

    def act(op: str) -> None:
        fs = make_fs(archive, tmp_path)  # botocore's default retries: HEAD 503s have no body
        if op == "GET":
            assert fs.cat_file(f"{bucket}/d/a.bin", start=5, end=60_005) == b"a" * 60_000
        elif op == "HEAD":
            assert fs.info(f"{bucket}/d/a.bin")["size"] == 70_000
        else:
            assert fs.ls(f"{bucket}/d", detail=False) == [f"{bucket}/d/a.bin", f"{bucket}/d/b.bin"]

    for op in ("GET", "HEAD", "LIST"):
        archive.requests.clear()
        archive.faults.clear()
        act(op)  # without faults: how many requests of this type the action needs
        baseline = archive.requests.counts()
        archive.requests.clear()
        archive.faults.throttle(count=burst, ops=[op])
        act(op)
        assert archive.faults.injected == burst
        assert archive.requests.count(op, status=503) == burst
        # the burst added exactly its own requests: each throttled one retried once
        expected = dict(baseline)
        expected[op] += burst
        assert archive.requests.counts() == expected


def test_throttled_listing_probe_during_plan(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    paths = sorted(seed_cold(archive, bucket, 30))
    fs = make_fs(archive, tmp_path)  # probes: botocore's 5 attempts, the one retry layer
    archive.faults.throttle(count=4, ops=["LIST"])
    plan = fs.plan(paths)
    assert len(plan.to_restore) == 30
    assert archive.requests.count("LIST", status=503) == 4
    assert archive.requests.count("LIST", status=200) == 1
    assert archive.requests.count("RestoreObject") == 0


@pytest.mark.parametrize(("burst", "seed"), [(5, 0), (40, 1), (None, 2)])
def test_throttled_restores_one_paid_request_per_group(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, burst: int | None, seed: int
) -> None:
    archive.set_restore_delay(0.5)
    data = seed_cold(archive, bucket, 40)
    fs = make_fs(archive, tmp_path)
    if burst is None:  # a fraction of every request of every type, throughout
        archive.faults.throttle(fraction=0.4, seed=seed)
    else:
        archive.faults.throttle(count=burst, ops=["RestoreObject"], seed=seed)
    result = fs.restore(sorted(data), wait=True, timeout=600)
    assert sorted(result.ready) == sorted(data)
    assert archive.faults.injected > 0
    assert archive.requests.count("RestoreObject", status=202) == 40
    assert archive.requests.count("RestoreObject", status=409) == 0
    archive.faults.clear()
    path = sorted(data)[-1]
    assert fs.cat_file(path) == data[path]


def test_throttled_puts_during_bundling(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "src", 60)
    dest = s3(archive, **FAST_RETRIES)
    archive.faults.throttle(count=4, ops=["PUT"])
    report = bundle(tmp_path / "src", dest, f"{bucket}/t")
    assert archive.requests.count("PUT", status=503) == 4
    catalog = assert_catalog_consistent(dest, f"{bucket}/t")
    assert len(catalog) == 60
    # every successful bundle PUT is one bundle: no duplicate uploads after a throttle
    bundle_puts = [
        r
        for r in archive.requests.records
        if r.op == "PUT" and r.status == 200 and r.key and "/bundles/" in r.key
    ]
    assert len(bundle_puts) == len(report.bundles_written) == len(catalog.bundles)
    fs = make_fs(archive, tmp_path)
    for name in ("d0/f0000.dat", "d3/f0059.dat"):
        assert fs.cat_file(f"{bucket}/t/{name}") == files[name]


# -- connection resets mid-body on ranged GETs --------------------------------------------


@pytest.mark.parametrize("after_bytes", [1, 700])
def test_reset_mid_body_on_member_and_plain_reads(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, after_bytes: int
) -> None:
    files = make_tree(tmp_path / "src", 20)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/r")
    archive.put_object(bucket, "plain.bin", bytes(range(256)) * 400)
    fs = make_fs(archive, tmp_path)
    name = max(files, key=lambda n: len(files[n]))
    fs.info(f"{bucket}/r/{name}")  # load the catalog before the faults
    archive.requests.clear()
    archive.faults.reset_connection(count=2, ops=["GET"], after_bytes=after_bytes)
    assert fs.cat_file(f"{bucket}/r/{name}") == files[name]
    assert archive.faults.injected == 2
    archive.faults.reset_connection(count=2, ops=["GET"], after_bytes=after_bytes)
    assert (
        fs.cat_file(f"{bucket}/plain.bin", start=100, end=90_000)
        == (bytes(range(256)) * 400)[100:90_000]
    )
    assert archive.faults.injected == 4
    cut = [r for r in archive.requests.records if r.op == "GET" and r.bytes_sent == after_bytes]
    assert len(cut) == 4  # the resets really cut the bodies short
    assert all(r.range is not None for r in archive.requests.records if r.op == "GET")


def test_reset_after_restore_was_accepted_is_not_paid_twice(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    # moto accepts the restore, then the connection drops: the retry must not start another
    archive.set_restore_delay(5)
    data = seed_cold(archive, bucket, 10)
    fs = make_fs(archive, tmp_path)
    archive.faults.reset_connection(count=10, ops=["RestoreObject"], after_bytes=1)
    result = fs.restore(sorted(data))
    assert archive.faults.injected == 10
    assert len(result.submitted.failed) == 0
    assert archive.requests.count("RestoreObject", status=202) == 10


# -- 500s on RestoreObject; an outage that ends; persistent failure ------------------------


def test_internal_errors_on_restore_are_retried(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    data = seed_cold(archive, bucket, 25)
    fs = make_fs(archive, tmp_path)
    archive.faults.error(500, "InternalError", count=30, ops=["RestoreObject"])
    result = fs.restore(sorted(data), wait=True, timeout=600)
    assert sorted(result.ready) == sorted(data)
    assert archive.requests.count("RestoreObject", status=500) == 30
    assert archive.requests.count("RestoreObject", status=202) == 25


@pytest.mark.parametrize("kind", ["unavailable", "resets"])
def test_server_down_for_a_while_then_back(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, kind: str
) -> None:
    archive.set_restore_delay(0.3)
    data = seed_cold(archive, bucket, 20)
    archive.put_object(bucket, "hot.bin", b"h" * 5000)
    fs = make_fs(archive, tmp_path)
    # the next requests of any type fail: the server "stops answering", then comes back.
    # Reads and restores ride out what botocore retries (5 attempts; the one layer for restores).
    if kind == "unavailable":
        archive.faults.error(503, "ServiceUnavailable", count=4)
        archive.faults.error(503, "ServiceUnavailable", count=8, ops=["RestoreObject"])
    else:
        archive.faults.reset_connection(count=4)
        archive.faults.reset_connection(count=8, ops=["RestoreObject"])
    result = fs.restore(sorted(data), wait=True, timeout=600)
    assert archive.faults.injected == 12
    assert sorted(result.ready) == sorted(data)
    assert archive.requests.count("RestoreObject", status=202) == 20
    assert fs.cat_file(f"{bucket}/hot.bin") == b"h" * 5000
    for path in sorted(data)[:3]:
        assert fs.cat_file(path) == data[path]


def test_persistent_outage_gives_up_with_store_unavailable(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "hot.bin", b"h" * 100)
    fs = make_fs(archive, tmp_path, target_options=options(archive, **FAST_RETRIES))
    archive.faults.throttle(ops=["GET"])
    with pytest.raises(StoreUnavailableError, match="SlowDown") as error:
        fs.cat_file(f"{bucket}/hot.bin")
    assert "Fix:" in str(error.value)
    # bounded (botocore's own retries off): 1 attempt for archivefs's own GETs (the
    # catalog registry), s3fs's 5 for reads through s3fs; never an endless loop
    assert 1 <= archive.requests.count("GET") <= 5
    archive.faults.clear()
    archive.faults.reset_connection(ops=["HEAD"])
    with pytest.raises(StoreUnavailableError):
        fs.info(f"{bucket}/hot.bin")
    assert 1 <= archive.requests.count("HEAD") <= 5


def test_persistent_restore_failure_then_recovery_pays_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    data = seed_cold(archive, bucket, 6)
    engine = _fast_engine(archive, tmp_path)
    loop = engine.store.fs.loop
    plan = sync(loop, engine.plan, sorted(data))
    archive.faults.throttle(ops=["RestoreObject"])
    with pytest.raises(RestoreFailedError) as error:
        sync(loop, engine.restore, plan)
    assert set(error.value.failures) == set(data)
    assert all("SlowDown" in text for text in error.value.failures.values()), error.value.failures
    failed = archive.requests.count("RestoreObject")
    assert failed == 6  # botocore configured for 1 attempt: one request per group, never re-sent
    assert archive.requests.count("RestoreObject", status=202) == 0
    records = engine.journal.records() if engine.journal is not None else []
    assert {r.state for r in records} == {RecordState.FAILED}
    archive.faults.clear()
    sync(loop, engine.restore, plan)
    sync(loop, engine.restore, plan)  # and once more: nothing to send
    assert archive.requests.count("RestoreObject", status=202) == 6
    assert archive.requests.count("RestoreObject") == failed + 6


class _FirstAnswerArrivesAlone:
    """The real S3 store, except that every restore after the first is sent only once
    the first has its answer: an uneven network, where one throttled answer comes back
    while the rest of the wave is still on its way."""

    def __init__(self, store: S3Store) -> None:
        self.store = store
        self.first_answered = asyncio.Event()
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def restore(self, state: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls > 1:
            await self.first_answered.wait()
            return await self.store.restore(state, **kwargs)
        try:
            return await self.store.restore(state, **kwargs)
        finally:
            self.first_answered.set()


def test_a_throttled_group_waits_for_the_wave_before_trying_again(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    data = seed_cold(archive, bucket, 6)
    engine = _fast_engine(archive, tmp_path, wrap=_FirstAnswerArrivesAlone)
    loop = engine.store.fs.loop
    plan = sync(loop, engine.plan, sorted(data))
    archive.faults.throttle(ops=["RestoreObject"])
    with pytest.raises(RestoreFailedError):
        sync(loop, engine.restore, plan)
    # the first group's second round waits for the five still in flight; their failures
    # give up the run (3 in a row), so no group is sent twice
    assert archive.requests.count("RestoreObject") == 6


def test_a_bucket_that_keeps_throttling_does_not_hold_back_another(
    archive: EmulatedArchive, tmp_path: Path
) -> None:
    """The pause and the giving up are per bucket (S3 throttles per bucket prefix): one
    send at a time, the throttled bucket's groups first, and every group of the other
    bucket is still sent, once."""
    throttled, fine = "throttle-a-first", "throttle-b-second"
    archive.create_bucket(throttled)
    archive.create_bucket(fine)
    slow, fast = seed_cold(archive, throttled, 8), seed_cold(archive, fine, 8)
    engine = _fast_engine(archive, tmp_path, concurrency=1)
    loop = engine.store.fs.loop
    plan = sync(loop, engine.plan, sorted(slow) + sorted(fast))
    archive.faults.throttle(ops=["RestoreObject"], buckets=[throttled])
    with pytest.raises(RestoreFailedError) as error:
        sync(loop, engine.restore, plan)
    assert sorted(error.value.failures) == sorted(slow)
    records = [r for r in archive.requests.records if r.op == "RestoreObject"]
    accepted = sorted(f"{r.bucket}/{r.key}" for r in records if r.status == 202)
    assert accepted == sorted(fast)
    sent = Counter(r.bucket for r in records)
    assert sent[fine] == len(fast)
    policy = RetryPolicy()
    assert 3 <= sent[throttled] <= 3 * policy.rounds  # given up on that bucket alone
    assert "requests to throttle-a-first in a row" in "\n".join(error.value.failures.values())


def test_catalog_load_under_throttling(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "src", 12)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/c")
    fs = make_fs(archive, tmp_path)
    archive.faults.throttle(count=3, ops=["GET"])  # the catalog's own reads are throttled
    name = sorted(files)[0]
    assert fs.cat_file(f"{bucket}/c/{name}") == files[name]
    assert archive.requests.count("GET", status=503) == 3


def test_persistent_put_failure_while_bundling_then_resume(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "src", 40)
    dest = s3(archive, **FAST_RETRIES)
    archive.faults.throttle(ops=["PUT"], fraction=0.5, seed=7)
    with pytest.raises(StoreUnavailableError, match="SlowDown"):  # noqa: PT012
        for _ in range(5):  # a run that happens to get through is repeated
            bundle(tmp_path / "src", dest, f"{bucket}/p", save_every=1)
    archive.faults.clear()
    bundle(tmp_path / "src", dest, f"{bucket}/p")
    catalog = assert_catalog_consistent(dest, f"{bucket}/p")
    assert len(catalog) == 40
    fs = make_fs(archive, tmp_path)
    for name, data in sorted(files.items())[::7]:
        assert fs.cat_file(f"{bucket}/p/{name}") == data
    assert all((tmp_path / "src" / n).exists() for n in files)


# -- transient faults do not serialise a batch (issue 47, item 9) --------------------------


def test_transient_faults_keep_the_batch_concurrent_and_pay_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """10 % of RestoreObject requests fail (SlowDown, 500, resets before and after the
    server acted): every key gets exactly one accepted restore, and the requests sent
    after the first SlowDown still overlap at the server as they did before it.

    The server holds each request ``latency`` seconds, so requests that arrive within
    ``latency`` of each other were in flight together. botocore's adaptive mode (a
    client-side rate limiter) answered the first SlowDown by queueing every send behind
    one lock: in the 10 round trips after it, at most 2 overlapped (16 with standard
    mode; the batch took 27 s instead of 5.6 s). Counts, not time, are asserted.
    """
    latency, concurrency, n = 0.2, 16, 160
    data = seed_cold(archive, bucket, n)
    archive.set_restore_delay(3600)
    archive.set_latency(latency)
    fs = s3(archive, asynchronous=False)  # archivefs's own client retry configuration
    journal = Journal(str(tmp_path / "journal.sqlite"), namespace=archive.endpoint_url)
    store = S3Store(fs, restore_status_in_listings=True)
    engine = RestoreEngine(store, journal=journal, concurrency=concurrency)
    plan = sync(fs.loop, engine.plan, sorted(data))
    archive.requests.clear()
    ops = ["RestoreObject"]
    archive.faults.throttle(fraction=0.03, ops=ops, seed=1)
    archive.faults.error(500, "InternalError", fraction=0.03, ops=ops, seed=2)
    archive.faults.reset_connection(fraction=0.02, ops=ops, seed=3)
    archive.faults.reset_connection(fraction=0.02, ops=ops, after_bytes=1, seed=4)
    result = sync(fs.loop, engine.restore, plan)
    assert result.submitted.failed == {}
    records = archive.requests.matching(op="RestoreObject")
    accepted = [r.key for r in records if r.status == 202]
    assert sorted(f"{bucket}/{k}" for k in accepted) == sorted(data)  # one paid per key
    faulted = [r for r in records if r.status in (0, 500, 503)]
    assert len(faulted) >= 5, archive.requests.counts()
    throttled = [r.time for r in records if r.status == 503]
    assert throttled, archive.requests.counts()
    seen_fault = min(throttled) + latency  # the client has its first SlowDown
    # the requests sent in the next 10 round trips: how many were at the server together
    after = sorted(r.time for r in records if seen_fault < r.time < seen_fault + 10 * latency)
    overlapping = max(
        (sum(1 for t in after[i:] if t < start + latency) for i, start in enumerate(after)),
        default=0,
    )
    assert overlapping >= concurrency // 2, (overlapping, len(after))
