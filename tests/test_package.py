"""The package root: the names users look for, without importing the heavy modules."""

from __future__ import annotations

import subprocess
import sys

import archivefs


def test_filesystem_and_dataset_helpers_from_the_package_root() -> None:
    from archivefs import datasets, filesystem

    assert archivefs.ArchiveFileSystem is filesystem.ArchiveFileSystem
    for name in (
        "open_zarr",
        "open_dataset",
        "open_mfdataset",
        "plan_dataset",
        "prefetch",
        "restore_aware",
    ):
        assert getattr(archivefs, name) is getattr(datasets, name)
        assert name in archivefs.__all__
    assert "ArchiveFileSystem" in archivefs.__all__
    assert all(hasattr(archivefs, name) for name in archivefs.__all__)


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, archivefs; "
        "heavy = {'fsspec', 's3fs', 'xarray', 'dask', 'botocore', 'numpy', "
        "'archivefs.filesystem'}; "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_notebooks_extra_holds_a_jupyter_front_end_and_nbconvert() -> None:
    """docs/getting-started.md: the extra is all you need to open and run the notebooks."""
    import re
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[; ]", spec, maxsplit=1)[0] for spec in extras["notebooks"]}
    assert {"jupyterlab", "nbconvert", "ipykernel", "matplotlib"} <= names
