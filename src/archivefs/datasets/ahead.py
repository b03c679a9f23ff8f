"""Restore ahead: plan a lazy selection's chunk reads and restore them before compute()."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError
from archivefs.plans import Plan

if TYPE_CHECKING:
    from archivefs.restore.engine import RestoreResult
from archivefs.datasets.graph import chunk_paths, whole_file_reads


def plan_dataset(obj: Any, *, tier: str | None = None, days: int | None = None) -> Plan:
    """Plan the restore of everything a lazy selection reads. Sends no restore request.

    Chunks that do not exist (zarr fill values) are left out, as zarr would skip them.
    Works on datasets opened with :func:`open_zarr`/:func:`open_dataset` and on
    ``xr.open_zarr("archive::s3://...", storage_options=...)``.

    Example::

        plan = ads.plan_dataset(ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31")))
        len(plan.paths), len(plan), len(plan.to_restore)   # chunks, bundles, paid requests
        fs.estimate_plan(plan).total                        # dollars, before anything is sent
    """
    per_fs = chunk_paths(obj)
    if not per_fs:
        raise _nothing_to_plan()
    if len(per_fs) > 1:
        raise ArchiveError(
            "the selection reads from several archive filesystems; plan each dataset separately.",
            fix="call plan_dataset on each opened dataset's selection.",
        )
    ((fs, paths),) = per_fs.items()
    # variables of files without references are read whole, and the plan says which
    plan: Plan = fs.plan(paths, tier=tier, days=days, read_whole=whole_file_reads(obj, fs))
    plan = plan.replace(missing=())  # absent chunks are fill values, not errors
    # compute() will read these chunks one by one, unguarded: the retrieval fees of the
    # selection are shown to the budget and estimate hooks here, once
    fs.approve_reads(plan)
    return plan


def _nothing_to_plan() -> ArchiveError:
    return ArchiveError(
        "found no lazy chunk reads through an archivefs filesystem in this object: it is "
        "in memory already (computed, or loaded with .values/.load()), or it was opened "
        "without archivefs (plain s3fs or local files).",
        fix="open it with archivefs.open_zarr/open_dataset, or xr.open_zarr('archive::s3://...', "
        "storage_options=...), and pass the lazy selection before .compute().",
    )


def prefetch(
    obj: Any,
    *,
    tier: str | None = None,
    days: int | None = None,
    wait: bool = True,
    timeout: float | None = None,
) -> RestoreResult:
    """Restore everything a lazy selection will read, ahead of ``compute()``.

    One batch: one request per group (object or bundle) that needs one, none
    for what is hot, restored or already restoring; with ``wait=True`` (the
    default) returns once all of it reads, polling in bulk. Chunks in classes that
    read at once for a retrieval fee (S3 STANDARD_IA/GLACIER_IR, GCS
    Nearline/Coldline/Archive) need no request, but their fees are in the estimate
    that ``max_cost``/``on_estimate`` see first (``BudgetExceededError`` before
    anything is sent or read).

    Example::

        summer = ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))
        ads.prefetch(summer, tier="Bulk", timeout=48 * 3600)
        summer.mean().compute()
    """
    per_fs = chunk_paths(obj)
    results = []
    for fs, paths in per_fs.items():
        if paths:
            # as plan_dataset's, the plan (and so the hooks) names the files read whole
            whole = whole_file_reads(obj, fs)
            results.append(fs.prefetch(paths, tier=tier, days=days, wait=wait,
                                       timeout=timeout, read_whole=whole))  # fmt: skip
    if not results:
        raise _nothing_to_plan()
    return results[0] if len(results) == 1 else _merge(results)


def _merge(results: list[RestoreResult]) -> RestoreResult:
    first = results[0]
    for other in results[1:]:
        first.submitted.sent.update(other.submitted.sent)
        first.submitted.failed.update(other.submitted.failed)
        first.submitted.skipped.extend(other.submitted.skipped)
        first.ready.extend(other.ready)
    return first
