"""Restore scenarios, once for every provider with restores (``NO_RESTORES`` says why not)."""

from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.model import Action
from archivefs.restore.journal import RecordState
from tests.support.counts import assert_each_once
from tests.support.processes import kill_when
from tests.support.providers import (
    NO_EXPIRY,
    NO_RESTORES,
    THROTTLE_STATUS,
    expire_restores,
    faults_injected,
    finish_restores,
    hold_restores,
    provider_params,
    quick_restores,
    request_counts,
    restore_requests,
    restores_started,
    seed_cold,
    throttle,
)

if TYPE_CHECKING:
    from tests.support.providers import Provider

WITH_RESTORES = provider_params(skip=NO_RESTORES)
WITH_EXPIRY = provider_params(skip=NO_EXPIRY)
RESTORE_WORKER = Path(__file__).parents[1] / "support" / "restore_worker.py"
# Azure sends Set Blob Tier in batches: small ones, so a kill lands between them
SMALL_BATCHES = {"azure": {"store_options": {"batch_size": 20}}}


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_a_repeat_while_pending_sends_nothing(provider: Provider) -> None:
    hold_restores(provider)
    paths = seed_cold(provider, 300)
    provider.fs().restore(paths)
    assert restores_started(provider) == Counter(paths)  # each once
    provider.server.requests.clear()

    again = provider.fs().restore(paths)  # a new instance sharing the journal
    assert again.requests_sent == 0
    assert {g.action for g in again.plan} == {Action.WAIT}
    no_journal = provider.fs(journal=False).restore(paths)  # the listing alone also knows
    assert no_journal.requests_sent == 0

    # all the two instances sent (no restore among them): per instance, one look for a
    # catalog registry (absent) and one probe listing
    assert provider.server.requests.counts() == {
        op: 2 * n for op, n in provider.spec.first_look.items()
    }


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_a_killed_submission_resumes_without_a_duplicate(provider: Provider) -> None:
    quick_restores(provider)
    paths = seed_cold(provider, 300)
    provider.server.requests.clear()
    options = provider.archive_options(concurrency=1, **SMALL_BATCHES.get(provider.name, {}))
    config = {"archive_options": options, "paths": paths}
    assert kill_when(
        RESTORE_WORKER, config, lambda: restore_requests(provider) >= 60, server=provider.server
    )
    # counted once the worker is gone and the server has answered all it was sent
    before_kill = restore_requests(provider)
    assert 60 <= before_kill < 300

    fs = provider.fs()  # the same journal
    result = fs.restore(paths, wait=True, timeout=600)
    assert sorted(result.ready) == paths
    assert result.requests_sent == 300 - before_kill
    provider.server.wait_idle()
    assert_each_once(restores_started(provider), paths)  # across both runs
    assert restore_requests(provider) == 300  # none refused as a duplicate
    assert fs.cat_file(paths[-1]) == b"object 299"


THROTTLED_OBJECTS = 100


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_throttling_30_percent_every_object_restored_once(provider: Provider) -> None:
    quick_restores(provider)
    # 100: S3's throttled client (botocore's adaptive rate limiter) sends about 2 a second
    paths = seed_cold(provider, THROTTLED_OBJECTS)
    provider.server.requests.clear()
    throttle(provider, 0.3)
    result = provider.fs().restore(paths, wait=True, timeout=600)

    assert sorted(result.ready) == paths
    assert faults_injected(provider) > 0
    throttled = restore_requests(provider, status=THROTTLE_STATUS[provider.name])
    assert throttled > 0
    assert restore_requests(provider, status=202) == THROTTLED_OBJECTS
    # throttled requests were sent again; accepted ones never were
    assert restore_requests(provider) == THROTTLED_OBJECTS + throttled
    assert_each_once(restores_started(provider), paths)
    if provider.name == "azure":  # whole batches are throttled too, not only sub-requests
        assert provider.server.requests.count("BlobBatch", status=503) > 0
        assert provider.server.requests.count("SetBlobTier", batched=True, status=503) > 0


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_1001_objects_take_the_fewest_restore_requests_and_one_listing_per_page_per_round(
    provider: Provider,
) -> None:
    spec = provider.spec
    hold_restores(provider)  # done only when the test says so
    paths = seed_cold(provider, 1001)
    fs = provider.fs()
    provider.server.requests.clear()
    result = fs.restore(paths)
    assert result.requests_sent == 1001
    pages = math.ceil(1001 / spec.list_page)
    # the catalog registry, looked up once (absent); one probe; the restores, batched
    # where the provider batches them; no request per object's state
    assert request_counts(provider) == {
        spec.read_op: 1,
        spec.list_op: pages,
        spec.restore_call: spec.restore_calls(1001),
    }
    assert restore_requests(provider, status=202) == 1001
    assert_each_once(restores_started(provider), paths)

    plan = fs.plan(paths)
    provider.server.requests.clear()
    rounds: list[int] = []

    def finish_after_first_round(states: dict[str, Any]) -> None:
        rounds.append(len(states))
        finish_restores(provider)

    ready = list(fs.as_ready(plan, timeout=600, on_round=finish_after_first_round))
    assert sorted(g.key for g in ready) == paths
    assert rounds[0] == 1001  # every object in each round, from listings
    # bulk polling: per round ceil(1001 / page) listings, no request per object
    assert request_counts(provider) == {spec.list_op: pages * len(rounds)}
    assert fs.cat_file(paths[123]) == b"object 123"


@pytest.mark.parametrize("provider", WITH_EXPIRY, indirect=True)
def test_copies_that_expired_while_the_job_was_down_are_requested_again_once(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    finish_restores(provider)  # restores complete at once
    paths = seed_cold(provider, 3)
    first = provider.fs()
    first.restore(paths, wait=True, timeout=300)
    expire_restores(provider, paths)  # while the job is down
    journal = first.engine.journal
    assert journal is not None  # which still says "restored"/"accepted" for each of them
    assert {r.state for r in journal.records()} <= {RecordState.RESTORED, RecordState.ACCEPTED}
    provider.server.requests.clear()

    again = [provider.fs() for _ in range(2)]  # two jobs back, sharing that journal
    plans = [fs.plan(paths) for fs in again]
    assert all(len(plan.to_restore) == 3 for plan in plans)  # both see them archived
    with caplog.at_level(logging.WARNING, logger="archivefs"):
        reports = [fs.submit(plan) for fs, plan in zip(again, plans, strict=True)]
    assert sum(r.requests_sent for r in reports) == 3  # once each, not once per job
    assert restore_requests(provider, status=202) == restore_requests(provider) == 3
    assert "archived again" in caplog.text
    for group in again[1].as_ready(plans[1], timeout=300):
        assert [again[1].cat_file(p) for p in group.paths] == [
            f"object {int(p.rsplit('/', 1)[1])}".encode() for p in group.paths
        ]


@pytest.mark.parametrize("provider", WITH_EXPIRY, indirect=True)
def test_a_waiting_read_requests_an_expired_copy_again_instead_of_blocking(
    provider: Provider,
) -> None:
    finish_restores(provider)
    (path,) = seed_cold(provider, 1)
    provider.fs().restore([path], wait=True, timeout=300)
    expire_restores(provider, [path])
    provider.server.requests.clear()
    reader = provider.fs(on_archived="wait", wait_timeout=300)
    assert reader.cat_file(path) == b"object 0"  # not a wait on the journal's "restored"
    assert restore_requests(provider, status=202) == restore_requests(provider) == 1
