"""Every notebook in notebooks/ runs top to bottom in a fresh kernel, and is committed clean.

Each notebook starts its own emulated archive (moto's state is global to a
process, and every notebook gets its own kernel process), asserts its own
results and saves its plots to PNG files, so an error anywhere fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 120  # seconds per cell
NOTEBOOK_TIMEOUT = 240  # seconds per notebook, kernel start included


def test_there_are_notebooks() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {
        "quickstart",
        "choosing_a_storage_class",
        "dask_cluster",
        "bundling_small_files",
    }


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
    assert all(cell.execution_count for cell in notebook.cells if cell.cell_type == "code")
