"""The scripts in examples/ run as a reader would run them: ``python examples/x.py``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TIMEOUT = 600  # seconds per script: a bound, generous for a busy 2-core machine


def test_the_promised_examples_exist() -> None:
    names = {p.name for p in (ROOT / "examples").iterdir()}
    assert names >= {
        "quickstart.py",
        "choose_storage_class.py",
        "dask_cluster_job.py",
        "bundle_small_files.py",
        "prefetch_before_batch_job.sh",
    }


@pytest.mark.timeout(TIMEOUT + 30)
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(script: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,  # scripts must not depend on the working directory
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{script.name} printed nothing"


def test_shell_example_is_valid_bash() -> None:
    """The shell example is documentation for a real bucket; check its syntax only."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = ROOT / "examples" / "prefetch_before_batch_job.sh"
    done = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    for command in ("status", "estimate", "prefetch"):
        assert f'"$PROFILE" {command} "$INPUTS"' in script.read_text(encoding="utf-8")
