"""Budgets and estimate hooks on the filesystem; estimates match what the server saw."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from archivefs import BudgetExceededError, ObjectArchivedError
from archivefs.filesystem import ArchiveFileSystem
from archivefs.hooks import Hooks

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

MiB = 2**20


@pytest.fixture
def make_fs(archive: EmulatedArchive, tmp_path: Path) -> Any:
    def make(**kwargs: Any) -> ArchiveFileSystem:
        return ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(tmp_path / "journal.sqlite"),
            restore_status_in_listings=True,
            restore_time_scale=1 / 3600,
            skip_instance_cache=True,
            **kwargs,
        )

    return make


def test_budget_refuses_before_any_paid_request(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_objects(bucket, {f"b/{i}": b"x" * MiB for i in range(20)}, storage_class="GLACIER")
    fs = make_fs(max_cost=1e-6)
    with pytest.raises(BudgetExceededError) as info:
        fs.restore(f"{bucket}/b/*")
    error = info.value
    assert error.budget == 1e-6
    assert error.estimate is not None
    assert error.estimate > 1e-6
    assert "max_cost=" in str(error)
    assert "--max-cost" in str(error)
    assert archive.requests.count("RestoreObject") == 0
    # the claims were never taken: a bigger budget restores everything
    assert make_fs(max_cost=10.0).restore(f"{bucket}/b/*").requests_sent == 20


def test_on_estimate_hook_sees_and_can_veto(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "k", b"x", storage_class="DEEP_ARCHIVE")
    seen: list[Any] = []

    def refuse(plan: Any, estimate: Any) -> bool:
        seen.append((len(plan), estimate.restore_request_count))
        return False

    with pytest.raises(BudgetExceededError, match="refuse"):
        make_fs(on_estimate=refuse).restore(f"{bucket}/k")
    assert seen == [(1, 1)]
    assert archive.requests.count("RestoreObject") == 0


def test_estimate_matches_what_the_server_saw(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_objects(bucket, {f"e/{i}": b"y" * 1000 for i in range(7)}, storage_class="GLACIER")
    archive.put_objects(bucket, {f"e/h{i}": b"z" * 10 for i in range(3)})
    fs = make_fs()
    estimate = fs.estimate(f"{bucket}/e/*")
    archive.requests.clear()
    fs.restore(f"{bucket}/e/*", wait=True, timeout=30)
    for path in fs.glob(f"{bucket}/e/*"):
        fs.cat_file(path, start=0, end=None)
    assert estimate.restore_request_count == archive.requests.count("RestoreObject") == 7
    assert estimate.bytes_read == 7 * 1000 + 3 * 10
    assert estimate.get_request_count == 10
    assert archive.requests.count("GET") == 10
    assert archive.requests.bytes_sent("GET") == estimate.bytes_read


def test_archived_error_carries_the_estimate(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "k", b"x" * MiB, storage_class="GLACIER")
    with pytest.raises(ObjectArchivedError, match=r"costs about 0\.\d+ USD \(aws-us-east-1"):
        make_fs().cat_file(f"{bucket}/k")


def test_progress_hooks_never_kill_a_restore(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def broken(progress: Any) -> None:
        raise RuntimeError("display crashed")

    hooks = Hooks(on_progress=[broken, lambda p: calls.append(p)])
    with caplog.at_level(logging.WARNING):
        hooks.emit(1)
        hooks.emit(2)
    assert calls == [1, 2]
    assert caplog.text.count("failed; it is skipped") == 1
