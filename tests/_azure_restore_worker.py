"""A separate process that restores blobs on the emulated Azure archive (killed on purpose)."""

from __future__ import annotations

import json
import sys

from archivefs.filesystem import ArchiveFileSystem


def main() -> None:
    config = json.loads(sys.argv[1])
    fs = ArchiveFileSystem(
        target_protocol="az",
        target_options=config["storage_options"],
        journal=config["journal"],
        concurrency=config.get("concurrency", 1),
        store_options=config.get("store_options"),
        price_sheet="azure-eastus",
        bucket_claims=config.get("bucket_claims", False),
        skip_instance_cache=True,
    )
    result = fs.restore(config["paths"], wait=False)
    print(json.dumps({"sent": len(result.submitted.sent)}))


if __name__ == "__main__":
    main()
