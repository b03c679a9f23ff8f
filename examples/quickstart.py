"""Quickstart: open an archived zarr dataset, plan, estimate, restore, compute.

Runs against the emulated archive (no cloud account): ``python examples/quickstart.py``.
For a real bucket, pass your s3fs options as ``target_options`` (e.g.
``{"profile": "research"}``), drop ``restore_time_scale`` and the archive.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import archivefs.datasets as ads
from archivefs import ObjectArchivedError
from archivefs.demo import BUCKET, STORE, area_mean, make_dataset, seed_archive
from archivefs.filesystem import ArchiveFileSystem
from archivefs.pricing import estimate, load_price_sheet
from archivefs.progress import ProgressDisplay
from archivefs.testing import EmulatedArchive

DELAY = 1.5  # emulated restore delay, seconds


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="archivefs-example-"))
    with EmulatedArchive(restore_delay=DELAY, seconds_per_day=3600.0) as archive:
        source = make_dataset()
        seed_archive(archive, workdir, source)  # chunks in DEEP_ARCHIVE bundles
        fs = ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=str(workdir / "journal.sqlite"),
            restore_time_scale=DELAY / (12 * 3600),  # Deep Archive Standard: "within 12 h"
            skip_instance_cache=True,
        )
        ds = ads.open_zarr(f"s3://{BUCKET}/{STORE}", fs=fs)
        summer = ds["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))
        try:
            summer.load()
        except ObjectArchivedError as error:
            print("not restored yet:", error)  # the whole message: its last part is the fix

        plan = ads.plan_dataset(summer)
        cost = estimate(plan, load_price_sheet("aws-us-east-1"), egress="internet")
        print(f"{len(plan.paths)} chunks in {len(plan)} bundles; on AWS: ${cost.total:.4f}")

        progress = ProgressDisplay(interval=1.0)  # a bar on a terminal, log lines otherwise
        result = fs.restore(list(plan.paths), wait=True, timeout=120, on_progress=progress)
        progress.close()
        assert result.requests_sent == archive.requests.count("RestoreObject") == len(plan)

        mean = float(area_mean(summer).compute())  # weighted by cos(latitude)
        expected = float(area_mean(source["t2m"].sel(time=slice("2023-06-01", "2023-08-31"))))
        print(f"June-August global mean 2 m temperature {mean:.3f} K (source {expected:.3f} K)")
        assert abs(mean - expected) < 1e-3
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
