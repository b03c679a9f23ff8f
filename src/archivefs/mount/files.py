"""The filesystem's file objects behind a mount's opens, shared by the opens of one version.

Programs often open a file more than once (``ncdump`` opens a netCDF file twice, HDF5
tools reopen, ``tar`` stats then opens): each open of the same object version (same path
and identity) reads through one file object, and the last few closed ones stay open, so
the blocks the first open fetched (``archivefs.readahead``'s cache) are not fetched again.
A kept file's readahead still in flight is cancelled at its last close (what arrived stays).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from archivefs.readahead import ReadaheadCache

if TYPE_CHECKING:
    from collections.abc import Callable

KEEP_CLOSED = 4  # file objects kept after their last close (each holds its read cache)


class SharedFile:
    """One file object, read by one thread at a time, and how many opens use it."""

    def __init__(self, file: Any, key: tuple[str, str] | None) -> None:
        self.file = file
        self.key = key
        self.lock = threading.Lock()
        self.users = 0

    def read(self, size: int, offset: int) -> bytes:
        with self.lock:
            self.file.seek(offset)
            data: bytes = self.file.read(size)
            return data


class OpenFiles:
    """File objects by ``(path, identity)``; the ``keep`` most recently closed stay open."""

    def __init__(self, keep: int = KEEP_CLOSED) -> None:
        self.keep = keep
        self._open: dict[tuple[str, str], SharedFile] = {}
        self._closed: OrderedDict[tuple[str, str], SharedFile] = OrderedDict()
        self._lock = threading.Lock()

    def acquire(self, key: tuple[str, str] | None, make: Callable[[], Any]) -> SharedFile:
        """The file object of ``key`` (made by ``make()`` if none is open or kept; never
        shared when ``key`` is None: a version nothing names)."""
        with self._lock:
            shared = None
            if key is not None:
                shared = self._open.get(key) or self._closed.pop(key, None)
            if shared is None:
                shared = SharedFile(make(), key)
            if key is not None:
                self._open[key] = shared
            shared.users += 1
            return shared

    def release(self, shared: SharedFile) -> None:
        """One open of ``shared`` closed; keep it for a reopen, closing the oldest kept."""
        closing = []
        with self._lock:
            shared.users -= 1
            if shared.users > 0:
                return
            if shared.key is None:
                closing.append(shared)
            else:
                self._open.pop(shared.key, None)
                self._closed[shared.key] = shared
                while len(self._closed) > self.keep:
                    closing.append(self._closed.popitem(last=False)[1])
        for old in closing:
            old.file.close()
        if shared.key is not None and shared not in closing:
            with shared.lock:  # no read is under way: they hold the lock
                if shared.users == 0:  # not reopened meanwhile
                    _settle(shared.file)


def _settle(file: Any) -> None:
    """A kept file's readahead in flight: what arrived is kept for a reopen, the rest
    cancelled (no reader is left to take it)."""
    cache = getattr(file, "cache", None)
    if isinstance(cache, ReadaheadCache):
        cache.settle()
