"""The journal and the store disagree: the fresher of the two decides, and nothing is paid twice.

Issue 21.1 (a plan older than the journal re-sent restores that another job had
already completed). Issue 20.9 (a journal that says "accepted" for a copy that expired
while the job was down) is a scenario of every provider whose copies expire:
``tests/scenarios/test_restores.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
