"""Claims across processes, once for every provider with restores (``NO_RESTORES`` says why
not): hosts that share no journal still pay each restore once.

Each process stands for a host: its own journal, no shared file; what they share is the
claims ledger in the bucket (``bucket_claims=True``). Every count is the server's, read
once the processes are gone and the server is idle.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.counts import assert_each_once
from tests.support.processes import finish_workers, kill_when, start_workers
from tests.support.providers import (
    NO_RESTORES,
    finish_restores,
    hold_restores,
    provider_params,
    restore_requests,
    restores_started,
    seed_cold,
)

if TYPE_CHECKING:
    from tests.support.providers import Provider

WITH_RESTORES = provider_params(skip=NO_RESTORES)
RESTORE_WORKER = Path(__file__).parents[1] / "support" / "restore_worker.py"
GROUPS = 400
# Azure sends Set Blob Tier in batches: small ones, so hosts' batches interleave
SMALL_BATCHES = {"azure": {"store_options": {"batch_size": 20}}}

pytestmark = pytest.mark.timeout(900)


def _host(provider: Provider, name: str, paths: list[str], **extra: Any) -> dict[str, Any]:
    journal = provider.tmp_path / name / "journal.sqlite"  # one journal per "host"
    journal.parent.mkdir(parents=True, exist_ok=True)
    settings = {"bucket_claims": True, "concurrency": 8, **SMALL_BATCHES.get(provider.name, {})}
    options = provider.archive_options(journal=str(journal), **{**settings, **extra})
    return {"archive_options": options, "paths": paths}


def _selections(paths: list[str]) -> list[list[str]]:
    """Four overlapping selections whose union is every path."""
    half = len(paths) // 2
    return [paths[:half], paths[half // 2 : half + half // 2], paths[half:], paths[::2]]


def _assert_each_paid_once_and_readable(provider: Provider, paths: list[str]) -> None:
    provider.server.wait_idle()
    assert_each_once(restores_started(provider), paths)
    assert restore_requests(provider, status=202) == len(paths)
    assert restore_requests(provider) == len(paths)  # no duplicate refused, none sent twice
    finish_restores(provider)
    reader = provider.fs(journal=str(provider.tmp_path / "checker" / "journal.sqlite"))
    for path in (paths[0], paths[len(paths) // 2], paths[-1]):
        assert reader.cat_file(path) == f"object {int(path.rsplit('/', 1)[1])}".encode()


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_four_hosts_restoring_overlapping_selections_pay_each_group_once(
    provider: Provider,
) -> None:
    hold_restores(provider)  # nothing completes while the hosts race
    paths = seed_cold(provider, GROUPS)
    provider.server.requests.clear()
    selections = _selections(paths)
    hosts = [_host(provider, f"host{i}", s) for i, s in enumerate(selections)]
    finish_workers(start_workers(RESTORE_WORKER, hosts))
    _assert_each_paid_once_and_readable(provider, paths)
    # claims are a ledger written per batch of groups, not a request per group: a read and
    # a conditional write per host and batch, again after a lost race
    key = provider.spec.key_field
    claims = [
        r for r in provider.server.requests.matching() if "/claims/" in (getattr(r, key) or "")
    ]
    assert 0 < len(claims) <= 0.1 * sum(len(s) for s in selections)


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_a_host_killed_mid_submission_resumes_and_still_each_group_is_paid_once(
    provider: Provider,
) -> None:
    hold_restores(provider)
    paths = seed_cold(provider, GROUPS)
    selections = _selections(paths)
    provider.server.requests.clear()
    victim = _host(provider, "host0", selections[0], concurrency=1)
    assert kill_when(
        RESTORE_WORKER, victim, lambda: restore_requests(provider) >= 40, server=provider.server
    )
    sent_before = restore_requests(provider)
    assert 40 <= sent_before < len(selections[0])  # killed mid-submission
    others = [_host(provider, f"host{i}", selections[i]) for i in (1, 2, 3)]
    finish_workers(start_workers(RESTORE_WORKER, others))
    finish_workers(start_workers(RESTORE_WORKER, [victim]))  # the same "host", its journal
    _assert_each_paid_once_and_readable(provider, paths)
