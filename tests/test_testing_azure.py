"""The emulated Azure archive itself: Blob Batch answers, counters and faults, via the real SDK."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from archivefs.testing import EmulatedAzureArchive


def _batch(
    archive: EmulatedAzureArchive, container: str, names: list[str]
) -> list[tuple[int, str]]:
    from azure.storage.blob.aio import BlobServiceClient

    async def send() -> list[tuple[int, str]]:
        async with BlobServiceClient.from_connection_string(archive.connection_string) as s:
            parts = await s.get_container_client(container).set_standard_blob_tier_blobs(
                "Hot", *names, rehydrate_priority="High", raise_on_any_failure=False,
                retry_total=0,
            )  # fmt: skip
            return [(p.status_code, p.headers.get("x-ms-error-code") or "") async for p in parts]

    return asyncio.run(send())


def test_a_blob_batch_is_one_request_with_one_answer_per_blob(
    azure_archive: EmulatedAzureArchive, azure_container: str
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    c = azure_container
    for i in range(4):
        azure_archive.put_blob(c, f"d/f{i}", b"x", tier="Archive" if i < 3 else "Hot")
    azure_archive.fail_next("SetBlobTier", 1)  # the first sub-request is throttled

    answers = _batch(azure_archive, c, ["d/f0", "d/f1", "d/f2", "d/f3", "missing"])

    assert answers == [
        (503, "ServerBusy"),
        (202, ""),  # rehydration pending
        (202, ""),
        (200, ""),  # already online: set at once
        (404, "BlobNotFound"),
    ]
    assert azure_archive.requests.counts() == {"BlobBatch": 1}
    assert azure_archive.requests.counts(batched=True) == {"SetBlobTier": 5}
    assert azure_archive.pending() == {f"{c}/d/f1": ("Hot", "High"), f"{c}/d/f2": ("Hot", "High")}
    assert dict(azure_archive.rehydrations) == {f"{c}/d/f1": 1, f"{c}/d/f2": 1}
    assert azure_archive.injected == 1

    again = _batch(azure_archive, c, ["d/f0", "d/f1"])  # a repeat starts nothing new
    assert again == [(202, ""), (202, "")]
    assert dict(azure_archive.rehydrations) == {f"{c}/d/f0": 1, f"{c}/d/f1": 1, f"{c}/d/f2": 1}


def test_batches_can_be_refused_and_throttling_needs_a_share(
    azure_archive: EmulatedAzureArchive, azure_container: str
) -> None:
    azure_archive.put_blob(azure_container, "a", b"x", tier="Archive")
    azure_archive.batch_enabled = False
    from azure.core.exceptions import HttpResponseError

    with pytest.raises(HttpResponseError) as caught:
        _batch(azure_archive, azure_container, ["a", "a"])
    assert caught.value.status_code == 400
    assert azure_archive.requests.count("BlobBatch", status=400) == 1
    with pytest.raises(ValueError, match="Fix: pass a number in"):
        azure_archive.throttle(fraction=1.5)
