"""The file cache: small files whole, header block, exact random reads, readahead growing
along forward runs and fetched in parts at once."""

from __future__ import annotations

import itertools
from collections import deque
from concurrent.futures import Future

from archivefs.readahead import (
    BEHIND,
    BUFFERS,
    GROWTH,
    MAX_AHEAD,
    PART,
    PARTS,
    RUN_TO_END,
    WHOLE_FILE,
    ReadaheadCache,
)

SIZE = 300 * 2**20
BLOCK = 64 * 1024


_PATTERN = bytes(range(251))


def _byte(i: int) -> int:
    return i % 251


def _cache(
    size: int = SIZE, *, parts: bool = False
) -> tuple[ReadaheadCache, list[tuple[int, int]], list[list[tuple[int, int]]]]:
    """A cache over a file of ``size`` bytes; its single reads and its batches of parts."""
    calls: list[tuple[int, int]] = []
    batches: list[list[tuple[int, int]]] = []

    def data(start: int, end: int) -> bytes:
        return (_PATTERN * ((end - start) // 251 + 2))[start % 251 :][: end - start]

    def fetch(start: int, end: int) -> bytes:
        calls.append((start, end))
        return data(start, end)

    def fetch_ranges(ranges: list[tuple[int, int]]) -> list[bytes]:
        batches.append(ranges)
        return [data(start, end) for start, end in ranges]

    cache = ReadaheadCache(BLOCK, fetch, size, fetch_ranges if parts else None)
    return cache, calls, batches


def test_random_reads_are_exact_after_the_header_block() -> None:
    cache, calls, _ = _cache()
    assert cache._fetch(10, 20) == bytes(range(10, 20))
    assert cache._fetch(100, 200) == bytes(range(100, 200))  # from the first block
    cache._fetch(5_000_000, 5_040_000)
    cache._fetch(1_000_000, 1_040_000)  # backwards: no run
    assert calls == [(0, BLOCK), (5_000_000, 5_040_000), (1_000_000, 1_040_000)]


def test_a_small_file_is_read_whole_by_its_first_read() -> None:
    cache, calls, _ = _cache(WHOLE_FILE)
    assert cache._fetch(700_000, 700_010) == bytes(_byte(i) for i in range(700_000, 700_010))
    cache._fetch(10, 20)
    cache._fetch(900_000, WHOLE_FILE)
    assert calls == [(0, WHOLE_FILE)]  # one GET, whatever is read after it
    bigger, calls, _ = _cache(WHOLE_FILE + 1)
    bigger._fetch(700_000, 700_010)
    assert calls == [(700_000, 700_010)]  # exactly what is asked


def test_a_forward_run_grows_by_growth_up_to_max_ahead() -> None:
    cache, calls, _ = _cache()
    chunk = 259_200
    pos = BLOCK
    for _ in range(365):  # every chunk of a variable, in order
        assert len(cache._fetch(pos, pos + chunk)) == chunk
        pos += chunk
    sizes = [end - start for start, end in calls]
    assert sizes == [chunk, chunk * GROWTH, chunk * GROWTH**2, MAX_AHEAD]  # 4, not 365
    assert sum(sizes) - 365 * chunk < MAX_AHEAD  # at most one readahead too many


def test_a_short_run_over_fetches_at_most_growth_times_its_chunk() -> None:
    cache, calls, _ = _cache()
    chunk = 160_000
    for i in range(2):  # two time steps in a row
        cache._fetch(BLOCK + i * chunk, BLOCK + (i + 1) * chunk)
    assert [end - start for start, end in calls] == [chunk, chunk * GROWTH]
    cache._fetch(50_000_000, 50_000_000 + chunk)  # a jump starts a buffer: exact again
    cache._fetch(50_000_000 + chunk, 50_000_000 + 2 * chunk)
    assert [end - start for start, end in calls[2:]] == [chunk, chunk * GROWTH]


def test_a_run_in_a_file_of_at_most_run_to_end_reads_the_rest_of_it() -> None:
    cache, calls, _ = _cache(RUN_TO_END)
    chunk = 65_536
    cache._fetch(BLOCK, BLOCK + chunk)
    cache._fetch(BLOCK + chunk, BLOCK + 2 * chunk)
    assert calls == [(BLOCK, BLOCK + chunk), (BLOCK + chunk, RUN_TO_END)]
    for i in range(2, 40):  # the rest of the run: no more requests
        cache._fetch(BLOCK + i * chunk, BLOCK + (i + 1) * chunk)
    assert len(calls) == 2


def test_a_read_that_starts_inside_the_buffer_fetches_only_the_rest() -> None:
    cache, calls, _ = _cache()
    cache._fetch(1_000_000, 1_000_100)
    assert cache._fetch(1_000_050, 1_000_300) == bytes(
        _byte(i) for i in range(1_000_050, 1_000_300)
    )
    assert calls[-1] == (1_000_100, 1_000_100 + 100 * GROWTH)


def test_large_readaheads_go_out_in_parts_at_once_small_ones_whole() -> None:
    cache, calls, batches = _cache(parts=True)
    chunk = 1_000_000
    cache._fetch(BLOCK, BLOCK + chunk)  # a random read: one request
    cache._fetch(BLOCK + chunk, BLOCK + 2 * chunk)  # 16 MB ahead: 8 parts of 2 MB
    assert calls == [(BLOCK, BLOCK + chunk)]
    [parts] = batches
    assert len(parts) == min(PARTS, chunk * GROWTH // PART) == PARTS
    assert parts[0][0] == BLOCK + chunk
    assert parts[-1][1] == BLOCK + chunk + chunk * GROWTH
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))  # contiguous
    assert all(end - start >= PART for start, end in parts)
    small, calls, batches = _cache(parts=True)
    small._fetch(BLOCK, BLOCK + 50_000)
    assert small._fetch(BLOCK + 50_000, BLOCK + 100_000) == bytes(
        _byte(i) for i in range(BLOCK + 50_000, BLOCK + 100_000)
    )
    assert batches == []  # 800 kB ahead: under two parts, one request
    assert calls[-1] == (BLOCK + 50_000, BLOCK + 50_000 + 50_000 * GROWTH)


def test_a_random_read_in_the_middle_of_a_run_keeps_the_runs_readahead() -> None:
    cache, calls, _ = _cache()
    chunk = 100_000
    cache._fetch(BLOCK, BLOCK + chunk)
    cache._fetch(BLOCK + chunk, BLOCK + 2 * chunk)  # the run reads ahead 16 chunks
    cache._fetch(200_000_000, 200_003_136)  # a node of the chunk index, far away
    before = len(calls)
    for i in range(2, 10):  # the run goes on from its readahead: no request
        cache._fetch(BLOCK + i * chunk, BLOCK + (i + 1) * chunk)
    assert len(calls) == before == 3


def test_in_a_file_of_at_most_run_to_end_the_first_block_starts_a_run() -> None:
    """The first chunk after the headers (a whole variable) reads the rest of the file;
    in a larger file it stays an exact random read."""
    cache, calls, _ = _cache(RUN_TO_END)
    cache._fetch(0, 100)
    cache._fetch(BLOCK, BLOCK + 65_536)
    assert calls == [(0, BLOCK), (BLOCK, RUN_TO_END)]
    large, calls, _ = _cache(RUN_TO_END + 1)
    large._fetch(0, 100)
    large._fetch(BLOCK, BLOCK + 65_536)
    assert calls == [(0, BLOCK), (BLOCK, BLOCK + 65_536)]
    jump, calls, _ = _cache(RUN_TO_END)  # a read further on (one time step): exact
    jump._fetch(0, 100)
    jump._fetch(4_000_000, 4_065_536)
    assert calls == [(0, BLOCK), (4_000_000, 4_065_536)]


MiB = 2**20
FUSE_READ = 128 * 1024  # what FUSE asks per read


class _Streamed:
    """A cache over a file whose runs stream: what it started, in order, among its reads."""

    def __init__(self, size: int, *, done: int | None = None) -> None:
        """``done``: parts starting before this offset arrive at once, later ones never
        (so a test sees which are still in flight)."""
        self.size = size
        self.done = size if done is None else done
        self.calls: list[tuple[int, int]] = []  # single reads
        self.started: list[tuple[int, int]] = []  # parts started in the background
        self.futures: list[Future[list[bytes]]] = []
        self.events: list[tuple[str, int, int]] = []  # ("start"|"read", start, end)
        self.cache = ReadaheadCache(BLOCK, self._fetch, size, None, self._later)

    def _fetch(self, start: int, end: int) -> bytes:
        self.calls.append((start, end))
        return bytes(end - start)

    def _later(self, ranges: list[tuple[int, int]]) -> list[Future[list[bytes]]]:
        """Each range's bytes in pieces of at most a MiB, as a body arrives."""
        out = []
        for start, end in ranges:
            self.started.append((start, end))
            self.events.append(("start", start, end))
            future: Future[list[bytes]] = Future()
            if start < self.done:
                future.set_result([bytes(min(MiB, end - at)) for at in range(start, end, MiB)])
            out.append(future)
        self.futures.extend(out)
        return out

    def read(self, start: int, end: int) -> bytes:
        self.events.append(("read", start, end))
        return self.cache._fetch(start, end)


def test_a_sequential_run_streams_its_next_parts_while_it_reads() -> None:
    """A 200 MiB file read in FUSE's 128 KiB pieces: one GET for the first read, then
    parts that grow to MAX_AHEAD / PARTS, every byte fetched once, and each part started
    before the reader reaches it (in flight while the one before it is read)."""
    size = 200 * MiB
    streamed = _Streamed(size)
    reach = 0  # where the parts started so far end, at each read
    for start in range(0, size, FUSE_READ):
        assert len(streamed.read(start, start + FUSE_READ)) == FUSE_READ
        reach = max([reach, *(end for _, end in streamed.started)])
        # in flight beyond the reader: at most a window and the part being read
        assert reach - (start + FUSE_READ) <= MAX_AHEAD + MAX_AHEAD // PARTS + PART
    assert streamed.calls == [(0, FUSE_READ)]  # the first read, then only parts
    parts = streamed.started
    assert parts[0][0] == FUSE_READ
    assert parts[-1][1] == size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))  # each byte once
    sizes = [end - start for start, end in parts]
    # the window is 16 x what the run took (2 MiB, then 18 MiB when it takes its first
    # 1.125 MiB, 34 MiB at 2.125 MiB, 62.8 MiB at 3.925 MiB, then MAX_AHEAD), in parts of a
    # tenth of it (at least PART, at most MAX_AHEAD / PARTS), each window topped up in
    # whole parts; the last part takes the file's tail under a PART
    part = MAX_AHEAD // PARTS
    taken = [FUSE_READ + PART, FUSE_READ + 2 * PART]  # the run when each window is set
    taken.append(taken[-1] + GROWTH * taken[0] // PARTS)  # and its first part of 1.8 MiB
    windows = [GROWTH * t for t in taken]  # 18 MiB, 34 MiB, 62.8 MiB
    ramp = [PART] * 2 + [windows[0] // PARTS] * 9 + [windows[1] // PARTS] * 5
    ramp += [windows[2] // PARTS] * 5
    assert sizes[: len(ramp)] == ramp
    assert set(sizes[len(ramp) : -1]) == {part}
    rest = size - FUSE_READ - sum(ramp)  # full parts, then the tail: its own part from a
    tail = rest % part  # PART on, else joined to the last full part
    assert sizes[-1] == (tail if tail >= PART else part + tail)
    assert len(parts) == len(ramp) + rest // part + (tail >= PART)
    # every part but the first two was started before any byte of the one before it was
    # read: the next bytes are on their way while the current ones are read
    first_read = {
        (s, e): next(i for i, ev in enumerate(streamed.events) if ev[0] == "read" and ev[2] > s)
        for s, e in parts
    }
    started_at = {(s, e): streamed.events.index(("start", s, e)) for s, e in parts}
    for before, after in itertools.pairwise(parts[1:]):
        assert started_at[after] < first_read[before]


def test_a_run_that_stops_has_fetched_at_most_one_window_it_did_not_read() -> None:
    streamed = _Streamed(300 * MiB)
    read = 10 * MiB
    for start in range(0, read, FUSE_READ):
        streamed.read(start, start + FUSE_READ)
    fetched = sum(e - s for s, e in streamed.calls + streamed.started)
    assert read < fetched <= read + min(MAX_AHEAD, GROWTH * read) + MAX_AHEAD // PARTS


def test_random_reads_do_not_stream() -> None:
    """Chunks of a netCDF file read out of order: exactly what is asked, nothing started."""
    streamed = _Streamed(300 * MiB)
    streamed.read(0, 100)
    offsets = [250, 40, 170, 90, 10, 220]
    for offset in offsets:
        streamed.read(offset * MiB, offset * MiB + 65_536)
    assert streamed.calls == [(0, BLOCK)] + [(o * MiB, o * MiB + 65_536) for o in offsets]
    assert streamed.started == []


def test_a_first_read_past_the_header_block_is_one_request() -> None:
    streamed = _Streamed(300 * MiB)
    streamed.read(0, FUSE_READ)
    assert streamed.read(100, 200) == bytes(100)  # the header block is kept
    streamed.read(FUSE_READ, 2 * FUSE_READ)  # and the read runs on from it
    assert streamed.calls == [(0, FUSE_READ)]
    assert streamed.started[0] == (FUSE_READ, FUSE_READ + PART)


def test_closing_cancels_the_parts_in_flight() -> None:
    streamed = _Streamed(300 * MiB, done=2 * MiB)  # later parts never arrive
    for start in range(0, MiB, FUSE_READ):
        streamed.read(start, start + FUSE_READ)
    waiting = [f for f in streamed.futures if not f.done()]
    assert waiting  # the run's window, on its way
    streamed.cache.close()
    assert all(f.cancelled() for f in waiting)
    assert streamed.cache.buffers[0].pending == deque()


def test_settling_keeps_the_parts_that_arrived_and_cancels_the_rest() -> None:
    """A file kept open that no one reads (the mount's closed files): its run's parts that
    arrived stay readable without a request; those still on their way are cancelled."""
    streamed = _Streamed(300 * MiB, done=2 * MiB)  # parts starting past 2 MiB never arrive
    for start in range(0, MiB, FUSE_READ):
        streamed.read(start, start + FUSE_READ)
    arrived = [
        (s, e) for (s, e), f in zip(streamed.started, streamed.futures, strict=True) if f.done()
    ]
    waiting = [f for f in streamed.futures if not f.done()]
    assert arrived
    assert waiting
    streamed.cache.settle()
    assert all(f.cancelled() for f in waiting)
    assert streamed.cache.buffers[0].pending == deque()
    calls, started = list(streamed.calls), list(streamed.started)
    end = arrived[-1][1]
    assert streamed.read(end - FUSE_READ, end) == bytes(FUSE_READ)  # kept: no request
    assert (streamed.calls, streamed.started) == (calls, started)


def test_a_jump_away_leaves_the_run_streaming_and_an_evicted_run_is_cancelled() -> None:
    streamed = _Streamed(300 * MiB, done=4 * MiB)
    for start in range(0, 2 * MiB, FUSE_READ):
        streamed.read(start, start + FUSE_READ)
    run = [f for f in streamed.futures if not f.done()]
    streamed.read(250 * MiB, 250 * MiB + 100)  # a node of the chunk index
    assert not any(f.cancelled() for f in run)  # the run's parts stay in flight
    for offset in range(BUFFERS):  # random reads push the run out of the buffers
        streamed.read((100 + offset) * MiB, (100 + offset) * MiB + 100)
    assert all(f.cancelled() for f in run)


def test_reads_that_arrive_a_piece_out_of_order_are_not_fetched_again() -> None:
    """FUSE hands a sequential reader's pieces to several threads: one may arrive after
    the next. The run keeps a little behind its last read, so nothing is fetched twice."""
    size = 64 * MiB
    streamed = _Streamed(size)
    order = list(range(0, size, FUSE_READ))
    for i in range(2, len(order) - 1, 3):  # every third pair swapped
        order[i], order[i + 1] = order[i + 1], order[i]
    for start in order:
        assert len(streamed.read(start, start + FUSE_READ)) == FUSE_READ
    fetched = streamed.calls + streamed.started
    assert sum(e - s for s, e in fetched) == size  # each byte once
    assert len(streamed.calls) == 1


def test_a_sequential_run_holds_its_window_and_behind_without_copying_its_parts() -> None:
    """The parts a run takes stay the pieces they arrived as: memory during a 200 MiB
    sequential read is the window in flight, BEHIND and the part being read, never a
    second copy of them (the buffer used to be joined into one string at every part:
    ``kept + part`` copied while the old buffer was still held)."""
    import tracemalloc

    size = 200 * MiB
    streamed = _Streamed(size)
    part = MAX_AHEAD // PARTS
    tracemalloc.start()
    try:
        for start in range(0, size, FUSE_READ):
            streamed.read(start, start + FUSE_READ)
            streamed.futures = _held(streamed)  # the harness keeps no part the cache let go
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= MAX_AHEAD + BEHIND + 2 * part + MiB


def _held(streamed: _Streamed) -> list[Future[list[bytes]]]:
    """The futures the cache still holds (its runs' parts in flight)."""
    return [p.data for b in streamed.cache.buffers for p in b.pending]


def test_a_full_streaming_window_is_as_many_parts_of_the_same_size_as_get_keeps() -> None:
    """One decision: ``cat`` through the mount and ``fs.get`` of one object keep the same
    parts in flight (with 8 parts where ``get`` keeps 10, ``cat`` on a link of slow
    connections stayed at 0.8x ``get``)."""
    from archivefs.access.transfer import PART_CONCURRENCY, PART_SIZE

    streamed = _Streamed(300 * MiB)
    for start in range(0, 100 * MiB, FUSE_READ):
        streamed.read(start, start + FUSE_READ)
    pending = streamed.cache.buffers[0].pending
    assert [part.end - part.start for part in pending] == [PART_SIZE] * PART_CONCURRENCY


def test_a_streaming_run_reads_the_right_bytes_across_the_pieces_its_parts_arrive_in() -> None:
    """A part arrives as its body's pieces (``fetch_pieces``), never joined: reads that
    straddle pieces and parts, and a read back into what the run keeps behind, give the
    file's bytes."""
    size = 40 * MiB + 12_345
    piece = 100_003  # pieces that end anywhere in a read

    def data(start: int, end: int) -> bytes:
        return (_PATTERN * ((end - start) // 251 + 2))[start % 251 :][: end - start]

    def later(ranges: list[tuple[int, int]]) -> list[Future[list[bytes]]]:
        out = []
        for start, end in ranges:
            future: Future[list[bytes]] = Future()
            future.set_result([data(a, min(a + piece, end)) for a in range(start, end, piece)])
            out.append(future)
        return out

    cache = ReadaheadCache(BLOCK, data, size, None, later)
    for start in range(0, size, FUSE_READ):
        end = min(start + FUSE_READ, size)
        assert cache._fetch(start, end) == data(start, end)
    assert cache.buffers[0].pending == deque()  # every part was taken
    back = size - 3 * MiB - 17
    assert cache._fetch(back, back + MiB + 1) == data(back, back + MiB + 1)
