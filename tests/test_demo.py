"""`archivefs demo` runs from the installed command and its numbers add up."""

from __future__ import annotations

import json
import shutil
import subprocess


def test_demo_runs_and_reports_consistent_numbers() -> None:
    command = shutil.which("archivefs")
    assert command is not None, "the console script is installed with the package"
    completed = subprocess.run(
        [command, "--json", "demo", "--delay", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert summary["restore_requests"] == summary["groups"]  # one request per bundle
    assert summary["objects"] == 19 * 2  # 92 days of 5-day chunks (19) x 2 latitude chunks
    assert summary["groups"] == 10  # bundles of 2 time chunks
    assert summary["groups_ready"] == summary["groups"]
    assert summary["bytes_read"] == summary["bytes_needed"]
    assert 0 < summary["estimated_cost_usd"] < 1
    assert summary["netcdf_files"] == 5
    assert summary["netcdf_restore_requests"] == 1  # five files, one bundle
