"""Claims in the bucket under faults: unreadable claims, leases by the server's clock,
waiting callers that take over dead claims, throttled and lost claim writes (issue 30).

Each ``ArchiveFileSystem`` with its own journal stands for a host; every count is the
emulated archive's, server side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from archivefs.errors import ArchiveError
from archivefs.restore.claims import Claim, claim_path
from tests.reliability._support import make_fs, seed_cold

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

pytestmark = pytest.mark.timeout(300)


def _key(path: str) -> str:
    """The claim object's key in its bucket."""
    return claim_path(path).split("/", 1)[1]


def _plant(archive: EmulatedArchive, path: str, requester: str = "other-host:7") -> None:
    """A live claim of another host on ``path``, written just now."""
    import time

    claim = Claim(path, "Standard", 1, requester, claimed_at=time.time(), expected_ready_at=None)
    bucket = path.split("/", 1)[0]
    archive.client().put_object(Bucket=bucket, Key=_key(path), Body=claim.to_bytes())


def test_a_claim_that_cannot_be_read_is_not_restored_and_claims_stay_on(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(3600.0)
    first, second = sorted(seed_cold(archive, bucket, 2))
    _plant(archive, first)
    _plant(archive, second)
    fs = make_fs(archive, tmp_path, bucket_claims=True)
    archive.faults.error(403, "AccessDenied", ops=["GET"])  # the claim cannot be read
    with pytest.raises(ArchiveError) as raised:
        fs.restore(first)
    message = str(raised.value)
    assert claim_path(first) in message  # names the claim object,
    assert "could not be read" in message  # the problem
    assert "Fix:" in message and "GetObject" in message  # and the fix
    assert archive.requests.count("RestoreObject") == 0  # a live claim may be behind it
    archive.faults.clear()
    fs.restore(second)  # claims still on for the bucket: the live claim is respected
    assert archive.requests.count("RestoreObject") == 0
    archive.faults.error(403, "AccessDenied", ops=["GET"])
    with pytest.raises(ArchiveError):
        fs.restore(first)  # its claim still unreadable: still not sent
    archive.faults.clear()
    assert archive.requests.count("RestoreObject") == 0
