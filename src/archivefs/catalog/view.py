"""The catalogs a filesystem sees: found per bucket through its registry, loaded once.

One GET per bucket (``bucket/.archivefs/catalogs.json``; absent means no
catalogs) and two per catalog (pointer and file); after that, listing and
planning inside a catalog root ask the cold store nothing.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from archivefs.catalog import layout
from archivefs.catalog.index import POINTER, Catalog, parse_pointer
from archivefs.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from archivefs.catalog.index import MemberInfo


class CatalogView:
    """Lazy, cached access to every catalog in the buckets a filesystem touches."""

    def __init__(self, fetch: Callable[[str], Awaitable[bytes]]) -> None:
        self.fetch = fetch  # one GET of a whole small object; FileNotFoundError if absent
        self._roots: dict[str, list[tuple[str, Catalog]]] = {}
        self._lock = asyncio.Lock()

    async def _cat(self, path: str) -> bytes:
        return await self.fetch(path)

    async def catalogs(self, bucket: str) -> list[tuple[str, Catalog]]:
        """``(root, catalog)`` pairs registered in ``bucket`` (loaded on first use)."""
        if bucket in self._roots:
            return self._roots[bucket]
        async with self._lock:
            if bucket not in self._roots:
                self._roots[bucket] = await self._load(bucket)
        return self._roots[bucket]

    async def _load(self, bucket: str) -> list[tuple[str, Catalog]]:
        try:
            registry = json.loads(await self._cat(layout.registry_path(bucket)))
        except (FileNotFoundError, PermissionError):
            return []
        except ValueError as error:
            raise CatalogError(
                f"the catalog registry is not valid JSON ({error}).",
                path=layout.registry_path(bucket),
                fix="delete it and rebuild the catalogs with `archivefs catalog rebuild`.",
            ) from error
        out = []
        for root in sorted(registry.get("roots", []), key=len, reverse=True):
            directory = layout.catalog_dir(root)
            pointer_path = f"{directory}/{POINTER}"
            try:
                pointer = parse_pointer(await self._cat(pointer_path), pointer_path)
                data = await self._cat(f"{directory}/{pointer.get('file')}")
            except FileNotFoundError as error:
                raise CatalogError(
                    "a registered catalog is missing.",
                    path=pointer_path,
                    fix="rebuild it with `archivefs catalog rebuild`.",
                ) from error
            out.append((root, Catalog.from_pointer(pointer, data, directory)))
        return out

    def invalidate(self, bucket: str | None = None) -> None:
        if bucket is None:
            self._roots.clear()
        else:
            self._roots.pop(bucket, None)

    async def root_for(self, path: str) -> tuple[str, Catalog] | None:
        """The catalog whose root contains ``path`` (or is it)."""
        bucket = path.split("/", 1)[0]
        for root, catalog in await self.catalogs(bucket):
            if path == root or path.startswith(root + "/"):
                return root, catalog
        return None

    async def member(self, path: str) -> MemberInfo | None:
        found = await self.root_for(path)
        return None if found is None else found[1].lookup(path)
