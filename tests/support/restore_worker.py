"""A separate process that submits restores on any provider (killed on purpose).

Its argument is JSON: ``archive_options`` (``ArchiveFileSystem`` keyword arguments, see
``Provider.archive_options``) and ``paths``.
"""

from __future__ import annotations

import json
import sys

from archivefs import ArchiveFileSystem


def main() -> None:
    config = json.loads(sys.argv[1])
    fs = ArchiveFileSystem(**config["archive_options"])
    result = fs.restore(config["paths"], wait=False)
    print(json.dumps({"sent": len(result.submitted.sent)}))


if __name__ == "__main__":
    main()
