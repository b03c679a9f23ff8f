"""Open netCDF4/HDF5 files through their kerchunk references: no restore, no archived read.

A file with references (``archivefs index``, or ``archivefs bundle``) opens from them
alone: its metadata and coordinates are in the references (hot), every chunk read
goes through fsspec's ``ReferenceFileSystem`` to the :class:`ArchiveFileSystem`
(its read policy, coalescing and counting), and a plan of a selection names the
objects or bundles that hold exactly its chunks (``graph._ReferencedLayout``).
Before a dataset is made, each object the references point into is compared with
what its listing says now (size, ETag): a changed one is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import warnings
from typing import TYPE_CHECKING, Any

from fsspec.asyn import sync
from fsspec.implementations.reference import ReferenceFileSystem, ReferenceNotReachable

from archivefs.catalog.combined import combined_files, combined_location
from archivefs.catalog.layout import COMBINED, RESERVED, references_path
from archivefs.catalog.references import (
    check_targets,
    load_references,
    parse_references,
    targets_of,
)
from archivefs.datasets.graph import _SOURCES, LAYER_PREFIX, _Source
from archivefs.errors import ArchiveError
from archivefs.stores.base import split_path
from archivefs.stores.conditional import read_versioned_async, run_blocking

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Sequence

    from archivefs.filesystem import ArchiveFileSystem

SEPARATED_CHUNKS = "The specified chunks separate the stored chunks"  # xarray's warning


def reference_root(fs: ArchiveFileSystem, path: str) -> str:
    """The root whose ``.archivefs/`` keeps the references of file ``path``: the catalog
    root that holds it, else its bucket."""
    found = fs.catalog_root_for(path)
    if found is not None:
        return str(found[0]).rstrip("/")
    return split_path(path, fs.provider)[0]


def reference_roots(fs: ArchiveFileSystem, paths: Sequence[str]) -> dict[str, str]:
    """:func:`reference_root` of each of the files ``paths`` (stripped), asked once per
    folder: the files of a folder share their root (a root is a folder)."""
    by_folder: dict[str, str] = {}
    out = {}
    for path in paths:
        folder = fs._parent(path)
        if folder not in by_folder:
            by_folder[folder] = reference_root(fs, path)
        out[path] = by_folder[folder]
    return out


def references_location(fs: ArchiveFileSystem, path: str) -> str:
    """Where the references of file ``path`` are kept: beside the catalog of the root that
    holds it, else under the bucket's own ``.archivefs/``."""
    path = fs._strip_protocol(path)
    return _location_below(reference_root(fs, path), path)


def _location_below(root: str, path: str) -> str:
    """Where the references of file ``path`` (stripped) below ``root`` are kept."""
    return references_path(root, path[len(root) + 1 :])


def collection_location(fs: ArchiveFileSystem, paths: Sequence[str]) -> str | None:
    """Where the combined references of the files ``paths`` are kept (``catalog.combined``),
    or ``None`` when they lie under different roots (no combined set can describe them)."""
    stripped = [fs._strip_protocol(p) for p in paths]
    roots = set(reference_roots(fs, stripped).values())
    if len(roots) != 1:
        return None
    root = roots.pop()
    return combined_location(root, [p[len(root) + 1 :] for p in stripped])


def find_combined(
    fs: ArchiveFileSystem, paths: Sequence[str], listed: Collection[str] | None = None
) -> dict[str, Any] | None:
    """The stored combined references of exactly the files ``paths`` (in any order), or
    ``None`` (there are none). ``listed``: what a listing of their references folder
    found (:func:`stored_locations`): the set is read only if it is there. Without it,
    the set is read where it would be: one GET, answered 404 when there is none (as
    cheap as a listing that would show it, and one round trip fewer when there is)."""
    if listed is not None and not any(f"/{COMBINED}/" in name for name in listed):
        return None  # no set listed: nothing to work out
    location = collection_location(fs, paths)
    if location is None or (listed is not None and location not in listed):
        return None
    found = run_blocking(fs.fs, read_versioned_async(fs.fs, location))
    if found is None:
        return None
    refs = parse_references(found[0], location)
    if combined_files(refs) != sorted(fs._strip_protocol(p) for p in paths):
        return None  # another set of files with the same digest: not these
    return refs


class ArchiveReferences(ReferenceFileSystem):  # type: ignore[misc]
    """fsspec's ``ReferenceFileSystem`` that lets archivefs's errors through as they are
    (``ObjectArchivedError`` names the object, the estimate and the restore), where
    fsspec would wrap them in its ``ReferenceNotReachable``. A module-level class, so a
    dataset opened through it pickles to Dask workers by reference."""

    async def _cat_file(self, path: str, start: Any = None, end: Any = None, **kw: Any) -> Any:
        try:
            return await super()._cat_file(path, start=start, end=end, **kw)
        except ReferenceNotReachable as error:
            if isinstance(error.__cause__, ArchiveError):
                raise error.__cause__ from None
            raise


def find_references(
    fs: ArchiveFileSystem, paths: Sequence[str]
) -> dict[str, dict[str, Any] | None]:
    """Each file's stored references (``None``: it has none): one recursive listing of the
    references folder the files share (per catalog root or bucket), then a GET of each
    that exists, at once. Files without references cost that one listing."""
    return load_stored(fs, stored_locations(fs, paths)[0])


def load_stored(
    fs: ArchiveFileSystem, locations: dict[str, str | None]
) -> dict[str, dict[str, Any] | None]:
    """The references at each file's location from :func:`stored_locations`, read at once."""
    present = sorted({loc for loc in locations.values() if loc is not None})
    loaded = run_blocking(fs.fs, load_references(fs.fs, present)) if present else {}
    return {p: None if loc is None else loaded.get(loc) for p, loc in locations.items()}


