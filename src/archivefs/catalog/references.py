"""kerchunk references of netCDF4/HDF5 and netCDF3 files: made while the bytes are at hand,
kept hot.

A file's references say where each chunk of each variable lies (object URL, offset,
length) and hold its small variables inline, so the file opens and a selection maps
to byte ranges without a request to the object. They are made by kerchunk's own
parsers (``SingleHdf5ToZarr``, ``NetCDF3ToZarr``), never by one of ours, and kept as
one kerchunk JSON object (version 1) per file at ``<root>/.archivefs/references/<relative>.json``
(``catalog.layout.references_path``): fsspec's ``ReferenceFileSystem`` and zarr read
it without archivefs. One object per file rather than one per root: writers of
different files never contend, a file's description is one small GET, and a damaged
object costs one file, not a root.

archivefs adds one top-level key that kerchunk ignores, ``"archivefs"``: the file's
path and, per object the references point into, its size and ETag when they were
made (:class:`Target`). An object whose size or ETag differ is refused before a byte
of it is used (:func:`check_targets`).

Writes follow the catalog's many-writer rules (DESIGN section 13): read with the
version, write only over it (``stores.conditional``); a lost race re-reads and
writes again unless the winner already describes the same object; stored
references that cannot be read stop the write (never replaced by what one writer
knows).
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archivefs.bulk import gc_paused
from archivefs.errors import ObjectChangedError, ReferencesError
from archivefs.stores.conditional import read_versioned_async, write_versioned_async

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

VERSION = 1  # kerchunk's JSON reference format
KEY = "archivefs"  # archivefs's own top-level key (kerchunk and fsspec ignore it)
FORMAT = 1  # the layout of that key
INLINE_THRESHOLD = 500  # chunks of fewer bytes are kept inline (kerchunk's default)
INLINE_COORDINATES = 1 << 20  # coordinates of up to this many bytes are kept inline whole
SAVE_TRIES = 20  # lost races in a row before giving up

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
NETCDF3_SIGNATURES = (b"CDF\x01", b"CDF\x02", b"CDF\x05")


@dataclass(frozen=True)
class Target:
    """An object references point into, as it was when they were made."""

    url: str  # the provider's URL (``s3://bucket/key``), as written in the references
    size: int
    etag: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "etag", plain_etag(self.etag))

    def as_json(self) -> dict[str, Any]:
        return {"size": self.size, "etag": self.etag}


def plain_etag(etag: str) -> str:
    """An ETag without the quotes some answers keep (Azure's listings drop them, its
    descriptions keep them): one spelling to record and compare."""
    return etag.strip('"')


def file_kind(head: bytes) -> str | None:
    """``"hdf5"`` (netCDF4 too), ``"netcdf3"``, or ``None`` from a file's first bytes.

    An HDF5 superblock may also sit at 512, 1024, 2048... (a user block before it):
    give as many bytes as were read."""
    if head[:4] in NETCDF3_SIGNATURES:
        return "netcdf3"
    offset = 0
    while offset + len(HDF5_SIGNATURE) <= len(head):
        if head[offset : offset + len(HDF5_SIGNATURE)] == HDF5_SIGNATURE:
            return "hdf5"
        offset = 512 if offset == 0 else offset * 2
    return None


def make_references(
    fileobj: Any,
    url: str,
    *,
    inline_threshold: int = INLINE_THRESHOLD,
    inline_coordinates: int = INLINE_COORDINATES,
) -> dict[str, Any]:
    """kerchunk references (version 1) of the netCDF4/HDF5 file open as ``fileobj``.

    ``url`` is what the references point at. Chunks under ``inline_threshold`` bytes
    are kept inline, and so are coordinates (1-D variables named as their dimension,
    and variables a ``coordinates`` attribute names) of up to ``inline_coordinates``
    bytes, so that opening the file, which reads its index coordinates, needs no
    request to the object. Only the file's metadata and those bytes are read.
    """
    from kerchunk.hdf import SingleHdf5ToZarr

    with gc_paused():  # h5py's lock is held while zarr's thread works for kerchunk
        translator = SingleHdf5ToZarr(
            fileobj, url, inline_threshold=inline_threshold, error="raise"
        )
        refs: dict[str, Any] = translator.translate()

    def read(offset: int, length: int) -> bytes:
        fileobj.seek(offset)
        data: bytes = fileobj.read(length)
        return data

    inline(refs, coordinate_names(refs), read, inline_coordinates)
    return refs


def make_netcdf3_references(
    source: str,
    storage_options: dict[str, Any],
    url: str,
    read: Callable[[int, int], bytes],
    *,
    inline_threshold: int = INLINE_THRESHOLD,
    inline_coordinates: int = INLINE_COORDINATES,
) -> dict[str, Any]:
    """kerchunk references (version 1) of the netCDF3 file that ``fsspec.open(source,
    **storage_options)`` reads (kerchunk's ``NetCDF3ToZarr`` opens it itself), pointing
    at ``url``; coordinates inline as in :func:`make_references`, their bytes read with
    ``read(offset, length)``."""
    from kerchunk.netCDF3 import NetCDF3ToZarr

    translator = NetCDF3ToZarr(
        source, storage_options=storage_options, inline_threshold=inline_threshold
    )
    try:
        refs: dict[str, Any] = translator.translate()  # no h5py: nothing to pause
    finally:
        translator.fp.close()
    entries = {
        key: [url, *value[1:]] if isinstance(value, list) and value else value
        for key, value in refs["refs"].items()
    }
    out = {**refs, "refs": entries}
    inline(out, coordinate_names(out), read, inline_coordinates)
    return out


def coordinate_names(refs: dict[str, Any]) -> set[str]:
    """Arrays of ``refs`` that are coordinates: dimension coordinates, and arrays named by
    any array's ``coordinates`` attribute (netCDF's CF convention)."""
    entries = refs["refs"]
    arrays = {key.rsplit("/", 1)[0] for key in entries if key.endswith("/.zarray")}
    found = set()
    for name in arrays:
        attrs = _json(entries.get(f"{name}/.zattrs", "{}"))
        dims = attrs.get("_ARRAY_DIMENSIONS", [])
        if dims == [name.rsplit("/", 1)[-1]]:
            found.add(name)
        found.update(str(attrs.get("coordinates", "")).split())
    return found & arrays


def inline(
    refs: dict[str, Any],
    arrays: Iterable[str],
    read: Callable[[int, int], bytes],
    limit: int,
) -> None:
    """Replace the chunk references of ``arrays`` (each of at most ``limit`` bytes in all)
    by their bytes, read with ``read(offset, length)`` from the file itself."""
    entries = refs["refs"]
    for name in arrays:
        keys = [
            k for k in entries if k.rsplit("/", 1)[0] == name and k.rsplit("/", 1)[1][:1] != "."
        ]
        pointers = [entries[k] for k in keys if isinstance(entries[k], list)]
        if not pointers or sum(p[2] for p in pointers if len(p) == 3) > limit:
            continue
        if any(len(p) != 3 for p in pointers):
            continue  # a whole-file reference: not a chunk
        for key in keys:
            value = entries[key]
            if isinstance(value, list):
                entries[key] = "base64:" + base64.b64encode(read(value[1], value[2])).decode()


def relocated(refs: dict[str, Any], url: str, offset: int, size: int) -> dict[str, Any]:
    """``refs`` of a file stored at ``offset`` in the object at ``url`` (a bundle member):
    every pointer moved there (a whole-file pointer becomes ``[url, offset, size]``)."""
    entries = {}
    for key, value in refs["refs"].items():
        if isinstance(value, list):
            if len(value) == 1:
                value = [url, offset, size]
            else:
                value = [url, offset + int(value[1]), int(value[2])]
        entries[key] = value
    return {**refs, "refs": entries}


def described(
    refs: dict[str, Any],
    path: str,
    targets: Iterable[Target],
    *,
    inline_threshold: int = INLINE_THRESHOLD,
) -> dict[str, Any]:
    """``refs`` with archivefs's key: the file's ``path``, the ``inline_threshold`` they
    were made with, and the objects they point into."""
    return {
        **refs,
        KEY: {
            "format": FORMAT,
            "path": path,
            "inline_threshold": inline_threshold,
            "targets": {t.url: t.as_json() for t in targets},
        },
    }


def made_with(refs: dict[str, Any], inline_threshold: int) -> bool:
    """Whether ``refs`` were made with ``inline_threshold`` (references from archivefs
    versions that did not record it count as made with any)."""
    return bool(refs[KEY].get("inline_threshold", inline_threshold) == inline_threshold)


def targets_of(refs: dict[str, Any]) -> list[Target]:
    """The objects ``refs`` point into, with the size and ETag recorded for each."""
    recorded = refs[KEY]["targets"]
    return [Target(url, int(v["size"]), str(v["etag"])) for url, v in sorted(recorded.items())]


def describes_same(stored: dict[str, Any], made: dict[str, Any]) -> bool:
    """Whether two references describe the same objects (sizes, ETags) the same way
    (archivefs's key: for a combined set also its files and dimension)."""

    def rest(refs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in refs[KEY].items() if k != "targets"}

    return targets_of(stored) == targets_of(made) and rest(stored) == rest(made)


def pointers(refs: dict[str, Any], keys: Iterable[str]) -> list[tuple[str, int, int]]:
    """``(url, offset, length)`` of each of ``keys`` that points into an object (inline
    chunks and keys without a reference, zarr's fill values, are left out)."""
    entries = refs["refs"]
    out = []
    for key in keys:
        value = entries.get(key)
        if isinstance(value, list) and len(value) == 3:
            out.append((str(value[0]), int(value[1]), int(value[2])))
    return out


def parse_references(raw: bytes, path: str) -> dict[str, Any]:
    """Stored references, checked for the shape archivefs relies on."""
    try:
        with gc_paused():  # a set of 10^5 chunks is 10^5 lists: no collection walks them all
            refs = json.loads(raw)
    except ValueError as error:
        raise ReferencesError(
            f"the stored references are not valid JSON ({error}).",
            path=path,
            fix="index the file again (`archivefs index URL` once it reads) after removing this "
            "object; check first that nothing else writes there.",
        ) from error
    layout = refs.get(KEY) if isinstance(refs, dict) else None
    if (
        not isinstance(refs, dict)
        or refs.get("version") != VERSION
        or not isinstance(refs.get("refs"), dict)
        or not isinstance(layout, dict)
        or not isinstance(layout.get("targets"), dict)
    ):
        raise ReferencesError(
            "the stored references are not kerchunk JSON version 1 with archivefs's targets.",
            path=path,
            fix="upgrade archivefs if a newer one wrote them; else remove the object and index "
            "the file again.",
        )
    if layout.get("format") != FORMAT:
        raise ReferencesError(
            f"the stored references have archivefs format {layout.get('format')!r}; this "
            f"archivefs reads format {FORMAT}.",
            path=path,
            fix="upgrade archivefs.",
        )
    return refs


def dump_references(refs: dict[str, Any]) -> bytes:
    return json.dumps(refs, sort_keys=True, separators=(",", ":")).encode()


async def save_references(fs: Any, path: str, refs: dict[str, Any]) -> bool:
    """Store ``refs`` at ``path`` on ``fs`` (the store's own filesystem); ``False`` when
    the references there already describe the same objects (:func:`describes_same`:
    nothing written).

    The first try creates the object only if it is absent (one request when there are
    none); then each try writes only over the version it read; stored references that
    cannot be read raise :class:`ReferencesError` and are left as they are.
    """
    data = dump_references(refs)
    if await write_versioned_async(fs, path, data, None):
        return True  # there were none (a first index, a new bundle): one request
    for _ in range(SAVE_TRIES):
        current = await read_versioned_async(fs, path)
        if current is not None and describes_same(parse_references(current[0], path), refs):
            return False  # another writer described the same objects: theirs stays
        version = current[1] if current else None
        if await write_versioned_async(fs, path, data, version):
            return True
    raise ReferencesError(
        f"the stored references changed {SAVE_TRIES} times while they were being written.",
        path=path,
        fix="run the command again once the other indexing runs on this root finish.",
    )


LOAD_CONCURRENCY = 32  # references read at once


async def load_references(fs: Any, paths: list[str]) -> dict[str, dict[str, Any] | None]:
    """The stored references at each of ``paths`` (``None``: there are none), read at once
    through each store's own read (``stores.conditional``): absence is ``None``, any other
    failure raises."""
    gate = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def one(path: str) -> dict[str, Any] | None:
        async with gate:
            found = await read_versioned_async(fs, path)
        return None if found is None else parse_references(found[0], path)

    loaded = await asyncio.gather(*(one(p) for p in paths))
    return dict(zip(paths, loaded, strict=True))


def check_targets(refs: dict[str, Any], current: dict[str, tuple[int, str] | None]) -> None:
    """Refuse references whose objects changed: ``current`` maps each target URL to its
    ``(size, etag)`` now (``None``: gone). Raises :class:`ObjectChangedError`."""
    source = refs[KEY].get("path")
    for target in targets_of(refs):
        now = current.get(target.url)
        if now is None:
            raise ObjectChangedError(
                f"the object its references point into is gone ({target.url}).",
                path=source,
                fix="restore or re-upload the object, or remove the references and index "
                "the file again where it lies now.",
            )
        now = (now[0], plain_etag(now[1]))
        if now != (target.size, target.etag):
            raise ObjectChangedError(
                f"the object its references point into changed since they were made "
                f"({target.url}: size {target.size} -> {now[0]}, ETag {target.etag} -> "
                f"{now[1]}); its bytes were not used.",
                path=source,
                fix="index the file again (`archivefs index URL`, once it reads) so the "
                "references describe the object as it is now.",
            )


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        if value.startswith(b"base64:"):
            value = base64.b64decode(value[7:])
        loaded: dict[str, Any] = json.loads(value)
        return loaded
    return dict(value)
