"""Open archived datasets lazily: thin helpers over xarray that pass an ArchiveFileSystem in."""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Any

from archivefs.datasets.closing import close_at_exit
from archivefs.errors import ObjectChangedError, ObjectNotFoundError
from archivefs.filesystem import ArchiveFileSystem
from archivefs.providers import url_protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

from archivefs.catalog.references import KEY
from archivefs.datasets.graph import _SOURCES, LAYER_PREFIX, _Source
from archivefs.datasets.referenced import (
    find_combined,
    find_references,
    load_stored,
    open_referenced,
    reference_target,
    stored_locations,
    unchanged_while,
)

logger = logging.getLogger(__name__)

READ_WHOLE_BELOW = 8 * 2**20  # open_mfdataset: files below this are fetched whole
COMBINED_FIRST = 100
"""open_mfdataset of at least this many files reads their combined set where it would be
first (one request more, answered 404, when there is none) rather than looking for it in
the listing of every file's references, which a set found first spares; fewer files are
looked up in that one listing, at no request more."""


def _make_fs(
    storage_options: dict[str, Any] | None,
    archive_options: dict[str, Any],
    protocol: str = "s3",
) -> Any:
    return ArchiveFileSystem(
        target_protocol=protocol, target_options=dict(storage_options or {}), **archive_options
    )


def _split_url(
    url: str,
    fs: ArchiveFileSystem | None,
    options: dict[str, Any] | None,
    archive_options: dict[str, Any],
) -> tuple[ArchiveFileSystem, str]:
    if fs is None:
        fs = _make_fs(options, archive_options, url_protocol(url))
    return fs, fs._strip_protocol(url)


def _register(ds: Any, fs: ArchiveFileSystem, path: str, *, zarr: bool) -> None:
    for name, variable in ds.variables.items():
        data = variable.data
        layer = getattr(data, "name", None)
        if isinstance(layer, str) and layer.startswith(LAYER_PREFIX):
            _SOURCES[layer] = _Source(fs, path, str(name) if zarr else None, variable=str(name))


def open_zarr(
    url: str,
    *,
    storage_options: dict[str, Any] | None = None,
    fs: ArchiveFileSystem | None = None,
    consolidated: bool | None = False,
    **kwargs: Any,
) -> Any:
    """Open an archived zarr store lazily with xarray (``xarray.open_zarr``).

    Parameters
    ----------
    url:
        ``s3://bucket/store.zarr`` (or ``archive::s3://...``, or ``bucket/store.zarr``).
    storage_options:
        The cold store's options (as for s3fs).
    fs:
        An existing :class:`ArchiveFileSystem` instead of ``storage_options``.
    **kwargs:
        archivefs options (``on_archived``, ``tier``, ``days``, ``journal``,
        ``hot``, ...) are given to the filesystem; everything else to xarray.

    Examples
    --------
    ```python
    ds = ads.open_zarr("s3://bucket/climate/daily.zarr",
                       storage_options={"profile": "research"}, tier="Bulk")
    summer = ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))   # nothing read yet
    ```
    """
    import xarray as xr

    archive_options, xr_kwargs = _split_kwargs(kwargs)
    fs, path = _split_url(url, fs, storage_options, archive_options)
    ds = xr.open_zarr(fs.get_mapper(path), consolidated=consolidated, **xr_kwargs)
    ds.encoding["archivefs"] = {"path": path}
    _register(ds, fs, path, zarr=True)
    return ds


def open_dataset(
    url: str,
    *,
    storage_options: dict[str, Any] | None = None,
    fs: ArchiveFileSystem | None = None,
    engine: str = "h5netcdf",
    chunks: Any = None,
    references: bool = True,
    **kwargs: Any,
) -> Any:
    """Open one archived netCDF/HDF5 file lazily.

    A file with stored references (``archivefs index``, ``archivefs bundle``) opens
    from them alone, archived or not: no restore, no request to the file; its chunks
    are read through this filesystem when computed, and ``plan_dataset`` of a
    selection names the objects or bundles holding exactly its chunks. An object
    changed since it was indexed is refused (``ObjectChangedError``).

    Without references (or with ``references=False``) the file must read (hot or
    restored) for its header (``xarray.open_dataset`` over a file object): restore
    archived files first (``fs.restore(urls, wait=True)``); a plan then names the
    whole file.

    Example::

        ds = ads.open_dataset("s3://bucket/run42/a.nc", fs=fs)     # indexed: no restore
        ads.plan_dataset(ds["t2m"].isel(time=slice(0, 90)))
    """
    archive_options, xr_kwargs = _split_kwargs(kwargs)
    fs, path = _split_url(url, fs, storage_options, archive_options)
    if references:
        refs = find_references(fs, [path])[path]
        if refs is not None:
            with unchanged_while(fs, [refs]):
                return open_referenced(fs, path, refs, chunks=chunks, **xr_kwargs)
    handle = fs.open(path, "rb")
    return _open_source(handle, fs, path, engine=engine, chunks=chunks, **xr_kwargs)


