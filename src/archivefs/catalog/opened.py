"""A catalog as a filesystem holds it: the pointer read once, shards fetched as paths need them.

A sharded catalog (pointer format 2) answers a question about a path from the
shards whose ranges meet that path's subtree: ``ls``, ``find``, ``info`` or a
plan under a directory fetch only those shards (one GET each, at most
``FETCH_CONCURRENCY`` at once, each verified against the pointer's checksum
and cached), never the whole catalog. A format-1 catalog is one file, read
whole when its pointer is.

If a shard is gone when it is fetched (the catalog was saved again since the
pointer was read, and the save removed the shards only the old pointer named)
the pointer is read again and, if it changed, the catalog is re-opened from it
once; the answer is then the new catalog's.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from archivefs.catalog import shards
from archivefs.catalog.index import (
    MAX_FILE_BYTES,
    MAX_POINTER_BYTES,
    POINTER,
    Catalog,
    parse_pointer,
)
from archivefs.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


FETCH_CONCURRENCY = 32  # shard GETs in flight at once (a whole 10^6 catalog is ~650)


class OpenCatalog:
    """One catalog root's catalog, loaded shard by shard on demand."""

    def __init__(
        self,
        directory: str,
        pointer: dict[str, Any],
        fetch: Callable[[str, int], Awaitable[bytes]],
        whole: Catalog | None = None,
    ) -> None:
        self.directory = directory.rstrip("/")
        self.fetch = fetch
        self._lock = asyncio.Lock()
        self._reset(pointer, whole)

    def _reset(self, pointer: dict[str, Any], whole: Catalog | None) -> None:
        self.pointer = pointer
        self._whole = whole
        self._entries: list[dict[str, Any]] = list(pointer.get("shards", []))
        self._firsts = [e["first"] for e in self._entries]
        self._lasts = [e["last"] for e in self._entries]
        self._shards: dict[int, Catalog] = {}
        self._joined: dict[tuple[int, ...], Catalog] = {}

    @classmethod
    async def from_pointer(
        cls, directory: str, pointer: dict[str, Any], fetch: Callable[[str, int], Awaitable[bytes]]
    ) -> OpenCatalog:
        """Open from a parsed pointer (a format-1 catalog's one file is read now)."""
        return cls(directory, pointer, fetch, await _legacy(directory, pointer, fetch))

    async def covering(self, path: str) -> Catalog:
        """A catalog holding every member at or below ``path`` (and the plain objects)."""
        if self._whole is not None:
            return self._whole
        found = shards.covering(self._firsts, self._lasts, path)
        if len(found) == len(self._entries):
            return await self.whole()
        return await self._join(tuple(found))

    async def whole(self) -> Catalog:
        """The whole catalog (every shard fetched once)."""
        if self._whole is None:
            self._whole = await self._join(tuple(range(len(self._entries))))
            self._shards.clear()  # the whole catalog answers everything from now on
            self._joined.clear()
        return self._whole

    async def _join(self, wanted: tuple[int, ...]) -> Catalog:
        async with self._lock:
            for attempt in (1, 2):
                try:
                    return await self._join_locked(wanted)
                except FileNotFoundError as error:
                    pointer = await _pointer(self.directory, self.fetch)
                    if attempt == 2 or pointer == self.pointer:
                        raise CatalogError(
                            "a shard the catalog pointer names does not exist.",
                            path=f"{self.directory}/{error.args[0] if error.args else ''}",
                            fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
                        ) from error
                    # saved again since the pointer was read: answer from the new catalog
                    self._reset(pointer, await _legacy(self.directory, pointer, self.fetch))
                    if self._whole is not None:
                        return self._whole
                    wanted = tuple(range(len(self._entries)))
            raise AssertionError("unreachable")

    async def _join_locked(self, wanted: tuple[int, ...]) -> Catalog:
        if wanted in self._joined:
            return self._joined[wanted]
        missing = [i for i in wanted if i not in self._shards]
        gate = asyncio.Semaphore(FETCH_CONCURRENCY)

        async def fetch(index: int) -> bytes:
            async with gate:
                return await self._fetch_shard(index)

        results = await asyncio.gather(*(fetch(i) for i in missing), return_exceptions=True)
        for result in results:  # every fetch has ended: raise the first failure
            if isinstance(result, BaseException):
                raise result
        datas = [r for r in results if isinstance(r, bytes)]
        for i, data in zip(missing, datas, strict=True):
            self._shards[i] = Catalog.from_shard(self.pointer, i, data, self.directory)
        parts = [self._shards[i] for i in wanted]
        joined = Catalog.join(parts, self.pointer, self.directory)
        self._joined[wanted] = joined
        return joined

    async def _fetch_shard(self, index: int) -> bytes:
        name = self._entries[index]["file"]
        try:
            # refused past the bound before it is inflated or parsed
            return await self.fetch(f"{self.directory}/{name}", MAX_FILE_BYTES)
        except FileNotFoundError as error:
            raise FileNotFoundError(name) from error


async def _pointer(directory: str, fetch: Callable[[str, int], Awaitable[bytes]]) -> dict[str, Any]:
    path = f"{directory.rstrip('/')}/{POINTER}"
    return parse_pointer(await fetch(path, MAX_POINTER_BYTES), path)


async def _legacy(
    directory: str, pointer: dict[str, Any], fetch: Callable[[str, int], Awaitable[bytes]]
) -> Catalog | None:
    """A format-1 catalog, read whole (its one file); ``None`` for a sharded one."""
    if "shards" in pointer:
        return None
    data = await fetch(f"{directory.rstrip('/')}/{pointer['file']}", MAX_FILE_BYTES)
    return Catalog.from_pointer(pointer, data, directory)
