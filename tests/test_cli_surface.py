"""The `archivefs` command's surface, byte for byte: every ``--help`` and the ``--json`` output
of each command against ``archivefs serve``'s demo bucket, through the installed console script.

The recorded snapshot is ``tests/data/cli-surface.txt``; what varies from run to run (times,
ports, temporary paths, bundle ids, modification times) is masked. A change to the CLI's
options, help or JSON shows here as a diff; when it is meant, re-record with
``ARCHIVEFS_RECORD_CLI_SURFACE=1 pytest -n 0 tests/test_cli_surface.py`` and review the diff.
Each command's ``--help`` is its own test (xdist spreads them), comparing its own section
of the snapshot; the ``--json`` outputs are one test, in order, since each command works on
what the previous ones left on the server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"
SNAPSHOT = Path(__file__).parent / "data" / "cli-surface.txt"
RECORD = os.environ.get("ARCHIVEFS_RECORD_CLI_SURFACE") == "1"

COMMANDS = [
    [],
    *([c] for c in ["ls", "status", "restore", "prefetch", "estimate", "advise", "bundle"]),
    *([c] for c in ["demo", "serve"]),
    ["catalog"],
    ["catalog", "show"],
    ["catalog", "rebuild"],
    ["index"],
    ["sheet"],
    ["sheet", "list"],
    ["sheet", "show"],
]

DEMO = "s3://archivefs-demo/climate"
# serve's default: many times the two commands (2 s each here, loaded) the restore must outlast
RESTORE_DELAY = 20


def mask(text: str, tmp: Path) -> str:
    """``text`` with what varies between runs replaced by fixed words."""
    text = text.replace(str(tmp), "TMP")
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    text = re.sub(
        r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00|Z)?( UTC)?", "TIME", text
    )
    text = re.sub(r'"mtime": \d+(\.\d+)?', '"mtime": MTIME', text)
    text = re.sub(r"b-[0-9a-f]{32}", "b-ID", text)
    text = re.sub(r"claimed by \S+:\d+:", "claimed by REQUESTER:", text)
    return re.sub(r'"requester": "[^"]*"', '"requester": "REQUESTER"', text)


def section(
    args: list[str], completed: subprocess.CompletedProcess[str], tmp: Path, *, stderr: bool
) -> str:
    """One command's record: its arguments, exit code, output (and ``stderr`` if asked)."""
    text = f"### archivefs {' '.join(args)}\nexit {completed.returncode}\n{completed.stdout}"
    if stderr:
        text += f"--- stderr\n{completed.stderr}"
    return mask(text, tmp)


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, str]]:
    """``archivefs serve --seed-demo``: the environment it prints, for the commands.

    Its restores take ``RESTORE_DELAY``: the stations' restore must still be in flight
    for the two ``status`` commands right after it, and ``prefetch`` then waits it out.
    """
    server = subprocess.Popen(
        [ARCHIVEFS, "serve", "--seed-demo", "--delay", str(RESTORE_DELAY), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    try:
        line = server.stdout.readline()
        assert line, server.stderr.read() if server.stderr else "serve printed nothing"
        yield {**os.environ, **json.loads(line)["environment"]}
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(120)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()


def split(snapshot: str) -> list[str]:
    """The snapshot's sections (``"\\n".join`` of them gives it back)."""
    return re.split(r"\n(?=### archivefs )", snapshot)


def check(sections: list[str], first: int, count: int | None) -> None:
    """``sections`` are the snapshot's from index ``first`` (``count`` of them, or to the end)."""
    recorded = split(SNAPSHOT.read_text(encoding="utf-8")) if SNAPSHOT.exists() else []
    end = None if count is None else first + count
    if RECORD:  # run serially (-n 0): each test rewrites its own part of the one file
        recorded[first:end] = sections
        SNAPSHOT.write_text("\n".join(recorded), encoding="utf-8")
    assert "\n".join(sections) == "\n".join(recorded[first:end])


def run(
    args: list[str], tmp: Path, *, env: dict[str, str] | None = None, stderr: bool = False
) -> str:
    """``archivefs *args`` through the console script: its snapshot section."""
    completed = subprocess.run([ARCHIVEFS, *args], capture_output=True, text=True,
                               env=env, timeout=600, check=False)  # fmt: skip
    return section(args, completed, tmp, stderr=stderr)


@pytest.mark.parametrize(
    "index", range(len(COMMANDS)), ids=lambda i: " ".join(COMMANDS[i]) or "archivefs"
)
def test_help_matches_the_snapshot(index: int, tmp_path: Path) -> None:
    check([run([*COMMANDS[index], "--help"], tmp_path)], index, 1)


def test_json_outputs_match_the_snapshot(served: dict[str, str], tmp_path: Path) -> None:
    journal = ["--journal", str(tmp_path / "journal.sqlite")]

    def cli(*args: str) -> str:
        return run([*args, *journal, "--json"], tmp_path, env=served)

    def text(*args: str) -> str:  # the human form, with its warnings on stderr
        return run([*args, *journal], tmp_path, env=served, stderr=True)

    (tmp_path / "src" / "day1").mkdir(parents=True)
    for i in range(3):
        (tmp_path / "src" / "day1" / f"{i}.nc").write_bytes(bytes([i]) * 100)
    sections = [
        cli("ls", f"{DEMO}/"),
        cli("ls", f"{DEMO}/stations/"),
        cli("ls", "-r", f"{DEMO}/daily.zarr/precip/c/1*"),
        cli("ls", f"{DEMO}/nothing-here*"),
        cli("status", f"{DEMO}/"),
        cli("estimate", f"{DEMO}/stations/", "--tier", "Bulk"),
        cli("estimate", "--objects", "100", "--size", "40MiB", "--storage-class", "GLACIER"),
        text("status", f"{DEMO}/daily.zarr/t2m/c/0/0/0", f"{DEMO}/nothing-here"),
        text("estimate", f"{DEMO}/daily.zarr/t2m/c/0/0/0", "--tier", "Bulk"),
        cli("restore", f"{DEMO}/daily.zarr/t2m/c/2*", "--max-cost", "0"),
        text("ls", "-l", f"{DEMO}/stations/"),
        cli("restore", f"{DEMO}/stations/", "--bucket-claims"),
        cli("status", f"{DEMO}/stations/", "--claims"),
        text("status", f"{DEMO}/stations/", "--claims"),
        cli("prefetch", f"{DEMO}/stations/", "--to", str(tmp_path / "out"), "--timeout", "300"),
        cli("prefetch", f"{DEMO}/daily.zarr/lat/", "--timeout", "300"),
        cli("bundle", str(tmp_path / "src"), "s3://archivefs-demo/new", "--storage-class",
            "DEEP_ARCHIVE"),
        cli("catalog", "show", "s3://archivefs-demo/new"),
        cli("catalog", "rebuild", "s3://archivefs-demo/climate/stations"),
        cli("status", "s3://archivefs-demo/new/day1/"),
    ]
    check(sections, len(COMMANDS), None)