def _open_source(
    source: Any, fs: ArchiveFileSystem, path: str, *, engine: str, chunks: Any, **xr_kwargs: Any
) -> Any:
    """``xarray.open_dataset`` of a file object, registered so that plans name ``path``."""
    import xarray as xr

    ds = xr.open_dataset(
        source, engine=engine, chunks=chunks if chunks is not None else {}, **xr_kwargs
    )
    ds.encoding["archivefs"] = {"path": path}
    _register(ds, fs, path, zarr=False)
    close_at_exit(ds, source)  # before HDF5's own exit handler would (a crash then)
    return ds


def open_mfdataset(
    paths: str | Sequence[str],
    *,
    storage_options: dict[str, Any] | None = None,
    fs: ArchiveFileSystem | None = None,
    engine: str = "h5netcdf",
    chunks: Any = None,
    combine: str = "by_coords",
    concat_dim: str | None = None,
    read_whole_below: int = READ_WHOLE_BELOW,
    parallel: bool = False,
    references: bool = True,
    **kwargs: Any,
) -> Any:
    """Open many archived netCDF/HDF5 files as one lazy dataset.

    ``paths`` is a glob string (``"s3://bucket/2023/02/*/radiometer/*.nc"``)
    or a list of URLs. Sizes come from one listing (the catalog for bundle
    members, a LIST per directory otherwise), never a HEAD per file. Files
    smaller than ``read_whole_below`` bytes are fetched whole in one
    concurrent batch (neighbouring bundle members: one ranged GET per 8 MiB)
    and parsed from memory, since HDF5 headers take many small reads; larger
    files are read lazily.
    ``combine="by_coords"`` (default) or ``"nested"`` with ``concat_dim``, and
    ``chunks``, as in ``xarray.open_mfdataset``. ``parallel=True`` parses the
    files' headers concurrently with ``dask.delayed``, as xarray's does. Files with
    stored references open from them, as in :func:`open_dataset` (all references are
    read at once, the objects checked unchanged by one listing per folder, listed
    while the datasets are made); the others as above. When exactly these files'
    references were combined (``combine_references``, ``archivefs index
    --concat-dim``) and ``combine`` is ``"by_coords"`` with no other xarray option,
    the collection opens as one dataset from that one set (one GET: below
    :data:`COMBINED_FIRST` files, if the listing of their references shows it), unless
    an object changed since (then per file).

    Example::

        ds = ads.open_mfdataset("s3://obs/2023/02/*/radiometer/*.nc", fs=fs,
                                combine="nested", concat_dim="time")
    """
    import xarray as xr

    if combine not in ("by_coords", "nested"):
        raise ValueError(f"combine={combine!r}: use 'by_coords' or 'nested'.")
    archive_options, xr_kwargs = _split_kwargs(kwargs)
    first = paths if isinstance(paths, str) else (paths[0] if paths else "")
    fs, _ = _split_url(first, fs, storage_options, archive_options)
    # a glob is listed first (its files are not known before); named files only if they
    # have no references: the references' check lists the folders of the others anyway
    sizes = _sizes(fs, paths) if isinstance(paths, str) else None
    wanted = list(sizes) if sizes is not None else _named(fs, paths)
    as_one = references and len(wanted) > 1 and combine == "by_coords" and not xr_kwargs
    first_alone = as_one and len(wanted) >= COMBINED_FIRST  # the set read where it would be
    combined = _open_combined(fs, wanted, None, chunks) if first_alone else None
    if combined is not None:
        return combined
    stored, listed = stored_locations(fs, wanted) if references else ({}, set())
    if as_one and not first_alone:  # the listing of every file's references shows it
        combined = _open_combined(fs, wanted, listed, chunks)
        if combined is not None:
            return combined
    found = load_stored(fs, stored)
    indexed = {p: refs for p, refs in found.items() if refs is not None}
    unindexed = [p for p in wanted if p not in indexed]
    if sizes is None:  # named files: the check lists the indexed ones (and proves they exist)
        sizes = _sizes(fs, unindexed) if unindexed else {}
    with unchanged_while(fs, list(indexed.values())):
        plain = {p: sizes[p] for p in unindexed}
        contents = _fetch_whole(fs, {p: n for p, n in plain.items() if n < read_whole_below})
        opened = _open_parts(fs, plain, contents, engine=engine, chunks=chunks, parallel=parallel)
        by_path = dict(zip(plain, opened, strict=True))
        remote = reference_target(fs) if indexed else None
        parts = [
            open_referenced(fs, p, indexed[p], chunks=chunks, remote=remote)
            if p in indexed
            else by_path[p]
            for p in wanted
        ]
    if combine == "nested":
        return xr.combine_nested(parts, concat_dim=concat_dim, **xr_kwargs)
    return xr.combine_by_coords(parts, **xr_kwargs)


