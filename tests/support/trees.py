"""Trees of files to bundle, and checks on bundled trees shared by the S3 and radosgw tests."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs import ChecksumMismatchError
from archivefs.catalog import Catalog
from archivefs.catalog.layout import catalog_dir

if TYPE_CHECKING:
    pass


def make_tree(root: Path, n: int, *, big: int = 0, seed: int = 0) -> dict[str, bytes]:
    rng = random.Random(seed)
    files = {}
    for i in range(n):
        size = rng.randint(1000, 4000)
        files[f"obs{i % 20:02d}/f{i:05d}.dat"] = rng.randbytes(size)
    for i in range(big):
        files[f"big/b{i}.dat"] = rng.randbytes(rng.randint(1_000_000, 5_000_000))
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def flipped_byte_is_caught(
    fs: Any, raw: Any, root: str, name: str, files: dict[str, bytes]
) -> None:
    """Member ``name`` of the bundled tree at ``root`` reads right, then a byte of it is
    flipped in its bundle (through ``raw``, a plain s3fs): the next read is refused (also
    on radosgw)."""
    member = fs.info(f"{root}/{name}")
    assert fs.cat_file(f"{root}/{name}") == files[name]
    record = Catalog.load(raw, catalog_dir(root)).lookup(f"{root}/{name}")
    assert record is not None
    data = bytearray(raw.cat_file(member["bundle"]))
    data[record.offset + 3] ^= 0xFF
    raw.pipe_file(member["bundle"], bytes(data))
    # the rewritten bundle has another ETag: refused before its bytes are used
    # (BundleChangedError, a ChecksumMismatchError)
    with pytest.raises(ChecksumMismatchError, match="not the bundle the catalog recorded"):
        fs.cat_file(f"{root}/{name}")
