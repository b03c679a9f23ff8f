"""An empty object reads as no bytes on every provider, in one request.

S3, Azure, Oracle and radosgw refuse a range over an empty object (416
``InvalidRange``); each adapter's ``get_range`` answers it with the empty read
itself, so no caller needs a second way to read small objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsspec.asyn import sync

from tests.support.providers import seed

if TYPE_CHECKING:
    from tests.support.providers import Provider


def test_an_empty_object_is_an_empty_ranged_read(provider: Provider) -> None:
    seed(provider, {"empty.bin": b"", "full.bin": b"abc"}, provider.spec.hot_class)
    fs = provider.fs()
    path = f"{provider.bucket}/empty.bin"
    read = sync(fs.loop, fs.store.get_range, path, 0, 100)
    assert (read.data, read.total_size) == (b"", 0)
    assert fs.cat_file(path) == b""
    with fs.open(path, "rb") as f:
        assert f.read() == b""
    # a range that runs past the end of an object ends with the object
    full = sync(fs.loop, fs.store.get_range, f"{provider.bucket}/full.bin", 0, 100)
    assert (full.data, full.total_size) == (b"abc", 3)
