"""The catalogs a filesystem sees: found per bucket through its registry, each loaded once.

One GET per bucket (``bucket/.archivefs/catalogs.json``; absent means no
catalogs) and two per catalog that a path asked about lies in or above
(pointer and file); after that, listing and planning inside a catalog root ask
the cold store nothing.
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
    """Lazy, cached access to the catalogs in the buckets a filesystem touches.

    The registry is read once per bucket; a catalog is loaded only when a path
    at or below its root (or a listing above it) is asked about.
    """

    def __init__(self, fetch: Callable[[str], Awaitable[bytes]]) -> None:
        self.fetch = fetch  # one GET of a whole small object; FileNotFoundError if absent
        self._registry: dict[str, list[str]] = {}  # bucket -> roots, longest first
        self._loaded: dict[str, Catalog] = {}  # root -> catalog
        self._lock = asyncio.Lock()

    async def _cat(self, path: str) -> bytes:
        return await self.fetch(path)

    async def roots(self, bucket: str) -> list[str]:
        """The catalog roots registered in ``bucket`` (one GET, on first use)."""
        if bucket not in self._registry:
            async with self._lock:
                if bucket not in self._registry:
                    self._registry[bucket] = await self._read_registry(bucket)
        return self._registry[bucket]

    async def catalogs(self, bucket: str) -> list[tuple[str, Catalog]]:
        """Every ``(root, catalog)`` pair registered in ``bucket`` (each loaded on first use)."""
        return [(root, await self._catalog(root)) for root in await self.roots(bucket)]

    async def under(self, path: str) -> list[tuple[str, Catalog]]:
        """The catalogs whose roots lie below ``path`` (all of the bucket's for a bucket)."""
        bucket, _, key = path.strip("/").partition("/")
        prefix = path.strip("/") + "/"
        return [
            (root, await self._catalog(root))
            for root in await self.roots(bucket)
            if not key or root.startswith(prefix)
        ]

    async def _read_registry(self, bucket: str) -> list[str]:
        registry_path = layout.registry_path(bucket)
        try:
            registry = json.loads(await self._cat(registry_path))
        except (FileNotFoundError, PermissionError):
            return []
        except ValueError as error:
            raise CatalogError(
                f"the catalog registry is not valid JSON ({error}).",
                path=registry_path,
                fix="check that --endpoint-url / endpoint_url points at the S3 service that "
                "holds this bucket (another server answers with something else); if it does, "
                "rewrite the registry with `archivefs catalog rebuild` on each catalog root.",
            ) from error
        roots = registry.get("roots", []) if isinstance(registry, dict) else []
        return sorted((str(r) for r in roots), key=len, reverse=True)

    async def _catalog(self, root: str) -> Catalog:
        if root not in self._loaded:
            async with self._lock:
                if root not in self._loaded:
                    self._loaded[root] = await self._load(root)
        return self._loaded[root]

    async def _load(self, root: str) -> Catalog:
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
        return Catalog.from_pointer(pointer, data, directory)

    def invalidate(self, bucket: str | None = None) -> None:
        if bucket is None:
            self._registry.clear()
            self._loaded.clear()
        else:
            for root in self._registry.pop(bucket, []):
                self._loaded.pop(root, None)

    async def root_for(self, path: str) -> tuple[str, Catalog] | None:
        """The catalog whose root contains ``path`` (or is it); loads only that one."""
        bucket = path.split("/", 1)[0]
        for root in await self.roots(bucket):
            if path == root or path.startswith(root + "/"):
                return root, await self._catalog(root)
        return None

    async def member(self, path: str) -> MemberInfo | None:
        found = await self.root_for(path)
        return None if found is None else found[1].lookup(path)
