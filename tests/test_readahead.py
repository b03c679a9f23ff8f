"""The file cache: small files whole, header block, exact random reads, readahead growing
along forward runs and fetched in parts at once."""

from __future__ import annotations

import itertools

from archivefs.readahead import (
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
