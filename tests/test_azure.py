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


def test_a_tier_argument_is_parsed_in_azures_names_as_the_constructor_parses_it(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    """plan/estimate/restore's ``tier=`` is a rehydrate priority of Azure's, like the
    constructor's ``tier=``: "standard" is Azure's Standard, and S3's Bulk is refused by
    the plan, before any request, not later by the estimate or the request."""
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # stays pending
    azure_archive.put_blob(azure_container, "a.bin", b"data", tier="Archive")
    path = f"{azure_container}/a.bin"
    fs = make_az()
    assert fs.tier.provider == "azure"
    plan = fs.plan(path, tier="standard")
    assert (plan.tier, plan.tier.provider) == ("Standard", "azure")
    assert fs.estimate(path, tier="Standard").tier.provider == "azure"
    azure_archive.requests.clear()
    for call in (fs.plan, fs.estimate, fs.restore):
        with pytest.raises(InvalidRestoreRequestError, match="no rehydrate priority 'Bulk'"):
            call(path, tier="Bulk")
    assert azure_archive.requests.counts() == {}
    fs.restore(path, tier="high")
    assert azure_archive.pending() == {path: ("Hot", "High")}


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


def _seed_archived(archive: EmulatedAzureArchive, container: str, n: int) -> list[str]:
    blobs = {f"o/{i:05d}": f"blob {i}".encode() for i in range(n)}
    archive.put_blobs(container, blobs, tier="Archive")
    return [f"{container}/{name}" for name in sorted(blobs)]


def test_refused_batches_fall_back_to_one_set_tier_per_blob(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    azure_archive.batch_enabled = False  # an account that answers Blob Batch with an error
    paths = _seed_archived(azure_archive, azure_container, 40)
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
