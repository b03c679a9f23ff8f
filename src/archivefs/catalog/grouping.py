"""Grouping policies: which small files travel together in one bundle (one restore).

A policy is any object with ``group(items) -> list[list[SourceItem]]``. Each
shipped policy first splits items by a key (a directory prefix, a user
function, a zarr array and chunk window), then packs each key's items, in
path order, into bundles of about ``target_size`` bytes and at most
``max_members`` members. Every item lands in exactly one group;
the result is deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from archivefs.model import StorageClass

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

ZARR_METADATA = frozenset({".zarray", ".zattrs", ".zgroup", ".zmetadata", "zarr.json"})
_V3_CHUNK = re.compile(r"^(?P<array>.*?)/c(?:[/.](?P<index>\d+(?:[/.]\d+)*))?$")
_V2_CHUNK = re.compile(r"^(?P<array>.*?)/(?P<index>\d+(?:[./]\d+)*)$")


@dataclass(frozen=True, slots=True)
class SourceItem:
    """A file to bundle: path relative to the source root, size, mtime, class."""

    path: str
    size: int
    mtime: float = 0.0
    storage_class: StorageClass = StorageClass.STANDARD


class GroupingPolicy(Protocol):
    def group(self, items: Sequence[SourceItem]) -> list[list[SourceItem]]: ...


def _pack(
    items: Sequence[SourceItem], target_size: int, max_members: int
) -> list[list[SourceItem]]:
    groups: list[list[SourceItem]] = []
    current: list[SourceItem] = []
    size = 0
    for item in sorted(items, key=lambda i: i.path):
        if current and (size + item.size > target_size or len(current) >= max_members):
            groups.append(current)
            current, size = [], 0
        current.append(item)
        size += item.size
    if current:
        groups.append(current)
    return groups


@dataclass(frozen=True)
class _Keyed:
    target_size: int = 256 * 2**20
    max_members: int = 10_000

    def __post_init__(self) -> None:
        if self.target_size <= 0 or self.max_members <= 0:
            raise ValueError("target_size and max_members must be positive")

    def key(self, item: SourceItem) -> str:
        raise NotImplementedError

    def group(self, items: Sequence[SourceItem]) -> list[list[SourceItem]]:
        by_key: dict[str, list[SourceItem]] = {}
        for item in items:
            by_key.setdefault(self.key(item), []).append(item)
        return [
            group
            for key in sorted(by_key)
            for group in _pack(by_key[key], self.target_size, self.max_members)
        ]


@dataclass(frozen=True)
class ByPrefix(_Keyed):
    """Files under the same first ``depth`` directories go together (depth 0: all)."""

    depth: int = 1

    def key(self, item: SourceItem) -> str:
        parts = item.path.split("/")[:-1]
        return "/".join(parts[: self.depth])


@dataclass(frozen=True)
class ByKey(_Keyed):
    """Files with the same ``func(path)`` go together (an observation id, a run id...)."""

    func: Callable[[str], str] = field(default=lambda path: "")

    def key(self, item: SourceItem) -> str:
        return str(self.func(item.path))


@dataclass(frozen=True)
class ByChunkNeighbourhood(_Keyed):
    """Zarr chunks of one array whose index along ``dim_index`` falls in one ``window``.

    Metadata files, and every chunk of the arrays in ``hot_arrays`` (index
    coordinates that xarray reads when it opens a dataset), are never bundled:
    :meth:`keep_hot` returns them.
    """

    dim_index: int = 0
    window: int = 10
    hot_arrays: frozenset[str] = frozenset()

    def key(self, item: SourceItem) -> str:
        parsed = chunk_key(item.path)
        if parsed is None:
            return f"other:{'/'.join(item.path.split('/')[:-1])}"
        array, index = parsed
        position = index[self.dim_index] if self.dim_index < len(index) else 0
        return f"{array}:{position // self.window:012d}"

    def keep_hot(self, items: Sequence[SourceItem]) -> list[SourceItem]:
        def hot(item: SourceItem) -> bool:
            if item.path.rsplit("/", 1)[-1] in ZARR_METADATA:
                return True
            parsed = chunk_key(item.path)
            return parsed is not None and parsed[0] in self.hot_arrays

        return [i for i in items if hot(i)]

    def group(self, items: Sequence[SourceItem]) -> list[list[SourceItem]]:
        hot = {i.path for i in self.keep_hot(items)}
        return super().group([i for i in items if i.path not in hot])


def chunk_key(path: str) -> tuple[str, tuple[int, ...]] | None:
    """``('array', (i, j, ...))`` for a zarr v3 (``c/i/j``) or v2 (``i.j``) chunk key."""
    for pattern in (_V3_CHUNK, _V2_CHUNK):
        match = pattern.match(path)
        if match:
            raw = match.group("index") or ""
            index = tuple(int(p) for p in re.split(r"[./]", raw) if p) if raw else ()
            return match.group("array"), index
    return None
