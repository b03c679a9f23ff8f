"""Copies to local files: ``get`` (members coalesced per bundle) and ``prefetch(to=DIR)``.

``prefetch(to=DIR)`` writes each requested file to ``DIR/<bucket>/<key>`` (the
layout a ``hot=DIR`` filesystem reads first): a plain object in ranged parts (one
GET up to 8 MiB), bundle members coalesced as ``get`` reads them (one ranged GET
per block of adjacent members, each CRC-checked), never a whole bundle; both by
:class:`archivefs.access.transfer.Transfers`. Every local path is derived from a
key that whoever can write the bucket chose, so each is checked before anything
is fetched (:func:`local_target`): a key with empty, ``.`` or ``..`` parts, or
one that resolves (symbolic links included) outside DIR, is refused. Files are
written as ``<name>.archivefs-partial-<pid>-<hex>`` and renamed into place;
partial files a killed run left are removed by the next.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fsspec.callbacks import DEFAULT_CALLBACK

from archivefs.catalog.view import Location
from archivefs.errors import InvalidPathError
from archivefs.member_reads import BLOCK
from archivefs.s3compat import split_version

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from fsspec.callbacks import Callback

    from archivefs.catalog.table import MemberInfo
    from archivefs.model import ObjectState


import re
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path

from archivefs.access import synced
from archivefs.access.hot import HotCopies
from archivefs.access.listing import SEEN, seen_state
from archivefs.access.parts import Parts
from archivefs.access.transfer import PARTIAL_MARK, Transfers

_PARTIAL = re.compile(re.escape(PARTIAL_MARK) + r"(\d+)-[0-9a-f]+$")
DEFAULT_CONCURRENCY = 8
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
    # files an earlier run wrote, their objects unchanged: not fetched again (synced.py)
    skipped: list[Path] = field(default_factory=list)


class LocalCopies:
    """Objects and members written to local files; ``generic_get`` is fsspec's ``get``."""

    def __init__(
        self,
        parts: Parts,
        transfers: Transfers,
        hot: HotCopies,
        generic_get: Callable[..., Awaitable[Any]],
    ) -> None:
        self.parts = parts
        self.transfers = transfers
        self.hot = hot
        self.generic_get = generic_get

    async def to_directory(
        self,
        paths: Iterable[str],
        directory: str | Path,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        known: Mapping[str, ObjectState] | None = None,
        ids: Mapping[str, str] | None = None,
    ) -> CopyReport:
        """Write each of ``paths`` (``bucket/key`` of files, readable now) below ``directory``.

        All targets are checked before the first byte is fetched. ``known``: plain
        objects' states as a plan's probe saw them (their size and ETag let every part
        of a large one start at once). ``ids`` (each path's object identity,
        :func:`archivefs.access.synced.identities`) are recorded in the directory's
        manifest with the files written, for the next run to skip them.
        """
        base = Path(directory)
        base.mkdir(parents=True, exist_ok=True)
        targets = local_targets(base, dict.fromkeys(paths))
        report = CopyReport()
        report.partials_removed = remove_partials({t.parent for t in targets.values()})
        semaphore = asyncio.Semaphore(concurrency)
        located = await asyncio.gather(*(self.parts.catalogs.locate(path) for path in targets))
        members = [(where, targets[where.path]) for where in located if where.member is not None]
        plain = [where for where in located if where.member is None]
        known = known or {}
        for parent in {target.parent for target in targets.values()}:
            parent.mkdir(parents=True, exist_ok=True)

        async def one(where: Location, target: Path) -> None:
            path = where.path
            state = known.get(path) or self.transfers.reads.known_state(path, where)
            async with semaphore:
                size = await self.transfers.download_object(path, target, known=state)
                report.files.append(target)
                report.bytes_written += size

        await asyncio.gather(*(one(where, targets[where.path]) for where in plain))
        report.bytes_written += await self.transfers.write_members(members)
        report.files += [target for _, target in members]
        report.files.sort()
        if ids is not None:
            synced.record(base, targets, ids, targets)
        return report

    async def get_file(
        self, rpath: str, lpath: str, callback: Callback = DEFAULT_CALLBACK, **kwargs: Any
    ) -> None:
        rpath, version = split_version(self.parts.strip(rpath), kwargs.pop("version_id", None))
        if os.path.isdir(lpath):
            return  # a directory entry of a recursive get (as s3fs does)
        if version is not None:  # that version, from the store (hot copies are current ones)
            await self.transfers.policy.guarded_version(
                rpath,
                version,
                lambda: self.parts.fs._get_file(
                    rpath, lpath, callback=callback, version_id=version, **kwargs
                ),
            )
            return
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
                await self.transfers.download_member(where, lpath, callback)
                return
            if not kwargs:  # else (options for the target): the target's own get
                # what a listing or HEAD of this get (or before it) said of the object; one
                # that was archived goes the first-part way, through the read policy once
                known = seen_state(rpath) or self.transfers.reads.known_state(rpath, where)
                if known is not None and not known.readable:
                    known = None
                await self.transfers.download_object(rpath, lpath, callback, known=known)
                return
            await self.transfers.policy.guarded(
                rpath,
                lambda: self.parts.fs._get_file(
                    self.transfers.reads.read_path(rpath), lpath, callback=callback, **kwargs
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
        seen = SEEN.set({})  # the recursive listing's entries, for the downloads' parts
        try:
            if await self.hot.store() is not None:
                return await self.generic_get(
                    rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth,
                    **kwargs,
                )  # fmt: skip
            batch: list[tuple[MemberInfo, Location, str]] = []
            token = _GET_BATCH.set(batch)
            try:
                out = await self.generic_get(
                    rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth,
                    **kwargs,
                )  # fmt: skip
            finally:
                _GET_BATCH.reset(token)
        finally:
            SEEN.reset(seen)
        await self.transfers.write_members([(where, lpath) for _, where, lpath in batch])
        return out


def local_target(directory: str | Path, path: str) -> Path:
    """Where ``bucket/key`` goes below ``directory``; :class:`InvalidPathError` if outside it.

    Keys are chosen by whoever can write the bucket, and S3 allows ``..`` parts, so
    every local copy of a key (``prefetch --to DIR``, promotion into a local hot
    store) goes through here (or :func:`local_targets`) before anything is written.
    """
    return local_targets(directory, [path])[path]


def local_targets(directory: str | Path, paths: Iterable[str]) -> dict[str, Path]:
    """:func:`local_target` of each of ``paths``: the same checks, symbolic links resolved
    once per folder (and for a file that is itself a link), not once per file: resolving
    walks every component of a path (an ``lstat`` each), 10,000 files cost seconds."""
    base = Path(directory).resolve()
    folders: dict[tuple[str, ...], Path] = {}
    out: dict[str, Path] = {}
    for path in paths:
        parts = path.split("/")
        if any(part in ("", ".", "..") for part in parts) or "\0" in path or "\\" in path:
            raise InvalidPathError(
                "this key has an empty, '.' or '..' part (or a NUL or backslash), so it has "
                f"no safe local name below {base}; nothing was written.",
                path=path,
                fix="leave it out of the selection, or rename the object in the bucket.",
            )
        folder = tuple(parts[:-1])
        if folder not in folders:
            folders[folder] = base.joinpath(*folder).resolve()
        target = folders[folder] / parts[-1]
        if target.is_symlink():
            target = target.resolve()
        if not target.is_relative_to(base) or target == base:
            raise InvalidPathError(
                f"its local copy would be written outside {base} (a symbolic link in the "
                "target directory leads out of it); nothing was written.",
                path=path,
                fix="remove the symbolic link from the target directory, or copy elsewhere.",
            )
        out[path] = target
    return out


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
