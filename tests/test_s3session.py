"""The sessions archivefs gives s3fs share one botocore data loader per data path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from archivefs.errors import ArchiveError
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


def _loader(fs: ArchiveFileSystem) -> Any:
    return fs.fs.session.get_component("data_loader")


def _new_fs(archive: EmulatedArchive, **options: Any) -> ArchiveFileSystem:
    """An ArchiveFileSystem over a new s3fs instance (none from fsspec's instance cache)."""
    return ArchiveFileSystem(
        target_protocol="s3",
        target_options={**archive.storage_options(), "skip_instance_cache": True, **options},
        journal=False,
        skip_instance_cache=True,
    )


def test_filesystems_share_one_data_loader_and_each_still_reads(
    archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_objects(bucket, {"d/a": b"1", "d/b": b"22"}, storage_class="GLACIER")
    first, second = _new_fs(archive), _new_fs(archive)
    assert first.fs.session is not second.fs.session
    assert _loader(first) is _loader(second)
    for fs in (first, second):
        assert sorted(fs.ls(f"{bucket}/d", detail=False)) == [f"{bucket}/d/a", f"{bucket}/d/b"]


def test_another_data_path_gets_its_own_loader(
    archive: EmulatedArchive,
    bucket: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    usual = _loader(_new_fs(archive))
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    fs = _new_fs(archive)
    assert _loader(fs) is not usual
    assert str(tmp_path) in _loader(fs).search_paths
    assert _loader(_new_fs(archive)) is _loader(fs)
    fs.ls(bucket)  # botocore's own models still found after the user's path


def test_a_profile_that_is_not_there_is_still_named_at_the_first_request(
    archive: EmulatedArchive, bucket: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    fs = _new_fs(archive, key=None, secret=None, profile="no-such-profile")
    with pytest.raises(ArchiveError, match="no-such-profile"):
        fs.ls(bucket)
