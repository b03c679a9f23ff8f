"""Files opened for reading (``access/files.py``): the first block per object.

An object that reads at once without a retrieval fee reads as its target reads it (issue
48: adlfs reads a 4 MiB blob in 64 KiB pieces with one Get Blob; archivefs took 5); one
that bills each byte read still fetches only what is read. Requests and bytes are counted
at each provider's emulated server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import fsspec
import pytest

from tests.support.providers import Provider, provider_params, seed

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

MiB = 2**20
PIECE = 64 * 1024
SIZE = 4 * MiB  # adlfs's blocksize


def _read_in_pieces(fs: fsspec.AbstractFileSystem, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return b"".join(iter(lambda: f.read(PIECE), b""))


def _downloads(provider: Provider, name: str, fs: object | None = None) -> tuple[int, int]:
    """Downloads of ``name`` the server answered, and the bytes they carried: counted by
    the server, except on Azure, whose proxy counts no bytes: there the filesystem's
    one counting point (``read_stats``, reset before each measurement) answers."""
    spec = provider.spec
    records = [
        r
        for r in provider.server.requests.matching(op=spec.read_op)
        if getattr(r, spec.key_field) == name
    ]
    if provider.name == "azure":
        assert fs is not None
        return len(records), fs.read_stats.bytes_fetched  # type: ignore[attr-defined]
    return len(records), sum(r.bytes_sent for r in records)


@pytest.mark.parametrize("provider", provider_params("azure", "gcs", "oracle", "s3"), indirect=True)
def test_a_hot_object_read_in_pieces_reads_the_targets_block_in_one_get(
    provider: Provider,
) -> None:
    """adlfs's and s3fs's 50 MiB blocks, gcsfs's and ocifs's 5 MiB: a 4 MiB object read
    in 64 KiB pieces is one GET, as the target's own file (before: 4: a 16 KiB block, the
    rest of the first piece, the rest of the file in 3 parts). gcsfs's own file answered
    64 downloads here, one per piece."""
    data = bytes(range(256)) * (SIZE // 256)
    seed(provider, {"blob": data}, provider.spec.hot_class)
    fs = provider.fs()
    raw = fsspec.filesystem(
        provider.spec.protocol, skip_instance_cache=True, **provider.storage_options()
    )
    path = f"{provider.bucket}/blob"
    fs.ls(provider.bucket)  # the catalog lookup and the entry, outside the count
    provider.server.requests.clear()
    assert _read_in_pieces(raw, path) == data
    theirs = len(provider.server.requests.matching(op=provider.spec.read_op))
    provider.server.requests.clear()
    fs.read_stats.reset()
    assert _read_in_pieces(fs, path) == data
    assert _downloads(provider, "blob", fs) == (1, SIZE)
    assert theirs == (64 if provider.name == "gcs" else 1)


@pytest.mark.parametrize("provider", provider_params("s3", "azure"), indirect=True)
def test_a_header_probe_of_a_hot_object_reads_the_header_block_not_the_targets(
    provider: Provider,
) -> None:
    """A format's first read asks a few bytes (h5py: 8): the 16 KiB header block, and a
    random read after it exactly what it asks, not the target's 50 MiB block."""
    data = bytes(range(256)) * (SIZE // 256)
    seed(provider, {"blob": data}, provider.spec.hot_class)
    fs = provider.fs()
    path = f"{provider.bucket}/blob"
    fs.ls(provider.bucket)
    provider.server.requests.clear()
    fs.read_stats.reset()
    with fs.open(path, "rb") as f:
        assert f.read(8) == data[:8]
        f.seek(3 * MiB)
        assert f.read(PIECE) == data[3 * MiB : 3 * MiB + PIECE]
    assert _downloads(provider, "blob", fs) == (2, fs.read_block_size + PIECE)


@pytest.mark.parametrize(
    ("provider", "klass"),
    [
        pytest.param("s3", "GLACIER_IR", id="s3-GLACIER_IR"),
        pytest.param("gcs", "COLDLINE", id="gcs-COLDLINE"),
        pytest.param("azure", "Cool", id="azure-Cool"),
    ],
    indirect=["provider"],
)
def test_a_fee_charging_object_fetches_only_what_is_read(provider: Provider, klass: str) -> None:
    """Each byte of it bills a retrieval fee: the 16 KiB header block and exactly the
    pieces read, never the target's block."""
    data = bytes(range(256)) * (SIZE // 256)
    seed(provider, {"blob": data}, klass)
    fs = provider.fs()
    path = f"{provider.bucket}/blob"
    fs.ls(provider.bucket)
    provider.server.requests.clear()
    fs.read_stats.reset()
    with fs.open(path, "rb") as f:
        assert f.read(PIECE) == data[:PIECE]
        f.seek(2 * MiB)
        assert f.read(PIECE) == data[2 * MiB : 2 * MiB + PIECE]
    assert _downloads(provider, "blob", fs) == (2, 2 * PIECE)


def test_a_streamed_part_arrives_in_pieces_from_one_ranged_get(
    archive: EmulatedArchive, bucket: str
) -> None:
    """``fetch_pieces`` (a streaming file's parts): one ranged GET whose body is kept in
    the pieces it arrived in, at most a MiB each, never joined; the bytes and the count
    of bytes fetched are those of the range."""
    import os

    from fsspec.asyn import sync

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.stores.s3 import PIECE as BODY_PIECE

    body = os.urandom(5 * MiB + 3)
    archive.put_objects(bucket, {"f.bin": body})
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    reads = fs._crew.reads
    archive.requests.clear()
    pieces = sync(fs.loop, reads.fetch_pieces, f"{bucket}/f.bin", 1, 5 * MiB + 2)
    assert b"".join(pieces) == body[1 : 5 * MiB + 2]
    assert len(pieces) >= 5
    assert all(0 < len(p) <= BODY_PIECE for p in pieces)
    assert archive.requests.count("GET", key="f.bin") == 1
    assert archive.requests.count("HEAD") == 0  # (the other request: the catalog lookup)
    assert fs.read_stats.bytes_fetched == 5 * MiB + 1
    # the same range through fetch: one string, the same bytes, one more GET
    assert sync(fs.loop, reads.fetch, f"{bucket}/f.bin", 1, 5 * MiB + 2) == body[1 : 5 * MiB + 2]
    assert archive.requests.count("GET", key="f.bin") == 2
