"""Copies to local files: ``get`` (members coalesced per bundle) and ``prefetch(to=DIR)``.

``prefetch(to=DIR)`` writes each requested file to ``DIR/<bucket>/<key>`` (the
layout a ``hot=DIR`` filesystem reads first): a plain object by one streamed GET,
a bundle member by one ranged GET of exactly its bytes (CRC-checked), never a
whole bundle. Every local path is derived from a key that whoever can write the
bucket chose, so each is checked before anything is fetched (:func:`local_target`):
a key with empty, ``.`` or ``..`` parts, or one that resolves (symbolic links
included) outside DIR, is refused. Files are written as
``<name>.archivefs-partial-<pid>-<hex>`` and renamed into place; partial files a
killed run left are removed by the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import uuid
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fsspec.callbacks import DEFAULT_CALLBACK

from archivefs.catalog.view import Location
from archivefs.errors import ChecksumMismatchError, InvalidPathError
from archivefs.member_reads import BLOCK

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from fsspec.callbacks import Callback

    from archivefs.catalog.table import MemberInfo


import re
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path

from archivefs.access.bundles import MEMBER_PIECE, BundleReads
from archivefs.access.hot import HotCopies
from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.access.reads import Reads

PARTIAL_MARK = ".archivefs-partial-"
_PARTIAL = re.compile(re.escape(PARTIAL_MARK) + r"(\d+)-[0-9a-f]+$")
DEFAULT_CONCURRENCY = 8
_GET_ROUND = 16 * BLOCK  # get() of many members: fetched and written this many bytes at a time
# get() notes here the members get_file is asked for, to fetch them coalesced afterwards
_GET_BATCH: contextvars.ContextVar[list[tuple[MemberInfo, Location, str]] | None] = (
    contextvars.ContextVar("archivefs_get_batch", default=None)
)


@dataclass
class CopyReport:
    """What :meth:`LocalCopies.to_directory` wrote."""

    files: list[Path] = field(default_factory=list)
    bytes_written: int = 0
    partials_removed: list[Path] = field(default_factory=list)


class LocalCopies:
    """Objects and members written to local files; ``generic_get`` is fsspec's ``get``."""

    def __init__(
        self,
        parts: Parts,
        policy: ReadPolicy,
        bundles: BundleReads,
        reads: Reads,
        hot: HotCopies,
        generic_get: Callable[..., Awaitable[Any]],
    ) -> None:
        self.parts = parts
        self.policy = policy
        self.bundles = bundles
        self.reads = reads
        self.hot = hot
        self.generic_get = generic_get

    async def to_directory(
        self,
        paths: Iterable[str],
        directory: str | Path,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> CopyReport:
        """Write each of ``paths`` (``bucket/key`` of files, readable now) below ``directory``.

        All targets are checked before the first byte is fetched.
        """
        base = Path(directory)
        base.mkdir(parents=True, exist_ok=True)
        targets = {path: local_target(base, path) for path in dict.fromkeys(paths)}
        report = CopyReport()
        report.partials_removed = remove_partials({t.parent for t in targets.values()})
        semaphore = asyncio.Semaphore(concurrency)
        cold = self.parts.fs

        async def one(path: str, target: Path) -> None:
            async with semaphore:
                where = await self.parts.catalogs.locate(path)
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(
                    f"{target.name}{PARTIAL_MARK}{os.getpid()}-{uuid.uuid4().hex[:12]}"
                )
                try:
                    if where.member is not None:
                        data = await self.reads.member(where)
                        with open(partial, "xb") as out:
                            out.write(data)
                        size = len(data)
                    else:
                        await self.policy.guarded(  # Azure's rehydrated copy, if one
                            path, lambda: cold._get_file(self.reads.read_path(path), str(partial))
                        )
                        size = partial.stat().st_size
                    os.replace(partial, target)
                except BaseException:
                    partial.unlink(missing_ok=True)
                    raise
                report.files.append(target)
                report.bytes_written += size

        await asyncio.gather(*(one(path, target) for path, target in targets.items()))
        report.files.sort()
        return report

    async def get_file(
        self, rpath: str, lpath: str, callback: Callback = DEFAULT_CALLBACK, **kwargs: Any
    ) -> None:
        rpath = self.parts.strip(rpath)
        if os.path.isdir(lpath):
            return  # a directory entry of a recursive get (as s3fs does)
        hot = await self.hot.store()
        if hot is not None:
            hot_fs, root = hot
            try:
                await hot_fs._get_file(
                    self.hot.path(root, rpath), lpath, callback=callback, **kwargs
                )
                return
            except FileNotFoundError:
                pass

        async def get() -> None:
            where = await self.parts.catalogs.locate(rpath)
            if where.member is not None:
                batch = _GET_BATCH.get()
                if batch is not None and where.member.length <= BLOCK:
                    batch.append((where.member, where, lpath))  # fetched with its neighbours
                    return
                await self._get_member(where, lpath, callback)
                return
            await self.policy.guarded(
                rpath,
                lambda: self.parts.fs._get_file(
                    self.reads.read_path(rpath), lpath, callback=callback, **kwargs
                ),
            )

        await self.parts.or_unregistered(rpath, get)

    async def get(
        self,
        rpath: Any,
        lpath: Any,
        recursive: bool = False,
        callback: Callback = DEFAULT_CALLBACK,
        maxdepth: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``get``; bundle members (up to 8 MiB each) are fetched coalesced per bundle.

        fsspec expands the paths and calls ``get_file`` per file as usual; members
        are only noted there, then fetched together (one ranged GET per block of
        adjacent members, ``archivefs.member_reads``), checked and written. Larger
        members stream as before. With a hot store, every file is fetched on its own.
        """
        if await self.hot.store() is not None:
            return await self.generic_get(
                rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
            )
        batch: list[tuple[MemberInfo, Location, str]] = []
        token = _GET_BATCH.set(batch)
        try:
            out = await self.generic_get(
                rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
            )
        finally:
            _GET_BATCH.reset(token)
        await self._write_members(batch)
        return out

    async def _write_members(self, batch: list[tuple[MemberInfo, Location, str]]) -> None:
        """Fetch members coalesced (in rounds of bounded memory), write each checked one;
        raise the first error once every other member is written."""
        batch = sorted(batch, key=lambda m: (m[0].bundle, m[0].offset))
        failed: BaseException | None = None
        start = 0
        while start < len(batch):
            size, stop = 0, start
            while stop < len(batch) and (stop == start or size < _GET_ROUND):
                size += batch[stop][0].length
                stop += 1
            round_ = batch[start:stop]
            got = await self.reads.cat_members(
                [(i, where, None, None) for i, (_, where, _) in enumerate(round_)]
            )
            for i, (_, _, lpath) in enumerate(round_):
                data = got[i]
                if isinstance(data, BaseException):
                    failed = failed or data
                    continue
                try:
                    with open(lpath, "wb") as out:
                        out.write(data)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.remove(lpath)  # never leave a partial copy behind
                    raise
            start = stop
        if failed is not None:
            raise failed

    async def _get_member(self, where: Location, lpath: str, callback: Callback) -> None:
        """Write a member to a local file: ranged reads of its bundle, CRC-checked whole."""
        member = where.member
        assert member is not None
        callback.set_size(member.length)
        crc = 0
        try:
            with open(lpath, "wb") as out:
                for lo in range(0, member.length, MEMBER_PIECE):
                    hi = min(lo + MEMBER_PIECE, member.length)
                    piece = await self.bundles.read_member(where, lo, hi)
                    crc = zlib.crc32(piece, crc)
                    out.write(piece)
                    callback.relative_update(len(piece))
            if crc != member.crc32:
                raise ChecksumMismatchError(
                    f"member {member.path!r} does not match its recorded checksum "
                    f"({member.length} bytes read); the bundle or the catalog is damaged.",
                    path=member.bundle,
                    fix="restore or re-fetch the bundle; if it persists, rebuild the catalog "
                    "with `archivefs catalog rebuild` and compare with the sources.",
                )
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(lpath)  # never leave a partial or unchecked copy behind
            raise


def local_target(directory: str | Path, path: str) -> Path:
    """Where ``bucket/key`` goes below ``directory``; :class:`InvalidPathError` if outside it.

    Keys are chosen by whoever can write the bucket, and S3 allows ``..`` parts, so
    every local copy of a key (``prefetch --to DIR``, promotion into a local hot
    store) goes through here before anything is written.
    """
    base = Path(directory).resolve()
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts) or "\0" in path or "\\" in path:
        raise InvalidPathError(
            "this key has an empty, '.' or '..' part (or a NUL or backslash), so it has no "
            f"safe local name below {base}; nothing was written.",
            path=path,
            fix="leave it out of the selection, or rename the object in the bucket.",
        )
    target = base.joinpath(*parts).resolve()
    if not target.is_relative_to(base) or target == base:
        raise InvalidPathError(
            f"its local copy would be written outside {base} (a symbolic link in the "
            "target directory leads out of it); nothing was written.",
            path=path,
            fix="remove the symbolic link from the target directory, or copy elsewhere.",
        )
    return target


def remove_partials(directories: Iterable[Path]) -> list[Path]:
    """Delete ``*.archivefs-partial-<pid>-*`` files in ``directories`` whose writer is gone."""
    removed = []
    for directory in directories:
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            continue
        for name in names:
            match = _PARTIAL.search(name)
            if match is None or _alive(int(match.group(1))):
                continue
            path = directory / name
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has not started writing yet
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
