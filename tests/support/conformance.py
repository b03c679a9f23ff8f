"""fsspec's abstract test fixtures over ArchiveFileSystem, shared by the S3 and radosgw suites."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import pytest
from fsspec.tests.abstract import (
    AbstractFixtures,
)

from archivefs.catalog import ByPrefix
from archivefs.catalog.writer import bundle_tree
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from archivefs.testing import EmulatedArchive


def local_objects(local: str, dest: str) -> tuple[str, dict[str, bytes]]:
    """The files below ``local`` as the objects of ``dest`` ("bucket/prefix"): the bucket
    and the objects by key."""
    bucket, prefix = dest.split("/", 1)
    return bucket, {
        f"{prefix}/{p.relative_to(local).as_posix()}": p.read_bytes()
        for p in Path(local).rglob("*")
        if p.is_file()
    }


class StandardFixtures(AbstractFixtures):  # type: ignore[misc]
    """ArchiveFileSystem over the emulated archive, with s3fs's conventions for S3 paths."""

    @pytest.fixture
    def fs(self, archive: EmulatedArchive, tmp_path: Path) -> ArchiveFileSystem:
        return ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(tmp_path / "journal.sqlite"),
            restore_status_in_listings=True,
            restore_time_scale=1 / 3600,
            skip_instance_cache=True,
        )

    @pytest.fixture
    def fs_path(self, bucket: str) -> str:
        return bucket

    @pytest.fixture
    def server(self, archive: EmulatedArchive) -> Any:
        """The server the sources are put into (``upload``): here the emulated archive."""
        return archive

    @pytest.fixture
    def fs_join(self) -> Callable[..., str]:
        return lambda *parts: "/".join(parts)

    @pytest.fixture
    def supports_empty_directories(self) -> bool:
        return False  # S3 has no directories, only prefixes

    @pytest.fixture
    def fs_sanitize_path(self) -> Callable[[str], str]:
        return lambda path: path.rstrip("/")


class UploadedSources(StandardFixtures):
    """Source scenarios built locally, then put into the archive by :meth:`upload`."""

    def upload(self, local: str, fs: ArchiveFileSystem, server: Any, dest: str) -> None:
        raise NotImplementedError

    def _from_local(
        self,
        scenario: Callable[[Any, Any, Any], str],
        fs: ArchiveFileSystem,
        server: Any,
        fs_path: str,
        tmp_path: Path,
    ) -> Iterator[str]:
        local = fsspec.filesystem("file", auto_mkdir=True)
        built = scenario(local, os.path.join, str(tmp_path / "scenario"))
        source = f"{fs_path}/source"
        self.upload(built, fs, server, source)
        fs.invalidate_cache()
        yield source
        fs.rm(source, recursive=True)

    @pytest.fixture
    def fs_bulk_operations_scenario_0(
        self, fs: ArchiveFileSystem, server: Any, fs_path: str, tmp_path: Path
    ) -> Iterator[str]:
        yield from self._from_local(self._bulk_operations_scenario_0, fs, server, fs_path, tmp_path)

    @pytest.fixture
    def fs_glob_edge_cases_files(
        self, fs: ArchiveFileSystem, server: Any, fs_path: str, tmp_path: Path
    ) -> Iterator[str]:
        yield from self._from_local(self._glob_edge_cases_files, fs, server, fs_path, tmp_path)

    @pytest.fixture
    def fs_dir_and_file_with_same_name_prefix(
        self, fs: ArchiveFileSystem, server: Any, fs_path: str, tmp_path: Path
    ) -> Iterator[str]:
        yield from self._from_local(
            self._dir_and_file_with_same_name_prefix, fs, server, fs_path, tmp_path
        )

    @pytest.fixture
    def fs_10_files_with_hashed_names(
        self, fs: ArchiveFileSystem, server: Any, fs_path: str, tmp_path: Path
    ) -> Iterator[str]:
        yield from self._from_local(self._10_files_with_hashed_names, fs, server, fs_path, tmp_path)


class GlacierSources(UploadedSources):
    """Sources stored in GLACIER (read as they are where the server has no restores)."""

    def upload(self, local: str, fs: ArchiveFileSystem, server: Any, dest: str) -> None:
        bucket, objects = local_objects(local, dest)
        server.put_objects(bucket, objects, storage_class="GLACIER")


class RestoredFixtures(GlacierSources):
    """Sources stored in GLACIER, then restored (one batch) before the test reads them."""

    def upload(self, local: str, fs: ArchiveFileSystem, server: Any, dest: str) -> None:
        super().upload(local, fs, server, dest)
        result = fs.restore(f"{dest}/**", wait=True, timeout=600)
        assert result.requests_sent == sum(1 for p in Path(local).rglob("*") if p.is_file())


class BundledFixtures(UploadedSources):
    """Sources bundled (STANDARD bundles, one per top-level folder) with a catalog."""

    storage_class = "STANDARD"

    def upload(self, local: str, fs: ArchiveFileSystem, server: Any, dest: str) -> None:
        import s3fs

        target = s3fs.S3FileSystem(skip_instance_cache=True, **server.storage_options())
        report = bundle_tree(
            fsspec.filesystem("file"),
            local,
            target,
            dest,
            policy=ByPrefix(depth=1),
            storage_class=self.storage_class,
        )
        assert report.members == sum(1 for p in Path(local).rglob("*") if p.is_file())
        fs.catalogs.invalidate()
