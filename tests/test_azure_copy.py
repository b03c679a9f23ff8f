"""Copy-to-rehydrate on Azure: ``store_options={"rehydrate": "copy"}``.

Each archived blob is rehydrated by one Copy Blob into
``<container>/.archivefs/rehydrated/<blob>`` at the target tier and priority; the
original stays in Archive. States of the original's path follow its copy (pending:
``restoring``; online: ``restored``), reads of the original's path read the copy.
Counts are the proxy's, server side.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.model import Action
from archivefs.stores.azure import copy_path
from tests.support.counts import assert_each_once
from tests.support.processes import kill_when

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedAzureArchive

WORKER = Path(__file__).with_name("_azure_restore_worker.py")
COPY = {"rehydrate": "copy"}

pytestmark = pytest.mark.timeout(900)


def _seed(archive: EmulatedAzureArchive, container: str, n: int) -> dict[str, bytes]:
    blobs = {f"o/{i:05d}": f"blob {i}".encode() for i in range(n)}
    archive.put_blobs(container, blobs, tier="Archive")
    return {f"{container}/{name}": data for name, data in sorted(blobs.items())}


def test_n_blobs_are_n_copies_originals_stay_archived_and_reads_follow_the_copy(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # pending until told
    data = _seed(azure_archive, azure_container, 30)
    paths = sorted(data)
    fs = make_az(store_options=COPY)
    azure_archive.requests.clear()

    first = fs.restore(paths, tier="High")

    assert first.requests_sent == 30
    # one look for a catalog registry, a listing of the blobs and one of their copies
    assert azure_archive.requests.counts() == {"GetBlob": 1, "ListBlobs": 2, "CopyBlob": 30}
    assert azure_archive.requests.count("CopyBlob", status=202) == 30
    assert azure_archive.pending() == {copy_path(p): ("Hot", "High") for p in paths}
    assert {azure_archive.tier_of(p) for p in paths} == {"Archive"}  # originals untouched
    assert fs.info(paths[0])["restore"] == "restoring"

    azure_archive.requests.clear()  # a repeat while the copies are pending sends nothing
    again = make_az(store_options=COPY, journal=False).restore(paths)
    assert again.requests_sent == 0
    assert {g.action for g in again.plan} == {Action.WAIT}
    assert "CopyBlob" not in azure_archive.requests.counts()

    azure_archive.complete_rehydrations()
    azure_archive.requests.clear()
    fresh = make_az(store_options=COPY, journal=False)
    done = fresh.restore(paths, wait=True, timeout=600)
    assert sorted(done.ready) == paths
    assert done.requests_sent == 0
    # one probe: a listing of the originals and one of their copies
    assert azure_archive.requests.counts() == {"GetBlob": 1, "ListBlobs": 2}
    info = fresh.info(paths[7])
    assert (info["storage_class"], info["restore"]) == ("Archive", "restored")
    azure_archive.requests.clear()
    assert fresh.cat_file(paths[7]) == data[paths[7]]
    got = [r for r in azure_archive.requests.records if r.op == "GetBlob"]
    assert [f"{r.container}/{r.blob}" for r in got] == [copy_path(paths[7])]  # the copy
    assert {azure_archive.tier_of(p) for p in paths} == {"Archive"}  # still archived
    assert set(azure_archive.rehydrations.values()) == {1}
    assert sorted(azure_archive.rehydrations) == sorted(copy_path(p) for p in paths)
    assert fresh.ls(azure_container, detail=False) == [f"{azure_container}/o"]  # copies hidden


def test_wait_polls_originals_and_copies_in_bulk(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay["Standard"] = 2.0
    data = _seed(azure_archive, azure_container, 40)
    paths = sorted(data)
    fs = make_az(store_options=COPY)
    azure_archive.requests.clear()

    result = fs.restore(paths, wait=True, timeout=600)

    assert sorted(result.ready) == paths
    counts = azure_archive.requests.counts()
    assert counts["CopyBlob"] == 40
    # planning: the blobs' listing and their copies'; then the same two per poll round,
    # except a round that asks about one blob alone: its HEAD and its copy's (as on S3,
    # one object is one HEAD), so never a request per blob
    assert fs.engine.poll_rounds >= 1
    assert counts.get("GetBlobProperties", 0) in (0, 2)
    status = counts["ListBlobs"] + counts.get("GetBlobProperties", 0)
    assert status == 2 + 2 * fs.engine.poll_rounds
    assert fs.cat_file(paths[-1]) == data[paths[-1]]


def test_a_killed_submission_resumes_with_no_duplicate_copy(
    azure_archive: EmulatedAzureArchive, azure_container: str, tmp_path: Path
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    data = _seed(azure_archive, azure_container, 120)
    paths = sorted(data)
    journal = str(tmp_path / "journal.sqlite")
    config = {
        "storage_options": azure_archive.storage_options(),
        "journal": journal,
        "paths": paths,
        "concurrency": 1,
        "store_options": COPY,
    }
    azure_archive.requests.clear()
    assert kill_when(
        WORKER, config, lambda: azure_archive.requests.count("CopyBlob") >= 20, server=azure_archive
    )
    before = sum(azure_archive.rehydrations.values())  # copies the worker started
    assert 20 <= before < 120, _copies(azure_archive)

    from archivefs.filesystem import ArchiveFileSystem

    fs = ArchiveFileSystem(
        target_protocol="az",
        target_options=azure_archive.storage_options(),
        journal=journal,
        store_options=COPY,
        price_sheet="azure-eastus",
        skip_instance_cache=True,
    )
    result = fs.restore(paths)
    azure_archive.wait_idle()
    assert result.requests_sent == 120 - before, _copies(azure_archive)
    assert len(azure_archive.pending()) == 120  # one destination per source, all pending
    assert_each_once(azure_archive.rehydrations, azure_archive.pending())
    assert _copies(azure_archive) == {202: 120}  # no 409, no second copy


def _copies(archive: EmulatedAzureArchive) -> dict[int, int]:
    """Copy Blob requests the proxy answered, per status."""
    return dict(Counter(r.status for r in archive.requests.records if r.op == "CopyBlob"))


def test_an_unknown_way_to_rehydrate_is_refused_with_a_fix(make_az: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match=r"rehydrate='move' is not a way.*Fix: pass"):
        make_az(store_options={"rehydrate": "move"})


def test_the_estimate_prices_the_copies_writes_and_says_they_stay(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    paths = sorted(_seed(azure_archive, azure_container, 10))
    by_tier = make_az().estimate(paths, tier="High")
    by_copy = make_az(store_options=COPY).estimate(paths, tier="High")
    hot = make_az().price_sheet.price("Hot")
    assert by_copy.components["requests"] == pytest.approx(
        by_tier.components["requests"] + 10 * hot.put_per_1000 / 1000
    )
    for part in ("restore_requests", "restore_data", "restored_copy_storage"):
        assert by_copy.components[part] == pytest.approx(by_tier.components[part])
    assert by_copy.components["early_deletion"] == 0.0
    assert any("copy-to-rehydrate: 10 copies" in w for w in by_copy.warnings)
    assert not any("copy-to-rehydrate" in w for w in by_tier.warnings)
    assert azure_archive.requests.count("CopyBlob") == 0  # an estimate sends nothing


def test_a_pending_copy_is_raised_to_high_with_one_set_blob_tier_on_the_copy(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    azure_archive.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    (path,) = _seed(azure_archive, azure_container, 1)
    fs = make_az(store_options=COPY)
    fs.restore(path)
    assert azure_archive.pending() == {copy_path(path): ("Hot", "Standard")}
    azure_archive.requests.clear()
    fs.restore(path, tier="High", upgrade=True)
    tiers = [r for r in azure_archive.requests.records if r.op == "SetBlobTier"]
    assert [(f"{r.container}/{r.blob}", r.status) for r in tiers] == [(copy_path(path), 202)]
    assert "CopyBlob" not in azure_archive.requests.counts()  # no second copy
    assert azure_archive.pending() == {copy_path(path): ("Hot", "High")}
    assert azure_archive.tier_of(path) == "Archive"


def test_prefetch_to_a_directory_reads_the_rehydrated_copies(
    azure_archive: EmulatedAzureArchive,
    azure_container: str,
    make_az: Callable[..., Any],
    tmp_path: Path,
) -> None:
    azure_archive.rehydrate_delay["Standard"] = 1.0
    data = _seed(azure_archive, azure_container, 3)
    paths = sorted(data)
    fs = make_az(store_options=COPY)
    fs.prefetch(paths, to=tmp_path / "out", timeout=600)
    for path, content in data.items():
        assert (tmp_path / "out" / path).read_bytes() == content
    got = [f"{r.container}/{r.blob}" for r in azure_archive.requests.records if r.op == "GetBlob"]
    assert sorted(set(got) & (set(paths) | {copy_path(p) for p in paths})) == sorted(
        copy_path(p) for p in paths
    )  # the copies, never the archived originals
    assert {azure_archive.tier_of(p) for p in paths} == {"Archive"}
