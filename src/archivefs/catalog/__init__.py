"""Restorable groups: the bundle format, the catalog, grouping policies, layout, writer."""

from __future__ import annotations

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
