"""8 threads and 2 processes restoring and reading overlapping paths through one journal."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from archivefs.restore.journal import Journal, RecordState
from tests.reliability._support import make_fs, seed_cold

if TYPE_CHECKING:
    from collections.abc import Iterator

    from archivefs.testing import EmulatedArchive

WORKER = Path(__file__).with_name("_crash_worker.py")
JOURNAL_WORKER = Path(__file__).with_name("_journal_worker.py")


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", range(3))
def test_threads_and_processes_share_one_journal(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, seed: int
) -> None:
    archive.set_restore_delay(0.5)
    data = seed_cold(archive, bucket, 48)
    paths = sorted(data)
    journal = str(tmp_path / "journal.sqlite")
    slices = [paths[(i * 7 + seed) % 24 : (i * 7 + seed) % 24 + 24] for i in range(10)]
    config = {"mode": "read", "storage_options": archive.storage_options(), "journal": journal}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps({**config, "paths": slices[8 + i]})],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            fs = make_fs(archive, tmp_path, journal=journal)
            fs.restore(slices[i], wait=True, timeout=400)
            for path in slices[i]:
                assert fs.cat_file(path) == data[path]
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
        assert not thread.is_alive(), "deadlock: a thread never finished"
    for proc in procs:
        assert proc.wait(600) == 0, proc.stderr.read().decode() if proc.stderr else ""
        proc.stderr and proc.stderr.close()
    assert not errors, errors
    wanted = sorted(set().union(*map(set, slices)))
    assert archive.requests.count("RestoreObject", status=202) == len(wanted)
    assert archive.requests.count("RestoreObject", status=409) == 0
    records = Journal(journal, namespace=archive.endpoint_url).records()
    assert sorted(r.key for r in records) == wanted
    assert all(r.state is not RecordState.CLAIMED for r in records)
    assert all(r.state is not RecordState.FAILED for r in records)


@pytest.fixture
def busy_cpu() -> Iterator[None]:
    """Two processes that burn CPU for the test's duration (bounded to 10 minutes)."""
    burn = "import time\nend = time.time() + 600\nwhile time.time() < end: pass"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(2)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


@pytest.mark.timeout(600)
@pytest.mark.usefixtures("busy_cpu")
def test_processes_opening_a_new_journal_at_once(tmp_path: Path) -> None:
    # three processes x eight threads race to create and switch the same new file to WAL,
    # on a machine kept busy: claims must never fail or be lost
    for round_ in range(8):
        path = tmp_path / f"round{round_}" / "journal.sqlite"
        start = time.time() + 1.0  # all of them start together, after their imports
        procs = [
            subprocess.Popen(
                [sys.executable, str(JOURNAL_WORKER), str(path), str(start), f"p{p}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for p in range(3)
        ]
        for proc in procs:
            code = proc.wait(300)
            stderr = proc.stderr.read().decode() if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
            assert code == 0, stderr
        records = Journal(str(path), namespace="ns").records()
        assert len(records) == 3 * 8 + 1  # every key claimed once, "shared" once
