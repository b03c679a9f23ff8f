"""xarray helpers: open archived datasets lazily, see what a selection needs, restore ahead.

``open_zarr``/``open_dataset``/``open_mfdataset`` are thin wrappers over
xarray that pass an :class:`ArchiveFileSystem` in; metadata is read at once
(it stays hot), data chunks only when computed. :func:`plan_dataset` walks a
lazy selection's Dask graph down to the chunk reads it will make, maps them
to the exact chunk objects (zarr) or files (netCDF/HDF5), and plans their
restore without sending anything; :func:`prefetch` then restores them.
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archivefs.coordinator import Coordination, await_group, default_client, start_coordinator
from archivefs.coordinator import stats as coordinator_stats
from archivefs.errors import ArchiveError, ObjectNotFoundError
from archivefs.filesystem import ArchiveFileSystem
from archivefs.hints import note_readable
from archivefs.model import ObjectState, Plan

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from archivefs.restore.engine import RestoreResult

LAYER_PREFIX = "open_dataset-"
READ_WHOLE_BELOW = 8 * 2**20  # open_mfdataset: files below this are fetched whole


@dataclass(frozen=True)
class _Source:
    """Where the chunks of one opened variable live."""

    fs: ArchiveFileSystem
    path: str  # the zarr store or the file
    array: str | None  # array path inside a zarr store; None: a whole file


_SOURCES: dict[str, _Source] = {}  # dask layer name -> source


def _make_fs(
    storage_options: dict[str, Any] | None,
    archive_options: dict[str, Any],
    protocol: str = "s3",
) -> Any:
    return ArchiveFileSystem(
        target_protocol=protocol, target_options=dict(storage_options or {}), **archive_options
    )


def _target_protocol(url: str) -> str:
    """The cold store's protocol in ``url`` (``az://c/p``, ``archive::az://c/p``); S3 if none."""
    last = url.rsplit("::", 1)[-1]
    protocol = last.split("://", 1)[0] if "://" in last else "s3"
    return "s3" if protocol in ("archive", "archivefs") else protocol


def _split_url(
    url: str,
    fs: ArchiveFileSystem | None,
    options: dict[str, Any] | None,
    archive_options: dict[str, Any],
) -> tuple[ArchiveFileSystem, str]:
    if fs is None:
        fs = _make_fs(options, archive_options, _target_protocol(url))
    return fs, fs._strip_protocol(url)


def _register(ds: Any, fs: ArchiveFileSystem, path: str, *, zarr: bool) -> None:
    for name, variable in ds.variables.items():
        data = variable.data
        layer = getattr(data, "name", None)
        if isinstance(layer, str) and layer.startswith(LAYER_PREFIX):
            _SOURCES[layer] = _Source(fs, path, str(name) if zarr else None)


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
    **kwargs: Any,
) -> Any:
    """Open one archived netCDF/HDF5 file lazily (``xarray.open_dataset`` over a file object).

    The file must read (hot or restored) for its header: restore archived
    files first (``fs.restore(urls, wait=True)``); once opened, ``plan_dataset``
    of a selection names the whole file (netCDF/HDF5 plans are per file).

    Example::

        fs.restore("s3://bucket/run42/a.nc", wait=True)
        ds = ads.open_dataset("s3://bucket/run42/a.nc", fs=fs)
    """
    archive_options, xr_kwargs = _split_kwargs(kwargs)
    fs, path = _split_url(url, fs, storage_options, archive_options)
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
    ``chunks``, as in ``xarray.open_mfdataset``.

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
    sizes = _sizes(fs, paths)
    contents = _fetch_whole(fs, {p: n for p, n in sizes.items() if n < read_whole_below})
    parts = []
    for path, size in sizes.items():
        data = contents.get(path)
        source: Any = io.BytesIO(data) if data is not None else fs.open(path, "rb", size=size)
        parts.append(_open_source(source, fs, path, engine=engine, chunks=chunks))
    if combine == "nested":
        return xr.combine_nested(parts, concat_dim=concat_dim, **xr_kwargs)
    return xr.combine_by_coords(parts, **xr_kwargs)


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
    wanted = [fs._strip_protocol(p) for p in paths]
    if not wanted:
        raise ValueError("open_mfdataset: no paths given.")
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


# -- planning a selection ------------------------------------------------------------------


Window = tuple[tuple[int, int], ...]  # (start, stop) of a read along each dimension


