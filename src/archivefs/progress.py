"""Restore progress for people: a live bar on a terminal, periodic log lines otherwise."""

from __future__ import annotations

import shutil
import sys
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


class ProgressDisplay:
    """Callable for ``on_progress``: tqdm on a TTY, a line every ``interval`` s elsewhere.

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

    def __call__(self, progress: RestoreProgress) -> None:
        if self.tty:
            self._update_bar(progress)
        elif progress.done or time.monotonic() - self._last_line >= self.interval:
            self._last_line = time.monotonic()
            self.stream.write(self.line(progress) + "\n")
            self.stream.flush()

    @staticmethod
    def line(progress: RestoreProgress) -> str:
        return (
            f"restore: {progress.ready}/{progress.groups} ready "
            f"({human_bytes(progress.bytes_ready)} of {human_bytes(progress.bytes_total)}), "
            f"{progress.restoring} restoring, {progress.requests_sent} requests sent, "
            f"{progress.elapsed_s:.0f} s"
        )

    def _update_bar(self, progress: RestoreProgress) -> None:
        if self._bar is None:
            from tqdm import tqdm

            columns = shutil.get_terminal_size((100, 24)).columns or 100  # a fresh pty says 0
            self._bar = tqdm(
                total=progress.groups,
                unit="group",
                desc="restored",
                file=self.stream,
                ncols=max(columns, 60),
            )
        self._bar.n = progress.ready
        self._bar.set_postfix(
            restoring=progress.restoring,
            requests=progress.requests_sent,
            bytes=f"{human_bytes(progress.bytes_ready)}/{human_bytes(progress.bytes_total)}",
            refresh=False,
        )
        self._bar.refresh()
        if progress.done:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
