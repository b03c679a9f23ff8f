"""A separate bundling process for the orphan-deletion races (issue 47): it may stop at a
gate (the first open of a source under a given folder) until the test releases it, and
prints its report as JSON."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from archivefs.catalog import ByPrefix
from archivefs.catalog.writer import bundle_tree


class GatedSources(LocalFileSystem):
    """Local sources whose first open under ``gate`` waits for the file ``release``
    (after touching ``reached``): a run held between its checks and its save."""

    protocol = ("gated",)  # not fsspec's "file": bundle_tree opens sources through it

    def __init__(self, gate: str, reached: str, release: str) -> None:
        super().__init__(skip_instance_cache=True)
        self.gate, self.reached, self.release = gate, Path(reached), Path(release)

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        if self.gate in str(path) and not self.reached.exists():
            self.reached.touch()
            deadline = time.monotonic() + 600
            while not self.release.exists():
                assert time.monotonic() < deadline, "never released"
                time.sleep(0.02)
        return super()._open(path, mode, **kwargs)


def main() -> None:
    config = json.loads(sys.argv[1])
    dest = fsspec.filesystem(
        config["protocol"], skip_instance_cache=True, **config["storage_options"]
    )
    gate = config.get("gate")
    src = (
        GatedSources(gate["folder"], gate["reached"], gate["release"])
        if gate
        else fsspec.filesystem("file")
    )
    report = bundle_tree(
        src,
        config["src"],
        dest,
        config["dest"],
        policy=ByPrefix(depth=1, target_size=1_000_000),
        storage_class=config["storage_class"],
        orphans=config.get("orphans", "keep"),
    )
    print(
        json.dumps(
            {
                "written": report.bundles_written,
                "reused": report.bundles_reused,
                "orphans": [[o.key, o.deleted] for o in report.orphans],
            }
        )
    )


if __name__ == "__main__":
    main()
