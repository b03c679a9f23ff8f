"""What a bundled zarr store keeps hot, so that it still opens without a restore.

xarray reads every metadata document and every index coordinate (``time``,
``lat``...) when it opens a store; if any of those sit in an archived bundle
the store cannot be opened at all. So, whatever the grouping policy, a
bundling run keeps these as plain STANDARD objects: zarr metadata files,
index coordinates and the arrays named in ``coordinates`` attributes (read
from the metadata, v2 and v3), and every array whose chunks total at most
``SMALL_ARRAY_BYTES``. Callers may name the hot arrays instead.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Literal

from archivefs.catalog.grouping import ZARR_METADATA, chunk_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from archivefs.catalog.grouping import SourceItem

SMALL_ARRAY_BYTES = 1 << 20
HotArrays = Literal["auto"] | frozenset[str]


def parse_hot_arrays(value: str | Iterable[str] | None) -> HotArrays:
    """``"auto"`` (default), ``"none"``, or names (``"time,lat"`` or an iterable)."""
    if value is None or value == "auto":
        return "auto"
    if value == "none":
        return frozenset()
    names = value.split(",") if isinstance(value, str) else list(value)
    return frozenset(n.strip().strip("/") for n in names if n.strip())


def is_metadata(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in ZARR_METADATA


def hot_items(
    items: Sequence[SourceItem], read: Callable[[str], bytes], hot_arrays: HotArrays = "auto"
) -> list[SourceItem]:
    """The items to keep hot: none unless ``items`` hold a zarr store (a metadata file)."""
    metadata = [i for i in items if is_metadata(i.path)]
    if not metadata:
        return []
    names = _auto_arrays(items, metadata, read) if hot_arrays == "auto" else set(hot_arrays)

    def hot(item: SourceItem) -> bool:
        if is_metadata(item.path):
            return True
        parsed = chunk_key(item.path)
        return parsed is not None and parsed[0] in names

    return [i for i in items if hot(i)]


def _auto_arrays(
    items: Sequence[SourceItem], metadata: Sequence[SourceItem], read: Callable[[str], bytes]
) -> set[str]:
    names: set[str] = set()
    sizes: dict[str, int] = defaultdict(int)
    for item in items:
        parsed = chunk_key(item.path)
        if parsed is not None and not is_metadata(item.path):
            sizes[parsed[0]] += item.size
    names.update(a for a, total in sizes.items() if total <= SMALL_ARRAY_BYTES)
    for item in metadata:
        if item.size > SMALL_ARRAY_BYTES:
            continue
        try:
            document = json.loads(read(item.path))
        except (ValueError, UnicodeDecodeError):
            continue
        array = item.path.rsplit("/", 1)[0] if "/" in item.path else ""
        if isinstance(document, dict):
            names.update(_coordinates(array, document))
    return names


def _coordinates(array: str, document: dict[str, object]) -> set[str]:
    """Index coordinates and named coordinates described by one metadata document."""
    found: set[str] = set()
    attributes = document.get("attributes", document)  # v3 keeps them inside, v2 is .zattrs
    dims = document.get("dimension_names") or (
        attributes.get("_ARRAY_DIMENSIONS") if isinstance(attributes, dict) else None
    )
    parent, _, leaf = array.rpartition("/")
    if isinstance(dims, list) and len(dims) == 1 and dims[0] == leaf:
        found.add(array)  # an index coordinate: named like its one dimension
    coordinates = attributes.get("coordinates") if isinstance(attributes, dict) else None
    if isinstance(coordinates, str):
        found.update(f"{parent}/{c}" if parent else c for c in coordinates.split())
    metadata = document.get("metadata")  # consolidated v2 (.zmetadata)
    if isinstance(metadata, dict):
        for key, value in metadata.items():
            if isinstance(value, dict) and key.endswith((".zattrs", "zarr.json")):
                inner = key.rsplit("/", 1)[0] if "/" in key else ""
                base = f"{array}/{inner}" if array and inner else (inner or array)
                found.update(_coordinates(base, value))
    return found
