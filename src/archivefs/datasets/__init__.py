"""xarray helpers: open archived datasets lazily, see what a selection needs, restore ahead.

``open_zarr``/``open_dataset``/``open_mfdataset`` are thin wrappers over
xarray that pass an :class:`ArchiveFileSystem` in; metadata is read at once
(it stays hot), data chunks only when computed. :func:`plan_dataset` walks a
lazy selection's Dask graph down to the chunk reads it will make, maps them
to the exact chunk objects (zarr) or files (netCDF/HDF5), and plans their
restore without sending anything; :func:`prefetch` then restores them.
:func:`index_files` keeps kerchunk references of netCDF4/HDF5 files that read now,
so that they open, plan and read later without a restore of the whole file;
:func:`combine_references` combines a collection's into one set that opens at once.

The package: ``opening`` (the open helpers), ``graph`` (which chunks a lazy
selection reads), ``ahead`` (plan and restore a selection before ``compute()``),
``aware`` (restore-aware graphs: each read waits for its own group), ``indexing``
(references of files in a bucket), ``referenced`` (open a file from its references).
"""

from __future__ import annotations

from archivefs.datasets.ahead import plan_dataset, prefetch
from archivefs.datasets.aware import _wait_until_readable as _wait_until_readable  # tests
from archivefs.datasets.aware import coordination_stats, restore_aware
from archivefs.datasets.graph import LAYER_PREFIX, Window, chunk_paths, chunk_reads
from archivefs.datasets.indexing import (
    CombinedReferences,
    IndexedFile,
    IndexReport,
    combine_references,
    index_files,
)
from archivefs.datasets.opening import (
    READ_WHOLE_BELOW,
    open_dataset,
    open_mfdataset,
    open_zarr,
)
from archivefs.datasets.selecting import FileSelection, select_files, selection_paths
from archivefs.errors import ArchiveError, ObjectChangedError
from archivefs.filesystem import ArchiveFileSystem

__all__ = [
    "LAYER_PREFIX",
    "READ_WHOLE_BELOW",
    "ArchiveError",
    "ArchiveFileSystem",
    "CombinedReferences",
    "FileSelection",
    "IndexReport",
    "IndexedFile",
    "ObjectChangedError",
    "Window",
    "chunk_paths",
    "chunk_reads",
    "combine_references",
    "coordination_stats",
    "index_files",
    "open_dataset",
    "open_mfdataset",
    "open_zarr",
    "plan_dataset",
    "prefetch",
    "restore_aware",
    "select_files",
    "selection_paths",
]