def stored_locations(
    fs: ArchiveFileSystem, paths: Sequence[str]
) -> tuple[dict[str, str | None], set[str]]:
    """Where each file's stored references are (``None``: it has none), from one recursive
    listing of the references folder the files share (per catalog root or bucket); and
    everything that listing found (combined sets too)."""
    stripped = {p: fs._strip_protocol(p) for p in paths}
    roots = reference_roots(fs, list(stripped.values()))
    locations = {p: _location_below(roots[path], path) for p, path in stripped.items()}
    folders: dict[str, list[str]] = {}
    for location in locations.values():
        top = location.split(f"/{RESERVED}/references/", 1)[0]
        folders.setdefault(top, []).append(location)
    existing: set[str] = set()
    for wanted in folders.values():
        common = posixpath.commonpath([posixpath.dirname(w) for w in wanted])
        listing = sync(fs.loop, fs.store.list, common, recursive=True)
        existing.update(state.path for state in listing.files)
    return {p: loc if loc in existing else None for p, loc in locations.items()}, existing


def check_unchanged(fs: ArchiveFileSystem, found: Sequence[dict[str, Any]]) -> None:
    """Refuse references whose objects changed (``ObjectChangedError``): sizes and ETags
    from one listing per folder (all at once), never a HEAD or GET of an archived object."""
    _refuse_changed(found, sync(fs.loop, _current_states, fs, found))


@contextlib.contextmanager
def unchanged_while(fs: ArchiveFileSystem, found: Sequence[dict[str, Any]]) -> Iterator[None]:
    """:func:`check_unchanged` with its listings in flight while the block runs (a dataset
    being made from ``found``): a changed object raises ``ObjectChangedError`` when the
    block ends, ahead of an error of the block's own. The block must not hand out what it
    made before then; it may have read a changed object's bytes, which are dropped."""
    listing = asyncio.run_coroutine_threadsafe(_current_states(fs, found), fs.loop)
    try:
        yield
    except BaseException:
        _refuse_changed(found, listing.result())  # a changed object explains the failure best
        raise
    _refuse_changed(found, listing.result())


def _refuse_changed(
    found: Sequence[dict[str, Any]], current: dict[str, tuple[int, str] | None]
) -> None:
    """``ObjectChangedError`` for the first of ``found`` whose objects differ from
    ``current`` (:func:`_current_states`)."""
    for refs in found:
        check_targets(refs, current)


async def _current_states(
    fs: ArchiveFileSystem, found: Sequence[dict[str, Any]]
) -> dict[str, tuple[int, str] | None]:
    """Each target URL of ``found`` -> its ``(size, etag)`` now (``None``: gone), from
    the store's listing of each folder they lie in, all listed at once (bundles under
    ``.archivefs/`` are listed like any object)."""
    folders: dict[str, set[str]] = {}
    for refs in found:
        for target in targets_of(refs):
            path = fs._strip_protocol(target.url)
            folders.setdefault(fs._parent(path), set()).add(target.url)
    listings = await asyncio.gather(*(fs.store.list(folder) for folder in folders))
    current: dict[str, tuple[int, str] | None] = {}
    for urls, listing in zip(folders.values(), listings, strict=True):
        listed = {state.path: state for state in listing.files}
        for url in urls:
            state = listed.get(fs._strip_protocol(url))
            current[url] = None if state is None else (int(state.size), str(state.etag))
    return current


def reference_target(fs: ArchiveFileSystem) -> Any:
    """``fs`` as the reference filesystems' target: zarr reads on its own event loop, so
    the archive filesystem's calls run on a thread there (each on the filesystem's own
    loop), and reads, counts and budget are ``fs``'s. One serves many files."""
    from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

    return AsyncFileSystemWrapper(fs, asynchronous=True)


def open_referenced(
    fs: ArchiveFileSystem,
    path: str,
    refs: dict[str, Any],
    *,
    chunks: Any,
    remote: Any = None,
    **xr_kwargs: Any,
) -> Any:
    """``xarray.open_dataset`` of file ``path`` from its references (checked unchanged by
    the caller), registered so that plans name the objects its chunks lie in. ``remote``:
    ``reference_target(fs)``, made once for many files (wrapping ``fs`` costs ~15 ms)."""
    import xarray as xr

    from archivefs.datasets.refstore import ReferencedStore

    remote = remote if remote is not None else reference_target(fs)
    rfs = ArchiveReferences(
        fo=refs,
        fs={fs.store_protocol: remote},
        asynchronous=True,
        skip_instance_cache=True,
        max_gap=0,  # no bytes between chunks: the archive filesystem coalesces its own reads
    )
    store = ReferencedStore(rfs, read_only=True, path="")
    store.identity = (path, *sorted((t.url, t.size, t.etag) for t in targets_of(refs)))
    with warnings.catch_warnings():
        # a contiguous netCDF variable is one stored "chunk" in its references: ``chunks=``
        # that split it are what the caller asked for, as they are when the file itself
        # is opened (where xarray does not warn)
        warnings.filterwarnings("ignore", SEPARATED_CHUNKS, UserWarning)
        ds = xr.open_dataset(
            store,  # type: ignore[arg-type]  # a zarr store: the zarr engine takes it
            engine="zarr",
            consolidated=False,
            chunks=chunks if chunks is not None else {},
            **xr_kwargs,
        )
    ds.encoding["archivefs"] = {"path": path, "references": True}
    for name, variable in ds.variables.items():
        layer = getattr(variable.data, "name", None)
        if isinstance(layer, str) and layer.startswith(LAYER_PREFIX):
            _SOURCES[layer] = _Source(fs, path, str(name), rfs.references)
    return ds