def chunk_reads(obj: Any) -> dict[str, list[Window]]:
    """The source reads a lazy xarray object will make: layer name -> element windows.

    Example::

        chunk_reads(ds["t2m"].isel(time=0))   # {'open_dataset-t2m-...': [((0, 5), (0, 18), ...)]}
    """
    from dask.core import flatten, get_dependencies

    arrays = _dask_arrays(obj)
    reads: dict[str, set[Window]] = {}
    for array in arrays:
        graph = dict(array.__dask_graph__())
        stack = list(flatten(array.__dask_keys__()))  # type: ignore[no-untyped-call]
        seen: set[Any] = set()
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            if isinstance(key, tuple) and isinstance(key[0], str) and _known(key[0], graph, key):
                window = _task_window(graph[key])
                if window is not None:
                    reads.setdefault(key[0], set()).add(window)
                continue
            stack.extend(get_dependencies(graph, key))
    return {layer: sorted(windows) for layer, windows in reads.items()}


def _known(layer: str, graph: dict[Any, Any], key: Any) -> bool:
    """Whether ``layer`` reads an archive; learns layers xarray opened on its own."""
    if layer in _SOURCES:
        return True
    if not layer.startswith(LAYER_PREFIX):
        return False
    source = _source_of_task(graph, graph.get(key))
    if source is None:
        return False
    _SOURCES[layer] = source
    return True


def _source_of_task(graph: dict[Any, Any], task: Any) -> _Source | None:
    """The archive source of a chunk read, found through the array it indexes.

    ``xr.open_zarr("archive::s3://...", storage_options=...)`` never passes
    through :func:`open_zarr`: the chunk task then refers to xarray's lazily
    indexed wrapper of a zarr array whose store is an ``FsspecStore`` on an
    :class:`ArchiveFileSystem`.
    """
    from dask._task_spec import TaskRef

    for arg in getattr(task, "args", ()):
        value = graph.get(arg.key) if isinstance(arg, TaskRef) else getattr(arg, "value", arg)
        found = _zarr_source(value)
        if found is not None:
            return found
    return None


def _zarr_source(value: Any) -> _Source | None:
    for _ in range(8):  # adapters wrap each other a few levels deep
        store = getattr(value, "store", None)
        if store is not None and isinstance(getattr(store, "fs", None), ArchiveFileSystem):
            return _Source(_blocking(store.fs), str(store.path).rstrip("/"), str(value.path))
        inner = getattr(value, "array", None)
        value = inner if inner is not None else getattr(value, "_array", None)
        if value is None:
            return None
    return None


def _blocking(fs: ArchiveFileSystem) -> ArchiveFileSystem:
    """A blocking twin of the asynchronous instance zarr made (same options)."""
    if not fs.asynchronous:
        return fs
    options = {k: v for k, v in fs.storage_options.items() if k not in ("asynchronous", "fo")}
    return ArchiveFileSystem(*fs.storage_args, **options)


def _dask_arrays(obj: Any) -> list[Any]:
    variables = obj.variables.values() if hasattr(obj, "data_vars") else [obj.variable]
    out = []
    for variable in variables:
        data = variable.data
        if hasattr(data, "__dask_graph__"):
            out.append(data)
    return out


def _task_window(task: Any) -> Window | None:
    """The element window ``getter(source, (slice, ...))`` reads."""
    for arg in getattr(task, "args", ()):
        value = getattr(arg, "value", arg)
        if isinstance(value, tuple) and value and all(isinstance(s, slice) for s in value):
            return tuple((int(s.start or 0), int(s.stop)) for s in value)
    return None


def chunk_paths(obj: Any) -> dict[ArchiveFileSystem, list[str]]:
    """The exact chunk objects (zarr) or files (netCDF) a lazy selection reads, per filesystem.

    Example::

        chunk_paths(ds["t2m"].isel(time=0))   # {fs: ['bucket/store.zarr/t2m/c/0/0/0', ...]}
    """
    out: dict[ArchiveFileSystem, set[str]] = {}
    metadata: dict[tuple[int, str, str], _ArrayLayout] = {}
    for layer, windows in chunk_reads(obj).items():
        source = _SOURCES[layer]
        paths = out.setdefault(source.fs, set())
        if source.array is None:
            paths.add(source.path)
            continue
        cache_key = (id(source.fs), source.path, source.array)
        if cache_key not in metadata:
            metadata[cache_key] = _ArrayLayout.read(source.fs, source.path, source.array)
        layout = metadata[cache_key]
        for window in windows:
            paths.update(layout.keys_for(window))
    return {fs: sorted(paths) for fs, paths in out.items()}


