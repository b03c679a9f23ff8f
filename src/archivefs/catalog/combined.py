"""One kerchunk reference set for a collection of netCDF/HDF5 files: made once, opened once.

Opening a collection file by file reads each file's references and builds one dataset
per file before xarray combines them: the cost grows with the number of files.
A combined set (kerchunk's ``MultiZarrToZarr`` along one dimension, never a combiner of
ours) describes the whole collection as one zarr store: it opens with one GET and one
dataset, like a zarr store, and plans and reads exactly as the files' own references do.

It is kept among the files' own references, at ``<root>/.archivefs/references/<folder>/
.combined/<digest>.json``, where the folder is the one all the files lie in and the
digest names the set of files (their paths under the root, sorted): the listing that
finds the files' references shows whether it exists, and one GET reads it. It is
kerchunk JSON (version 1), readable without archivefs, with archivefs's key holding
the files, the dimension, and every object the references point into with its size
and ETag when the files were indexed: a changed object is refused before a byte is
used (``references.check_targets``). It is written with the references' many-writer
rules (``references.save_references``).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from archivefs.catalog.layout import combined_path
from archivefs.catalog.references import FORMAT, KEY, Target, targets_of
from archivefs.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

MODE = "by_coords"  # files placed along the dimension by their coordinate values


def combined_location(root: str, relatives: Sequence[str]) -> str:
    """Where the combined references of the files ``root/<relative>`` are kept: in the
    references folder of the folder they all lie in, named by the set of files, whatever
    order they are given in."""
    names = sorted({r.strip("/") for r in relatives})
    folder = posixpath.commonpath([posixpath.dirname(n) for n in names])
    digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:32]
    return combined_path(root, folder, digest)


def combine(
    parts: Sequence[tuple[str, dict[str, Any]]], concat_dim: str, location: str
) -> dict[str, Any]:
    """The references of the files ``parts`` (``(path, references)`` each, as stored)
    combined along ``concat_dim`` by kerchunk, with archivefs's key: ``location``, the
    files, the dimension and every object they point into. Only inline coordinates are
    read (references keep coordinates inline), so no request is made.

    Raises :class:`ArchiveError` naming the file when the files cannot be combined
    (the dimension missing, coordinate units that differ, kerchunk's refusal)."""
    from kerchunk.combine import MultiZarrToZarr

    if len(parts) < 2:
        raise ArchiveError(
            f"{len(parts)} file(s) to combine: a combined set needs two or more.",
            path=location,
            fix="name two or more indexed files of one collection.",
        )
    arrays = [_array_attrs(refs) for _, refs in parts]
    for (path, _), attrs in zip(parts, arrays, strict=True):
        if concat_dim not in attrs or attrs[concat_dim].get("_ARRAY_DIMENSIONS") != [concat_dim]:
            raise ArchiveError(
                f"has no coordinate {concat_dim!r} to combine the files along "
                f"(it has: {', '.join(sorted(attrs))}).",
                path=path,
                fix="name the dimension the files follow one another along (--concat-dim).",
            )
    encodings = {_encoding(attrs[concat_dim]) for attrs in arrays}
    placing: dict[str, Any] = {}
    if len(encodings) > 1:
        dates = all(" since " in units for units, _ in encodings)
        if not dates or len({calendar for _, calendar in encodings}) > 1:
            raise ArchiveError(
                f"the files' {concat_dim!r} coordinates are encoded differently "
                f"({', '.join(sorted(map(str, encodings)))}), and not as dates of one "
                "calendar: combining their stored values would misplace them.",
                path=parts[0][0],
                fix="open these files per file (without a combined set); they plan and "
                "read the same.",
            )
        # dates counted from each file's own origin (xarray writes monthly files so):
        # each file's, decoded, counted in the first file's units, which the set keeps
        placing[concat_dim] = _dates_counted_in(*_encoding(arrays[0][concat_dim]))
    identical = sorted(
        name
        for name, attrs in arrays[0].items()
        if concat_dim not in attrs.get("_ARRAY_DIMENSIONS", [])
    )
    bare = [{k: v for k, v in refs.items() if k != KEY} for _, refs in parts]
    targets: dict[str, Target] = {}
    for _, refs in parts:
        for target in targets_of(refs):
            targets[target.url] = target
    # kerchunk reads the coordinates it places the files by, which the references keep
    # inline; any other read would be of a file: it finds only an empty filesystem
    # (where kerchunk would otherwise make a client of the files' own protocol)
    combiner = MultiZarrToZarr(
        bare,
        concat_dims=[concat_dim],
        coo_map=placing,
        identical_dims=identical,
        inline_threshold=0,  # the files' own references already inlined what is small
        remote_protocol="memory",
    )
    try:
        # on a thread of its own: kerchunk calls asyncio.run(), which fails on a thread
        # whose event loop runs (a notebook's, an async caller's)
        with ThreadPoolExecutor(1, thread_name_prefix="archivefs-combine") as pool:
            combined: dict[str, Any] = pool.submit(combiner.translate).result()
    except Exception as error:  # kerchunk's: these files, not the run
        raise ArchiveError(
            f"kerchunk could not combine the files along {concat_dim!r} "
            f"({type(error).__name__}: {error}).",
            path=parts[0][0],
            fix="open them per file (without a combined set); they plan and read the same.",
        ) from error
    return {
        **combined,
        KEY: {
            "format": FORMAT,
            "path": location,
            "targets": {url: t.as_json() for url, t in sorted(targets.items())},
            "files": sorted(path for path, _ in parts),
            "concat_dim": concat_dim,
            "combine": MODE,
        },
    }


def combined_files(refs: dict[str, Any]) -> list[str] | None:
    """The files a combined set describes (sorted), or ``None``: not a combined set."""
    files = refs[KEY].get("files")
    if not isinstance(files, list) or refs[KEY].get("combine") != MODE:
        return None
    return [str(f) for f in files]


def _array_attrs(refs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each top-level array's attributes (``name/.zattrs``) in ``refs``."""
    entries = refs["refs"]
    out = {}
    for key in entries:
        name, _, leaf = key.rpartition("/")
        if leaf == ".zarray" and "/" not in name:
            raw = entries.get(f"{name}/.zattrs", "{}")
            out[name] = json.loads(raw) if isinstance(raw, str | bytes) else dict(raw)
    return out


def _dates_counted_in(units: str, calendar: str) -> Callable[..., Any]:
    """kerchunk's coordinate selector (``coo_map``): a file's date coordinate, decoded
    with its own ``units`` and counted in the given ones, by xarray's CF coding."""

    def value(index: int, group: Any, name: str, path: str | None) -> Any:
        from xarray.coding.times import decode_cf_datetime, encode_cf_datetime

        array = group[name]
        own_units, own_calendar = _encoding(dict(array.attrs))
        dates = decode_cf_datetime(array[...], own_units, own_calendar or None)
        counted, _, _ = encode_cf_datetime(dates, units, calendar or None)
        return counted

    return value


def _encoding(attrs: dict[str, Any]) -> tuple[str, str]:
    """What a coordinate's stored values mean: CF's ``units`` and ``calendar``."""
    return str(attrs.get("units", "")), str(attrs.get("calendar", ""))
