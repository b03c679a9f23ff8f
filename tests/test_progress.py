"""The progress display: log lines at least every ``interval`` seconds, a bar on any terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from archivefs.progress import ProgressDisplay
from archivefs.restore.engine import RestoreProgress

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


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


def test_the_bar_draws_on_a_terminal_that_reports_no_size(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    import json

    archive.set_restore_delay(1.0)
    archive.put_objects(bucket, {f"bar/{i}": b"x" for i in range(3)}, storage_class="GLACIER")
    controller, terminal = pty.openpty()  # never sized: it reports 0 x 0
    command = [sys.executable, "-m", "archivefs.cli",
               "--storage-options", json.dumps(archive.storage_options()),
               "--journal", str(tmp_path / "j.sqlite"), "--restore-time-scale", str(1 / 3600),
               "restore", f"s3://{bucket}/bar/*", "--wait", "--timeout", "600"]  # fmt: skip
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=terminal,
                          stderr=terminal) as process:  # fmt: skip
        os.close(terminal)
        output = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            output += chunk
        assert process.wait(60) == 0
    os.close(controller)
    text = output.decode(errors="replace")
    assert "restored: 3/3" in text, text
    assert "3 files in 3 objects; 3 restore requests sent; 3 ready" in text


def test_frequent_status_checks_do_not_each_write_a_line() -> None:
    """Checks a fraction of a second apart (a short window polled late) are not news: only
    a check whose wait is worth saying (a second or longer) writes a line of its own."""
    stream = io.StringIO()
    display = ProgressDisplay(stream, interval=3600.0, tty=False)
    try:
        display(_progress(60))  # the first line
        for _ in range(30):
            display(_progress(0.3))  # 30 checks, 0.3 s apart: no line each
        display(_progress(3))  # a wait of seconds ahead: said
        display(_progress(7200))  # a long wait ahead: said
        lines = stream.getvalue().splitlines()
    finally:
        display.close()
    assert len(lines) == 3, lines


def test_closing_while_the_engine_reports_from_its_thread_never_fails() -> None:
    """Ctrl-C closes the display in the main thread while the event loop's thread may be
    in the middle of a report that starts the ticker (a close that joined a thread not yet
    started ended `restore --wait` with a RuntimeError instead of the interrupt message)."""
    import threading

    for _ in range(200):
        display = ProgressDisplay(io.StringIO(), interval=3600.0, tty=False)
        reporter = threading.Thread(target=display, args=(_progress(60),))
        reporter.start()
        display.close()
        reporter.join()
        display.close()  # idempotent
        assert display._ticker is None or not display._ticker.is_alive()
