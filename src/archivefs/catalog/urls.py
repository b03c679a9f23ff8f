"""The catalog's operations addressed by URL: bundle a tree, load or rebuild a catalog.

Each takes URLs (``s3://bucket/root``, a local directory, ...) and the store's fsspec
options, opens the filesystems with ``fsspec.core.url_to_fs`` and calls the operation
on them: what ``archivefs bundle`` and ``archivefs catalog show|rebuild`` run.

Example::

    report = bundle_url("./run42", "s3://bucket/archive/run42", storage_class="DEEP_ARCHIVE")
    load_catalog("s3://bucket/archive/run42").bundles
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import fsspec.core

if TYPE_CHECKING:
    from archivefs.catalog.index import Catalog
    from archivefs.catalog.writer import BundleReport


def bundle_url(
    src: str, dest: str, *, dest_options: dict[str, Any] | None = None, **kwargs: Any
) -> BundleReport:
    """``bundle_tree`` from the ``src`` URL or directory into the ``dest`` URL.

    ``dest_options``: the destination store's fsspec options (s3fs's for s3://, ...);
    ``kwargs`` are ``bundle_tree``'s (``policy``, ``storage_class``, ``hot_arrays``, ...)."""
    from archivefs.catalog.writer import bundle_tree

    src_fs, src_root = fsspec.core.url_to_fs(src)
    dest_fs, dest_root = fsspec.core.url_to_fs(dest, **(dest_options or {}))
    return bundle_tree(src_fs, src_root, dest_fs, dest_root, **kwargs)


def load_catalog(root: str, options: dict[str, Any] | None = None) -> Catalog:
    """The current catalog of the bundled data at the ``root`` URL (CatalogError if none)."""
    from archivefs.catalog.index import Catalog
    from archivefs.catalog.layout import catalog_dir

    fs, path = fsspec.core.url_to_fs(root, **(options or {}))
    return Catalog.load(fs, catalog_dir(path))


def rebuild_catalog_at(root: str, options: dict[str, Any] | None = None) -> Catalog:
    """``rebuild_catalog`` of the bundled data at the ``root`` URL, from its bundles."""
    from archivefs.catalog.writer import rebuild_catalog

    fs, path = fsspec.core.url_to_fs(root, **(options or {}))
    return rebuild_catalog(fs, path)