def plan_dataset(obj: Any, *, tier: str | None = None, days: int | None = None) -> Plan:
    """Plan the restore of everything a lazy selection reads. Sends no restore request.

    Chunks that do not exist (zarr fill values) are left out, as zarr would skip them.
    Works on datasets opened with :func:`open_zarr`/:func:`open_dataset` and on
    ``xr.open_zarr("archive::s3://...", storage_options=...)``.

    Example::

        plan = ads.plan_dataset(ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31")))
        len(plan.paths), len(plan), len(plan.to_restore)   # chunks, bundles, paid requests
        fs.estimate_plan(plan).total                        # dollars, before anything is sent
    """
    per_fs = chunk_paths(obj)
    if not per_fs:
        raise _nothing_to_plan()
    if len(per_fs) > 1:
        raise ArchiveError(
            "the selection reads from several archive filesystems; plan each dataset separately.",
            fix="call plan_dataset on each opened dataset's selection.",
        )
    ((fs, paths),) = per_fs.items()
    plan: Plan = fs.plan(paths, tier=tier, days=days)
    plan = plan.replace(missing=())  # absent chunks are fill values, not errors
    # compute() will read these chunks one by one, unguarded: the retrieval fees of the
    # selection are shown to the budget and estimate hooks here, once
    fs.approve_reads(plan)
    return plan


def _nothing_to_plan() -> ArchiveError:
    return ArchiveError(
        "found no lazy chunk reads through an archivefs filesystem in this object: it is "
        "in memory already (computed, or loaded with .values/.load()), or it was opened "
        "without archivefs (plain s3fs or local files).",
        fix="open it with archivefs.open_zarr/open_dataset, or xr.open_zarr('archive::s3://...', "
        "storage_options=...), and pass the lazy selection before .compute().",
    )


def prefetch(
    obj: Any,
    *,
    tier: str | None = None,
    days: int | None = None,
    wait: bool = True,
    timeout: float | None = None,
) -> RestoreResult:
    """Restore everything a lazy selection will read, ahead of ``compute()``.

    One batch: one request per group (object or bundle) that needs one, none
    for what is hot, restored or already restoring; with ``wait=True`` (the
    default) returns once all of it reads, polling in bulk. Chunks in classes that
    read at once for a retrieval fee (S3 STANDARD_IA/GLACIER_IR, GCS
    Nearline/Coldline/Archive) need no request, but their fees are in the estimate
    that ``max_cost``/``on_estimate`` see first (``BudgetExceededError`` before
    anything is sent or read).

    Example::

        summer = ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))
        ads.prefetch(summer, tier="Bulk", timeout=48 * 3600)
        summer.mean().compute()
    """
    per_fs = chunk_paths(obj)
    results = [
        fs.prefetch(paths, tier=tier, days=days, wait=wait, timeout=timeout)
        for fs, paths in per_fs.items()
        if paths
    ]
    if not results:
        raise _nothing_to_plan()
    return results[0] if len(results) == 1 else _merge(results)


def _merge(results: list[RestoreResult]) -> RestoreResult:
    first = results[0]
    for other in results[1:]:
        first.submitted.sent.update(other.submitted.sent)
        first.submitted.failed.update(other.submitted.failed)
        first.submitted.skipped.extend(other.submitted.skipped)
        first.ready.extend(other.ready)
    return first


