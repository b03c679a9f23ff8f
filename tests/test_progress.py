"""The progress display: log lines at least every ``interval`` seconds, a bar on any terminal."""

from __future__ import annotations

import io
import time

from archivefs.progress import ProgressDisplay
from archivefs.restore.engine import RestoreProgress


def _progress(next_check_in: float) -> RestoreProgress:
    now = time.monotonic()
    return RestoreProgress(groups=2, bytes_total=2, requests_sent=2, started=now,
                           restoring=2, next_check_at=now + next_check_in)  # fmt: skip


def test_a_log_line_follows_the_last_one_within_the_interval() -> None:
    stream = io.StringIO()
    display = ProgressDisplay(stream, interval=2.0, tty=False)
    try:
        display(_progress(60))  # a line now; the ticker starts
        time.sleep(0.2)
        display(_progress(30))  # a new status check: a line, 0.2 s after the first
        time.sleep(2.8)  # the next is due 2 s after that one, at 2.2 s (not at 4 s)
        lines = stream.getvalue().splitlines()
    finally:
        display.close()
    assert len(lines) == 3, lines
    assert all(line.startswith("restore: 0/2 ready") for line in lines)
