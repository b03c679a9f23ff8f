"""What every cold-store adapter offers: the contract the engine and the filesystem use."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Protocol

from archivefs.errors import ObjectNotFoundError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from archivefs.model import ObjectState, RestoreTier
    from archivefs.stores.s3 import Listing, RangeRead, RestoreOutcome, Tagged


class ColdStore(Protocol):
    """States in bulk, restore requests, reads of ranges (``S3Store``, ``AzureStore``)."""

    fs: Any

    @property
    def namespace(self) -> str:
        """The journal's name for this store (provider, account or tenancy, endpoint);
        formed by the provider's ``journal_namespace``, never holding a secret."""
        ...

    async def head(self, path: str) -> ObjectState: ...

    async def probe(self, paths: Iterable[str]) -> dict[str, ObjectState | None]: ...

    async def list(self, path: str, *, recursive: bool = False) -> Listing: ...

    async def is_directory(self, path: str) -> bool: ...

    async def restore(
        self,
        state: ObjectState,
        *,
        tier: RestoreTier,
        days: int | None,
        extra: dict[str, Any] | None = None,
    ) -> RestoreOutcome: ...

    async def get_bytes(self, path: str) -> bytes: ...

    async def get_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeRead: ...

    async def read_tagged(self, path: str, *, limit: int = ...) -> Tagged | None: ...

    async def create_exclusive(self, path: str, body: bytes) -> bool: ...

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool: ...


class BulkProbe:
    """``probe`` for adapters whose listing answers many objects per request.

    One object of a bucket: one HEAD (or its provider's twin). Several: the
    adapter's ``_probe_listing`` of that bucket, which pages under their common
    prefix. Keys are listed in chunks of :attr:`probe_page` (one listing page's
    worth when they lie together, as a catalog's bundles do), up to
    :attr:`probe_fanout` chunks at once: 10^7 bundled members are 9,766 bundles,
    10 pages that no longer wait for each other. Where other objects lie between
    the keys, a chunk's last page may reach into the next chunk's keys: at most
    one request more per chunk than one sequence of pages would send.
    """

    split_path: Callable[[str], tuple[str, str]]  # the adapter's "bucket/key" splitter
    probe_page: int = 1000  # keys per chunk: one listing page of the provider
    probe_fanout: int = 8  # chunks listed at once

    async def head(self, path: str) -> ObjectState:
        raise NotImplementedError

    async def _probe_listing(
        self, bucket: str, keys: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        raise NotImplementedError

    async def probe(self, paths: Iterable[str]) -> dict[str, ObjectState | None]:
        """States of many objects at once; ``None`` for objects that do not exist."""
        by_bucket: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            bucket, key = self.split_path(path)
            by_bucket[bucket].append(key)
        results: dict[str, ObjectState | None] = {}
        for bucket, keys in by_bucket.items():
            unique = sorted(set(keys))
            if len(unique) == 1:
                results.update(await self._probe_heads(bucket, unique))
            else:
                results.update(await self._probe_chunks(bucket, unique))
        return results

    async def _probe_chunks(
        self, bucket: str, keys: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        """``_probe_listing`` of sorted ``keys`` in chunks, :attr:`probe_fanout` at a time."""
        size = self.probe_page
        if len(keys) <= size:
            return await self._probe_listing(bucket, keys)
        limit = asyncio.Semaphore(self.probe_fanout)

        async def chunk(start: int) -> dict[str, ObjectState | None]:
            async with limit:
                return await self._probe_listing(bucket, keys[start : start + size])

        results: dict[str, ObjectState | None] = {}
        for part in await asyncio.gather(*(chunk(i) for i in range(0, len(keys), size))):
            results.update(part)
        return results

    async def _probe_heads(self, bucket: str, keys: Sequence[str]) -> dict[str, ObjectState | None]:
        async def one(key: str) -> tuple[str, ObjectState | None]:
            path = f"{bucket}/{key}"
            try:
                return path, await self.head(path)
            except ObjectNotFoundError:
                return path, None

        return dict(await asyncio.gather(*(one(k) for k in keys)))
