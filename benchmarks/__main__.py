"""Run the benchmarks: ``python -m benchmarks [--smoke | --full] [--out DIR] [--only NAME ...]``.

Each one compares archivefs with the plain alternative in the same run, writes
``<out>/<name>.json`` and the table in docs/benchmarks.md is regenerated.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from benchmarks._common import ROOT, update_docs, write

MODULES = [
    "time_to_data",
    "status_polling",
    "submission",
    "hot_read",
    "planning",
    "catalog_listing",
    "scale",
    "bundling",
    "read_amplification",
    "time_to_first_result",
    "cluster_coordination",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    size.add_argument("--full", action="store_true", help="the large sizes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--only", nargs="*", choices=MODULES, help="run only these")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    label = "smoke" if args.smoke else "full" if args.full else "default"

    from archivefs.testing import EmulatedArchive

    with EmulatedArchive() as archive:
        for name in args.only or MODULES:
            archive.reset()
            module = importlib.import_module(f"benchmarks.{name}")
            start = time.perf_counter()
            result = module.run(archive, label)
            path = write(result, args.out)
            print(f"{name:<16} {time.perf_counter() - start:6.1f}s  {result.headline}  -> {path}")
    if not args.no_docs:
        update_docs(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
