"""Run the benchmarks: ``python -m benchmarks [--smoke | --full] [--latency S] [--only NAME ...]``.

Each one compares archivefs with the strongest plain alternative in the same
run, against the emulated archive in its own process with per-request latency
(a server that behaves like a remote one), with several samples per variant;
it writes ``<out>/<name>.json``. With ``--docs`` (never with ``--smoke``) the
generated passages of the docs pages are then regenerated from the result files in
``<out>``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from benchmarks._common import MODULES, ROOT, SAMPLES, update_docs, write

__all__ = ["MODULES", "main"]

DEFAULT_LATENCY = 0.02  # seconds per request: a nearby S3 region's round trip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; ``--docs`` with ``--smoke`` is an error (exit 2)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--smoke", action="store_true", help="tiny sizes, one sample (CI)")
    size.add_argument("--full", action="store_true", help="the large sizes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--only", nargs="*", choices=MODULES, help="run only these")
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument(
        "--docs",
        action="store_true",
        help="then rewrite the generated docs passages from the result files in --out "
        "(not with --smoke; refused if any of those files is from a smoke run)",
    )
    docs.add_argument("--no-docs", action="store_true", help="leave the docs alone (the default)")
    parser.add_argument(
        "--latency",
        type=float,
        default=DEFAULT_LATENCY,
        help=f"seconds the server waits before answering each request (default {DEFAULT_LATENCY})",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run the emulator in this process (shares the GIL with the client; for debugging)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        help="samples per variant instead of the size's own (at least 3 outside --smoke; "
        "each result records its sample counts)",
    )
    args = parser.parse_args(argv)
    if args.docs and args.smoke:
        parser.error("--docs renders the docs from measured runs: leave out --smoke.")
    if args.samples is not None and args.samples < (1 if args.smoke else 3):
        parser.error(
            f"--samples {args.samples}: a measured run takes at least 3 samples per "
            "variant (a median and a spread); give 3 or more, or use --smoke."
        )
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    label = "smoke" if args.smoke else "full" if args.full else "default"
    if args.samples is not None:
        SAMPLES[label] = args.samples  # every module reads its count from this one table

    from archivefs.testing import EmulatedArchive, RemoteArchive

    archive: EmulatedArchive | RemoteArchive = (
        EmulatedArchive(latency=args.latency)
        if args.in_process
        else RemoteArchive(latency=args.latency)
    )
    server = {
        "process": "in-process" if args.in_process else "own process",
        "latency_s": args.latency,
    }
    with archive:
        for name in args.only or MODULES:
            archive.reset()
            module = importlib.import_module(f"benchmarks.{name}")
            start = time.perf_counter()
            result = module.run(archive, label)
            result.size, result.server = label, result.server or server  # Azure: its own
            path = write(result, args.out)
            print(f"{name:<20} {time.perf_counter() - start:6.1f}s  {result.headline}  -> {path}")
    if args.docs:
        update_docs(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
