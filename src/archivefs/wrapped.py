"""fsspec's ``AsyncFileSystemWrapper`` (the async face archivefs, and fsspec's reference
filesystem, put on a blocking filesystem such as ocifs) keeps the filesystem it wraps as
``sync_fs``: the one place archivefs looks inside it."""

from __future__ import annotations

from typing import Any

__all__ = ["unwrapped", "wrapped_sync"]


def wrapped_sync(fs: Any) -> Any | None:
    """The blocking filesystem ``fs`` wraps, or None when ``fs`` wraps none."""
    return getattr(fs, "sync_fs", None)


def unwrapped(fs: Any) -> Any:
    """The filesystem that does the work: the one ``fs`` wraps, else ``fs`` itself."""
    inner = wrapped_sync(fs)
    return fs if inner is None else inner
