"""Graph analysis: which chunk reads a lazy xarray object's Dask graph will make, and where."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.filesystem import ArchiveFileSystem
from archivefs.wrapped import unwrapped

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping


LAYER_PREFIX = "open_dataset-"


@dataclass(frozen=True)
class _Source:
    """Where the chunks of one opened variable live."""

    fs: ArchiveFileSystem
    path: str  # the zarr store or the file
    array: str | None  # array path inside a zarr store; None: a whole file
    # a file opened through its kerchunk references: zarr key -> [url, offset, length]
    # (or inline bytes); ``array`` is then the array's name in them
    refs: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    variable: str | None = None  # the variable a whole-file source reads (for plans)


_SOURCES: dict[str, _Source] = {}  # dask layer name -> source


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
        found = _referenced_source(store, value)
        if found is not None:
            return found
        inner = getattr(value, "array", None)
        value = inner if inner is not None else getattr(value, "_array", None)
        if value is None:
            return None
    return None


def _referenced_source(store: Any, value: Any) -> _Source | None:
    """The source of a zarr array read through fsspec's ``ReferenceFileSystem`` whose
    targets are read by an :class:`ArchiveFileSystem` (``remote_protocol="archive"``, or
    ``fs={"s3": archive_fs}``)."""
    from fsspec.implementations.reference import ReferenceFileSystem

    rfs = getattr(store, "fs", None)
    if not isinstance(rfs, ReferenceFileSystem):
        return None
    remotes = [unwrapped(f) for f in rfs.fss.values()]
    archive = next((f for f in remotes if isinstance(f, ArchiveFileSystem)), None)
    if archive is None:
        return None
    prefix = str(store.path).strip("/")
    array = "/".join(p for p in (prefix, str(value.path).strip("/")) if p)
    return _Source(_blocking(archive), f"reference:{id(rfs)}", array, rfs.references)


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
    metadata: dict[tuple[int, str, str], _ArrayLayout | _ReferencedLayout] = {}
    for layer, windows in chunk_reads(obj).items():
        source = _SOURCES[layer]
        paths = out.setdefault(source.fs, set())
        if source.array is None:
            paths.add(source.path)
            continue
        layout = _layout_of(source, metadata)
        for window in windows:
            paths.update(layout.keys_for(window))
    return {fs: sorted(paths) for fs, paths in out.items()}


def whole_file_reads(obj: Any, fs: ArchiveFileSystem | None = None) -> dict[str, list[str]]:
    """The variables of a lazy selection that read whole files (netCDF/HDF5 opened without
    references: kerchunk could not describe them, or they were never indexed), each with
    those files (through ``fs`` only, if given): what a plan cannot narrow to chunks.

    Example::

        whole_file_reads(ds["t2m"].isel(time=0))   # {'t2m': ['bucket/run42/qc.nc']}
    """
    out: dict[str, set[str]] = {}
    for layer in chunk_reads(obj):
        source = _SOURCES[layer]
        if source.array is None and (fs is None or source.fs is fs):
            out.setdefault(source.variable or "?", set()).add(source.path)
    return {name: sorted(paths) for name, paths in sorted(out.items())}


def _layout_of(
    source: _Source, cache: dict[tuple[int, str, str], _ArrayLayout | _ReferencedLayout]
) -> _ArrayLayout | _ReferencedLayout:
    """How a chunk window of ``source``'s array becomes the objects it reads (cached)."""
    assert source.array is not None
    key = (id(source.fs), source.path, source.array)
    if key not in cache:
        if source.refs is not None:
            cache[key] = _ReferencedLayout.read(source.fs, source.refs, source.array)
        else:
            cache[key] = _ArrayLayout.read(source.fs, source.path, source.array)
    return cache[key]


@dataclass(frozen=True)
class _ReferencedLayout:
    """A referenced array's chunk grid, and where each chunk lies (its references)."""

    fs: ArchiveFileSystem
    refs: Mapping[str, Any]
    array: str
    chunk_shape: tuple[int, ...]
    separator: str

    @classmethod
    def read(cls, fs: ArchiveFileSystem, refs: Mapping[str, Any], array: str) -> _ReferencedLayout:
        meta = _loaded(refs[f"{array}/.zarray"])
        return cls(fs, refs, array, tuple(meta["chunks"]), meta.get("dimension_separator", "."))

    def keys_for(self, window: Window) -> Iterator[str]:
        """The objects (bucket/key) holding the chunks of ``window`` (inline ones: none)."""
        for path, _, _ in self.ranges_for(window):
            yield path

    def ranges_for(self, window: Window) -> Iterator[tuple[str, int, int]]:
        """``(object, offset, length)`` of each chunk of ``window`` that points into one
        (inline chunks and chunks with no reference, zarr's fill values, read nothing)."""
        ranges = [
            range(start // size, (max(stop, start + 1) - 1) // size + 1)
            for (start, stop), size in zip(window, self.chunk_shape, strict=True)
        ]
        for index in _product(ranges):
            key = f"{self.array}/" + (self.separator.join(map(str, index)) if index else "0")
            value = self.refs.get(key)
            if isinstance(value, list | tuple) and value:
                path = self.fs._strip_protocol(str(value[0]))
                if len(value) == 3:
                    yield path, int(value[1]), int(value[2])
                else:  # a whole-object reference
                    yield path, 0, -1


def _loaded(value: Any) -> dict[str, Any]:
    """A zarr metadata document from a reference value (text, bytes or base64 text)."""
    import base64

    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes) and value.startswith(b"base64:"):
        value = base64.b64decode(value[7:])
    loaded: dict[str, Any] = json.loads(value)
    return loaded


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
