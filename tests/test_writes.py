"""``fs.put_file(..., storage_class=)``: one upload straight into a class, on every provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from archivefs.errors import BudgetExceededError, UnknownStorageClassError
from tests.support.providers import Provider, request_counts

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from archivefs import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive


def test_put_file_uploads_once_into_the_class_on_every_provider(
    provider: Provider, tmp_path: Path
) -> None:
    """S3 (moto), Azure (Azurite), GCS, Oracle and radosgw: the object is in the class at
    the server after one upload (GCS: one resumable upload), never a write then a change
    of class; it reads back where the class reads at once."""
    spec = provider.spec
    klass = spec.chunk_class if spec.restores or spec.fee_class else spec.hot_class
    data = bytes(range(256)) * 40
    (tmp_path / "f.bin").write_bytes(data)
    fs = provider.fs()
    path = f"{provider.bucket}/w/f.bin"
    provider.server.requests.clear()
    fs.put_file(str(tmp_path / "f.bin"), path, storage_class=klass)
    counts = request_counts(provider)
    # the upload, and the filesystem's first look for a catalog registry (none: not a member)
    assert counts == {spec.put_op: spec.put_requests, spec.read_op: 1}, counts
    entry = provider.fs().ls(f"{provider.bucket}/w", detail=True)[0]
    assert (entry["size"], entry["storage_class"]) == (len(data), klass)
    if not spec.restores or klass != spec.cold_class:
        assert provider.fs().cat(path) == data


def test_put_file_refuses_a_class_the_provider_lacks(provider: Provider, tmp_path: Path) -> None:
    """A class of another provider is refused by name, before anything is sent."""
    (tmp_path / "f").write_bytes(b"x")
    fs = provider.fs()
    provider.server.requests.clear()
    foreign = "Hot" if provider.name != "azure" else "GLACIER"
    with pytest.raises(UnknownStorageClassError, match=f"unknown {_named(provider)} storage"):
        fs.put_file(str(tmp_path / "f"), f"{provider.bucket}/f", storage_class=foreign)
    assert not request_counts(provider).get(provider.spec.put_op)


def _named(provider: Provider) -> str:
    return "s3" if provider.name == "rgw" else provider.name


def test_put_file_into_a_class_is_charged_to_the_budget(
    make_fs: Callable[..., ArchiveFileSystem],
    archive: EmulatedArchive,
    bucket: str,
    tmp_path: Path,
) -> None:
    """An upload's PUT is counted against ``max_cost`` before it is sent: one that does not
    fit is refused with BudgetExceededError and nothing is sent; one that fits is spent."""
    (tmp_path / "f").write_bytes(b"x" * 100)
    fs = make_fs(max_cost=0.00004)  # GLACIER's PUT is $0.03 per 1,000: one fits, two do not
    archive.requests.clear()
    fs.put_file(str(tmp_path / "f"), f"{bucket}/a", storage_class="GLACIER")
    with pytest.raises(BudgetExceededError, match="an upload of 100 bytes into GLACIER"):
        fs.put_file(str(tmp_path / "f"), f"{bucket}/b", storage_class="GLACIER")
    assert archive.requests.per_op().get("PUT") == 1
