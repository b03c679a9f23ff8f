"""``cat`` through ``archivefs mount`` reads through the filesystem's one read path
(``fs.open()``'s file, ``archivefs.readahead``): its run streams, each byte is fetched
once, counted at the server. The mount's fixtures are tests/test_mount.py's."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np
import pytest

from archivefs.mount.runner import fuse_problem
from tests.test_mount import mount_cli, run  # noqa: F401  (the fixture, by name)

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.testing import EmulatedArchive
    from tests.test_mount import Mounted

pytestmark = pytest.mark.skipif(
    fuse_problem() is not None, reason=f"cannot mount here: {fuse_problem()}"
)


def test_cat_of_a_large_file_streams_each_byte_once(
    mount_cli: Callable[..., Mounted],  # noqa: F811
    archive: EmulatedArchive,
    bucket: str,
) -> None:
    """24 MiB in FUSE's 128 KiB reads: the first read, then the run's parts in flight
    (1 MiB, 1 MiB, nine of 1.8 MiB, 3.4 MiB, the rest): 14 GETs, as ``fs.open().read()``
    in the same pieces (tests/test_read_amplification.py), each byte once."""
    size = 24 * 2**20
    data = np.random.default_rng(46).bytes(size)
    archive.put_objects(bucket, {"big.bin": data})
    mounted = mount_cli()
    run("ls", mounted.root)  # the listing, outside the count
    archive.requests.clear()
    out = run("md5sum", mounted.root / "big.bin").stdout
    assert out.split()[0] == hashlib.md5(data).hexdigest()
    assert archive.requests.bytes_sent("GET") == size
    assert archive.requests.count("GET") == 1 + 2 + 9 + 2
