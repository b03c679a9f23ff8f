"""Claims in the container: hosts that share no journal rehydrate each blob once, on Azure.

Each process stands for a host (its own journal). Claims are Put Blob with
``If-None-Match: *`` (taken over with ``If-Match``), which Azurite honours and the
proxy passes through one at a time per blob, as Azure evaluates them: atomically. Every
count is the proxy's, server side.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.restore.claims import BucketClaims, Claim, claim_path, ledger_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedAzureArchive

WORKER = Path(__file__).with_name("_azure_restore_worker.py")

pytestmark = pytest.mark.timeout(900)


def _seed(archive: EmulatedAzureArchive, container: str, n: int) -> list[str]:
    blobs = {f"o/{i:05d}": f"blob {i}".encode() for i in range(n)}
    archive.put_blobs(container, blobs, tier="Archive")
    return [f"{container}/{name}" for name in sorted(blobs)]


def _set_tiers(archive: EmulatedAzureArchive, **filters: Any) -> int:
    """Set Blob Tier sent, alone or inside Blob Batches."""
    return archive.requests.count("SetBlobTier", batched=None, **filters)


def test_claims_live_in_the_container_and_say_who_asked(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    paths = _seed(azure_archive, azure_container, 3)
    fs = make_az(bucket_claims=True)
    azure_archive.requests.clear()
    fs.restore(paths, tier="High")
    claims = sync(fs.loop, BucketClaims(fs.store).read_many, paths)
    for path in paths:
        claim = claims[path]
        assert claim is not None
        assert (claim.key, claim.tier, claim.days) == (path, "High", None)
    assert b"AccountKey" not in azure_archive.read_blob(ledger_path(azure_container))
    assert azure_archive.requests.count("PutBlob", status=201) == 1  # one ledger write
    assert _set_tiers(azure_archive, status=202) == 3
    assert fs.ls(azure_container, detail=False) == [f"{azure_container}/o"]  # claims hidden
    # a second host (no journal of its own) sees the claims, or the pending states, and
    # sends nothing
    azure_archive.requests.clear()
    other = make_az(bucket_claims=True, journal=False)
    assert other.restore(paths).requests_sent == 0
    assert _set_tiers(azure_archive) == 0


def test_a_claim_write_that_timed_out_but_landed_is_still_this_hosts_claim(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    """A read timeout is transient: the claim is sent again, meets its own earlier try
    (409), reads it, finds this host's name on it and goes on to rehydrate, once."""
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    paths = _seed(azure_archive, azure_container, 3)
    fs = make_az(
        bucket_claims=True,
        target_options={**azure_archive.storage_options(), "read_timeout": 1},
    )
    azure_archive.requests.clear()
    azure_archive.stall_next("PutBlob", 1, seconds=3)
    fs.restore(paths)
    azure_archive.wait_idle()  # the stalled answer is counted once it is sent
    puts = (
        azure_archive.requests.count("PutBlob", status=201),
        azure_archive.requests.count("PutBlob", status=409),
    )
    assert puts == (1, 1)  # the stalled ledger write landed; its second try found it
    assert _set_tiers(azure_archive, status=202) == 3
    assert _set_tiers(azure_archive) == 3
    assert fs.restore(paths).requests_sent == 0


def test_a_claim_whose_claimer_died_is_taken_over_once(
    azure_archive: EmulatedAzureArchive,
    azure_container: str,
    make_az: Callable[..., Any],
    tmp_path: Path,
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    (path,) = _seed(azure_archive, azure_container, 1)
    dead = Claim(path, "Standard", None, "ghost-host:1", claimed_at=0.0, expected_ready_at=None)
    dead = replace(dead, lease_s=1.0)  # its lease: 1 s after the store wrote it
    azure_archive.put_blob(azure_container, claim_path(path).split("/", 1)[1], dead.to_bytes())
    time.sleep(2.5)  # over by the store's clock (its times have whole seconds)
    for i in range(3):
        make_az(bucket_claims=True, journal=str(tmp_path / f"h{i}.sqlite")).restore(path)
    assert _set_tiers(azure_archive, status=202) == 1
    assert _set_tiers(azure_archive) == 1
    taken = Claim.parse(azure_archive.read_blob(claim_path(path)))
    assert taken is not None
    assert taken.requester != dead.requester
    # the take-over was one If-Match Put Blob that won (201), none lost
    assert azure_archive.requests.count("PutBlob", status=201) == 1


def test_conditional_writes_say_false_when_the_condition_fails(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    fs = make_az()
    store = fs.store
    path = f"{azure_container}/.archivefs/claims/x.json"
    assert sync(fs.loop, store.read_tagged, path) is None
    assert sync(fs.loop, store.create_exclusive, path, b"first") is True
    assert sync(fs.loop, store.create_exclusive, path, b"second") is False  # 409
    found = sync(fs.loop, store.read_tagged, path)
    assert found is not None
    data, etag = found.data, found.etag
    assert data == b"first"
    assert found.age is not None
    assert 0 <= found.age < 600
    assert sync(fs.loop, store.replace_if_unchanged, path, b"third", etag) is True
    assert sync(fs.loop, store.replace_if_unchanged, path, b"fourth", etag) is False  # 412
    assert azure_archive.read_blob(path) == b"third"
    puts = [r.status for r in azure_archive.requests.records if r.op == "PutBlob"]
    assert puts == [201, 409, 201, 412]  # one request each, none retried


def test_a_claim_blob_larger_than_a_claim_is_read_only_in_part_and_is_damaged(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    from archivefs.restore.claims import MAX_CLAIM_BYTES

    (path,) = _seed(azure_archive, azure_container, 1)
    claim = Claim(path, "Standard", None, "other-host:7", time.time(), None)
    name = claim_path(path).split("/", 1)[1]
    azure_archive.put_blob(azure_container, name, claim.to_bytes() + b" " * 2**20)
    fs = make_az()
    found = sync(fs.loop, fs.store.read_tagged, claim_path(path))
    assert found is not None
    assert len(found.data) == 64 * 1024  # the default limit: one ranged Get Blob
    assert found.size == len(claim.to_bytes()) + 2**20
    assert not found.whole
    assert sync(fs.loop, BucketClaims(fs.store).read, path) is None  # damaged
    small = sync(fs.loop, lambda: fs.store.read_tagged(claim_path(path), limit=MAX_CLAIM_BYTES))
    assert len(small.data) == MAX_CLAIM_BYTES
