"""The README's two commands are the ones CI runs, on 1.5 xdist workers per core."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.groups import usable_cores, workers_for_cores

ROOT = Path(__file__).parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("archivefs demo")
    assert commands[1].endswith("python -m pytest")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_commands()[1] in ci


def test_the_readme_command_runs_one_and_a_half_workers_per_core(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import pytest_xdist_auto_num_workers

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    cores = usable_cores()
    assert pytest_xdist_auto_num_workers(pytestconfig) == cores + cores // 2  # 3 on 2 cores
    assert [workers_for_cores(n) for n in (1, 2, 4)] == [1, 3, 6]
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    assert pytest_xdist_auto_num_workers(pytestconfig) is None  # xdist's own hook reads it
