"""Large recursive listings cut into key ranges listed at once: the same answer as one
sequence of pages, for a bounded number of extra requests (stores/keyspace.py)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest
import s3fs
from hypothesis import given
from hypothesis import strategies as st

from archivefs.errors import InvalidOptionsError
from archivefs.stores.keyspace import cut_points, ranges_after
from archivefs.stores.s3 import CUT_PAGES

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

PAGE = 20  # keys per LIST in these tests, so that a few hundred keys span many pages

keys = st.lists(st.text(alphabet="ab/.\x7f\u00e9\U0001f600", max_size=6), max_size=40)


@given(keys, keys, st.text(alphabet="ab/.", max_size=4))
def test_ranges_after_hold_every_later_key_exactly_once(
    names: list[str], cuts: list[str], after: str
) -> None:
    ranges = ranges_after(after, sorted(set(cuts)))
    for name in names:
        # a piece's listing answers keys after its StartAfter; it keeps those it holds
        returned_by = [r for r in ranges if name > r.start_after and r.holds(name)]
        assert len(returned_by) == (1 if name > after else 0), (name, ranges)
    lows = [r.low for r in ranges[1:]]
    assert lows == sorted(lows)


def test_cut_points_are_evenly_spaced_and_at_most_pieces_minus_one() -> None:
    dirs = [f"d/{i:03d}/" for i in range(100)]
    assert cut_points(dirs, 4) == ["d/025/", "d/050/", "d/075/"]
    assert cut_points(dirs[:2], 8) == ["d/001/"]
    assert cut_points(dirs[:1], 8) == []
    assert cut_points(dirs, 1) == []


def _tree(archive: EmulatedArchive, bucket: str) -> dict[str, bytes]:
    objects = {f"t/{d:02d}/{f:03d}.nc": bytes([d, f]) for d in range(12) for f in range(25)}
    objects |= {f"t/top{i}.txt": b"top" for i in range(7)}  # files beside the directories
    objects |= {f"t/05/deep/{i}.bin": b"deep" for i in range(30)}  # a nested directory
    archive.put_objects(bucket, {k: v for k, v in objects.items() if k < "t/06"})
    archive.put_objects(
        bucket, {k: v for k, v in objects.items() if k >= "t/06"}, storage_class="GLACIER"
    )
    return objects


def _fs(make_fs: Any, fanout: int) -> Any:
    return make_fs(store_options={"list_fanout": fanout, "list_page": PAGE})


def test_find_in_ranges_equals_one_sequence_of_pages_and_s3fs(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    objects = _tree(archive, bucket)
    archive.requests.clear()
    sequential = _fs(make_fs, 1).find(f"{bucket}/t", detail=True)
    sequential_lists = archive.requests.count("LIST")
    assert sequential_lists == math.ceil(len(objects) / PAGE)

    archive.requests.clear()
    fanned = _fs(make_fs, 4).find(f"{bucket}/t", detail=True)
    fanned_lists = archive.requests.count("LIST")

    assert list(fanned) == list(sequential) == sorted(f"{bucket}/{k}" for k in objects)
    assert fanned == sequential  # sizes, classes and restore states alike
    plain = s3fs.S3FileSystem(**archive.storage_options(), skip_instance_cache=True)
    assert list(fanned) == plain.find(f"{bucket}/t")
    assert archive.requests.count("HEAD") == 0
    # first page + the cut listing + 4 pieces, each wasting at most its last page
    assert sequential_lists < fanned_lists <= sequential_lists + 1 + 1 + 4


def test_everything_in_one_directory_is_cut_inside_it(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    objects = {f"one/only/{d}/{f:02d}": b"x" for d in "abcdefgh" for f in range(20)}
    archive.put_objects(bucket, objects)
    archive.requests.clear()
    names = _fs(make_fs, 4).find(f"{bucket}/one")
    assert names == sorted(f"{bucket}/{k}" for k in objects)
    lists = archive.requests.count("LIST")
    # first page, then two cut listings (one/ holds only one/only/, then one/only/ itself)
    assert lists <= math.ceil(len(objects) / PAGE) + 1 + 2 + 4


def test_a_flat_prefix_costs_one_request_more_and_lists_in_sequence(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    objects = {f"flat/{i:04d}": b"x" for i in range(95)}
    archive.put_objects(bucket, objects)
    archive.requests.clear()
    names = _fs(make_fs, 8).find(f"{bucket}/flat")
    assert names == sorted(f"{bucket}/{k}" for k in objects)
    assert archive.requests.count("LIST") == math.ceil(95 / PAGE) + 1


def test_one_page_is_one_request_as_before(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_objects(bucket, {f"small/{d}/{f}": b"x" for d in range(3) for f in range(5)})
    archive.requests.clear()
    assert len(_fs(make_fs, 8).find(f"{bucket}/small")) == 15
    assert archive.requests.count("LIST") == 1


def test_cut_listings_are_bounded_when_there_are_many_directories(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    objects = {f"many/{d:03d}/x": b"x" for d in range(200)}  # 200 directories of one file
    archive.put_objects(bucket, objects)
    archive.requests.clear()
    names = _fs(make_fs, 4).find(f"{bucket}/many")
    assert names == sorted(f"{bucket}/{k}" for k in objects)
    assert archive.requests.count("LIST") <= math.ceil(200 / PAGE) + 1 + CUT_PAGES + 4


@pytest.mark.parametrize(
    "options", [{"list_fanout": 0}, {"list_page": 1001}, {"list_fanout": "8"}, {"list_page": True}]
)
def test_bad_listing_options_are_refused_with_a_fix(
    make_fs: Any, options: dict[str, Any], archive: EmulatedArchive
) -> None:
    archive.requests.clear()
    with pytest.raises(InvalidOptionsError, match=r"store_options: .* Fix: pass e\.g\."):
        make_fs(store_options=options)
    assert len(archive.requests) == 0


def _probe(fs: Any, paths: list[str]) -> dict[str, Any]:
    from fsspec.asyn import sync

    return sync(fs.loop, fs.store.probe, paths)


def test_a_bulk_probe_lists_in_chunks_with_the_answer_of_one_sequence(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    objects = {f"b/{i:04d}.zip": b"x" for i in range(95)}
    archive.put_objects(bucket, objects, storage_class="GLACIER")
    dense = [f"{bucket}/{k}" for k in objects]
    sparse = [*dense[::3], f"{bucket}/b/0000.zip.missing"]
    answers = {}
    for fanout in (1, 4):
        for name, paths in (("dense", dense), ("sparse", sparse)):
            archive.requests.clear()
            answers[fanout, name] = _probe(_fs(make_fs, fanout), paths)
            lists = archive.requests.count("LIST")
            if name == "dense":  # 5 chunks of 20 keys that lie together: one page each
                assert lists == math.ceil(95 / PAGE)
            else:  # 33 keys spread over 95: a chunk's last page may reach into the next
                chunks = math.ceil(len(sparse) / PAGE)
                assert math.ceil(95 / PAGE) - 1 <= lists <= math.ceil(95 / PAGE) + chunks
            assert archive.requests.count("HEAD") == 0
    assert answers[1, "dense"] == answers[4, "dense"]
    assert answers[1, "sparse"] == answers[4, "sparse"]
    assert set(answers[4, "dense"]) == set(dense)
    assert answers[4, "sparse"][f"{bucket}/b/0000.zip.missing"] is None
    states = answers[4, "sparse"]
    assert all(
        states[p] is not None and states[p].storage_class.value == "GLACIER" for p in dense[::3]
    )
