"""S3 jobs that mix restores and fee-charging reads (STANDARD_IA, ONEZONE_IA, GLACIER_IR
with GLACIER): one approval for the whole job, and restore() alone reads nothing.

Fee reads and restores refused on every spending path, on every provider:
tests/scenarios/test_budgets.py; xarray plans of fee-charging chunks:
tests/scenarios/test_datasets.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.errors import BudgetExceededError

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive

GIB = 2**30
CLASSES = {"ia": "STANDARD_IA", "oz": "ONEZONE_IA", "ir": "GLACIER_IR", "std": "STANDARD"}


def data_gets(archive: EmulatedArchive, bucket: str, prefix: str) -> int:
    """GETs of objects below ``prefix`` (never of archivefs's catalog registry)."""
    return sum(
        1
        for r in archive.requests.records
        if r.op == "GET" and r.bucket == bucket and (r.key or "").startswith(prefix)
    )


def seed(archive: EmulatedArchive, bucket: str) -> dict[str, bytes]:
    data = {}
    for name, klass in CLASSES.items():
        data[f"{bucket}/run/{name}"] = body = name.encode() * 500
        archive.put_object(bucket, f"run/{name}", body, storage_class=klass)
    archive.requests.clear()
    return data


def test_prefetch_with_restores_shows_the_whole_job_once_and_restore_alone_reads_nothing(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem]
) -> None:
    archive.put_object(bucket, "mix/cold", b"c" * 2000, storage_class="GLACIER")
    for name in ("a", "b"):
        archive.put_object(bucket, f"mix/ia-{name}", b"i" * 1000, storage_class="STANDARD_IA")
    seen: list[Any] = []
    fs = make_fs(max_cost=1.0, on_estimate=lambda plan, e: seen.append((plan, e)))
    archive.requests.clear()
    result = fs.prefetch(f"{bucket}/mix/", wait=False)
    assert result.requests_sent == 1
    ((plan, estimate),) = seen  # one approval: the restore and the fee reads together
    assert len(plan) == 3
    assert len(plan.to_restore) == 1
    assert len(plan.fee_reads) == 2
    assert estimate.restore_request_count == 1
    assert estimate.components["retrieval"] == pytest.approx(2000 / GIB * 0.01)  # IA only
    assert archive.requests.count("RestoreObject") == 1

    # restore() reads nothing: a folder of IA objects alone is no paid plan, whatever the budget
    tight = make_fs(max_cost=0.0)
    archive.requests.clear()
    assert tight.restore(f"{bucket}/mix/ia-*").requests_sent == 0
    assert archive.requests.count("RestoreObject") == 0
    assert data_gets(archive, bucket, "mix/") == 0


def test_prefetch_to_a_directory_is_one_budgeted_job_in_python(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    data = seed(archive, bucket)
    archive.put_object(bucket, "run/cold", b"c" * 500, storage_class="GLACIER")
    data[f"{bucket}/run/cold"] = b"c" * 500
    archive.requests.clear()
    out = tmp_path / "out"
    with pytest.raises(BudgetExceededError, match="retrieval fees"):
        make_fs(max_cost=0.00001).prefetch(f"{bucket}/run/", to=out)
    assert not out.exists()
    assert data_gets(archive, bucket, "run/") == 0
    assert archive.requests.count("RestoreObject") == 0

    fs = make_fs(max_cost=0.01)
    result = fs.prefetch(f"{bucket}/run/", to=out, timeout=600)
    assert result.requests_sent == 1
    assert len(result.copied.files) == 5
    assert result.copied.bytes_written == sum(len(v) for v in data.values())
    for path, body in data.items():
        assert (out / path).read_bytes() == body
    assert data_gets(archive, bucket, "run/") == 5  # each file once
    assert fs.hooks.spent > 0
