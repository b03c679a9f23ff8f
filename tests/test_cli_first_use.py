"""What a new user meets first, through the installed ``archivefs`` script: the top-level
help, listings of local directories, headers, price sheets named and shown."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from archivefs.cli import main

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


def archivefs(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARCHIVEFS, *args], capture_output=True, text=True, timeout=600, check=False, **kwargs
    )


def test_top_level_help_names_every_provider_and_every_global_option() -> None:
    done = archivefs("--help")
    assert done.returncode == 0, done.stderr
    declared = [
        p.opts[0]
        for p in main.params
        if isinstance(p, click.Option) and p.name not in ("version", "help")
    ]
    assert "--account-name" in declared
    assert "--bucket-claims" in declared
    sentence = " ".join(done.stdout.split("Global options (", 1)[1].split(")", 1)[0].split())
    assert sentence == ", ".join(declared)
    summary = " ".join(done.stdout.split("\n\n", 2)[1].split())
    assert "S3 data" not in summary
    for provider in ("S3", "Azure", "GCS", "Oracle", "Ceph RGW"):
        assert provider in summary


def test_a_local_directory_is_a_usage_error_that_names_it(tmp_path: Path) -> None:
    """``archivefs ls /tmp/...`` read the path as S3's bucket ``tmp``."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.nc").write_bytes(b"1")
    for url in (str(folder), "./data", f"file://{folder}"):
        done = archivefs("ls", "-l", url, cwd=tmp_path)
        assert done.returncode == 2, (url, done.stderr)
        assert f"{url} is a local path" in done.stderr
        assert "bucket" in done.stderr
        assert "does not exist" not in done.stderr
        assert "archivefs bundle" in done.stderr
    status = archivefs("status", str(folder / "a.nc"))
    assert status.returncode == 2
    assert "is a local path" in status.stderr


def test_estimate_names_its_sheet_and_sheet_show_prints_it() -> None:
    """``estimate`` named no sheet, and there was no way to see one from the CLI."""
    what_if = ["--objects", "100", "--size", "40MiB", "--storage-class", "GLACIER"]
    estimate = archivefs("estimate", *what_if, "--tier", "Bulk")
    assert estimate.returncode == 0, estimate.stderr
    assert estimate.stdout.splitlines()[-1] == (
        "prices: the aws-us-east-1 price sheet (`archivefs sheet show aws-us-east-1`)"
    )
    shown = archivefs("sheet", "show", "gcs-us-central1")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "price sheet gcs-us-central1 (provider gcs, USD, per GiB)"
    archive = next(line.split() for line in lines if line.split()[:1] == ["ARCHIVE"])
    assert archive == ["ARCHIVE", "0.0012", "365", "-", "0.05", "0.05", "0.05"]
    assert "no restores: every class reads at once" in lines
    as_json = json.loads(archivefs("--json", "sheet", "show", "aws-us-east-1").stdout)
    assert as_json["classes"]["GLACIER"]["restore"]["Bulk"]["hours"] == [5, 12]
    listed = json.loads(archivefs("--json", "sheet", "list").stdout)
    assert {"name": "gcs-us-central1", "provider": "gcs"} in listed
    missing = archivefs("sheet", "show", "no-such-sheet")
    assert missing.returncode == 2  # a sheet that cannot be used is a usage error
    assert "no such price sheet" in missing.stderr
    assert "aws-us-east-1" in missing.stderr  # the fix lists the shipped sheets