def _open_combined(
    fs: ArchiveFileSystem, paths: list[str], listed: set[str] | None, chunks: Any
) -> Any:
    """The dataset of the combined references of exactly ``paths`` (``find_combined``;
    ``listed``: what the listing of their references found, ``None``: not listed) when
    they describe the objects as they are now, checked while it is made; ``None`` when
    there is no such set or it is stale (the files' own references then decide)."""
    collection = find_combined(fs, paths, listed)
    if collection is None:
        return None
    try:
        with unchanged_while(fs, [collection]):
            return open_referenced(fs, collection[KEY]["path"], collection, chunks=chunks)
    except ObjectChangedError as error:
        logger.info("not opening from the combined references: %s", error)
        return None


def _open_parts(
    fs: ArchiveFileSystem,
    sizes: dict[str, int],
    contents: dict[str, bytes],
    *,
    engine: str,
    chunks: Any,
    parallel: bool,
) -> list[Any]:
    """One lazy dataset per file, in ``sizes``' order; with ``parallel``, opened by dask."""

    def one(path: str, size: int) -> Any:
        data = contents.get(path)
        source: Any = io.BytesIO(data) if data is not None else fs.open(path, "rb", size=size)
        return _open_source(source, fs, path, engine=engine, chunks=chunks)

    if not parallel:
        return [one(path, size) for path, size in sizes.items()]
    from dask.base import compute
    from dask.delayed import delayed

    tasks = [delayed(one)(path, size) for path, size in sizes.items()]
    return list(compute(*tasks))  # type: ignore[no-untyped-call]


def _sizes(fs: ArchiveFileSystem, paths: str | Sequence[str]) -> dict[str, int]:
    """Path -> size, in the caller's order, from listings (one per directory), not HEADs."""
    if isinstance(paths, str):
        found = fs.glob(paths, detail=True, probe_bundles=False)  # sizes: no state asked
        sizes = {name: int(e["size"]) for name, e in sorted(found.items()) if e["type"] == "file"}
        if not sizes:
            raise ObjectNotFoundError(
                "the pattern matches no file.",
                path=paths,
                fix="check the pattern; fs.ls() of its first directory shows what exists.",
            )
        return sizes
    wanted = _named(fs, paths)
    listed: dict[str, int] = {}
    for parent in dict.fromkeys(fs._parent(p) for p in wanted):
        for entry in fs.ls(parent, detail=True):
            listed[entry["name"]] = int(entry["size"])
    missing = [p for p in wanted if p not in listed]
    if missing:
        raise ObjectNotFoundError(
            f"{len(missing)} of {len(wanted)} files do not exist (first: {missing[0]}).",
            path=missing[0],
            fix="check the paths; fs.ls() of their directory shows what exists.",
        )
    return {p: listed[p] for p in wanted}


def _named(fs: ArchiveFileSystem, paths: Sequence[str]) -> list[str]:
    """The files ``paths`` names, without their protocol; ``ValueError`` if none."""
    wanted = [fs._strip_protocol(p) for p in paths]
    if not wanted:
        raise ValueError("open_mfdataset: no paths given.")
    return wanted


def _fetch_whole(fs: ArchiveFileSystem, sizes: dict[str, int]) -> dict[str, bytes]:
    """Whole files, fetched concurrently in one batch (``fs.cat_ranges``).

    Bundle members are read as their bundle's byte ranges, neighbouring
    members merged into one ranged GET of up to 8 MiB (a month of small files
    is then a request or two, not one per file), each member checked as a
    single read is (bundle size and ETag, length, CRC-32). Other files are
    asked as ranges ``[0, size)``: a whole-object read through s3fs would
    first send a HEAD for the size the listing gave.
    """
    if not sizes:
        return {}
    paths = list(sizes)
    data = fs.cat_ranges(paths, [0] * len(paths), [sizes[p] for p in paths], on_error="raise")
    return dict(zip(paths, data, strict=True))


_ARCHIVE_KEYS = frozenset(
    {
        "price_sheet",  # e.g. azure-eastus for az:// URLs
        "egress",
        "max_cost",
        "store_options",  # the provider adapter's (Azure: rehydrate_to, retry, batch_size)
        "on_archived",
        "tier",
        "days",
        "wait_timeout",
        "journal",
        "hot",
        "hot_options",
        "restore_status_in_listings",
        "restore_time_scale",
        "concurrency",
        "skip_instance_cache",
        "pickle_credentials",
        "notifications",
        "bucket_claims",
    }
)


def _split_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    archive = {k: v for k, v in kwargs.items() if k in _ARCHIVE_KEYS}
    rest = {k: v for k, v in kwargs.items() if k not in _ARCHIVE_KEYS}
    return archive, rest
