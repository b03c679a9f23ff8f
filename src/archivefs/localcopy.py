"""Copy selected files into a local directory: confined paths, atomic writes, no leftovers.

``archivefs prefetch --to DIR`` uses this once the restores are done. Each
requested file lands at ``DIR/<bucket>/<key>`` (the layout a ``hot=DIR``
filesystem reads first): a plain object by one streamed GET, a bundle member
by one ranged GET of exactly its bytes (CRC-checked), never a whole bundle.
Every local path is derived from a key that whoever can write the bucket
chose, so each is checked before anything is fetched: a key with empty, ``.``
or ``..`` parts, or one that resolves (symbolic links included) outside DIR,
is refused. Files are written as ``<name>.archivefs-partial-<pid>-<hex>`` and
renamed into place; partial files a killed run left are removed by the next.
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from archivefs.keyed_paths import local_target

__all__ = ["PARTIAL_MARK", "CopyReport", "copy_to_directory", "local_target", "remove_partials"]

if TYPE_CHECKING:
    from collections.abc import Iterable

    from archivefs.catalog.view import Location
    from archivefs.filesystem import ArchiveFileSystem

PARTIAL_MARK = ".archivefs-partial-"
_PARTIAL = re.compile(re.escape(PARTIAL_MARK) + r"(\d+)-[0-9a-f]+$")
DEFAULT_CONCURRENCY = 8


@dataclass
class CopyReport:
    """What :func:`copy_to_directory` wrote."""

    files: list[Path] = field(default_factory=list)
    bytes_written: int = 0
    partials_removed: list[Path] = field(default_factory=list)


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


async def copy_to_directory(
    fs: ArchiveFileSystem,
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

    async def one(path: str, target: Path) -> None:
        async with semaphore:
            where = await fs.catalogs.locate(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(
                f"{target.name}{PARTIAL_MARK}{os.getpid()}-{uuid.uuid4().hex[:12]}"
            )
            try:
                if where.member is not None:
                    size = await _write_member(fs, where, partial)
                else:
                    await fs._guarded(  # the rehydrated copy on Azure with rehydrate="copy"
                        path, lambda: fs.fs._get_file(fs._read_path(path), str(partial))
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


async def _write_member(fs: ArchiveFileSystem, where: Location, partial: Path) -> int:
    """One ranged read of the member's bytes in its bundle (CRC-checked), to ``partial``."""
    data = await fs._cat_member(where, None, None)
    fs.read_stats.fetched(len(data))
    with open(partial, "xb") as out:
        out.write(data)
    return len(data)
