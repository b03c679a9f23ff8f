"""archivefs: read archived object storage (S3 Glacier, Deep Archive) as ordinary files."""

from __future__ import annotations

from archivefs.errors import (
    ArchiveError,
    BudgetExceededError,
    ChecksumMismatchError,
    ObjectArchivedError,
    ObjectNotFoundError,
    RestoreInProgressError,
    RestoreTimeoutError,
)
from archivefs.model import ObjectState, Plan, RestoreState, RestoreTier, StorageClass

__version__ = "0.1.0"

__all__ = [
    "ArchiveError",
    "BudgetExceededError",
    "ChecksumMismatchError",
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
]
