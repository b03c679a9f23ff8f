"""Downloads into local files: bundle members coalesced, large objects in ranged parts.

:class:`Transfers` is the one implementation behind every path that writes
objects or members to local files (``get``, ``prefetch(to=DIR)``, promotion
through a local file):

- members up to :data:`~archivefs.member_reads.BLOCK` bytes are fetched
  together with their neighbours (one ranged GET per block of adjacent
  members, :mod:`archivefs.member_reads`), each block's members written as it
  arrives, each checked as a single-member read is;
- a plain object, or a larger member, is read in ranged parts of
  ``part_size`` bytes, ``part_concurrency`` at a time across all of the
  filesystem's downloads, each written at its offset as it arrives
  (:meth:`Transfers.download_object`, :meth:`Transfers.download_member`). An
  object's first part's response headers say its size and ETag, and the other
  parts start then (no HEAD, no waiting for the first part's body, with a store
  that streams ranges: :class:`~archivefs.stores.base.StreamsRanges`); every
  later part must come from that same object (``If-Match``) and have exactly
  its length. Streamed bodies are written :data:`CHUNK` bytes at a time, so
  memory holds about ``part_concurrency`` chunks and connection buffers (a
  member's parts, and other stores' parts, are held whole: at most
  ``part_concurrency`` parts), whatever the sizes and the file count. A
  member's parts all start at once (the catalog says its length). A member is read from
  a promoted copy of its bundle in the hot store if there is one, else from
  the bundle the catalog recorded, and its CRC-32 checked once written.

Each file is written under a partial name (:func:`partial_path`) and renamed
into place once complete and checked, so a failed or killed download never
leaves a partial file under the final name.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsspec.callbacks import DEFAULT_CALLBACK

from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.access.reads import Reads
from archivefs.errors import ArchiveError, ChecksumMismatchError, InvalidOptionsError
from archivefs.member_reads import BLOCK, Block, Part, plan_blocks
from archivefs.readahead import MAX_PART, PARTS
from archivefs.stores.base import StreamsRanges
from archivefs.stores.translate import (
    is_archived_error,
    is_precondition_failed,
    raise_translated,
    s3_error_code,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from fsspec.callbacks import Callback

    from archivefs.catalog.view import Location
    from archivefs.model import ObjectState
    from archivefs.stores.base import RangeStream

PARTIAL_MARK = ".archivefs-partial-"
PART_SIZE = MAX_PART
"""Bytes per ranged GET of a large download (the AWS CLI's and boto3's default chunk; a
streaming read's largest part, one value for both)."""
PART_CONCURRENCY = PARTS
"""Ranged GETs in flight per filesystem (the AWS CLI's and boto3's default per download;
a streaming read's parts in flight, one value for both)."""
CHUNK = 2**20
"""A part's body is written this many bytes at a time at most, as it arrives."""
_CRC_PIECE = 2**20  # a written member is read back this many bytes at a time for its CRC


def part_options(part_size: int, part_concurrency: int) -> tuple[int, int]:
    """Download part size and concurrency, checked: both positive whole numbers."""
    for name, value in (("part_size", part_size), ("part_concurrency", part_concurrency)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidOptionsError(
                f"{name}={value!r} is not a positive whole number.",
                fix=f"pass {name} as an int >= 1 (defaults: part_size={PART_SIZE}, "
                f"part_concurrency={PART_CONCURRENCY}).",
            )
    return part_size, part_concurrency


def partial_path(target: str | os.PathLike[str]) -> Path:
    """Where ``target`` is written until it is complete and checked:
    ``<name>.archivefs-partial-<pid>-<hex>`` beside it."""
    target = Path(target)
    return target.with_name(f"{target.name}{PARTIAL_MARK}{os.getpid()}-{uuid.uuid4().hex[:12]}")


class Transfers:
    """One filesystem's downloads into local files; ``part_size`` and ``part_concurrency``
    as checked by :func:`part_options`."""

    def __init__(
        self,
        parts: Parts,
        policy: ReadPolicy,
        reads: Reads,
        *,
        part_size: int = PART_SIZE,
        part_concurrency: int = PART_CONCURRENCY,
    ) -> None:
        self.parts = parts
        self.policy = policy
        self.reads = reads
        self.part_size, self.part_concurrency = part_options(part_size, part_concurrency)
        # on its running loop: parts in flight across all of this filesystem's downloads
        self._limit: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def _parts_limit(self) -> asyncio.Semaphore:
        """The bound on ranged parts in flight (``part_concurrency``), shared by every
        download at once: memory holds that many parts, whatever the file count."""
        loop = asyncio.get_running_loop()
        if self._limit is None or self._limit[0] is not loop:
            self._limit = (loop, asyncio.Semaphore(self.part_concurrency))
        return self._limit[1]

    async def write_members(
        self,
        items: Sequence[tuple[Location, str | os.PathLike[str]]],
        callback: Callback | None = None,
    ) -> int:
        """Write each bundle member ``(location, local path)`` to its path; return the bytes
        written.

        Members up to :data:`~archivefs.member_reads.BLOCK` bytes are fetched with their
        neighbours, one ranged GET per block of adjacent members, and written as each
        block arrives; blocks and larger members' parts share the ``part_concurrency``
        bound, so memory holds that many blocks or parts. Every member is written (or
        fails) on its own: the first error is raised once every other member is
        written. ``callback`` (fsspec's) is told the bytes of large members as they
        arrive.
        """
        small = [(where, target) for where, target in items if _length(where) <= BLOCK]
        large = [(where, target) for where, target in items if _length(where) > BLOCK]
        limit = self._parts_limit()
        failed: list[BaseException] = []
        written = 0

        async def block(block: Block) -> None:
            nonlocal written
            async with limit:  # a block and its members are held until written, no longer
                got = await self.reads.cat_members(
                    [(part.index, small[part.index][0], None, None) for part in block.parts]
                )
                for part in block.parts:
                    data = got[part.index]
                    if isinstance(data, BaseException):
                        failed.append(data)
                        continue
                    _write_whole(small[part.index][1], data)
                    written += len(data)

        async def member(where: Location, target: str | os.PathLike[str]) -> None:
            nonlocal written
            try:
                # awaited first, then added: `written += await ...` would read the total
                # before the download and so lose what concurrent members added meanwhile
                length = await self.download_member(where, target, callback)
            except Exception as error:
                failed.append(error)
                return
            written += length

        for where, target in small:
            if _length(where) == 0:
                _write_whole(target, b"")
        blocks = plan_blocks(
            [
                (_bundle(where), Part(i, _offset(where), _offset(where) + _length(where)))
                for i, (where, _) in enumerate(small)
            ]
        )
        await asyncio.gather(
            *(block(b) for b in blocks), *(member(where, target) for where, target in large)
        )
        if failed:
            raise failed[0]
        return written

    async def download_object(
        self,
        path: str,
        target: str | os.PathLike[str],
        callback: Callback = DEFAULT_CALLBACK,
        known: ObjectState | None = None,
    ) -> int:
        """Write the plain object ``path`` to ``target`` in ranged parts; return its size.

        One GET for an object of up to ``part_size`` bytes. ``known``: what a listing or
        HEAD already said of it; with its size and ETag (and a store that streams
        ranges, :class:`~archivefs.stores.base.StreamsRanges`), every part starts at
        once, each pinned to that ETag. Else, or when they turn out stale (the object
        changed, or is archived again), the first part's response headers say the
        object's size and ETag and the other parts start then, while the first part's
        body still arrives (else once the first part is read). Reads go through the
        read policy (an archived object raises, restores or waits).
        """
        limit = self._parts_limit()
        store = self.parts.store

        async def open_part(start: int, end: int, etag: str | None) -> RangeStream:
            async def opened() -> RangeStream:
                if isinstance(store, StreamsRanges):
                    return await store.stream_range(path, start, end, if_match=etag)
                got = await store.get_range(path, start, end, if_match=etag)
                return _Whole(got.data, got.total_size, got.etag)

            stream: RangeStream = await self.policy.guarded(path, opened)
            return stream

        partial = partial_path(target)
        try:
            with open(partial, "xb") as out:
                size = None
                if (
                    isinstance(store, StreamsRanges)
                    and known is not None
                    and known.etag
                    and known.size > self.part_size
                ):
                    size = await self._known_parts(
                        out.fileno(), path, store, (known.size, known.etag), limit, callback
                    )
                if size is None:  # not known, or stale: the first part says size and ETag
                    size = await self._object_parts(out.fileno(), path, open_part, limit,
                                                    callback)  # fmt: skip
            os.replace(partial, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise
        return size

    async def _known_parts(
        self,
        fd: int,
        path: str,
        store: StreamsRanges,
        known: tuple[int, str],
        limit: asyncio.Semaphore,
        callback: Callback,
    ) -> int | None:
        """Write the object ``path`` of the ``known`` size and ETag to ``fd``, every part
        started at once, each pinned to that ETag; its size, or None (nothing written
        that counts, ``fd`` emptied) when the object is no longer that one or reads no
        more (the caller then downloads it as an unknown object, through the read policy).
        """
        size, etag = known

        async def part(start: int, end: int) -> None:
            async with limit:
                try:
                    stream = await store.stream_range(path, start, end, if_match=etag)
                except Exception as error:
                    if is_precondition_failed(error) or is_archived_error(error):
                        raise _Stale from error
                    raise_translated(error, path, action="read")
                try:
                    if stream.total_size not in (None, size):
                        raise _Stale
                    await _drain(stream, fd, start, end, callback, path)
                finally:
                    stream.close()

        callback.set_size(size)
        try:
            await _run_parts(range(0, size, self.part_size), size, self.part_size, part,
                             self.part_concurrency)  # fmt: skip
        except _Stale:
            os.ftruncate(fd, 0)
            callback.absolute_update(0)
            return None
        return size

    async def _object_parts(
        self,
        fd: int,
        path: str,
        open_part: Callable[[int, int, str | None], Awaitable[RangeStream]],
        limit: asyncio.Semaphore,
        callback: Callback,
    ) -> int:
        """Write the object ``path`` to the open file ``fd`` part by part; return its size."""
        part_size = self.part_size
        known: asyncio.Future[tuple[int, str | None]] = asyncio.get_running_loop().create_future()

        async def first() -> None:
            async with limit:
                try:
                    stream = await open_part(0, part_size, None)
                except OSError as error:
                    # archived, restoring, missing or denied: the read policy's error, as it is
                    if isinstance(error, PermissionError | BlockingIOError | FileNotFoundError):
                        raise
                    # S3 refuses a range starting at 0 only for an empty object; others: ask
                    if (
                        s3_error_code(error) != "InvalidRange"
                        and (await self.parts.store.head(path)).size
                    ):
                        raise
                    known.set_result((0, None))  # an empty object: stores refuse its ranges
                    return
                try:
                    if stream.total_size is None and (
                        stream.length is None or stream.length >= part_size
                    ):
                        raise ArchiveError(  # a store that does not say the object's size
                            "a ranged read did not say the object's size, so its remaining "
                            "parts are unknown.",
                            path=path,
                            fix="read it with fs.open() or the store's own client.",
                        )
                    size = stream.total_size if stream.total_size is not None else stream.length
                    assert size is not None
                    callback.set_size(size)
                    known.set_result((size, stream.etag))
                    await _drain(stream, fd, 0, min(part_size, size), callback, path)
                finally:
                    stream.close()

        async def part(start: int, end: int) -> None:
            size, etag = known.result()
            async with limit:
                try:
                    stream = await open_part(start, end, etag)
                except ArchiveError as error:
                    if not is_precondition_failed(error):
                        raise
                    raise _changed(path, start, end, "its ETag changed") from error
                try:
                    if stream.total_size not in (None, size):
                        raise _changed(path, start, end, f"it now has {stream.total_size} bytes")
                    await _drain(stream, fd, start, end, callback, path)
                finally:
                    stream.close()

        head = asyncio.ensure_future(first())
        try:
            either: list[asyncio.Future[Any]] = [head, known]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not known.done():
                await head  # failed before the size was known: its error
            size = known.result()[0]
            await _run_parts(range(part_size, size, part_size), size, part_size, part,
                             self.part_concurrency, head)  # fmt: skip
        except BaseException:
            head.cancel()
            await asyncio.gather(head, return_exceptions=True)
            raise
        return size

    async def download_member(
        self,
        where: Location,
        target: str | os.PathLike[str],
        callback: Callback | None = None,
    ) -> int:
        """Write a bundle member to ``target`` in ranged parts of its bundle (all started at
        once: the catalog says its length), CRC-checked whole; return its length."""
        member = where.member
        assert member is not None
        callback = callback or DEFAULT_CALLBACK
        callback.set_size(member.length)
        limit = self._parts_limit()
        if member.length == 0:
            return _write_whole(target, b"")
        partial = partial_path(target)
        try:
            with open(partial, "xb") as out:
                fd = out.fileno()

                async def part(start: int, end: int) -> None:
                    async with limit:
                        data = await self.reads.member_part(where, start, end)
                    await _drain(_Whole(data), fd, start, end, callback, member.path)

                await _run_parts(range(0, member.length, self.part_size), member.length,
                                 self.part_size, part, self.part_concurrency)  # fmt: skip
            if _crc_of(partial) != member.crc32:
                raise ChecksumMismatchError(
                    f"member {member.path!r} does not match its recorded checksum "
                    f"({member.length} bytes read); the bundle or the catalog is damaged.",
                    path=member.bundle,
                    fix="restore or re-fetch the bundle; if it persists, rebuild the catalog "
                    "with `archivefs catalog rebuild` and compare with the sources.",
                )
            os.replace(partial, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise
        return member.length


class _Stale(Exception):
    """A part showed that what a listing or HEAD said of an object no longer holds."""


class _Whole:
    """A :class:`~archivefs.stores.base.RangeStream` over bytes that arrived whole."""

    def __init__(self, data: bytes, total_size: int | None = None, etag: str | None = None):
        self.total_size, self.etag = total_size, etag
        self.length: int | None = len(data)
        self._data: bytes | None = data
        self._at = 0

    async def read(self, amount: int) -> bytes:
        data = self._data
        if data is None or self._at >= len(data):
            self._data = None  # freed once read to its end
            return b""
        chunk = data[self._at : self._at + amount]
        self._at += len(chunk)
        return chunk

    def close(self) -> None:
        self._data = None


def _write_whole(target: str | os.PathLike[str], data: bytes) -> int:
    """``data`` to ``target``, through a partial file renamed into place."""
    partial = partial_path(target)
    try:
        with open(partial, "xb") as out:
            out.write(data)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        raise
    return len(data)


def _length(where: Location) -> int:
    assert where.member is not None
    return where.member.length


def _bundle(where: Location) -> str:
    assert where.member is not None
    return where.member.bundle


def _offset(where: Location) -> int:
    assert where.member is not None
    return where.member.offset


async def _run_parts(
    starts: range,
    size: int,
    step: int,
    part: Callable[[int, int], Awaitable[None]],
    concurrency: int,
    *running: asyncio.Future[None],
) -> None:
    """``part(start, end)`` for each of ``starts`` (parts of ``step`` bytes, the last one
    ending at ``size``), at most ``concurrency`` at a time, alongside the ``running``
    tasks; on the first error every other part is cancelled and the error raised."""

    async def worker() -> None:
        for start in starts_:  # shared: each start is taken by one worker
            await part(start, min(start + step, size))

    starts_ = iter(starts)
    tasks = [
        *running,
        *(asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(starts)))),
    ]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _drain(
    stream: RangeStream, fd: int, start: int, end: int, callback: Callback, name: str
) -> None:
    """Write ``stream``'s body, bytes ``[start, end)`` of ``name``, at its offset in ``fd``
    as it arrives, :data:`CHUNK` bytes at a time at most; it must be exactly that long."""
    at = start
    while at < end:
        chunk = await stream.read(min(CHUNK, end - at))
        if not chunk:
            break
        os.pwrite(fd, chunk, at)
        at += len(chunk)
        callback.relative_update(len(chunk))
    if at < end:
        how = f"short: {at - start} of {end - start} bytes"
    elif await stream.read(1):
        how = f"long: more than the {end - start} bytes asked for"
    else:
        return
    raise ChecksumMismatchError(
        f"bytes {start}-{end} of {name!r} arrived {how}.",
        path=name,
        fix="download it again; if it repeats, the object or the server is damaged.",
    )


def _changed(path: str, start: int, end: int, how: str) -> ChecksumMismatchError:
    return ChecksumMismatchError(
        f"the object changed while it was downloaded ({how} before bytes {start}-{end} "
        "were read); nothing was written under its name.",
        path=path,
        fix="download it again once it is no longer being written.",
    )


def _crc_of(path: Path) -> int:
    crc = 0
    with open(path, "rb") as file:
        while piece := file.read(_CRC_PIECE):
            crc = zlib.crc32(piece, crc)
    return crc
