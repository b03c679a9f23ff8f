"""Restore progress for people: a live bar on a terminal, periodic log lines otherwise."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivefs.restore.engine import RestoreProgress


def human_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def human_duration(seconds: float) -> str:
    """'45 s', '12 min', '4.5 h'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def expected_phrase(progress: RestoreProgress) -> str:
    """'expected 3.0-5.0 h' / 'expected within 12.0 h' / '' (nothing to wait for)."""
    if progress.expected_s is None:
        return ""
    lo, hi = progress.expected_s
    if lo <= 0:
        return f"expected within {human_duration(hi)}"
    return f"expected {human_duration(lo)}-{human_duration(hi)}"


def _terminal_shape(stream: IO[str]) -> tuple[int, int]:
    """Columns and rows of the terminal ``stream`` writes to; 100 x 24 where it says none
    (a pty nobody sized reports 0 x 0)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        size = shutil.get_terminal_size((100, 24))
    return size.columns or 100, size.lines or 24


class ProgressDisplay:
    """Callable for ``on_progress``: tqdm on a TTY, log lines elsewhere.

    While restores are awaited it keeps showing that time passes: the elapsed
    time, the expected window and when the next status check happens (redrawn
    every second on a terminal; otherwise a log line every ``interval`` seconds,
    and at a check that announces a wait of a second or longer).

    Parameters
    ----------
    stream:
        Where to write (default: standard error).
    interval:
        Seconds between log lines when not on a terminal.
    tty:
        Force terminal (True) or log-line (False) mode; default: ask the stream.
    """

    def __init__(
        self, stream: IO[str] | None = None, *, interval: float = 10.0, tty: bool | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval
        self.tty = self.stream.isatty() if tty is None else tty
        self._bar: Any = None
        self._last_line = 0.0
        self._last_check: float | None = None
        self._progress: RestoreProgress | None = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, progress: RestoreProgress) -> None:
        with self._lock:
            self._progress = progress
            new_check = progress.next_check_at != self._last_check
            self._last_check = progress.next_check_at
            # a check is news when the wait it announces is a second or more; checks a
            # fraction of a second apart (a window polled late) are covered by the line
            # every ``interval``
            wait = progress.next_check_in
            long_wait = new_check and wait is not None and wait >= min(self.interval, 1.0)
            if self.tty:
                self._update_bar(progress)
            elif progress.done or long_wait or time.monotonic() - self._last_line >= self.interval:
                self._write_line(progress)
            if not progress.done and self._ticker is None and not self._stop.is_set():
                ticker = threading.Thread(target=self._tick, name="archivefs-progress", daemon=True)
                ticker.start()
                self._ticker = ticker  # only a started thread: close() may join it at once

    def _tick(self) -> None:
        """Keep the display moving between events (elapsed time, countdown to the check)."""
        while not self._stop.wait(self._until_next_tick()):
            with self._lock:
                progress = self._progress
                if progress is None or progress.done:
                    continue
                progress.tick()
                if self.tty:
                    self._update_bar(progress)
                elif time.monotonic() - self._last_line >= self.interval:
                    self._write_line(progress)

    def _until_next_tick(self) -> float:
        """Seconds to the next redraw (a terminal: 1 s) or the next log line due (every
        ``interval`` s after the last line, whatever wrote it)."""
        if self.tty:
            return 1.0
        return max(0.05, self._last_line + self.interval - time.monotonic())

    def _write_line(self, progress: RestoreProgress) -> None:
        self._last_line = time.monotonic()
        self.stream.write(self.line(progress) + "\n")
        self.stream.flush()

    @staticmethod
    def line(progress: RestoreProgress) -> str:
        extra = [expected_phrase(progress)]
        wait = progress.next_check_in
        if wait is not None:
            extra.append(f"next check in {human_duration(wait)}")
        return (
            f"restore: {progress.ready}/{progress.groups} ready "
            f"({human_bytes(progress.bytes_ready)} of {human_bytes(progress.bytes_total)}), "
            f"{progress.restoring} restoring, {progress.requests_sent} requests sent, "
            f"{human_duration(progress.elapsed_s)} elapsed" + "".join(f"; {e}" for e in extra if e)
        )

    def _update_bar(self, progress: RestoreProgress) -> None:
        if self._bar is None:
            from tqdm import tqdm

            columns, rows = _terminal_shape(self.stream)
            self._bar = tqdm(
                total=progress.groups,
                unit="group",
                desc="restored",
                file=self.stream,
                ncols=max(columns, 60),
                nrows=rows,  # tqdm hides a bar below a height it reads as -1 on a sizeless pty
                bar_format="{desc}: {n_fmt}/{total_fmt} |{bar}| {elapsed} elapsed{postfix}",
            )
        self._bar.n = progress.ready
        postfix = [expected_phrase(progress)]
        wait = progress.next_check_in
        if wait is not None:
            postfix.append(f"next check in {human_duration(wait)}")
        postfix.append(
            f"{progress.requests_sent} requests, "
            f"{human_bytes(progress.bytes_ready)}/{human_bytes(progress.bytes_total)}"
        )
        self._bar.set_postfix_str("; ".join(p for p in postfix if p), refresh=False)
        self._bar.refresh()
        if progress.done:
            self._close_bar()

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def close(self) -> None:
        """Stop redrawing; safe from any thread, also while the engine still reports (a
        Ctrl-C closes it from the main thread while the event loop's thread calls it)."""
        self._stop.set()
        with self._lock:  # a call starting the ticker has finished starting it
            ticker = self._ticker
        if ticker is not None and ticker is not threading.current_thread():
            ticker.join()
        with self._lock:
            self._close_bar()
