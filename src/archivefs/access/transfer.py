"""Downloads into local files: bundle members coalesced, large objects in ranged parts.

:class:`Transfers` is the one implementation behind every path that writes
objects or members to local files (``get``, ``prefetch(to=DIR)``, promotion
through a local file):

- members up to :data:`~archivefs.member_reads.BLOCK` bytes are fetched
  together with their neighbours (one ranged GET per block of adjacent
  members, :mod:`archivefs.member_reads`), in rounds of bounded memory, each
  checked as a single-member read is;
- a plain object, or a larger member, is read in ranged parts of
  ``part_size`` bytes, ``part_concurrency`` at a time across all of the
  filesystem's downloads, each written at its offset as it arrives
  (:meth:`Transfers.download_object`, :meth:`Transfers.download_member`):
  memory holds at most ``part_concurrency`` parts, whatever the sizes and the
  file count. An object's first
  part says its size and ETag; every later part must come from that same
  object (``If-Match``) and have exactly its length. A member is read from
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
from typing import TYPE_CHECKING

from fsspec.callbacks import DEFAULT_CALLBACK

from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.access.reads import Reads
from archivefs.errors import ArchiveError, ChecksumMismatchError, InvalidOptionsError
from archivefs.member_reads import BLOCK
from archivefs.stores.translate import is_precondition_failed, s3_error_code

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from fsspec.callbacks import Callback

    from archivefs.catalog.view import Location
    from archivefs.stores.base import RangeRead

PARTIAL_MARK = ".archivefs-partial-"
ROUND = 16 * BLOCK
"""Small members are fetched and written this many bytes at a time (bounded memory)."""
PART_SIZE = 8 * 2**20
"""Bytes per ranged GET of a large download (the AWS CLI's and boto3's default chunk)."""
PART_CONCURRENCY = 10
"""Ranged GETs in flight per filesystem (the AWS CLI's and boto3's default per download)."""
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

        Every member is written (or fails) on its own: the first error is raised once
        every other member is written. ``callback`` (fsspec's) is told the bytes of
        large members as they arrive.
        """
        small = sorted(
            ((where, target) for where, target in items if _length(where) <= BLOCK),
            key=lambda item: (_bundle(item[0]), _offset(item[0])),
        )
        large = [(where, target) for where, target in items if _length(where) > BLOCK]
        failed: BaseException | None = None
        written = 0
        start = 0
        while start < len(small):
            size, stop = 0, start
            while stop < len(small) and (stop == start or size < ROUND):
                size += _length(small[stop][0])
                stop += 1
            round_ = small[start:stop]
            got = await self.reads.cat_members(
                [(i, where, None, None) for i, (where, _) in enumerate(round_)]
            )
            for i, (_, target) in enumerate(round_):
                data = got[i]
                if isinstance(data, BaseException):
                    failed = failed or data
                    continue
                _write_whole(target, data)
                written += len(data)
            start = stop
        for where, target in large:
            try:
                written += await self.download_member(where, target, callback)
            except Exception as error:
                failed = failed or error
        if failed is not None:
            raise failed
        return written

    async def download_object(
        self,
        path: str,
        target: str | os.PathLike[str],
        callback: Callback = DEFAULT_CALLBACK,
    ) -> int:
        """Write the plain object ``path`` to ``target`` in ranged parts; return its size.

        One GET for an object of up to ``part_size`` bytes. Reads go through the
        read policy (an archived object raises, restores or waits).
        """
        part_size = self.part_size
        limit = self._parts_limit()
        store = self.parts.store

        async def read(start: int, end: int, etag: str | None) -> RangeRead:
            async with limit:
                got: RangeRead = await self.policy.guarded(
                    path, lambda: store.get_range(path, start, end, if_match=etag)
                )
            return got

        partial = partial_path(target)
        try:
            try:
                first = await read(0, part_size, None)
            except OSError as error:
                # archived, restoring, missing or denied: the read policy's error, as it is
                if isinstance(error, PermissionError | BlockingIOError | FileNotFoundError):
                    raise
                # S3 refuses a range starting at 0 only for an empty object; other stores: ask
                if s3_error_code(error) != "InvalidRange" and (await store.head(path)).size:
                    raise
                open(partial, "xb").close()  # an empty object: stores refuse every range of it
                os.replace(partial, target)
                return 0
            if first.total_size is None and len(first.data) >= part_size:
                raise ArchiveError(  # a store that does not say the size of a ranged read's object
                    "a ranged read did not say the object's size, so its remaining parts are "
                    "unknown.",
                    path=path,
                    fix="read it with fs.open() or the store's own client.",
                )
            size = first.total_size if first.total_size is not None else len(first.data)
            etag, pending = first.etag, [first.data]
            del first  # the first part's bytes are held until written, not for the whole download
            callback.set_size(size)

            async def part(start: int, end: int) -> bytes:
                try:
                    got = await read(start, end, etag)
                except ArchiveError as error:
                    if not is_precondition_failed(error):
                        raise
                    raise _changed(path, start, end, "its ETag changed") from error
                if got.total_size not in (None, size):
                    raise _changed(path, start, end, f"it now has {got.total_size} bytes")
                return got.data

            await _write_parts(partial, size, pending, part, self.part_concurrency, callback, path)
            os.replace(partial, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise
        return size

    async def download_member(
        self,
        where: Location,
        target: str | os.PathLike[str],
        callback: Callback | None = None,
    ) -> int:
        """Write a bundle member to ``target`` in ranged parts of its bundle, CRC-checked
        whole; return its length."""
        member = where.member
        assert member is not None
        callback = callback or DEFAULT_CALLBACK
        callback.set_size(member.length)
        limit = self._parts_limit()

        async def part(start: int, end: int) -> bytes:
            async with limit:
                return await self.reads.member_part(where, start, end)

        if member.length == 0:
            return _write_whole(target, b"")
        partial = partial_path(target)
        try:
            pending = [await part(0, min(self.part_size, member.length))]
            await _write_parts(
                partial, member.length, pending, part, self.part_concurrency, callback, member.path
            )
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


async def _write_parts(
    partial: Path,
    size: int,
    pending: list[bytes],
    read: Callable[[int, int], Awaitable[bytes]],
    concurrency: int,
    callback: Callback,
    name: str,
) -> None:
    """Write ``size`` bytes to the new file ``partial``: the first part (``pending``'s one
    item, taken out so that it is freed once written) at offset 0, then the remaining
    parts (``read(start, end)``, each as long as the first), ``concurrency`` at a time,
    each at its offset as it arrives."""
    first = pending.pop()
    step = len(first)
    with open(partial, "xb") as out:
        fd = out.fileno()
        _check_length(name, 0, min(step, size), first)
        os.pwrite(fd, first, 0)
        callback.relative_update(len(first))
        del first
        starts = iter(range(step, size, step) if step else ())

        async def worker() -> None:
            for start in starts:  # shared: each start is taken by one worker
                end = min(start + step, size)
                data = await read(start, end)
                _check_length(name, start, end, data)
                os.pwrite(fd, data, start)
                callback.relative_update(end - start)
                del data  # not held while this worker waits for its next part

        tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise


def _check_length(name: str, start: int, end: int, data: bytes) -> None:
    if len(data) != end - start:
        raise ChecksumMismatchError(
            f"bytes {start}-{end} of {name!r} arrived short: {len(data)} of {end - start} bytes.",
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
