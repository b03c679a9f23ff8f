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


def test_the_read_path_imports_no_journal_or_price_sheets() -> None:
    """Issue 49: a command that only reads (get, cat) does not import the journal's SQLite,
    pydantic or the price sheets (the restore and catalog packages load names on use)."""
    code = (
        "import sys\n"
        "from archivefs import ArchiveFileSystem\n"
        "import archivefs.access.assembly\n"
        "ArchiveFileSystem(target_options={'anon': True}, journal=False)\n"
        "heavy = {'pydantic', 'sqlite3', 'yaml', 'archivefs.restore.journal', "
        "'archivefs.pricing', 'archivefs.catalog.writer', 'xarray', 'dask'}\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    from archivefs.catalog import ByPrefix
    from archivefs.catalog.grouping import ByPrefix as own
    from archivefs.restore import Journal
    from archivefs.restore.journal import Journal as journal

    assert (ByPrefix, Journal) == (own, journal)  # the packages' names still load


def test_the_notebooks_extra_holds_a_jupyter_front_end_and_nbconvert() -> None:
    """docs/getting-started.md: the extra is all you need to open and run the notebooks."""
    import re
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[; ]", spec, maxsplit=1)[0] for spec in extras["notebooks"]}
    assert {"jupyterlab", "nbconvert", "ipykernel", "matplotlib"} <= names
