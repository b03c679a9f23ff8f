"""A separate process that restores a list of paths (killed on purpose by tests)."""

from __future__ import annotations

import json
import sys

from archivefs.filesystem import ArchiveFileSystem


def main() -> None:
    config = json.loads(sys.argv[1])
    fs = ArchiveFileSystem(
        target_options=config["storage_options"],
        journal=config["journal"],
        restore_status_in_listings=True,
        concurrency=config.get("concurrency", 1),
        skip_instance_cache=True,
    )
    result = fs.restore(config["paths"], wait=False)
    print(json.dumps({"sent": len(result.submitted.sent)}))


if __name__ == "__main__":
    main()
