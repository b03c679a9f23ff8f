"""Opens that arrive together, submitted together: one call for all paths of a window."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

DEFAULT_BATCH_WINDOW = 0.2  # seconds an open waits for others to join its batch


class _Batch:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self.done = threading.Event()
        self.error: BaseException | None = None


class Batcher:
    """Collects paths for ``window`` seconds after the first, then calls ``submit`` once
    with all of them (in arrival order, no duplicates); each caller of :meth:`join`
    blocks until that call returned and gets its error (None when it succeeded)."""

    def __init__(self, submit: Callable[[list[str]], None], window: float) -> None:
        self.submit = submit
        self.window = window
        self._open: _Batch | None = None
        self._lock = threading.Lock()

    def join(self, path: str) -> BaseException | None:
        """Add ``path`` to the batch being collected (starting one if none is) and wait
        for that batch's submission."""
        with self._lock:
            batch = self._open
            if batch is None:
                batch = self._open = _Batch()
                threading.Thread(target=self._run, args=(batch,), daemon=True).start()
            if path not in batch.paths:
                batch.paths.append(path)
        batch.done.wait()
        return batch.error

    def _run(self, batch: _Batch) -> None:
        threading.Event().wait(self.window)
        with self._lock:
            self._open = None  # later opens start the next batch
        try:
            self.submit(list(batch.paths))
        except BaseException as error:  # every joiner hears it, as its own open's outcome
            batch.error = error
        finally:
            batch.done.set()