@dataclass(frozen=True)
class _ArrayLayout:
    """A zarr array's chunk grid and how chunk indices become object keys."""

    prefix: str
    chunk_shape: tuple[int, ...]
    separator: str
    v2_keys: bool

    @classmethod
    def read(cls, fs: ArchiveFileSystem, store: str, array: str) -> _ArrayLayout:
        base = f"{store}/{array}"
        try:
            meta = json.loads(fs.cat_file(f"{base}/zarr.json"))
            grid = meta["chunk_grid"]["configuration"]["chunk_shape"]
            encoding = meta.get("chunk_key_encoding", {"name": "default"})
            config = encoding.get("configuration", {})
            v2 = encoding.get("name") == "v2"
            separator = config.get("separator", "." if v2 else "/")
            return cls(base, tuple(grid), separator, v2)
        except FileNotFoundError:
            meta = json.loads(fs.cat_file(f"{base}/.zarray"))
            return cls(base, tuple(meta["chunks"]), meta.get("dimension_separator", "."), True)

    def keys_for(self, window: Window) -> Iterator[str]:
        ranges = [
            range(start // size, (max(stop, start + 1) - 1) // size + 1)
            for (start, stop), size in zip(window, self.chunk_shape, strict=True)
        ]
        for index in _product(ranges):
            yield f"{self.prefix}/{self._key(index)}"

    def _key(self, index: tuple[int, ...]) -> str:
        if self.v2_keys:
            return self.separator.join(map(str, index)) if index else "0"
        return self.separator.join(("c", *map(str, index)))


def _product(ranges: Iterable[range]) -> Iterator[tuple[int, ...]]:
    from itertools import product

    return product(*ranges)


# -- a restore-aware graph -------------------------------------------------------------------


def restore_aware(
    obj: Any,
    *,
    timeout: float | None = None,
    poll_interval: float | None = None,
    coordinate: bool | None = None,
) -> Any:
    """The same lazy object, with every chunk read waiting for its own group's restore.

    The selection's plan is submitted once, here (one restore request per group
    that needs one, deduplicated by the journal and, if enabled, the bucket's
    claims); then each chunk read task depends on a "ready" task for its group.
    A computation therefore starts on the groups that come back first instead
    of waiting for the last one.

    With a ``distributed`` client, one coordinator task polls all groups in
    bulk and releases each group's ready task by an event: no worker polls the
    store (:mod:`archivefs.coordinator`). Without one, each ready task polls its
    own group on the tier-aware schedule of its class (the filesystem's
    ``restore_time_scale`` applied), or every ``poll_interval`` seconds if given;
    with one, ``poll_interval`` (default 60) is how often a waiting task checks
    that the coordinator is still healthy.
    ``coordinate=False`` keeps per-group polling even with a client;
    ``coordinate=True`` fails without one.

    Example::

        gated = ads.restore_aware(ds["t2m"].isel(time=slice(0, 90)), poll_interval=600)
        client.compute(gated.mean("time"))    # starts on the first bundles back
    """
    per_fs = chunk_paths(obj)
    if not per_fs:
        raise _nothing_to_plan()
    client = default_client() if coordinate is not False else None
    if coordinate and client is None:
        raise ArchiveError(
            "coordinate=True needs a distributed client, and none is running.",
            fix="create one first (`distributed.Client(...)`), or leave coordinate unset.",
        )
    group_of: dict[str, tuple[ArchiveFileSystem, ObjectState]] = {}
    coordinations: dict[int, Coordination] = {}
    submitted: dict[int, float] = {}
    for fs, paths in per_fs.items():
        plan = fs.plan(paths)
        submitted_at = submitted[id(fs)] = time.time()
        fs.submit(plan)
        if client is not None:
            coordinations[id(fs)] = start_coordinator(client, fs, plan, timeout, submitted_at)
        for group in plan.groups:
            for path in group.paths:
                group_of[path] = (fs, group.state)
    return _rewire(obj, group_of, timeout, poll_interval, coordinations, submitted)


def coordination_stats(obj: Any) -> list[dict[str, int]]:
    """Progress of the coordinators of a restore-aware object: groups, ready, poll rounds."""
    from dask._task_spec import DataNode

    found: dict[str, Coordination] = {}
    for array in _dask_arrays(obj):
        for task in array.__dask_graph__().values():
            if getattr(task, "func", None) is not await_group:
                continue
            first = task.args[0]
            value = first.value if isinstance(first, DataNode) else first
            found[value.token] = value
    return [coordinator_stats(c) for c in found.values()]


def _rewire(
    obj: Any,
    group_of: dict[str, tuple[ArchiveFileSystem, ObjectState]],
    timeout: float | None,
    poll_interval: float | None,
    coordinations: dict[int, Coordination],
    submitted: dict[int, float],
) -> Any:
    import dask.array as da
    from dask._task_spec import Task, TaskRef

    layouts: dict[tuple[int, str, str], _ArrayLayout] = {}

    def rewired(array: Any) -> Any:
        graph = dict(array.__dask_graph__())
        ready_tasks: dict[Any, Any] = {}
        for key, task in list(graph.items()):
            if not (isinstance(key, tuple) and isinstance(key[0], str) and key[0] in _SOURCES):
                continue
            window = _task_window(task)
            if window is None:
                continue
            source = _SOURCES[key[0]]
            if source.array is None:
                paths = [source.path]
            else:
                cache = (id(source.fs), source.path, source.array)
                if cache not in layouts:
                    layouts[cache] = _ArrayLayout.read(source.fs, source.path, source.array)
                paths = list(layouts[cache].keys_for(window))
            refs = []
            for path in paths:
                if path not in group_of:
                    continue  # an absent chunk (fill value): nothing to wait for
                fs, group = group_of[path]
                ready_key = ("archivefs-ready", group.path)
                if ready_key not in ready_tasks:
                    ready_tasks[ready_key] = _ready_task(
                        ready_key,
                        fs,
                        group,
                        coordinations.get(id(fs)),
                        timeout,
                        poll_interval,
                        submitted[id(fs)],
                    )
                refs.append(TaskRef(ready_key))
            if refs:  # remember the groups first: arguments are evaluated in order
                remember = Task(("archivefs-remember", *key), _remember_ready, *refs)
                graph[key] = Task(key, _after, remember, task)
        graph.update(ready_tasks)
        return da.Array(  # type: ignore[no-untyped-call]
            graph, array.name, array.chunks, array.dtype, meta=array._meta
        )

    if hasattr(obj, "data_vars"):
        out = obj.copy()
        for name, variable in obj.variables.items():
            if hasattr(variable.data, "__dask_graph__"):
                out[name] = variable.copy(data=rewired(variable.data))
        return out
    return obj.copy(data=rewired(obj.data))


COORDINATOR_HEALTH_INTERVAL = 60.0
"""Seconds between a waiting task's checks that its coordinator is alive (``poll_interval``)."""


def _ready_task(
    key: Any,
    fs: ArchiveFileSystem,
    group: ObjectState,
    coordination: Coordination | None,
    timeout: float | None,
    poll_interval: float | None,
    submitted_at: float,
) -> Any:
    """The task a group's chunk reads wait for: the coordinator's event, or its own polls."""
    from dask._task_spec import DataNode, Task

    if coordination is None:
        polling = DataNode(None, fs.to_json()), DataNode(None, group)
        wait = DataNode(None, timeout), DataNode(None, poll_interval)
        return Task(key, _wait_until_readable, *polling, *wait, DataNode(None, submitted_at))
    health = COORDINATOR_HEALTH_INTERVAL if poll_interval is None else poll_interval
    wait = DataNode(None, timeout), DataNode(None, health)
    return Task(key, await_group, DataNode(None, coordination), DataNode(None, group), *wait)


def _remember_ready(*ready: tuple[str, ObjectState]) -> None:
    """On the worker about to read: these groups read now (one GET per read, no HEAD)."""
    for scope, state in ready:
        note_readable(scope, state)


def _after(*values: Any) -> Any:
    """Return the last value once every earlier dependency (a ready task) is done."""
    return values[-1]


def _wait_until_readable(
    fs_json: str,
    group: ObjectState,
    timeout: float | None,
    poll_interval: float | None,
    submitted_at: float,
) -> tuple[str, ObjectState]:
    """Poll one group until it reads (runs as a task, on a worker): every ``poll_interval``
    seconds, or on its class's tier-aware schedule counted from ``submitted_at``
    (``time.time()``)."""
    import time

    import fsspec

    fs = fsspec.AbstractFileSystem.from_json(fs_json)
    schedule = fs.engine.schedule_for(fs.tier)(group) if poll_interval is None else None
    deadline = None if timeout is None else time.monotonic() + timeout
    polls = 0
    while True:
        state = fs.state(group.path)
        polls += 1
        if state.readable:
            return fs.store_scope, state
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            from archivefs.errors import RestoreTimeoutError

            raise RestoreTimeoutError(
                f"the restore was not finished after {timeout:.0f} s.",
                path=group.path,
                fix="the restore keeps running at the store; compute again later.",
            )
        if schedule is None:
            assert poll_interval is not None
            delay = poll_interval
        else:
            delay = schedule.next_delay(time.time() - submitted_at, polls)
        if deadline is not None:
            delay = min(delay, deadline - now)
        time.sleep(delay)
