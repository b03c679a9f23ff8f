"""Coalesced bundle-member reads: many member ranges become few ranged reads of their bundles.

Pure planning, no I/O. Ranges of the same bundle that lie next to each other
(only a zip local header, or a small gap, apart) are merged with
:func:`fsspec.utils.merge_offset_ranges` into blocks of at most
:data:`BLOCK` bytes; the filesystem fetches each block with one ranged GET
(concurrently, bounded), then slices each member out of its block and checks
it exactly as a single-member read does. A range larger than a block is a
block of its own.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from fsspec.utils import merge_offset_ranges

BLOCK = 8 * 2**20
"""At most this many bytes per merged request (one GET per 8 MiB of adjacent members)."""

MAX_GAP = 4096
"""Merge two ranges of a bundle when at most this many unwanted bytes lie between them
(a member's zip local header and data descriptor take about 100 bytes)."""

CONCURRENCY = 16
"""Blocks fetched at the same time, per call."""


@dataclass(frozen=True, slots=True)
class Part:
    """One requested range: the caller's index, and bytes ``[first, last)`` of a bundle."""

    index: int
    first: int
    last: int


@dataclass(slots=True)
class Block:
    """One ranged read of a bundle, ``[start, end)``, and the parts it serves."""

    bundle: str
    start: int
    end: int
    parts: list[Part] = field(default_factory=list)

    def piece(self, part: Part, data: bytes) -> bytes:
        """The bytes of ``part`` inside ``data`` (this block's bytes; short if truncated)."""
        return data[part.first - self.start : part.last - self.start]


def plan_blocks(
    parts: list[tuple[str, Part]], *, max_block: int = BLOCK, max_gap: int = MAX_GAP
) -> list[Block]:
    """Merge ``(bundle key, part)`` pairs into blocks; every part lands in exactly one block.

    Empty parts (``last <= first``) are left out: they need no request.
    """
    wanted = [(key, part) for key, part in parts if part.last > part.first]
    if not wanted:
        return []
    keys, starts, ends = merge_offset_ranges(
        [key for key, _ in wanted],
        [part.first for _, part in wanted],
        [part.last for _, part in wanted],
        max_gap=max_gap,
        max_block=max_block,
    )
    blocks: dict[str, list[Block]] = {}
    for key, start, end in zip(keys, starts, ends, strict=True):
        assert end is not None  # every part has an end
        blocks.setdefault(key, []).append(Block(key, start, end))
    starts_of: dict[str, list[int]] = {}
    for key, of_bundle in blocks.items():
        of_bundle.sort(key=lambda b: (b.start, b.end))
        starts_of[key] = [b.start for b in of_bundle]
    for key, part in wanted:
        _holder(blocks[key], starts_of[key], part).parts.append(part)
    return [b for of_bundle in blocks.values() for b in of_bundle if b.parts]


def _holder(blocks: list[Block], starts: list[int], part: Part) -> Block:
    """The block (``blocks`` sorted by start, ``starts`` theirs) that covers ``part`` whole."""
    at = bisect_right(starts, part.first) - 1
    while at >= 0:
        if blocks[at].end >= part.last:
            return blocks[at]
        at -= 1
    raise AssertionError(f"merge_offset_ranges left {part} uncovered")  # pragma: no cover
