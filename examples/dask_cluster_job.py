"""A Dask cluster job: plan and restore once on the client, compute on the workers.

``python examples/dask_cluster_job.py`` runs it on a ``LocalCluster`` with two
worker processes against the emulated archive. On a real cluster, connect
``distributed.Client`` to your scheduler and give the filesystem your s3fs
options; the workers only read.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

import distributed

import archivefs.datasets as ads
from archivefs.demo import BUCKET, STORE, make_dataset, seed_archive
from archivefs.filesystem import ArchiveFileSystem
from archivefs.testing import EmulatedArchive

DELAY = 1.5


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="archivefs-dask-job-"))
    with (
        EmulatedArchive(restore_delay=DELAY, seconds_per_day=3600.0) as archive,
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        source = make_dataset()
        seed_archive(archive, workdir, source)
        fs = ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(workdir / "journal.sqlite"),
            restore_status_in_listings=True,
            restore_time_scale=DELAY / (12 * 3600),
            # the emulator's fake keys may travel to the workers; with real keys, give the
            # workers their own credentials instead (docs/guarantees.md)
            pickle_credentials=True,
        )
        ds = ads.open_zarr(f"s3://{BUCKET}/{STORE}", fs=fs)
        selection = ds["precip"].isel(time=slice(0, 90))

        plan = ads.plan_dataset(selection)  # once, on the client
        print(f"restoring {len(plan)} bundles for {len(plan.paths)} chunks")
        ads.prefetch(selection, wait=True, timeout=120)

        total = float(client.compute(selection.sum()).result())  # the workers read
        expected = float(source["precip"].isel(time=slice(0, 90)).sum())
        print(f"total precipitation {total:.1f} (source {expected:.1f})")
        assert abs(total - expected) <= 1e-5 * expected
        assert archive.requests.count("RestoreObject") == len(plan.to_restore)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":  # worker processes re-import this module
    main()
