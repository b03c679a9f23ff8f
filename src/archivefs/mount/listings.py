"""The listings a mount answers ``stat`` and ``readdir`` from: one ``ls`` per directory.

A directory is listed whole (``fs.ls(detail=True)``: bulk listing pages, or the catalog
for bundle members) and kept for ``ttl`` seconds; ``stat`` of any name in it is answered
from that listing, so a tree is never described one HEAD per file. After ``ttl`` the next
look lists the directory again (``refresh=True``: past the filesystem's listing cache).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem

DEFAULT_LISTING_TTL = 60.0  # seconds a directory's listing answers stat and readdir


@dataclass(frozen=True)
class Listed:
    """One directory's listing: its entries by name, and when it was made."""

    entries: dict[str, dict[str, Any]]
    at: float


class Listings:
    """Directory listings of the mounted tree, by mount path (``/`` is ``root``)."""

    def __init__(
        self,
        fs: ArchiveFileSystem,
        root: str,
        ttl: float = DEFAULT_LISTING_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fs = fs
        self.root = root.rstrip("/")
        self.ttl = ttl
        self.clock = clock
        self._listed: dict[str, Listed] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def target(self, path: str) -> str:
        """The filesystem path of mount path ``path`` (``/a/b`` -> ``root/a/b``)."""
        inner = path.strip("/")
        return f"{self.root}/{inner}" if inner else self.root

    def entries(self, directory: str) -> dict[str, dict[str, Any]]:
        """The entries of mount directory ``directory`` by name (listed at most once per
        ``ttl``; concurrent looks at one directory wait for one listing)."""
        key = directory.rstrip("/") or "/"
        listed = self._listed.get(key)
        if listed is not None and self.clock() - listed.at < self.ttl:
            return listed.entries
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            listed = self._listed.get(key)
            if listed is not None and self.clock() - listed.at < self.ttl:
                return listed.entries
            target = self.target(key)
            # our TTL decides when to look again: refresh the listing (not the catalogs,
            # which the filesystem's catalog_ttl keeps fresh)
            found = self.fs.ls(target, detail=True, refresh=True)
            entries = {}
            for entry in found:
                name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
                if name and entry["name"].rstrip("/") != target:
                    entries[name] = entry
            self._listed[key] = Listed(entries, self.clock())
            return entries

    def entry(self, path: str) -> dict[str, Any] | None:
        """The entry of mount path ``path`` from its directory's listing (None: absent);
        the root is a directory."""
        inner = path.strip("/")
        if not inner:
            return {"name": self.root, "size": 0, "type": "directory"}
        parent, _, name = inner.rpartition("/")
        try:
            return self.entries("/" + parent).get(name)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def forget(self, directory: str | None = None) -> None:
        """List ``directory`` (every directory: None) again at the next look."""
        if directory is None:
            self._listed.clear()
        else:
            self._listed.pop(directory.rstrip("/") or "/", None)
