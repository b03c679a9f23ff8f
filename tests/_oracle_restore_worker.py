"""A separate process that restores objects on the emulated Oracle archive (killed on purpose)."""

from __future__ import annotations

import json
import sys

from archivefs.filesystem import ArchiveFileSystem
from archivefs.testing._oracle import storage_options


def main() -> None:
    config = json.loads(sys.argv[1])
    fs = ArchiveFileSystem(
        target_protocol="oci",
        target_options=storage_options(**config["endpoint"]),
        journal=config["journal"],
        concurrency=config.get("concurrency", 1),
        price_sheet="oci-us-ashburn-1",
        skip_instance_cache=True,
    )
    result = fs.restore(config["paths"], wait=False)
    print(json.dumps({"sent": len(result.submitted.sent)}))


if __name__ == "__main__":
    main()
