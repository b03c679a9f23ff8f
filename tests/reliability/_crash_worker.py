"""A process that restores, bundles, saves catalogs or promotes; tests SIGKILL it on purpose."""

from __future__ import annotations

import json
import sys

import fsspec
import s3fs

from archivefs.catalog import ByPrefix, Catalog
from archivefs.catalog.writer import bundle_tree
from archivefs.filesystem import ArchiveFileSystem


def main() -> None:
    config = json.loads(sys.argv[1])
    mode = config["mode"]
    options = config["storage_options"]
    if mode in ("restore", "read"):
        fs = ArchiveFileSystem(
            target_options=options,
            journal=config["journal"],
            restore_status_in_listings=True,
            restore_time_scale=1 / 3600,
            concurrency=config.get("concurrency", 1),
            bucket_claims=config.get("bucket_claims", False),
            claim_lease=config.get("claim_lease"),
            skip_instance_cache=True,
        )
        result = fs.restore(config["paths"], wait=mode == "read", timeout=600)
        if mode == "read":
            for path in config["paths"]:
                fs.cat_file(path)
        print(json.dumps({"sent": len(result.submitted.sent)}))
    elif mode == "bundle":
        dest = s3fs.S3FileSystem(skip_instance_cache=True, **options)
        bundle_tree(
            fsspec.filesystem("file"),
            config["src"],
            dest,
            config["dest"],
            policy=ByPrefix(depth=1, target_size=config["target_size"]),
            storage_class="STANDARD",
            save_every=config.get("save_every", 5),
        )
    elif mode == "catalog":
        dest = s3fs.S3FileSystem(skip_instance_cache=True, **options)
        catalog = Catalog.load(dest, config["dir"])
        for _ in range(config["saves"]):
            catalog.save(dest, config["dir"])
    elif mode == "promote":
        fs = ArchiveFileSystem(
            target_options=options,
            journal=False,
            hot=config["hot"],
            restore_status_in_listings=True,
            concurrency=4,
            skip_instance_cache=True,
        )
        fs.promote(config["paths"])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
