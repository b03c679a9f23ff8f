"""Credentials never appear in logs, errors, reprs or the journal; private files stay private."""

from __future__ import annotations

import logging
import pickle
import stat
from typing import TYPE_CHECKING

import pytest

from archivefs import ObjectArchivedError
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

SECRET = "SECRETKEYdoNotLeak0123456789"


def test_credentials_never_reach_logs_errors_reprs_or_journal(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # moto accepts any credentials: a recognisable secret shows up wherever it leaks
    options = archive.storage_options()
    options["secret"] = SECRET
    journal = tmp_path / "journal.sqlite"
    archive.put_object(bucket, "cold", b"x", storage_class="GLACIER")
    archive.put_object(bucket, "hot", b"y")
    caplog.set_level(logging.DEBUG)
    fs = ArchiveFileSystem(
        target_options=options,
        journal=str(journal),
        restore_time_scale=1 / 3600,
        skip_instance_cache=True,
    )
    fs.ls(bucket)
    fs.cat_file(f"{bucket}/hot")
    with pytest.raises(ObjectArchivedError) as error:
        fs.cat_file(f"{bucket}/cold")
    fs.restore(f"{bucket}/cold", wait=True, timeout=600)
    texts = [caplog.text, str(error.value), repr(error.value), repr(fs), str(fs)]
    texts.append(repr(pickle.loads(pickle.dumps(fs))))
    for text in texts:
        assert SECRET not in text
    assert SECRET.encode() not in journal.read_bytes()
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes()


def test_journal_is_private_to_the_user(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "cold", b"x", storage_class="GLACIER")
    journal = tmp_path / "private" / "journal.sqlite"
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=str(journal), skip_instance_cache=True
    )
    fs.restore(f"{bucket}/cold")
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
