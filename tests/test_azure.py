"""Azure Blob Archive end to end, against the emulated Azure archive (Azurite + archive proxy).

Real HTTP through adlfs and azure-storage-blob; counts are the proxy's, server side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from archivefs.errors import (
    InvalidRestoreRequestError,
    ObjectArchivedError,
    ObjectNotFoundError,
    RestoreInProgressError,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedAzureArchive


def _seed(archive: EmulatedAzureArchive, container: str, n: int, tier: str = "Archive") -> None:
    for i in range(n):
        archive.put_blob(container, f"run/f{i:03d}.bin", b"x" * (i + 1), tier=tier)


def test_hot_reads_are_adlfs_reads(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    data = bytes(range(256)) * 40
    azure_archive.put_blob(azure_container, "a.bin", data, tier="Cool")
    fs = make_az()
    azure_archive.requests.clear()
    assert fs.cat_file(f"{azure_container}/a.bin", start=100, end=300) == data[100:300]
    reads = [(r.blob, r.status) for r in azure_archive.requests.records]
    # the catalog registry is looked up once (absent here), then one ranged Get Blob
    assert reads == [(".archivefs/catalogs.json", 404), ("a.bin", 206)]


def test_raise_policy(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.put_blob(azure_container, "a.bin", b"data", tier="Archive")
    fs = make_az()
    azure_archive.requests.clear()
    with pytest.raises(ObjectArchivedError, match="archived in Archive") as caught:
        fs.cat(f"{azure_container}/a.bin")
    assert "az://" in str(caught.value)
    assert type(caught.value.__cause__).__module__.startswith("azure.")  # raised from the SDK's
    assert azure_archive.requests.count("SetBlobTier") == 0
    reads = [(r.op, r.blob, r.status) for r in azure_archive.requests.records if r.op == "GetBlob"]
    assert reads == [("GetBlob", ".archivefs/catalogs.json", 404), ("GetBlob", "a.bin", 409)]


def test_restore_policy_sends_one_set_tier_then_none(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # stays pending
    azure_archive.put_blob(azure_container, "a.bin", b"data", tier="Archive")
    fs = make_az(on_archived="restore")
    azure_archive.requests.clear()
    with pytest.raises(RestoreInProgressError, match="requested"):
        fs.cat(f"{azure_container}/a.bin")
    assert azure_archive.requests.count("SetBlobTier") == 1
    assert azure_archive.pending() == {f"{azure_container}/a.bin": ("Hot", "Standard")}
    with pytest.raises(RestoreInProgressError):
        fs.cat(f"{azure_container}/a.bin")
    assert azure_archive.requests.count("SetBlobTier") == 1  # pending: nothing sent again


def test_wait_policy_reads_after_rehydration(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay["Standard"] = 1.0
    azure_archive.put_blob(azure_container, "a.bin", b"payload", tier="Archive")
    fs = make_az(on_archived="wait", wait_timeout=120)
    azure_archive.requests.clear()
    assert fs.cat(f"{azure_container}/a.bin") == b"payload"
    assert azure_archive.requests.count("SetBlobTier") == 1
    assert fs.info(f"{azure_container}/a.bin", refresh=True)["storage_class"] == "Hot"


def test_restore_of_n_blobs_is_n_set_tier_requests_and_a_repeat_sends_none(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # stays pending
    n = 40
    _seed(azure_archive, azure_container, n)
    azure_archive.put_blob(azure_container, "run/hot.bin", b"h")
    fs = make_az()
    azure_archive.requests.clear()

    result = fs.restore(f"{azure_container}/run/*", tier="High")

    counts = azure_archive.requests.counts()
    assert counts["BlobBatch"] == 1  # one Blob Batch of 40 Set Blob Tier sub-requests
    assert "SetBlobTier" not in counts
    assert azure_archive.requests.count("SetBlobTier", batched=True) == n
    assert counts.get("GetBlobProperties", 0) <= 2  # glob expansion, never one per blob
    assert len(azure_archive.pending()) == n
    assert set(azure_archive.pending().values()) == {("Hot", "High")}
    assert len(result.submitted.sent) == n
    azure_archive.requests.clear()

    fs.restore(f"{azure_container}/run/*", tier="High")

    counts = azure_archive.requests.counts()
    assert "SetBlobTier" not in counts
    assert counts.get("GetBlobProperties", 0) <= 2


def test_priority_downgrade_and_unknown_priority_are_refused_before_sending(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # stays pending
    azure_archive.put_blob(azure_container, "a.bin", b"data", tier="Archive")
    fs = make_az()
    fs.restore(f"{azure_container}/a.bin", tier="High")
    azure_archive.requests.clear()
    with pytest.raises(InvalidRestoreRequestError, match="never lower it"):
        fs.restore(f"{azure_container}/a.bin", tier="Standard", upgrade=True)
    with pytest.raises(InvalidRestoreRequestError, match="no rehydrate priority 'Bulk'"):
        make_az(tier="Bulk")
    assert azure_archive.requests.count("SetBlobTier") == 0
    assert azure_archive.pending() == {f"{azure_container}/a.bin": ("Hot", "High")}


def test_priority_upgrade_is_one_request(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # stays pending
    azure_archive.put_blob(azure_container, "a.bin", b"data", tier="Archive")
    fs = make_az()
    fs.restore(f"{azure_container}/a.bin")
    azure_archive.requests.clear()
    fs.restore(f"{azure_container}/a.bin", tier="High", upgrade=True)
    assert azure_archive.requests.count("SetBlobTier") == 1
    assert azure_archive.pending() == {f"{azure_container}/a.bin": ("Hot", "High")}


def test_missing_container_and_blob_are_clear_errors(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    fs = make_az()
    with pytest.raises(ObjectNotFoundError, match="container 'no-such-container' does not exist"):
        fs.ls("no-such-container/x")
    with pytest.raises(ObjectNotFoundError, match="no such"):
        fs.cat(f"{azure_container}/missing.bin")
    with pytest.raises(ObjectNotFoundError, match="do not exist"):
        fs.restore([f"{azure_container}/missing.bin"])
