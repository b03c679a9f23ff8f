"""The documentation site builds with no warnings, and the getting-started page is true."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
GETTING_STARTED = ROOT / "docs" / "getting-started.md"

# What the getting-started page promises a reader of its quickstart, checked
# against what its code really does (the page quotes these numbers).
CHECKS = """
assert seed_archive_result == (9, 292, 74), seed_archive_result
assert (len(plan.paths), len(plan), len(plan.to_restore)) == (38, 10, 10)
cost = estimate(plan, load_price_sheet("aws-us-east-1"), egress="internet").total
assert round(cost, 4) == 0.0011, cost
assert round(float(area_mean(summer)), 3) == 289.893
assert archive.requests.count("RestoreObject") == 10
print("getting-started: ok")
"""


def test_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    command = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
    ]  # not --quiet: it hides warnings from --strict
    command += ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")]
    done = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for name in (
        "archivefs.filesystem.ArchiveFileSystem",
        "archivefs.datasets.open_zarr",
        "archivefs.pricing.advise.advise",
        "archivefs.pricing.estimate.estimate",
        "archivefs.catalog.writer.bundle_tree",
        "archivefs.testing.EmulatedArchive",
    ):
        assert f'id="{name}"' in api, f"{name} is missing from the API reference"


def quickstart_code() -> str:
    text = GETTING_STARTED.read_text(encoding="utf-8")
    section = text.split("## The quickstart, step by step", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) >= 5
    return "\n".join(blocks)


def test_getting_started_quickstart_gives_the_quoted_results(tmp_path: Path) -> None:
    pytest.importorskip("xarray")
    code = quickstart_code()
    for quoted in ("(9, 292, 74)", "(38, 10, 10)", "$0.0011", "289.893 K"):
        assert quoted in code, f"the page no longer quotes {quoted}"
    code = code.replace(
        "seed_archive(archive, workdir, source)",
        "seed_archive_result = seed_archive(archive, workdir, source)",
    )
    assert code.count("archive.stop()") == 1
    code = code.replace("archive.stop()", CHECKS + "archive.stop()")
    script = tmp_path / "getting_started.py"
    script.write_text(code, encoding="utf-8")
    # its own process: the page starts an EmulatedArchive, and a process holds one at a time
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "getting-started: ok" in done.stdout
