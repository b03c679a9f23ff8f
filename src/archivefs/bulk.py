"""Building many small objects at once: millions of info dicts, plan rows, bundle groups."""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


_pause_lock = threading.Lock()
_pauses = 0  # gc_paused blocks now running, in every thread
_enabled_before = False  # whether the cyclic GC was on when the first of them began


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while the block runs, in any thread, nesting and overlapping:
    it is on again when the last running block ends, if it was on when the first began.

    Two uses. Building many acyclic objects: each collection that falls due meanwhile
    walks every container the process holds (a catalog's 10^7 paths included), and
    nothing is freed later than it would be. And waiting on another thread while h5py
    holds its global lock (a read h5py asks of a file object, kerchunk's translation):
    a collection in the thread waited on that frees an h5py object (say a dataset a
    notebook left open) needs that lock, and both threads hang (h5py's documentation
    on file-like objects and threads).
    """
    global _pauses, _enabled_before
    with _pause_lock:
        if _pauses == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _enabled_before:
                gc.enable()
