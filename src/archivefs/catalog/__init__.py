"""Restorable groups: the bundle format, the catalog, grouping policies, layout, writer.

Import-light: the names below load their modules on first use (PEP 562), so
importing :mod:`archivefs.catalog.layout` (the reserved prefix, which every read
checks) does not import the catalog's numpy tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from archivefs.lazy import lazy_names

if TYPE_CHECKING:
    from archivefs.catalog.bundle import Entry, Source, check_member, read_entries, write_bundle
    from archivefs.catalog.grouping import (
        ByChunkNeighbourhood,
        ByKey,
        ByPrefix,
        GroupingPolicy,
        SourceItem,
        chunk_key,
    )
    from archivefs.catalog.index import Catalog
    from archivefs.catalog.names import normalize_member_name, safe_target_path
    from archivefs.catalog.table import BundleInfo, MemberInfo

_LAZY = {
    "BundleInfo": "archivefs.catalog.table",
    "ByChunkNeighbourhood": "archivefs.catalog.grouping",
    "ByKey": "archivefs.catalog.grouping",
    "ByPrefix": "archivefs.catalog.grouping",
    "Catalog": "archivefs.catalog.index",
    "Entry": "archivefs.catalog.bundle",
    "GroupingPolicy": "archivefs.catalog.grouping",
    "MemberInfo": "archivefs.catalog.table",
    "Source": "archivefs.catalog.bundle",
    "SourceItem": "archivefs.catalog.grouping",
    "check_member": "archivefs.catalog.bundle",
    "chunk_key": "archivefs.catalog.grouping",
    "normalize_member_name": "archivefs.catalog.names",
    "read_entries": "archivefs.catalog.bundle",
    "safe_target_path": "archivefs.catalog.names",
    "write_bundle": "archivefs.catalog.bundle",
}

__all__ = [
    "BundleInfo",
    "ByChunkNeighbourhood",
    "ByKey",
    "ByPrefix",
    "Catalog",
    "Entry",
    "GroupingPolicy",
    "MemberInfo",
    "Source",
    "SourceItem",
    "check_member",
    "chunk_key",
    "normalize_member_name",
    "read_entries",
    "safe_target_path",
    "write_bundle",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
