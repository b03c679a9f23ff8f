"""The journal and the store disagree: the fresher of the two decides, and nothing is paid twice.

Issue 21.1 (a plan older than the journal re-sent restores that another job had
already completed) and 20.9 (a journal that says "accepted" for a copy that expired
while the job was down kept waiting for 48 h + days instead of requesting again).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest

from archivefs.restore.journal import Journal, RecordState
from tests.reliability._support import make_fs, seed_cold

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


def test_a_stale_plan_does_not_resend_restores_another_job_completed(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    data = seed_cold(archive, bucket, 5)
    paths = sorted(data)
    late = make_fs(archive, tmp_path)
    stale = late.plan(paths)  # probed now: all archived
    assert len(stale.to_restore) == 5
    other = make_fs(archive, tmp_path)  # another job, same journal
    other.restore(paths, wait=True, timeout=300)
    assert archive.requests.count("RestoreObject", status=202) == 5
    report = late.submit(stale)
    assert report.requests_sent == 0
    assert sorted(report.skipped) == paths
    assert archive.requests.count("RestoreObject") == 5  # no 200 "already restored" resends
    assert [late.cat_file(p) for p in paths] == [data[p] for p in paths]


def test_a_stale_plan_waits_for_restores_another_job_has_in_flight(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(1.0)
    data = seed_cold(archive, bucket, 4)
    paths = sorted(data)
    late = make_fs(archive, tmp_path)
    stale = late.plan(paths)
    make_fs(archive, tmp_path).restore(paths)  # sent, not finished
    report = late.submit(stale)
    assert report.requests_sent == 0
    assert archive.requests.count("RestoreObject") == 4
    for group in late.as_ready(stale, timeout=300):
        assert all(late.cat_file(p) == data[p] for p in group.paths)


def test_an_expired_copy_the_journal_remembers_is_requested_again_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = seed_cold(archive, bucket, 3)
    paths = sorted(data)
    first = make_fs(archive, tmp_path)
    first.restore(paths, wait=True, timeout=300)
    for path in paths:  # the copies expire while the job is down
        archive.expire_restore(bucket, path.split("/", 1)[1])
    # the job comes back; its journal still says "restored"/"accepted" for each of them
    journal = Journal(str(tmp_path / "journal.sqlite"), namespace=archive.endpoint_url)
    assert {r.state for r in journal.records()} <= {RecordState.RESTORED, RecordState.ACCEPTED}
    archive.requests.clear()
    again = [make_fs(archive, tmp_path) for _ in range(2)]
    plans = [fs.plan(paths) for fs in again]  # both see the objects archived
    with caplog.at_level(logging.WARNING, logger="archivefs"):
        reports = [fs.submit(plan) for fs, plan in zip(again, plans, strict=True)]
    assert archive.requests.count("RestoreObject", status=202) == 3  # once each, not twice
    assert archive.requests.count("RestoreObject") == 3
    assert sum(r.requests_sent for r in reports) == 3
    assert "archived again" in caplog.text
    for group in again[0].as_ready(plans[0], timeout=300):
        assert all(again[0].cat_file(p) == data[p] for p in group.paths)


def test_a_read_that_waits_re_requests_an_expired_copy_instead_of_blocking(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    data = seed_cold(archive, bucket, 1)
    (path,) = data
    make_fs(archive, tmp_path).restore([path], wait=True, timeout=300)
    archive.expire_restore(bucket, path.split("/", 1)[1])
    archive.requests.clear()
    reader = make_fs(archive, tmp_path, on_archived="wait", wait_timeout=300)
    assert reader.cat_file(path) == data[path]
    assert archive.requests.count("RestoreObject", status=202) == 1
