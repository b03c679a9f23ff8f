"""archivefs: read archived object storage (S3 Glacier, Deep Archive) as ordinary files.

Import-light: the filesystem and the dataset helpers (which pull in fsspec,
s3fs, xarray and Dask) load on first use of their names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from archivefs.errors import (
    ArchiveError,
    BudgetExceededError,
    ChecksumMismatchError,
    MissingBundleError,
    ObjectArchivedError,
    ObjectNotFoundError,
    RestoreInProgressError,
    RestoreTimeoutError,
)
from archivefs.lazy import lazy_names
from archivefs.model import ObjectState, RestoreState, RestoreTier, StorageClass
from archivefs.mount import mount, unmount  # light: the FUSE binding loads on use

if TYPE_CHECKING:
    from archivefs.datasets import (
        open_dataset,
        open_mfdataset,
        open_zarr,
        plan_dataset,
        prefetch,
        restore_aware,
    )
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.plans import Plan

__version__ = "0.1.0"

_LAZY = {
    "ArchiveFileSystem": "archivefs.filesystem",
    "Plan": "archivefs.plans",
    "open_dataset": "archivefs.datasets",
    "open_mfdataset": "archivefs.datasets",
    "open_zarr": "archivefs.datasets",
    "plan_dataset": "archivefs.datasets",
    "prefetch": "archivefs.datasets",
    "restore_aware": "archivefs.datasets",
}

__all__ = [
    "ArchiveError",
    "ArchiveFileSystem",
    "BudgetExceededError",
    "ChecksumMismatchError",
    "MissingBundleError",
    "ObjectArchivedError",
    "ObjectNotFoundError",
    "ObjectState",
    "Plan",
    "RestoreInProgressError",
    "RestoreState",
    "RestoreTier",
    "RestoreTimeoutError",
    "StorageClass",
    "__version__",
    "mount",
    "open_dataset",
    "open_mfdataset",
    "open_zarr",
    "plan_dataset",
    "prefetch",
    "restore_aware",
    "unmount",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
