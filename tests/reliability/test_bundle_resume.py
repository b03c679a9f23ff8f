"""Resumed bundling: reuse by content hash only; account for every bundle an earlier run left."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.catalog import ByPrefix, Catalog
from archivefs.catalog.layout import bundle_dir, catalog_dir, registry_path
from archivefs.catalog.workdir import SUFFIX, work_dir
from archivefs.catalog.writer import DIGEST_METADATA, BundleReport, bundle_tree
from tests.reliability._support import assert_catalog_consistent, make_fs, make_tree, s3

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

POLICY = ByPrefix(depth=1, target_size=1_000_000)  # one bundle per directory: d0..d3


def _run(src: Path, archive: EmulatedArchive, dest: str, **kwargs: Any) -> BundleReport:
    kwargs.setdefault("policy", POLICY)
    kwargs.setdefault("storage_class", "GLACIER")
    return bundle_tree(fsspec.filesystem("file"), str(src), s3(archive), dest, **kwargs)


def _killed_before_catalog_save(archive: EmulatedArchive, dest: str) -> None:
    """What a run killed after its uploads and before its catalog save leaves: bundles only."""
    fs3 = s3(archive)
    fs3.rm(catalog_dir(dest), recursive=True)
    fs3.rm_file(registry_path(dest.split("/", 1)[0]))


def _change_keeping_size_and_mtime(path: Path) -> bytes:
    stat = path.stat()
    data = bytes(b ^ 0xFF for b in path.read_bytes())
    path.write_bytes(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # `touch -r`, `rsync -t`
    assert path.stat().st_size == stat.st_size
    assert path.stat().st_mtime == stat.st_mtime
    return data


def _setup_changed_resume(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> tuple[dict[str, bytes], str, str]:
    files = make_tree(tmp_path / "src", 40)
    dest = f"{bucket}/r"
    first = _run(tmp_path / "src", archive, dest)
    assert len(first.bundles_written) == 4
    _killed_before_catalog_save(archive, dest)
    name = sorted(files)[0]  # in d0
    files[name] = _change_keeping_size_and_mtime(tmp_path / "src" / name)
    return files, dest, name


def test_resume_reuses_an_uploaded_bundle_only_when_its_content_hash_matches(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files, dest, _name = _setup_changed_resume(archive, bucket, tmp_path)
    archive.requests.clear()
    report = _run(tmp_path / "src", archive, dest)
    assert len(report.bundles_written) == 1  # d0, changed
    assert len(report.bundles_reused) == 3  # same bytes
    assert archive.requests.count("HEAD") >= 3  # each reused bundle's recorded hash checked
    catalog = Catalog.load(s3(archive), catalog_dir(dest))
    fs = make_fs(archive, tmp_path)
    fs.restore(sorted(catalog.bundles), wait=True, timeout=120)
    for path, data in files.items():  # every member reads back, the changed one included
        assert fs.cat_file(f"{dest}/{path}") == data, path
    for key, info in catalog.bundles.items():
        assert s3(archive).metadata(key)[DIGEST_METADATA] == info.sha256


def test_resume_accounts_for_every_bundle_of_the_earlier_run(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    _files, dest, _name = _setup_changed_resume(archive, bucket, tmp_path)
    report = _run(tmp_path / "src", archive, dest)
    orphans = report.orphans
    assert len(orphans) == 1  # the earlier d0 bundle: in no catalog, still billed
    orphan = orphans[0]
    assert not orphan.deleted
    assert orphan.storage_class == "GLACIER"
    assert orphan.min_storage_days == 90
    assert "bills 90 days" in orphan.describe()
    assert s3(archive).exists(orphan.key)  # default: kept (deleting early saves nothing)

    # an unrecorded bundle younger than orphan_age (1 h by the store's clock) may be a
    # concurrent run's, uploaded and not saved yet: kept even with orphans="delete"
    young = _run(tmp_path / "src", archive, dest, orphans="delete")
    assert [(o.key, o.deleted) for o in young.orphans] == [(orphan.key, False)]
    assert s3(archive).exists(orphan.key)

    archive.requests.clear()
    again = _run(tmp_path / "src", archive, dest, orphans="delete", orphan_age=0)
    assert [o.key for o in again.orphans] == [orphan.key]
    assert again.orphans[0].deleted
    deletes = [r.key for r in archive.requests.records if r.op == "DELETE"]
    assert [k for k in deletes if "/bundles/" in (k or "")] == [orphan.key.split("/", 1)[1]]
    assert archive.requests.count("RestoreObject") == 0
    assert again.bundles_written == []
    assert_catalog_consistent(s3(archive), dest)  # every uploaded bundle is in the catalog


def test_rebundling_a_changed_group_replaces_its_records(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "src", 20)
    dest = f"{bucket}/u"
    _run(tmp_path / "src", archive, dest)
    name = sorted(files)[-1]
    (tmp_path / "src" / name).write_bytes(b"longer now " * 50)  # size and mtime change
    files[name] = b"longer now " * 50
    report = _run(tmp_path / "src", archive, dest)
    assert len(report.bundles_written) == 1
    assert len(report.orphans) == 1  # the superseded bundle
    fs = make_fs(archive, tmp_path)
    fs.restore(f"{dest}/{name}", wait=True, timeout=120)
    assert fs.cat_file(f"{dest}/{name}") == files[name]


def test_temporary_bundles_of_a_killed_run_are_cleaned_and_tmpdir_is_not_used(
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tempfile

    monkeypatch.setenv("ARCHIVEFS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    make_tree(tmp_path / "src", 12)
    dest = f"{bucket}/t"
    fs3 = s3(archive)
    scratch = work_dir(f"{type(fs3).__name__}:{fs3.unstrip_protocol(dest)}")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = scratch / f"bundle-{int(dead.stdout)}-0123{SUFFIX}"
    stale.write_bytes(b"\0" * 4096)  # what a SIGKILLed writer leaves
    report = _run(tmp_path / "src", archive, dest, storage_class="STANDARD")
    assert report.cleaned_partials == 1
    assert not stale.exists()
    assert list(scratch.iterdir()) == []  # this run's own temporaries are gone too
    assert list((tmp_path / "tmp").iterdir()) == []
    assert oct(scratch.stat().st_mode & 0o777) == oct(0o700)


def test_bundle_of_a_missing_or_empty_folder_fails_and_writes_nothing(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs.errors import BundleError

    (tmp_path / "empty" / "sub").mkdir(parents=True)
    archive.requests.clear()
    with pytest.raises(BundleError, match="does not exist; no catalog was written"):
        _run(tmp_path / "missing", archive, f"{bucket}/m")
    with pytest.raises(BundleError, match="holds no files; no catalog was written"):
        _run(tmp_path / "empty", archive, f"{bucket}/m")
    assert archive.requests.count("PUT") == 0
    assert not s3(archive).exists(bundle_dir(f"{bucket}/m"))
    assert not s3(archive).exists(registry_path(bucket))
