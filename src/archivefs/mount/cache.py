"""The mount's local disk cache tier: whole files, LRU, keyed by the object's identity.

A file a program read whole (every byte from 0 to its size, in any order) is kept under
``DIR`` as soon as its last missing byte is delivered, not at its close: the kernel sends
the close (FUSE's release) after the program has exited, so ``cat f; cat f`` would
otherwise open ``f`` again before its copy is there. The next open of the same object
with the same identity (its ETag, or for a bundle member its bundle, CRC-32 and size)
reads the local copy and sends no GET. A changed object has a new identity in its next
listing, so its stale copy is never read (and ages out). The cache survives remounts (its
files are its index); when it holds more than ``max_bytes``, the least recently used
files go first.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("archivefs.mount")

PARTIAL = ".partial-"  # a copy being written (removed at start: a killed mount's leftovers)


def identity(entry: dict[str, Any]) -> str | None:
    """What names this version of the object (None: nothing does; not cached)."""
    if entry.get("bundle"):
        return f"member:{entry['bundle']}:{entry.get('crc32')}:{entry.get('size')}"
    etag = entry.get("ETag") or entry.get("etag")
    return f"etag:{etag}:{entry.get('size')}" if etag else None


class Filling:
    """The bytes one open delivered, written at their offsets into a partial copy, which
    becomes the cached file once they cover the whole file (dropped at close if not)."""

    def __init__(self, cache: DiskCache, name: str, size: int) -> None:
        self.cache, self.name, self.size = cache, name, size
        fd, self.partial = tempfile.mkstemp(prefix=PARTIAL, dir=cache.root)
        self.fd: int | None = fd
        self.covered: list[tuple[int, int]] = []  # merged [start, end) intervals
        self.kept = False  # the copy is in place: later reads record nothing
        self._lock = threading.Lock()

    def wrote(self, offset: int, data: bytes) -> None:
        """Record ``data`` read at ``offset``. FUSE threads call this at once: each writes
        its own bytes unlocked; the record of what is covered, and the copy kept once it
        covers the file, are locked (covered means written)."""
        if self.fd is None or self.kept or not data:
            return
        os.pwrite(self.fd, data, offset)  # the handle's reads end before its close
        with self._lock:
            if self.kept:
                return
            start, end = offset, offset + len(data)
            merged = []
            for a, b in self.covered:
                if b < start or a > end:
                    merged.append((a, b))
                else:
                    start, end = min(a, start), max(b, end)
            merged.append((start, end))
            self.covered = sorted(merged)
            if self.covered == [(0, self.size)]:
                self._keep()

    def _keep(self) -> None:
        """Put the copy in place if the cache can hold it (its descriptor closes later)."""
        if self.size <= self.cache.max_bytes:
            self.cache.keep(self.partial, self.name, self.size)
            self.kept = True

    def close(self) -> None:
        with self._lock:
            if self.fd is None:
                return
            if self.size == 0 and not self.kept:
                self._keep()
            os.close(self.fd)
            self.fd = None
            if not self.kept:
                os.unlink(self.partial)


class DiskCache:
    """Whole-file copies under ``root``, at most ``max_bytes`` in all (LRU)."""

    def __init__(self, root: str | os.PathLike[str], max_bytes: int, scope: str) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.scope = scope  # the store (protocol and endpoint): one cache may serve several
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        for leftover in self.root.glob(PARTIAL + "*"):
            leftover.unlink(missing_ok=True)

    def name(self, path: str, entry: dict[str, Any]) -> str | None:
        """The cache file name of ``path`` in the version ``entry`` lists (None: uncached)."""
        version = identity(entry)
        if version is None:
            return None
        return hashlib.sha256(f"{self.scope}\0{path}\0{version}".encode()).hexdigest()

    def open(self, name: str) -> int | None:
        """A read-only descriptor of the cached copy ``name`` (None: not cached); a hit
        makes it the most recently used."""
        path = self.root / name
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        os.utime(path)
        return fd

    def filling(self, name: str, size: int) -> Filling:
        return Filling(self, name, size)

    def keep(self, partial: str, name: str, size: int) -> None:
        """Make ``partial`` the copy ``name``, then evict the least recently used copies
        until the cache fits ``max_bytes``."""
        with self._lock:
            os.replace(partial, self.root / name)
            copies = []
            for item in self.root.iterdir():
                if item.name.startswith(PARTIAL):
                    continue
                try:
                    info = item.stat()
                except FileNotFoundError:
                    continue
                copies.append((info.st_mtime, info.st_size, item))
            total = sum(size for _, size, _ in copies)
            for _, size_of, item in sorted(copies, key=lambda c: c[0]):
                if total <= self.max_bytes:
                    break
                if item.name == name:
                    continue
                item.unlink(missing_ok=True)
                total -= size_of
                log.info("cache: evicted %s (%d bytes)", item.name, size_of)
