"""The file cache: header block, exact random reads, readahead growing along forward runs."""

from __future__ import annotations

from archivefs.readahead import GROWTH, LONG_GROWTH, MAX_AHEAD, ReadaheadCache

SIZE = 300 * 2**20
BLOCK = 64 * 1024


def _cache() -> tuple[ReadaheadCache, list[tuple[int, int]]]:
    calls: list[tuple[int, int]] = []

    def fetch(start: int, end: int) -> bytes:
        calls.append((start, end))
        return (
            bytes(i % 251 for i in range(start, end))
            if end - start < 2**20
            else b"\0" * (end - start)
        )

    return ReadaheadCache(BLOCK, fetch, SIZE), calls


def test_random_reads_are_exact_after_the_header_block() -> None:
    cache, calls = _cache()
    assert cache._fetch(10, 20) == bytes(range(10, 20))
    assert cache._fetch(100, 200) == bytes(range(100, 200))  # from the first block
    cache._fetch(5_000_000, 5_040_000)
    cache._fetch(1_000_000, 1_040_000)  # backwards: no run
    assert calls == [(0, BLOCK), (5_000_000, 5_040_000), (1_000_000, 1_040_000)]


def test_a_forward_run_grows_by_growth_then_long_growth_up_to_max_ahead() -> None:
    cache, calls = _cache()
    chunk = 259_200
    pos = BLOCK
    for _ in range(365):  # every chunk of a variable, in order
        assert len(cache._fetch(pos, pos + chunk)) == chunk
        pos += chunk
    sizes = [end - start for start, end in calls]
    assert sizes[:4] == [chunk, chunk * GROWTH, chunk * GROWTH * LONG_GROWTH, MAX_AHEAD]
    assert len(calls) == 5  # 94.6 MB of chunks: 5 requests, not 365
    assert sum(sizes) - 365 * chunk < MAX_AHEAD  # at most one readahead too many


def test_a_short_run_over_fetches_at_most_growth_times_its_chunk() -> None:
    cache, calls = _cache()
    chunk = 160_000
    for i in range(2):  # two time steps in a row
        cache._fetch(BLOCK + i * chunk, BLOCK + (i + 1) * chunk)
    assert [end - start for start, end in calls] == [chunk, chunk * GROWTH]
    cache._fetch(50_000_000, 50_000_000 + chunk)  # a jump ends the run: exact again
    cache._fetch(50_000_000 + chunk, 50_000_000 + 2 * chunk)
    assert [end - start for start, end in calls[2:]] == [chunk, chunk * GROWTH]


def test_a_read_that_starts_inside_the_buffer_fetches_only_the_rest() -> None:
    cache, calls = _cache()
    cache._fetch(1_000_000, 1_000_100)
    assert cache._fetch(1_000_050, 1_000_300) == bytes(i % 251 for i in range(1_000_050, 1_000_300))
    assert calls[-1] == (1_000_100, 1_000_100 + 100 * GROWTH)
