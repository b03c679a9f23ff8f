"""A separate process that bundles a tree (killed on purpose by tests)."""

from __future__ import annotations

import json
import sys

import fsspec
import s3fs

from archivefs.catalog import ByPrefix
from archivefs.catalog.writer import bundle_tree


def main() -> None:
    config = json.loads(sys.argv[1])
    dest = s3fs.S3FileSystem(skip_instance_cache=True, **config["storage_options"])
    bundle_tree(
        fsspec.filesystem("file"),
        config["src"],
        dest,
        config["dest"],
        policy=ByPrefix(depth=1, target_size=config["target_size"]),
        storage_class="STANDARD",
        save_every=1000,
    )


if __name__ == "__main__":
    main()
