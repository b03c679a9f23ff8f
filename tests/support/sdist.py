"""A package's own test directory, from its sdist at the installed version, in the user cache.

The s3fs and adlfs suites (``tests/s3fs_suite``, ``tests/adlfs_suite``) run the test
suites those packages ship in their sdists. Neither wheel has them and neither is
copied into this repository: :func:`suite_dir` fetches the sdist once with pip and
keeps ``<package>/tests`` under the archivefs cache directory; :func:`mark_suite_items`
applies a suite's ``suite.toml`` (what is skipped or expected to fail, and why).
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from archivefs.paths import cache_dir

if TYPE_CHECKING:
    from collections.abc import Callable


class FetchError(Exception):
    """A package's sdist could not be fetched."""


def suite_dir(package: str, version: str, marker: str) -> Path:
    """``<package>/tests`` of the ``package`` ``version`` sdist in the user cache, fetched
    if missing (``marker``: a file the directory holds once unpacked)."""
    root = cache_dir() / f"{package}-suite" / version
    tests = root / package / "tests"
    if (tests / marker).is_file():
        return tests
    with tempfile.TemporaryDirectory(dir=cache_dir()) as work:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--disable-pip-version-check",
            "--dest",
            work,
            f"{package}=={version}",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        sdists = sorted(Path(work).glob(f"{package}-*.tar.gz"))
        if done.returncode != 0 or not sdists:
            raise FetchError(
                f"{package}'s test suite (the {package} {version} sdist) could not be "
                f"fetched: `{' '.join(command)}` failed:\n{done.stderr.strip()[-2000:]}\n"
                "Fix: make the package index reachable (or pip's configured mirror), or "
                f"unpack the sdist's {package}/tests into {tests}."
            )
        staging = Path(work) / "tree"
        prefix = f"{package}-{version}/{package}/tests/"
        with tarfile.open(sdists[0]) as sdist:
            members = [m for m in sdist.getmembers() if m.name.startswith(prefix)]
            sdist.extractall(staging, members=members, filter="data")
        (root / package).mkdir(parents=True, exist_ok=True)
        try:
            (staging / f"{package}-{version}" / package / "tests").rename(tests)
        except OSError:
            if not (tests / marker).is_file():  # not a concurrent fetch: a failure
                raise
    return tests


def import_suite(package: str, tests: Path) -> None:
    """Make ``<package>.tests`` the fetched directory (the installed wheel has no tests)."""
    name = f"{package}.tests"
    if name in sys.modules:
        return
    parent = importlib.import_module(package)
    spec = importlib.util.spec_from_file_location(
        name, tests / "__init__.py", submodule_search_locations=[str(tests)]
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent.tests = module


def mark_suite_items(
    config: pytest.Config,
    items: list[pytest.Item],
    ours: list[pytest.Item],
    *,
    listed: Path,
    library: str,
    name_of: Callable[[pytest.Item], tuple[str, ...]],
    swapped_fixtures: frozenset[str],
    swapped: bool,
) -> None:
    """Apply a suite's ``suite.toml`` to its collected items ``ours`` (of the session's
    ``items``, from which deselected ones are removed).

    Tests that request none of ``swapped_fixtures`` test ``library`` alone and are
    deselected. The list's ``heavy`` tests are skipped for either target, its
    ``internals`` skipped and its ``differences`` expected to fail strictly when
    ``swapped`` (archivefs is the target), its ``<library>_fails`` expected to fail;
    ``name_of(item)`` gives the names an item is listed under (with and without its
    parameters). Each suite keeps its library's own warning policy.
    """
    table = tomllib.loads(listed.read_text())
    heavy: dict[str, str] = table.get("heavy", {})
    internals: dict[str, str] = table.get("internals", {})
    fails: dict[str, str] = table.get(f"{library}_fails", {})
    differences: dict[str, str] = table.get("differences", {})
    deselected = []
    for item in ours:
        # the library's own warning policy (its suite leaves files and sessions unclosed),
        # instead of this project's filterwarnings = error
        item.add_marker(pytest.mark.filterwarnings("default"))
        if not swapped_fixtures & set(getattr(item, "fixturenames", ())):
            deselected.append(item)  # tests the library alone: archivefs is never reached
            continue
        for key in name_of(item):
            if key in heavy:
                item.add_marker(pytest.mark.skip(reason=f"too heavy here: {heavy[key]}"))
            if key in internals and swapped:
                item.add_marker(pytest.mark.skip(reason=f"{library} internals: {internals[key]}"))
            if key in fails:
                item.add_marker(
                    pytest.mark.xfail(reason=f"{library} fails too: {fails[key]}", strict=False)
                )
            if key in differences and swapped:
                reason = f"not yet as {library}: {differences[key]}"
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        gone = {id(item) for item in deselected}
        items[:] = [item for item in items if id(item) not in gone]
