"""Caches: what one filesystem remembers between calls, and forgetting it together.

Listings (fsspec's ``dircache``), read hints (:mod:`archivefs.hints`) and the
catalogs read (:class:`~archivefs.catalog.view.CatalogView`); a catalog that
changes makes the listings cached under its bucket stale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archivefs.catalog.view import CatalogView
from archivefs.hints import forget_readable

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


class Caches:
    """The listings, read hints and catalogs of one filesystem over the cold store ``fs``.

    ``get_bytes(path, limit)`` reads a catalog's objects (the store adapter's), refusing
    one larger than ``limit`` bytes; ``ttl`` is how long
    catalogs read are trusted; ``scope`` names the store read hints are kept per.
    """

    def __init__(
        self,
        *,
        fs: Any,
        dircache: Any,
        get_bytes: Callable[[str, int], Awaitable[bytes]],
        ttl: float | None,
        strip: Callable[[Any], Any],
        parent: Callable[[str], str],
        scope: Callable[[], str],
    ) -> None:
        self.fs = fs
        self.dircache = dircache
        self.catalogs = CatalogView(get_bytes, ttl=ttl, on_change=self.forget_bucket)
        self._strip = strip
        self._parent = parent
        self._scope = scope

    def invalidate(self, path: str | None = None) -> None:
        """Forget listings of ``path`` and its parent (or all) and read hints below it;
        with no ``path`` or a bucket's, the catalog registry and catalogs too."""
        if path is None:
            self.dircache.clear()
            forget_readable(self._scope())
            self.catalogs.invalidate()
        else:
            path = self._strip(path)
            self.dircache.pop(path, None)
            self.dircache.pop(self._parent(path), None)
            forget_readable(self._scope(), path)
            if path and "/" not in path.strip("/"):
                self.catalogs.invalidate(path.strip("/"))
            # the target forgets the same two: its own writes may not (adlfs's pipe_file
            # forgets its parent under the key without the container, so its next ls of
            # the folder returned the old listing)
            self.fs.invalidate_cache(self._parent(path))
        self.fs.invalidate_cache(path)

    def forget_bucket(self, bucket: str) -> None:
        """A catalog of ``bucket`` changed: listings cached under it are stale."""
        for key in [k for k in self.dircache if k == bucket or k.startswith(bucket + "/")]:
            self.dircache.pop(key, None)
        self.fs.invalidate_cache(bucket)
