"""Reads and errors checked the same way on every S3-compatible store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from archivefs import (
    ObjectNotFoundError,
)
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from pathlib import Path


def read_every_way(fs: Any, path: str, tmp_path: Path) -> list[bytes]:
    """``path`` (at least 70,100 bytes) read whole, by range, by ranges, through a
    readahead file and by ``get_file``: the reads compared with s3fs's (also on radosgw)."""
    out = [
        fs.cat_file(path),
        fs.cat_file(path, start=100, end=5000),
        *fs.cat_ranges([path, path], [0, 1000], [10, 2000]),
    ]
    with fs.open(path, block_size=2**16, cache_type="readahead") as f:
        f.seek(70_000)
        out.append(f.read(100))
    local = tmp_path / f"{type(fs).__name__}.bin"
    fs.get_file(path, str(local))
    out.append(local.read_bytes())
    return out


def check_missing_bucket_and_key(afs: ArchiveFileSystem, bucket: str) -> None:
    """The errors for a missing key of ``bucket`` and for a missing bucket (also on radosgw)."""
    with pytest.raises(ObjectNotFoundError, match="no such object") as info:
        afs.cat_file(f"{bucket}/nope")
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(FileNotFoundError):
        afs.info(f"{bucket}/nope")
    with pytest.raises(ObjectNotFoundError, match="does not exist"):
        afs.cat_file("no-such-bucket-anywhere/key")
    with pytest.raises(FileNotFoundError):
        afs.ls("no-such-bucket-anywhere")
    with pytest.raises(ObjectNotFoundError, match="do not exist"):
        afs.restore(f"{bucket}/nope")


LINES = b"line one\nline two\nthe third line, the last\n"
