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
- When the file also gives a ``fetch_later`` (reads started now, waited for when
  needed), a run in a file larger than :data:`RUN_TO_END` *streams*: its readahead
  is a window of parts in flight right after its buffer, and each part the reader
  takes is replaced by the next ones, so the next bytes arrive while the current
  ones are read (``archivefs get`` streams its parts the same way). The window is
  :data:`GROWTH` times what the run has taken, at most :data:`MAX_AHEAD`, in parts
  of a tenth of it (from :data:`PART` to :data:`MAX_AHEAD` / :data:`PARTS`; the
  file's last part takes a tail under :data:`PART`). Memory: a run holds at most
  :data:`MAX_AHEAD` in flight, the part being read and less than :data:`BEHIND` and
  a part before it (104 MiB): the parts it took are kept as they arrived, never
  joined into one copy (a read is sliced from its part); a run that stops
  has fetched at most one window it did not read; closing the file cancels what is
  in flight, and so does dropping the run's buffer; :meth:`ReadaheadCache.settle`
  (a file kept open that no one reads: the mount's closed files) keeps the parts that
  arrived and cancels the rest.
- A first read that goes past the first block is one request (the rest of it is a
  buffer a run continues). With a ``bulk_block`` (the target's block size, given
  for objects that read at once without a retrieval fee), a first read of at
  least :data:`BULK_READ` bytes from the first block (a copy, ``cat``, a whole
  read: not a format's header probe, which asks a few bytes) reads the first
  ``bulk_block`` bytes in one request, as the target's own file would: a 4 MiB
  blob read in 64 KiB pieces is one GET, as with adlfs.
- A run's buffer keeps :data:`BEHIND` before its last read, so a read that comes a
  piece late (FUSE hands a reader's pieces to several threads) is not fetched again.
- A random read in the middle of a run keeps a buffer of its own
  (:data:`BUFFERS` in all), so the run's readahead survives it.

Registered with fsspec as ``cache_type="archivefs-readahead"``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from fsspec.caching import BaseCache, register_cache

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future

    from fsspec.caching import Fetcher

    RangesFetcher = Callable[[list[tuple[int, int]]], list[bytes]]
    RangesStarter = Callable[[list[tuple[int, int]]], list[Future[list[bytes]]]]

GROWTH = 16
"""Each readahead of a run fetches this many times the previous fetch of that run."""


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

PARTS = 10
"""At most this many parts of one readahead in flight; also ``archivefs get``'s ranged GETs
in flight per object (``access.transfer.PART_CONCURRENCY``: the AWS CLI's and boto3's
default per download; s3fs's pool holds 10 connections)."""

MAX_PART = 8 * 2**20
"""The largest part of a readahead; also ``archivefs get``'s part
(``access.transfer.PART_SIZE``: the AWS CLI's and boto3's default chunk)."""

MAX_AHEAD = PARTS * MAX_PART
"""The largest readahead: what ``archivefs get`` keeps in flight for one object, so a
streaming run on a link where each connection is slow uses as many connections as
``get`` (with 8 parts, ``cat`` through the mount was held to 0.8x ``get``)."""

BUFFERS = 4
"""Buffers kept: a run's, and the random reads made while it runs."""

BEHIND = MAX_PART
"""A run's buffer keeps this much before its last read: a read that arrives a piece
late (FUSE hands reads to several threads) is still in it."""

BULK_READ = 64 * 1024
"""A first read of at least this many bytes reads a ``bulk_block`` (a copy's piece:
``shutil.copyfileobj`` and adlfs's test ask 64 KiB, FUSE 128 KiB; h5py's first is 8)."""


class _Part(NamedTuple):
    """Bytes ``[start, end)`` of the file, on their way (in the pieces they arrive in)."""

    start: int
    end: int
    data: Future[list[bytes]]


@dataclass
class _Buffer:
    """Bytes ``[start, stop)`` of the file, kept as the pieces they were fetched in (a
    run's parts are never copied into one string: a part is sliced only for the reads
    that ask it), and its last fetch's size; a streaming run's parts in flight right
    after it, in order."""

    start: int
    pieces: deque[bytes]
    fetched: int  # size of the last fetch: a read right after it grows from it
    pending: deque[_Part] = field(default_factory=deque)
    run: int = 0  # bytes a streaming run has taken: its window grows from them
    held: int = 0  # bytes in ``pieces``

    @classmethod
    def of(cls, start: int, data: bytes, fetched: int) -> _Buffer:
        """A buffer of ``data`` at ``start``."""
        return cls(start, deque([data] if data else []), fetched, held=len(data))

    @property
    def stop(self) -> int:
        return self.start + self.held

    @property
    def reach(self) -> int:
        """Where the bytes in flight end (``stop`` when none are)."""
        return self.pending[-1].end if self.pending else self.stop

    def slice(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)``, within ``[self.start, self.stop)``."""
        out, at = [], self.start
        for piece in self.pieces:
            after = at + len(piece)
            if after > start:
                out.append(piece[max(start - at, 0) : end - at])
                if after >= end:
                    break
            at = after
        return out[0] if len(out) == 1 else b"".join(out)

    def trim(self, back: int) -> None:
        """Drop the pieces that end at or before ``back`` (all of them, and start afresh
        at ``back``, when it is past the buffer's end)."""
        if back >= self.stop:
            self.pieces.clear()
            self.start, self.held = back, 0
            return
        while self.pieces and self.start + len(self.pieces[0]) <= back:
            dropped = self.pieces.popleft()
            self.start += len(dropped)
            self.held -= len(dropped)

    def extend(self, pieces: list[bytes]) -> None:
        """Append ``pieces``, the bytes right after the buffer's end."""
        for piece in pieces:
            if piece:
                self.pieces.append(piece)
                self.held += len(piece)

    def drop_pending(self) -> None:
        """Cancel the parts in flight (those not yet sent are never sent)."""
        for part in self.pending:
            part.data.cancel()
        self.pending.clear()

    def settle(self) -> None:
        """Keep the parts in flight that have arrived, in order right after the data,
        and cancel the rest: nothing reads on from here for now."""
        arrived: list[bytes] = []
        end = self.stop
        while self.pending and self.pending[0].start == end and _arrived(self.pending[0]):
            part = self.pending.popleft()
            arrived += part.data.result()
            end = part.end
        self.drop_pending()
        self.extend(arrived)


def _arrived(part: _Part) -> bool:
    """Whether ``part``'s bytes are here (done, neither cancelled nor failed)."""
    return part.data.done() and not part.data.cancelled() and part.data.exception() is None


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
        fetch_later: RangesStarter | None = None,
        bulk_block: int | None = None,
    ) -> None:
        """``fetch_ranges``: reads ``[(start, end), ...]`` at once, in that order;
        ``fetch_later``: starts them and returns their futures, each the bytes of its
        range in the pieces they arrived in (a run then streams, never joining them);
        ``bulk_block``: what a first read of at least :data:`BULK_READ` bytes fetches."""
        super().__init__(size if size <= WHOLE_FILE else min(blocksize, size), fetcher, size)
        self.fetch_ranges = fetch_ranges
        self.fetch_later = fetch_later
        self.bulk_block = bulk_block
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
                upto = end
                if self.bulk_block is not None and end - start >= BULK_READ:
                    upto = min(self.size, max(end, self.bulk_block))  # as the target reads
                if upto <= self.blocksize or self.size <= self.blocksize:
                    self.first = self._get(0, self.blocksize)
                else:  # a first read past the first block: one GET, the rest a buffer
                    data = self._get(0, upto)
                    self.first = data[: self.blocksize]
                    rest = _Buffer.of(self.blocksize, data[self.blocksize :], fetched=upto)
                    self._use(rest)
                    return data[start:end]
            else:
                self.hit_count += 1
            head = self.first[start:end]
            return head + self._fetch(self.blocksize, end) if end > self.blocksize else head
        for buffer in self.buffers:
            if buffer.start <= start and end <= buffer.stop:
                self.hit_count += 1
                self._use(buffer)
                return buffer.slice(start, end)
        self.miss_count += 1
        continued = next(  # the one this read continues: it starts inside, just past it,
            # or inside the parts it has in flight
            (b for b in self.buffers if b.start <= start <= max(b.stop + RUN_GAP, b.reach)),
            None,
        )
        if continued is None and self._continues_first_block(start):
            continued = _Buffer.of(self.blocksize, b"", fetched=self.blocksize)
        if continued is None:  # a random read: exactly what is asked
            buffer = _Buffer.of(start, self._get(start, end), fetched=end - start)
        else:
            buffer = continued
            begin = max(start, buffer.stop)  # where new bytes are needed from
            streams = bool(buffer.pending) and buffer.pending[0].start <= begin < buffer.reach
            # keep up to BEHIND before the read (FUSE's reads can come a piece out of
            # order); a gap past the buffer (a run skipping a little) keeps nothing
            back = max(buffer.start, min(start, buffer.stop) - BEHIND)
            if start > buffer.stop and not streams:
                back = start
            buffer.trim(back)  # what it keeps now ends where the new bytes begin
            if streams:  # the parts in flight, from the buffer's end on
                fetched = self._take(buffer, end)
                got = buffer.stop + sum(map(len, fetched))
                if got < end:  # a read longer than the window: the rest at once
                    fetched.append(self._get(got, end))
            else:
                buffer.drop_pending()
                run, buffer.run = buffer.fetched, 0
                want = end - begin
                ahead = min(MAX_AHEAD, max(want, buffer.fetched * GROWTH))
                if self.size <= RUN_TO_END:
                    ahead = self.size - begin
                if self._streams(ahead):  # its parts follow what the buffer keeps
                    buffer.run = run
                    self._send(buffer, begin, min(self.size, begin + ahead))
                    fetched = self._take(buffer, end)
                else:
                    fetched = self._get_parts(begin, min(self.size, begin + ahead))
            buffer.extend(fetched)  # no copy: each part stays a piece of its own
            buffer.fetched = sum(map(len, fetched))
            if buffer.pending or buffer.run:
                self._top_up(buffer)
        self._use(buffer)
        return buffer.slice(start, end)

    def _streams(self, ahead: int) -> bool:
        """Whether a run's readahead of ``ahead`` bytes streams (parts kept in flight)."""
        return self.fetch_later is not None and self.size > RUN_TO_END and ahead >= 2 * PART

    def _send(self, buffer: _Buffer, start: int, end: int) -> None:
        """Start ``[start, end)`` in parts of :meth:`_part` bytes, queued after
        ``buffer``'s parts in flight; no part under :data:`PART` is left at the end
        (of the range, or of the file)."""
        assert self.fetch_later is not None
        if self.size - end < PART:
            end = self.size
        cuts = [*range(start, end, self._part(buffer)), end]
        if len(cuts) > 2 and cuts[-1] - cuts[-2] < PART:
            del cuts[-2]
        ranges = list(pairwise(cuts))
        self.total_requested_bytes += end - start
        futures = self.fetch_later(ranges)
        buffer.pending.extend(_Part(s, e, f) for (s, e), f in zip(ranges, futures, strict=True))

    def _part(self, buffer: _Buffer) -> int:
        """A streaming run's part size: its window in :data:`PARTS` parts (at least
        :data:`PART`, at most :data:`MAX_PART`): while the window grows,
        its bytes come on as many connections as a full one's (in quarters, a 160 MiB
        ``cat`` on 10 MB/s connections was 0.70-0.78x ``get``; in tenths, 0.89-0.97x)."""
        return min(MAX_PART, max(PART, self._window(buffer) // PARTS))

    def _window(self, buffer: _Buffer) -> int:
        """Bytes a streaming run keeps in flight: :data:`GROWTH` times what it has
        taken, at most :data:`MAX_AHEAD`."""
        return min(MAX_AHEAD, GROWTH * buffer.run)

    def _take(self, buffer: _Buffer, end: int) -> list[bytes]:
        """The parts in flight up to the one that holds ``end - 1`` (waiting for them)."""
        taken: list[bytes] = []
        while buffer.pending:
            part = buffer.pending.popleft()
            taken += part.data.result()
            buffer.run += part.end - part.start
            if part.end >= end:
                break
        return taken

    def _top_up(self, buffer: _Buffer) -> None:
        """Keep the run's window in flight after ``buffer``, in whole parts (up to the
        file's end)."""
        reach, part = buffer.reach, self._part(buffer)
        count = (self._window(buffer) - (reach - buffer.stop)) // part
        if reach < self.size and count > 0:
            self._send(buffer, reach, min(self.size, reach + count * part))

    def _continues_first_block(self, start: int) -> bool:
        """Whether a read from ``start`` runs on from the first block in a file of at most
        :data:`RUN_TO_END` bytes (the first chunk after the headers: a whole variable)."""
        return self.first is not None and (
            self.size <= RUN_TO_END and self.blocksize <= start <= self.blocksize + RUN_GAP
        )

    def _use(self, buffer: _Buffer) -> None:
        """``buffer`` becomes the most recently used; the least recently used beyond
        :data:`BUFFERS` are dropped."""
        ordered = [buffer, *(b for b in self.buffers if b is not buffer)]
        for dropped in ordered[BUFFERS:]:
            dropped.drop_pending()
        self.buffers = ordered[:BUFFERS]

    def close(self) -> None:
        """Cancel every run's parts in flight (the file is closed)."""
        for buffer in self.buffers:
            buffer.drop_pending()

    def settle(self) -> None:
        """The file stays open but nothing reads it now (a mount keeps a closed file for
        a reopen): the parts in flight that have arrived join their run's buffer, the
        rest are cancelled, so no readahead goes on for a reader that is gone."""
        for buffer in self.buffers:
            buffer.settle()

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
