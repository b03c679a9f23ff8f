"""The documentation site builds with no warnings, and the getting-started page (its S3
quickstart, its own-files job and its Azure section) is true."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs import run_page_code, section_code

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
        timeout=600,
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
    run_page_code(tmp_path, "getting_started.py", code, "getting-started: ok")


# What the "your own files" section promises, checked against what its code does.
OWN_FILES_CHECKS = """
assert (report.members, len(report.bundles_written)) == (236, 4), report
assert (len(plan.paths), len(plan), len(plan.to_restore)) == (28, 1, 1)
assert archive.requests.count("RestoreObject") == 1  # one month of one instrument
archive.requests.clear()
ds = ads.open_mfdataset(february, fs=fs, combine="by_coords")
counts = archive.requests.counts()
# the bundle run's references: one LIST finds them, 28 GETs read them, one LIST checks
# the bundle's ETag; no HEAD, nothing of the bundle (the small variables are inline)
assert counts == {"LIST": 2, "GET": 28}, counts
assert [r for r in archive.requests.records if ".archivefs/bundles/" in (r.key or "")] == []
assert ds["tb"].sizes["time"] == 672
assert ds["tb"].attrs["units"] == "K"
assert 249 < float(ds["tb"].mean()) < 251
assert json.loads(fs.cat_file("obs/2023/02/14/radiometer/meta.json"))["date"] == "2023-02-14"
print("own files: ok")
"""


def test_getting_started_own_files_job_gives_the_quoted_results(tmp_path: Path) -> None:
    """A job shaped like a real one: a date/instrument tree, one month of one instrument."""
    pytest.importorskip("h5netcdf")
    code = section_code("Your own files")
    for quoted in ("(236, 4)", "(28, 1, 1)", "672"):
        assert quoted in code, f"the page no longer quotes {quoted}"
    assert code.count("archive.stop()") == 1
    code = code.replace("archive.stop()", OWN_FILES_CHECKS + "archive.stop()")
    run_page_code(tmp_path, "own_files.py", code, "own files: ok")


def test_clusters_page_quotes_the_shipped_prices() -> None:
    from archivefs.pricing import load_price_sheet

    sheet = load_price_sheet("aws-us-east-1")
    standard, glacier = sheet.classes["STANDARD"], sheet.classes["GLACIER"]
    quoted = {
        f"${standard.put_per_1000:.3f} per 1,000 at STANDARD",
        f"${standard.get_per_1000:.4f} per 1,000",
        f"${glacier.restore['Standard'].per_1000_requests:.2f} per 1,000",
        f"${glacier.restore['Expedited'].per_1000_requests:.2f} per 1,000 for Expedited",
        f"${glacier.restore['Standard'].per_gb:.2f} per GB",
    }
    text = " ".join((ROOT / "docs" / "clusters.md").read_text(encoding="utf-8").split())
    for phrase in quoted:
        assert phrase in text, phrase


# What the page's Azure section promises (the same quickstart on Azure Blob Archive).
AZURE_CHECKS = """
assert len(plan.to_restore) == 4, plan
assert float(lazy["t"].sum()) == 3160.0
assert azure.requests.count("BlobBatch") == 1
assert azure.requests.count("SetBlobTier", batched=True, status=202) == 4
assert set(azure.pending()) == set()  # all rehydrated
print("azure: ok")
"""


def test_getting_started_azure_section_gives_the_quoted_results(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the emulated Azure archive needs Node.js and npm (for Azurite)")
    pytest.importorskip("adlfs")
    code = section_code("The same on Azure Blob Archive")
    for quoted in ("# 4:", "# 3160.0", "# 1:"):
        assert quoted in code, f"the page no longer quotes {quoted}"
    assert code.count("azure.stop()") == 1
    code = code.replace("azure.stop()", AZURE_CHECKS + "azure.stop()")
    # not azure.py: a script of that name would shadow the azure package
    run_page_code(tmp_path, "azure_quickstart.py", code, "azure: ok")
