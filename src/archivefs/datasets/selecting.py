"""A selection of netCDF/HDF5 files named by variables and index ranges, as objects.

What ``archivefs estimate`` and ``archivefs prefetch`` run for ``--var``/``--sel``: the
files are opened (from their references when they have them), the selection is made
lazily, and the objects its chunk reads need are returned for the usual plan, with the
files it reads whole (no references) per variable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.datasets.graph import chunk_paths, whole_file_reads
from archivefs.datasets.opening import open_mfdataset
from archivefs.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from archivefs.filesystem import ArchiveFileSystem


@dataclass
class FileSelection:
    """What a selection of netCDF/HDF5 files reads: the objects (files, or the bundles'
    members), and per variable the files it reads whole (they have no references), as a
    plan's ``read_whole``."""

    paths: list[str]
    read_whole: dict[str, list[str]] = field(default_factory=dict)


def select_files(
    urls: str | Sequence[str],
    *,
    fs: ArchiveFileSystem,
    variables: Sequence[str] = (),
    ranges: dict[str, tuple[str, str]] | None = None,
) -> FileSelection:
    """What variables ``variables`` read over index ``ranges`` (``{"time": ("2023-06-01",
    "2023-08-31")}``, both ends included) of the netCDF/HDF5 files ``urls`` (URLs or a
    glob), opened with ``open_mfdataset``: what ``archivefs estimate/prefetch --var --sel``
    plan and restore. Files with references name exactly the objects holding the selected
    chunks; others are named whole, and ``read_whole`` says so.

    Example::

        chosen = ads.select_files("s3://bucket/run42/*.nc", fs=fs, variables=["t2m"],
                                  ranges={"time": ("2023-06-01", "2023-08-31")})
        plan = fs.plan(chosen.paths, tier="Bulk", read_whole=chosen.read_whole)
    """
    ds = open_mfdataset(urls, fs=fs)
    missing = [v for v in variables if v not in ds.variables]
    if missing:
        raise ArchiveError(
            f"has no variable {missing[0]!r} (it has: {', '.join(map(str, ds.data_vars))}).",
            path=urls if isinstance(urls, str) else urls[0],
            fix="name one of its variables with --var.",
        )
    obj = ds[list(variables)] if variables else ds
    bounds = {
        dim: slice(_bound(start), _bound(stop)) for dim, (start, stop) in (ranges or {}).items()
    }
    unknown = [d for d in bounds if d not in ds.dims]
    if unknown:
        raise ArchiveError(
            f"has no dimension {unknown[0]!r} (it has: {', '.join(map(str, ds.dims))}).",
            path=urls if isinstance(urls, str) else urls[0],
            fix="select along one of its dimensions with --sel DIM=START:STOP.",
        )
    selected = obj.sel(bounds)
    paths = sorted({p for paths in chunk_paths(selected).values() for p in paths})
    return FileSelection(paths, whole_file_reads(selected))


def selection_paths(
    urls: str | Sequence[str],
    *,
    fs: ArchiveFileSystem,
    variables: Sequence[str] = (),
    ranges: dict[str, tuple[str, str]] | None = None,
) -> list[str]:
    """The objects (files, or the bundles' members) that variables ``variables`` read over
    index ``ranges`` of the netCDF/HDF5 files ``urls``: :func:`select_files`'s ``paths``.

    Example::

        paths = ads.selection_paths("s3://bucket/run42/*.nc", fs=fs, variables=["t2m"],
                                    ranges={"time": ("2023-06-01", "2023-08-31")})
        fs.prefetch(paths, tier="Bulk")
    """
    return select_files(urls, fs=fs, variables=variables, ranges=ranges).paths


def _bound(text: str) -> Any:
    """A selection bound: a number when it reads as one, else the text (dates, labels)."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text
