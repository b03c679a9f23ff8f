"""Bundle an archive of small files: restore requests and bill, before and after.

``python examples/bundle_small_files.py`` writes 2,000 small files, stores them
in DEEP_ARCHIVE once as one object each and once bundled, and compares.
The same with the CLI: ``archivefs bundle ./run42 s3://bucket/archive/run42``.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

import fsspec
import s3fs

from archivefs.catalog import ByPrefix
from archivefs.catalog.writer import bundle_tree
from archivefs.filesystem import ArchiveFileSystem
from archivefs.testing import EmulatedArchive


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="archivefs-bundle-"))
    rng = random.Random(0)
    files = {f"obs{i % 10:02d}/f{i:05d}.dat": rng.randbytes(2000) for i in range(2000)}
    for name, data in files.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_bytes(data)

    with EmulatedArchive(restore_delay=1.0, seconds_per_day=3600.0) as archive:
        archive.create_bucket("plain")
        archive.put_objects("plain", files, storage_class="DEEP_ARCHIVE")
        archive.create_bucket("bundled")
        report = bundle_tree(
            fsspec.filesystem("file"),
            str(workdir),
            s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options()),
            "bundled/archive",
            policy=ByPrefix(depth=1),
            storage_class="DEEP_ARCHIVE",
        )
        print(f"{report.members} files packed into {len(report.bundles_written)} bundles")

        fs = ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=False,
            restore_status_in_listings=True,
            restore_time_scale=1.0 / (48 * 3600),
            skip_instance_cache=True,
        )
        for label, root in (("one object per file", "plain"), ("bundled", "bundled/archive")):
            plan = fs.plan(f"{root}/*/*.dat", tier="Bulk")
            bill = fs.estimate_plan(plan)
            print(
                f"{label:>20}: {len(plan.to_restore):5d} restore requests, "
                f"Bulk restore + read ${bill.total:.5f}, "
                f"storage ${bill.components['storage_per_month']:.6f}/month"
            )
        archive.requests.clear()
        fs.restore("bundled/archive/obs03/*.dat", tier="Bulk", wait=True, timeout=60)
        assert archive.requests.count("RestoreObject") == 1
        assert fs.cat_file("bundled/archive/obs03/f00003.dat") == files["obs03/f00003.dat"]
        print("obs03 restored with 1 request; its files read back intact")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
