"""The mount's shared file objects (mount/files.py): a file kept after its last close, for
a reopen, keeps what its readahead fetched but nothing in flight for a reader that is gone;
while another open of it reads, its readahead goes on. No FUSE needed: the objects the
mount's operations use, over a real filesystem on the emulated S3 archive."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from archivefs.mount.files import OpenFiles, SharedFile

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive

SIZE = 32 * 2**20  # past RUN_TO_END: a forward run streams its parts
PIECE = 128 * 1024  # FUSE's reads


def _in_flight(shared: SharedFile) -> list[Future[bytes]]:
    return [part.data for buffer in shared.file.cache.buffers for part in buffer.pending]


def _run(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem]
) -> tuple[OpenFiles, SharedFile, bytes, list[Future[bytes]]]:
    """A forward run through one open: its first read, then (each request held 2 s at
    the server) the read that starts the run's parts; the parts sent after it arrived
    are still on their way."""
    data = np.random.default_rng(4).bytes(SIZE)
    archive.put_objects(bucket, {"big.bin": data})
    fs, path = make_fs(), f"{bucket}/big.bin"
    files = OpenFiles()
    shared = files.acquire((path, "v1"), lambda: fs.open(path, "rb", size=SIZE))
    assert shared.read(PIECE, 0) == data[:PIECE]
    archive.set_latency(2.0)
    assert shared.read(PIECE, PIECE) == data[PIECE : 2 * PIECE]
    return files, shared, data, [f for f in _in_flight(shared) if not f.done()]


def test_a_kept_files_readahead_in_flight_is_cancelled_at_its_last_close(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem]
) -> None:
    files, shared, data, waiting = _run(archive, bucket, make_fs)
    assert waiting  # the run's window, on its way
    files.release(shared)
    assert all(f.cancelled() for f in waiting)
    assert _in_flight(shared) == []
    archive.set_latency(0.0)
    again = files.acquire(shared.key, lambda: None)  # the reopen gets the kept file
    assert again is shared
    assert again.read(PIECE, 4 * 2**20) == data[4 * 2**20 : 4 * 2**20 + PIECE]
    files.release(again)


def test_closing_one_of_two_opens_leaves_the_readahead_to_the_other(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem]
) -> None:
    files, shared, _, waiting = _run(archive, bucket, make_fs)
    assert files.acquire(shared.key, lambda: None) is shared  # a second open
    files.release(shared)
    assert waiting
    assert not any(f.cancelled() for f in waiting)
    files.release(shared)
    assert all(f.cancelled() for f in waiting)
    archive.set_latency(0.0)
