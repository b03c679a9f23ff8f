"""Every notebook in notebooks/ runs top to bottom in a fresh kernel, and is committed clean.

Each notebook starts its own emulated archive (moto's state is global to a
process, and every notebook gets its own kernel process), checks its own
results in cells tagged ``check`` (hidden in Jupyter, out of the reader's
way) and saves its plots to PNG files, so an error anywhere fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 600  # seconds per cell (a bound for a busy machine, not a speed)
NOTEBOOK_TIMEOUT = 1200  # seconds per notebook, kernel start included


def test_there_are_notebooks() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {
        "quickstart",
        "choosing_a_storage_class",
        "dask_cluster",
        "bundling_small_files",
    }


def test_getting_started_lists_every_notebook() -> None:
    """Its table lacked the two planning notebooks."""
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    table = page.split("## Notebooks and examples", 1)[1].split("\n\n", 2)[1]
    listed = set(re.findall(r"`notebooks/([\w.-]+)\.ipynb`", table))
    assert listed == {p.stem for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code, f"{path.name} has no code cells"
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs") == [], f"{path.name} cell {index} has outputs; strip them"
        assert cell.get("execution_count") is None, f"{path.name} cell {index} has a count"


def _code_cells(path: Path) -> list[tuple[int, dict[str, Any], str]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        (index, cell, "".join(cell["source"]))
        for index, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "code"
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_checks_are_out_of_the_readers_way(path: Path) -> None:
    """Tutorial cells teach; checks live in hidden cells tagged ``check``."""
    checks = 0
    for index, cell, source in _code_cells(path):
        tags = cell.get("metadata", {}).get("tags", [])
        asserts = [line for line in source.splitlines() if line.lstrip().startswith("assert ")]
        if "check" in tags:
            checks += 1
            assert cell["metadata"].get("jupyter", {}).get("source_hidden"), (
                f"{path.name} cell {index}: a check cell should be hidden"
            )
            assert source.startswith("# check"), f"{path.name} cell {index}: say what it checks"
        else:
            assert not asserts, f"{path.name} cell {index} has bare asserts: {asserts}"
    assert checks, f"{path.name} checks nothing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_plot_is_labelled(path: Path) -> None:
    for index, _, source in _code_cells(path):
        if "plt.subplots" not in source:
            continue
        where = f"{path.name} cell {index}"
        assert "set_xlabel(" in source, f"{where}: label the x axis"
        assert "set_ylabel(" in source, f"{where}: label the y axis, with units"
        for call in _calls(source, "axvline("):
            assert "label=" in call, f"{where}: label every line (break-even lines too)"
        if ".plot(" in source and "legend(" not in source:
            assert "cbar_kwargs" in source, f"{where}: a legend or a labelled colour bar"


def _calls(source: str, name: str) -> list[str]:
    """The argument text of every call of ``name`` (balanced parentheses)."""
    calls = []
    for match in re.finditer(re.escape(name), source):
        depth, end = 1, match.end()
        while depth and end < len(source):
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        calls.append(source[match.end() : end - 1])
    return calls


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},  # the kernel's working directory
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    outputs = [
        output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    ]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    if "except ObjectArchivedError" in path.read_text(encoding="utf-8"):
        printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
        assert "ObjectArchivedError" in printed or "must be restored" in printed
        assert "Fix: " in printed, "show the archived-data error whole, with its fix"
        assert "archivefs.datasets.prefetch(selection)" in printed
    assert all(cell.execution_count for cell in notebook.cells if cell.cell_type == "code")
