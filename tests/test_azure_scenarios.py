"""The S3 scenario tests, on the emulated Azure archive (Azurite + archive proxy).

Real HTTP through adlfs and azure-storage-blob; every count is the proxy's, server
side. ``requests.count(op)`` counts HTTP requests (a Blob Batch once, as
``BlobBatch``); ``batched=True`` counts the Set Blob Tier sub-requests inside
batches; ``rehydrations`` counts the rehydrations each blob started.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.stores.azure import LIST_PAGE

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedAzureArchive


pytestmark = pytest.mark.timeout(900)


def seed(archive: EmulatedAzureArchive, container: str, n: int, prefix: str = "o") -> list[str]:
    blobs = {f"{prefix}/{i:05d}": f"blob {i}".encode() for i in range(n)}
    archive.put_blobs(container, blobs, tier="Archive")
    return [f"{container}/{name}" for name in sorted(blobs)]


def sub_requests(archive: EmulatedAzureArchive, **filters: Any) -> int:
    """Set Blob Tier sent, alone or inside batches."""
    return archive.requests.count("SetBlobTier", batched=None, **filters)


def test_500_blobs_are_two_batches_one_wait_and_one_list_per_poll_round(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay["Standard"] = 2.0
    paths = seed(azure_archive, azure_container, 500)
    fs = make_az()
    azure_archive.requests.clear()

    result = fs.restore(paths, wait=True, timeout=600)

    assert sorted(result.ready) == paths
    counts = azure_archive.requests.counts()
    assert counts["BlobBatch"] == 2  # ceil(500 / 256): the minimum
    assert "SetBlobTier" not in counts  # nothing outside the batches
    assert azure_archive.requests.count("SetBlobTier", batched=True, status=202) == 500
    assert set(azure_archive.rehydrations.values()) == {1}
    assert len(azure_archive.rehydrations) == 500
    assert "GetBlobProperties" not in counts  # states come from listings only
    # bulk polling: one planning probe, then per round ceil(500 / 5000) = 1 List Blobs
    assert fs.engine.poll_rounds >= 1
    assert counts["ListBlobs"] == 1 + fs.engine.poll_rounds * math.ceil(500 / LIST_PAGE)
    assert fs.cat_file(paths[123]) == b"blob 123"


def test_refused_batches_fall_back_to_one_set_tier_per_blob(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    azure_archive.batch_enabled = False  # an account that answers Blob Batch with an error
    paths = seed(azure_archive, azure_container, 40)
    fs = make_az()
    azure_archive.requests.clear()
    result = fs.restore(paths[:30])
    assert result.requests_sent == 30
    assert azure_archive.requests.count("BlobBatch", status=400) == 1
    assert azure_archive.requests.count("SetBlobTier", status=202) == 30
    fs.restore(paths)  # the same filesystem remembers: no batch is tried again
    assert azure_archive.requests.count("BlobBatch") == 1
    assert azure_archive.requests.count("SetBlobTier", status=202) == 40
    assert len(azure_archive.pending()) == 40


def test_a_pending_read_says_how_a_finished_rehydration_shows(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    from archivefs.errors import RestoreInProgressError

    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    azure_archive.put_blob(azure_container, "a.bin", b"data", tier="Archive")
    fs = make_az(store_options={"rehydrate_to": "Cool"})
    fs.restore(f"{azure_container}/a.bin")
    assert azure_archive.pending() == {f"{azure_container}/a.bin": ("Cool", "Standard")}
    with pytest.raises(RestoreInProgressError) as caught:
        fs.cat_file(f"{azure_container}/a.bin")
    assert "fs.info() shows storage_class='Cool' and restore='hot'" in str(caught.value)
    assert "restore='restored'" not in str(caught.value)  # S3's wording, not Azure's


def test_adapter_options_are_checked_with_a_fix(
    azure_archive: EmulatedAzureArchive, make_az: Callable[..., Any]
) -> None:
    with pytest.raises(ValueError, match=r"outside Azure's 1\.\.256\. Fix"):
        make_az(store_options={"batch_size": 300})
    with pytest.raises(ValueError, match=r"unknown option\(s\) tries\. Fix"):
        make_az(store_options={"retry": {"tries": 3}})
    # a misspelt option is refused by name, not dropped (rehydrating in place instead
    # of by copy would cost an early-deletion fee)
    with pytest.raises(
        ValueError,
        match=r"store_options 'rehydrat' is not an option of the azure adapter.*"
        r"Fix: use batch_size, rehydrate, rehydrate_to, retry",
    ):
        make_az(store_options={"rehydrat": "copy"})
    fs = make_az(store_options={"retry": {"attempts": 2, "backoff": 0.0}, "batch_size": 1})
    assert (fs.store.retry.attempts, fs.store.restore_batch_size) == (2, 1)
    assert azure_archive.requests.counts() == {}  # checked before any request
