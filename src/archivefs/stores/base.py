"""The store contract: what every cold-store adapter offers, and the value types it returns.

The engine and the filesystem use these types; each adapter (``s3.py``, ``azure.py``,
``gcs.py``, ``oracle.py``) returns them, so none of them is defined by one adapter.
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from archivefs.errors import InvalidPathError, ObjectNotFoundError
from archivefs.providers import S3, ProviderSpec

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from archivefs.model import ObjectState, RestoreTier


class RestoreOutcome(StrEnum):
    """What the store answered to a restore request (S3's RestoreObject and its twins)."""

    ACCEPTED = "accepted"  # 202: a new restore was started (paid)
    IN_PROGRESS = "in_progress"  # 409 RestoreAlreadyInProgress: someone already asked
    RESTORED = "restored"  # 200: a restored copy exists (its expiry was extended)


@dataclass(frozen=True, slots=True)
class RangeRead:
    """The bytes of one ranged GET and what the response says about the whole object."""

    data: bytes
    total_size: int | None  # from Content-Range: the size of the object that answered
    etag: str | None


EMPTY_READ = RangeRead(b"", 0, None)  # the read of an empty object: stores refuse its range


class RangeStream(Protocol):
    """One ranged GET whose body is read as it arrives (:class:`StreamsRanges`).

    ``total_size`` and ``etag`` are what the response's headers say about the
    whole object (``None``: not said); ``length`` is the bytes this response
    carries (``None``: not said).
    """

    total_size: int | None
    etag: str | None
    length: int | None

    async def read(self, amount: int) -> bytes:
        """Up to ``amount`` more bytes of the body (at least one), ``b""`` at its end."""
        ...

    def close(self) -> None:
        """Release the connection (also when the body was not read to its end)."""
        ...


@runtime_checkable
class StreamsRanges(Protocol):
    """An adapter that can hand over a ranged GET once its headers arrived, before its
    body: a download learns the object's size and ETag from its first part's headers and
    starts the other parts while that body still streams."""

    async def stream_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeStream: ...


@dataclass(frozen=True, slots=True)
class Tagged:
    """A small object: its first bytes, its ETag (GCS: generation), its age and size."""

    data: bytes  # at most the ``limit`` asked for
    etag: str
    age: float | None  # seconds since it was written, by the store's clock (None: not said)
    size: int | None = None  # of the whole object (None: not said)

    @property
    def whole(self) -> bool:
        """Whether ``data`` is the whole object."""
        return self.size is None or self.size <= len(self.data)


TAGGED_LIMIT = 64 * 1024  # read_tagged reads at most this much of an object by default


_HTTP_DATE = re.compile(r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT")


def server_age(modified: datetime | str | None, date: str | None) -> float | None:
    """Seconds from an object's ``Last-Modified`` to a response's ``Date``: how old the
    object is by the store's own clock, whatever the clocks of its writer and reader say
    (``None`` when the response does not say both)."""
    if modified is None or not date:
        return None
    first = _HTTP_DATE.search(date)  # a header sent twice arrives joined by ", "
    try:
        now = parsedate_to_datetime(first.group(0) if first else date)
        written = parsedate_to_datetime(modified) if isinstance(modified, str) else modified
    except (TypeError, ValueError):
        return None
    if now.tzinfo is None or written.tzinfo is None:
        return None
    return max(0.0, (now - written).total_seconds())


@dataclass(frozen=True, slots=True)
class Listing:
    """One directory level (or a recursive listing): files with states, and subdirectories."""

    files: list[ObjectState]
    directories: list[str]
    # the target's own entries of directories, where its store made them (adlfs's of a
    # folder marker, with its metadata); the rest are plain directory entries
    directory_entries: dict[str, dict[str, Any]] = field(default_factory=dict)


def split_path(path: str, provider: ProviderSpec = S3) -> tuple[str, str]:
    """Split ``bucket/key`` (no protocol) into ``provider``'s bucket (Azure: container) and
    the object's name.

    The bucket part is kept as written (Oracle's ``bucket@namespace`` too), so states
    carry the caller's own path form; an empty one, or a bare ``@namespace`` where the
    provider takes one, names no bucket.
    """
    path = path.lstrip("/")
    bucket, _, key = path.partition("/")
    if not bucket or (provider.bucket_namespace and bucket.startswith("@")):
        forms = [f"'{form}'" for form in provider.path_forms]
        raise InvalidPathError(
            f"the path names no {provider.container_word}.",
            path=path or "''",
            fix=f"use the form {', '.join(forms[:-1])} or {forms[-1]}.",
        )
    return bucket, key


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

    provider: ProviderSpec  # whose path form the adapter's paths are in (``split_path``)
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
            bucket, key = split_path(path, self.provider)
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
