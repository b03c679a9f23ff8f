"""`archivefs demo` runs from the installed command, its numbers add up, and it tells the truth."""

from __future__ import annotations

import json
import shutil
import subprocess


def _demo(*args: str) -> str:
    command = shutil.which("archivefs")
    assert command is not None, "the console script is installed with the package"
    completed = subprocess.run(
        [command, *args, "demo", "--delay", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_demo_runs_and_reports_consistent_numbers() -> None:
    summary = json.loads(_demo("--json").strip().splitlines()[-1])
    assert summary["objects"] == 19 * 2  # 92 days of 5-day chunks (19) x 2 latitude chunks
    assert summary["groups"] == 10  # bundles of 2 time chunks
    assert summary["netcdf_files"] == 5
    assert summary["netcdf_groups"] == 1  # five files, one bundle
    # one batch, one request per bundle: the summer's and the station files'
    assert summary["restore_requests"] == summary["groups"] + summary["netcdf_groups"] == 11
    assert summary["groups_ready"] == 11
    assert summary["bytes_read"] == summary["bytes_needed"]
    assert 0 < summary["estimated_cost_usd"] < 1
    # physically plausible: an area-weighted global mean and station means in kelvin
    assert 280 < summary["summer_mean_k"] < 295
    assert 250 < summary["station_mean_k"] < 305
    error = summary["archived_error"]
    assert "DEEP_ARCHIVE" in error
    assert "Fix: for a lazy xarray/Dask selection, `archivefs.datasets.prefetch(selection)`" in (
        error
    )


def test_demo_prints_the_whole_archived_error_with_its_fix() -> None:
    text = _demo()
    section = text.split("3. computing on archived chunks", 1)[1].split("\n4. ", 1)[0]
    assert "ObjectArchivedError" in section
    assert "Fix: for a lazy xarray/Dask selection" in section
    assert "on_archived='wait' to restore and wait automatically." in section  # not cut
    assert " ..." not in section
    assert "global mean 2 m temperature" in text
    assert " K (source: " in text
    assert "wall time" in text


def test_the_listing_step_says_what_it_sent() -> None:
    import ast

    text = _demo()
    section = text.split("\n1. ", 1)[1].split("\n2. ", 1)[0]
    heading = section.splitlines()[0]
    counts = ast.literal_eval(section.rsplit("requests: ", 1)[1].strip())
    assert "no HEAD" in heading
    assert "HEAD" not in counts, (heading, counts)
    assert counts.get("LIST") == 1, counts  # the bundles' states: one bulk listing
    assert "one LIST" in heading
    assert counts["GET"] == 3  # the registry, the catalog pointer, its one shard
