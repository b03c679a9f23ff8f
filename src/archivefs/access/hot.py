"""The hot store: promoted copies that reads look for first, at ``<hot>/<bucket>/<key>``."""

from __future__ import annotations

from typing import Any

import fsspec
from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper


class HotCopies:
    """The hot store of ``url`` (opened on first use), or none when ``url`` is None."""

    def __init__(self, url: str | None, options: dict[str, Any]) -> None:
        self.url = url
        self.options = options
        self._opened: tuple[Any, str] | None = None

    async def store(self) -> tuple[Any, str] | None:
        """The hot store's async filesystem and root folder, or None without a hot store."""
        if self.url is None:
            return None
        if self._opened is None:
            hot_fs, root = fsspec.url_to_fs(self.url, **self.options)
            if not getattr(hot_fs, "async_impl", False):
                hot_fs = AsyncFileSystemWrapper(hot_fs)
            self._opened = (hot_fs, root.rstrip("/"))
        return self._opened

    @staticmethod
    def path(root: str, path: str) -> str:
        """Where ``path`` has its copy below the hot store's ``root``."""
        return f"{root}/{path}" if root else path
