"""A file cache for archived data files: the header block, then readahead that grows with runs.

Random reads (one time step of a chunked netCDF file) fetch exactly what is
asked, plus the first block (HDF5 headers), as fsspec's ``"first"`` cache
does. A read that starts where the previous one ended (a run of chunks: a
whole variable, or a point time series, which reads every chunk) fetches
ahead: :data:`GROWTH` times the previous fetch for the run's first readahead
(a run of two or three chunks over-fetches little), then :data:`LONG_GROWTH`
times per request up to :data:`MAX_AHEAD` (a long run pays few round trips),
so a run of n bytes takes about 2 + log16(n / chunk) + n / 64 MiB requests
instead of one per chunk. Registered with fsspec as
``cache_type="archivefs-readahead"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from fsspec.caching import BaseCache, register_cache

if TYPE_CHECKING:
    from fsspec.caching import Fetcher

GROWTH = 4
"""The first readahead of a run fetches this many times the read that started it."""

LONG_GROWTH = 16
"""Each later request of the same run fetches this many times the previous one."""

MAX_AHEAD = 64 * 2**20
"""The largest readahead (s3fs's default block is 50 MiB)."""

RUN_GAP = 64 * 1024
"""A read starting at most this far past the previous one's end continues the run."""


class ReadaheadCache(BaseCache):  # type: ignore[misc]
    """The first block, plus one buffer that grows while reads run forward."""

    name: ClassVar[str] = "archivefs-readahead"

    def __init__(self, blocksize: int, fetcher: Fetcher, size: int) -> None:
        super().__init__(min(blocksize, size), fetcher, size)
        self.first: bytes | None = None
        self.start = 0  # the buffer holds bytes [start, start + len(buffer))
        self.buffer = b""
        self.fetched = 0  # size of the last fetch
        self.run_fetches = 0  # readaheads since the current run began

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
        stop = self.start + len(self.buffer)
        if self.start <= start and end <= stop:
            self.hit_count += 1
            return self.buffer[start - self.start : end - self.start]
        self.miss_count += 1
        kept = b""
        if self.start <= start < stop:  # the start is buffered: fetch only the rest
            kept = self.buffer[start - self.start :]
        run = bool(self.buffer) and stop <= start + len(kept) <= stop + RUN_GAP
        begin = start + len(kept)
        want = end - begin
        self.run_fetches = self.run_fetches + 1 if run else 0
        growth = GROWTH if self.run_fetches <= 1 else LONG_GROWTH
        ahead = min(MAX_AHEAD, max(want, self.fetched * growth)) if run else want
        data = self._get(begin, min(self.size, begin + max(want, ahead)))
        self.fetched = len(data)  # a read right after this one grows from it
        self.start, self.buffer = start, kept + data
        return self.buffer[: end - start]

    def _get(self, start: int, end: int) -> bytes:
        self.total_requested_bytes += end - start
        data: bytes = self.fetcher(start, end)
        return data


register_cache(ReadaheadCache, clobber=True)
