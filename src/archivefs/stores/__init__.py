"""Store adapters: the only layer that talks to storage services."""

from __future__ import annotations

from archivefs.stores.s3 import Listing, RestoreOutcome, S3Store, split_path

__all__ = ["Listing", "RestoreOutcome", "S3Store", "split_path"]
