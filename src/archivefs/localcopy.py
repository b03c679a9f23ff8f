"""Copy selected files into a local directory: confined paths, atomic writes, no leftovers.

``archivefs prefetch --to DIR`` uses this once the restores are done. Each
requested file lands at ``DIR/<bucket>/<key>`` (the layout a ``hot=DIR``
filesystem reads first): a plain object in ranged parts (one GET up to 8 MiB,
:func:`archivefs.transfer.download_object`), bundle members
coalesced as ``get`` reads them (:mod:`archivefs.transfer`: one ranged GET per
block of adjacent members, each CRC-checked), never a whole bundle.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from archivefs.keyed_paths import local_target
from archivefs.transfer import PARTIAL_MARK, download_object, write_members

__all__ = ["PARTIAL_MARK", "CopyReport", "copy_to_directory", "local_target", "remove_partials"]

if TYPE_CHECKING:
    from collections.abc import Iterable

    from archivefs.filesystem import ArchiveFileSystem

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
    located = await asyncio.gather(*(fs.catalogs.locate(path) for path in targets))
    members = [(where, targets[where.path]) for where in located if where.member is not None]
    plain = [where.path for where in located if where.member is None]
    for parent in {target.parent for target in targets.values()}:
        parent.mkdir(parents=True, exist_ok=True)

    async def one(path: str, target: Path) -> None:
        async with semaphore:
            size = await download_object(fs, path, target)
            report.files.append(target)
            report.bytes_written += size

    await asyncio.gather(*(one(path, targets[path]) for path in plain))
    report.bytes_written += await write_members(fs, members)
    report.files += [target for _, target in members]
    report.files.sort()
    return report
