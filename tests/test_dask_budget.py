"""One budget for a whole Dask job: the client and every worker process count against it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from archivefs import ArchiveFileSystem, BudgetExceededError
from tests.support.groups import DASK_WORKERS

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

distributed = pytest.importorskip("distributed")

KiB = 1024


def _read(fs: ArchiveFileSystem, path: str) -> int:
    """A task: one read of ``path`` through the filesystem it was given (pickled)."""
    return len(fs.cat_file(path))


def _fee_objects(archive: EmulatedArchive, bucket: str, n: int) -> list[str]:
    archive.put_objects(
        bucket, {f"ia/{i:02d}": b"f" * (64 * KiB) for i in range(n)}, storage_class="STANDARD_IA"
    )
    archive.requests.clear()
    return [f"{bucket}/ia/{i:02d}" for i in range(n)]


def _fs(archive: EmulatedArchive, tmp_path: Path, **extra: Any) -> ArchiveFileSystem:
    return ArchiveFileSystem(
        target_options=archive.storage_options(),
        journal=str(tmp_path / "journal.sqlite"),
        pickle_credentials=True,  # the emulator's fake keys travel to the workers
        skip_instance_cache=True,
        **extra,
    )


def _gets(archive: EmulatedArchive, bucket: str) -> int:
    return sum(
        1
        for r in archive.requests.records
        if r.op == "GET" and r.bucket == bucket and r.key.startswith("ia/")
    )


def test_a_cluster_job_never_spends_more_than_its_budget_as_billed(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    paths = _fee_objects(archive, bucket, 40)
    plain = _fs(archive, tmp_path)
    fee = plain.estimate_plan(plain.plan(paths[0])).total  # one GET of one object, as billed
    fs = _fs(archive, tmp_path, max_cost=5.5 * fee)
    futures = dask_client.map(_read, [fs] * len(paths), paths, pure=False)
    distributed.wait(futures)
    done = [f for f in futures if f.status == "finished"]
    refused = [f for f in futures if f.status == "error"]
    assert all(isinstance(f.exception(), BudgetExceededError) for f in refused)
    # the old code: each of DASK_WORKERS worker processes started at 0 and paid 5
    assert (len(done), len(refused), _gets(archive, bucket)) == (5, 35, 5)
    assert fs.hooks.spent == pytest.approx(5 * fee)  # the job's total, on the client
    assert fs.hooks.spent <= fs.hooks.max_cost
    assert DASK_WORKERS >= 2


def test_what_the_client_approved_is_drawn_by_the_workers_reads(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    paths = _fee_objects(archive, bucket, 12)
    plain = _fs(archive, tmp_path)
    fee = plain.estimate_plan(plain.plan(paths[0])).total
    fs = _fs(archive, tmp_path, max_cost=6.5 * fee)
    fs.approve_reads(fs.plan(paths[:4]))  # e.g. plan_dataset: four reads approved ahead
    assert (fs.hooks.spent, fs.hooks.held) == (pytest.approx(4 * fee), pytest.approx(4 * fee))
    first = dask_client.gather(dask_client.map(_read, [fs] * 4, paths[:4], pure=False))
    assert first == [64 * KiB] * 4
    assert (fs.hooks.spent, fs.hooks.held) == (
        pytest.approx(4 * fee),
        pytest.approx(0.0, abs=1e-12),
    )
    more = dask_client.map(_read, [fs] * 8, paths[4:], pure=False)
    distributed.wait(more)
    assert sum(f.status == "finished" for f in more) == 2  # what is left: two more GETs
    assert _gets(archive, bucket) == 6
    assert fs.hooks.spent == pytest.approx(6 * fee)
