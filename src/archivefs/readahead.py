"""A file cache for archived data files: small files whole, else the header block, exact
random reads, and readahead that grows along forward runs, fetched in parts at once.

- A file of at most :data:`WHOLE_FILE` bytes is read whole by its first read (one GET).
- In a larger file, the first read fetches the first block (HDF5 headers), as
  fsspec's ``"first"`` cache does, and a random read (one time step of a chunked
  netCDF file, a node of its chunk index) fetches exactly what is asked.
- A read that starts where an earlier one ended (a run of chunks: a whole
  variable, or a point time series, which reads every chunk) fetches ahead
  :data:`GROWTH` times the previous fetch, up to :data:`MAX_AHEAD`; in a file of
  at most :data:`RUN_TO_END` bytes, the rest of the file, and there a read that
  starts where the first block ended (the first chunk after the headers) already
  continues a run, so a whole variable's first chunk is not a round trip of its
  own. A run of n bytes takes
  about 1 + log16(n / chunk) + n / 64 MiB rounds instead of one request per chunk.
- A readahead of at least two :data:`PART` goes out as up to :data:`PARTS` ranged
  reads at once when the file gives a ``fetch_ranges`` (one stream over a
  wide-area link is slower than several).
- A random read in the middle of a run keeps a buffer of its own
  (:data:`BUFFERS` in all), so the run's readahead survives it.

Registered with fsspec as ``cache_type="archivefs-readahead"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, ClassVar

from fsspec.caching import BaseCache, register_cache

if TYPE_CHECKING:
    from collections.abc import Callable

    from fsspec.caching import Fetcher

    RangesFetcher = Callable[[list[tuple[int, int]]], list[bytes]]

GROWTH = 16
"""Each readahead of a run fetches this many times the previous fetch of that run."""

MAX_AHEAD = 64 * 2**20
"""The largest readahead (s3fs's default block is 50 MiB)."""

RUN_GAP = 64 * 1024
"""A read starting at most this far past the previous one's end continues the run."""

WHOLE_FILE = 2**20
"""A file of at most this many bytes is read whole by its first read: about what one
round trip of a wide-area stream carries (40 MB/s x 20 ms), so a second request
would cost more time than the bytes it saves."""

RUN_TO_END = 8 * 2**20
"""In a file of at most this many bytes, a run's first readahead fetches the rest of it."""

PART = 2**20
"""The smallest part of a readahead fetched on its own connection."""

PARTS = 8
"""At most this many parts of one readahead in flight (s3fs's pool holds 10 connections)."""

BUFFERS = 4
"""Buffers kept: a run's, and the random reads made while it runs."""


@dataclass
class _Buffer:
    """Bytes ``[start, start + len(data))`` of the file, and its last fetch's size."""

    start: int
    data: bytes
    fetched: int  # size of the last fetch: a read right after it grows from it

    @property
    def stop(self) -> int:
        return self.start + len(self.data)


class ReadaheadCache(BaseCache):  # type: ignore[misc]
    """The first block, plus a few buffers; one grows while reads run forward from it.

    A read that neither hits a buffer nor continues one (a B-tree node of the
    chunk index, read in the middle of a run of chunks) gets a buffer of its own
    and leaves the others alone, so the run goes on from its readahead.
    """

    name: ClassVar[str] = "archivefs-readahead"

    def __init__(
        self,
        blocksize: int,
        fetcher: Fetcher,
        size: int,
        fetch_ranges: RangesFetcher | None = None,
    ) -> None:
        """``fetch_ranges``: reads ``[(start, end), ...]`` at once, in that order."""
        super().__init__(size if size <= WHOLE_FILE else min(blocksize, size), fetcher, size)
        self.fetch_ranges = fetch_ranges
        self.first: bytes | None = None
        self.buffers: list[_Buffer] = []  # the most recently used first

    def _fetch(self, start: int | None, end: int | None) -> bytes:
        start = start or 0
        end = self.size if end is None else min(end, self.size)
        if start >= end:
            return b""
        if start < self.blocksize:
            if self.first is None:
                self.miss_count += 1
                self.first = self._get(0, self.blocksize)
            else:
                self.hit_count += 1
            head = self.first[start:end]
            return head + self._fetch(self.blocksize, end) if end > self.blocksize else head
        for buffer in self.buffers:
            if buffer.start <= start and end <= buffer.stop:
                self.hit_count += 1
                self._use(buffer)
                return buffer.data[start - buffer.start : end - buffer.start]
        self.miss_count += 1
        continued = next(  # the one this read continues: it starts inside or just past it
            (b for b in self.buffers if b.start <= start <= b.stop + RUN_GAP), None
        )
        if continued is None and self._continues_first_block(start):
            continued = _Buffer(self.blocksize, b"", fetched=self.blocksize)
        if continued is None:  # a random read: exactly what is asked
            buffer = _Buffer(start, self._get(start, end), fetched=end - start)
        else:
            buffer = continued
            kept = buffer.data[start - buffer.start :] if start < buffer.stop else b""
            begin = start + len(kept)
            want = end - begin
            ahead = min(MAX_AHEAD, max(want, buffer.fetched * GROWTH))
            if self.size <= RUN_TO_END:
                ahead = self.size - begin
            fetched = self._get_parts(begin, min(self.size, begin + ahead))
            buffer.data = b"".join([kept, *fetched])  # one copy, not one per part and one more
            buffer.start, buffer.fetched = start, len(buffer.data) - len(kept)
        self._use(buffer)
        return buffer.data[: end - start]

    def _continues_first_block(self, start: int) -> bool:
        """Whether a read from ``start`` runs on from the first block in a file of at most
        :data:`RUN_TO_END` bytes (the first chunk after the headers: a whole variable)."""
        return self.first is not None and (
            self.size <= RUN_TO_END and self.blocksize <= start <= self.blocksize + RUN_GAP
        )

    def _use(self, buffer: _Buffer) -> None:
        """``buffer`` becomes the most recently used; the least recently used beyond
        :data:`BUFFERS` are dropped."""
        self.buffers = [buffer, *(b for b in self.buffers if b is not buffer)][:BUFFERS]

    def _get(self, start: int, end: int) -> bytes:
        self.total_requested_bytes += end - start
        data: bytes = self.fetcher(start, end)
        return data

    def _get_parts(self, start: int, end: int) -> list[bytes]:
        """``[start, end)`` in up to :data:`PARTS` ranged reads at once, each of at least
        :data:`PART` bytes (one read without ``fetch_ranges``)."""
        count = min(PARTS, (end - start) // PART)
        if count < 2 or self.fetch_ranges is None:
            return [self._get(start, end)]
        cuts = [start + (end - start) * i // count for i in range(count + 1)]
        self.total_requested_bytes += end - start
        return self.fetch_ranges(list(pairwise(cuts)))


register_cache(ReadaheadCache, clobber=True)
