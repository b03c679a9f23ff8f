"""Downloads into local files: bundle members coalesced, every file written atomically.

The one implementation behind every path that writes members to local files
(``get``, ``prefetch(to=DIR)``): members up to :data:`~archivefs.member_reads.BLOCK`
bytes are fetched together with their neighbours (one ranged GET per block of
adjacent members, :mod:`archivefs.member_reads`), in rounds of bounded memory,
each checked as a single-member read is; larger members are read in ranged
pieces and CRC-checked whole. Each file is written under a partial name
(:func:`partial_path`) and renamed into place once checked, so a failed or
killed download never leaves a partial file under the final name.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from archivefs.member_reads import BLOCK

__all__ = ["PARTIAL_MARK", "ROUND", "partial_path", "write_members"]

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fsspec.callbacks import Callback

    from archivefs.catalog.view import Location
    from archivefs.filesystem import ArchiveFileSystem

PARTIAL_MARK = ".archivefs-partial-"
ROUND = 16 * BLOCK
"""Small members are fetched and written this many bytes at a time (bounded memory)."""


def partial_path(target: str | os.PathLike[str]) -> Path:
    """Where ``target`` is written until it is complete and checked:
    ``<name>.archivefs-partial-<pid>-<hex>`` beside it."""
    target = Path(target)
    return target.with_name(f"{target.name}{PARTIAL_MARK}{os.getpid()}-{uuid.uuid4().hex[:12]}")


async def write_members(
    fs: ArchiveFileSystem,
    items: Sequence[tuple[Location, str | os.PathLike[str]]],
    callback: Callback | None = None,
) -> int:
    """Write each bundle member ``(location, local path)`` to its path; return the bytes written.

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
        got = await fs._cat_members([(i, where, None, None) for i, (where, _) in enumerate(round_)])
        for i, (_, target) in enumerate(round_):
            data = got[i]
            if isinstance(data, BaseException):
                failed = failed or data
                continue
            _write_whole(target, data)
            written += len(data)
        start = stop
    for where, target in large:
        partial = partial_path(target)
        try:
            await fs._get_member(where, str(partial), callback)
            os.replace(partial, target)
        except Exception as error:
            failed = failed or error
            continue
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
        written += _length(where)
    if failed is not None:
        raise failed
    return written


def _write_whole(target: str | os.PathLike[str], data: bytes) -> None:
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


def _length(where: Location) -> int:
    assert where.member is not None
    return where.member.length


def _bundle(where: Location) -> str:
    assert where.member is not None
    return where.member.bundle


def _offset(where: Location) -> int:
    assert where.member is not None
    return where.member.offset
