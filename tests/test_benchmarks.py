"""The benchmarks run at smoke size and write results (they never rot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.__main__ import MODULES

ROOT = Path(__file__).parents[1]


def test_benchmarks_smoke_run_writes_results(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--out", str(tmp_path), "--no-docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    names = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert names == sorted(MODULES)  # every benchmark wrote its result
    polling = json.loads((tmp_path / "status_polling.json").read_text())
    assert polling["archivefs"]["LIST"] == 1  # 1,000 restoring objects: one listing
    assert polling["archivefs"]["HEAD"] == 0
    assert polling["baseline"]["HEAD"] == 1000
    bundling = json.loads((tmp_path / "bundling.json").read_text())
    assert bundling["baseline"]["restore_requests_sent"] == 1000
    assert bundling["archivefs"]["restore_requests_sent"] == 20  # one bundle per directory
    ttd = json.loads((tmp_path / "time_to_data.json").read_text())
    assert ttd["archivefs"]["restore_requests"] == ttd["parameters"]["objects"]
