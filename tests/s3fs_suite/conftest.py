"""s3fs's own test suite, run with its filesystem fixtures swapped to ArchiveFileSystem.

archivefs promises to behave as s3fs on objects that need no restore. This conftest
holds it to s3fs's own tests: the ``s3fs/tests`` directory of the s3fs sdist matching
the installed s3fs (fetched once with pip into the user cache, never copied into the
repository), collected from ``suite.toml`` in this directory, run against the
session's one emulated archive (moto) instead of s3fs's fixed ports 5555/5556.

- ``test_s3fs.py``'s and ``test_mapping.py``'s ``s3`` fixture and the ``fs`` fixture
  of ``derived/`` (fsspec's abstract copy/get/put/pipe/open suites, as s3fs runs them)
  set up exactly as s3fs's, then hand the test
  ``ArchiveFileSystem(target_protocol="s3", target_options=<the s3fs fixture's options>)``.
- Tests that never request those fixtures test s3fs alone; they are deselected.
- ``suite.toml`` lists the tests that reach into s3fs internals (skipped) and the
  tests s3fs itself fails here (expected to fail), each with its reason.
- ``ARCHIVEFS_S3FS_SUITE_TARGET=s3fs`` runs the same selection unswapped: s3fs's own
  result, the baseline archivefs is measured against.

If the sdist cannot be fetched (offline), collection fails with the pip command and
what to do; the suite never skips silently.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from archivefs.filesystem import ArchiveFileSystem
from archivefs.testing import EmulatedArchive
from tests.support import sdist
from tests.support.sdist import FetchError

SUITE_FILE = "suite.toml"
TARGET_ENV = "ARCHIVEFS_S3FS_SUITE_TARGET"
# the fixtures the swap replaces: a test that requests none of them tests s3fs alone
SWAPPED_FIXTURES = frozenset({"s3", "fs"})
FIXTURE_MODULES = ("s3fs.tests.test_s3fs", "s3fs.tests.derived.s3fs_fixtures")
TEST_MODULES = (
    "test_s3fs.py",
    "test_mapping.py",
    "derived/s3fs_test.py",
)


def target() -> str:
    """``archivefs`` (the swapped fixtures, the default) or ``s3fs`` (the baseline)."""
    value = os.environ.get(TARGET_ENV, "archivefs")
    if value not in ("archivefs", "s3fs"):
        raise pytest.UsageError(f"{TARGET_ENV}={value!r}: use 'archivefs' or 's3fs'")
    return value


# -- fetching the suite ----------------------------------------------------------------


def s3fs_version() -> str:
    return importlib.metadata.version("s3fs")


def suite_dir(version: str) -> Path:
    """``s3fs/tests`` of the s3fs ``version`` sdist in the user cache, fetched if missing."""
    return sdist.suite_dir("s3fs", version, "test_s3fs.py")


def import_suite(tests: Path) -> None:
    """Make ``s3fs.tests`` the fetched directory (the installed wheel has no tests)."""
    sdist.import_suite("s3fs", tests)


# -- the swap ---------------------------------------------------------------------------


def swapped(s3fs_fs: Any) -> Any:
    """What a test gets for s3fs's filesystem fixture: archivefs over the same options."""
    if target() == "s3fs":
        return s3fs_fs
    ArchiveFileSystem.clear_instance_cache()
    fs = ArchiveFileSystem(target_protocol="s3", target_options=s3fs_fs.storage_options)
    fs.invalidate_cache()
    return fs


def wrap(original: Any, scope: str) -> Any:
    """A fixture with ``original``'s arguments that yields ``swapped(original's value)``."""
    function: Callable[..., Iterator[Any]] = original._get_wrapped_function()

    @pytest.fixture(scope=scope, name=original.name)  # type: ignore[misc]
    def fixture(*args: Any, **kwargs: Any) -> Iterator[Any]:
        inner = function(*args, **kwargs)
        yield swapped(next(inner))
        for _ in inner:
            pass

    fixture._get_wrapped_function().__signature__ = inspect.signature(function)
    return fixture


def patch_fixture_modules() -> None:
    """Swap the suite's filesystem fixtures; its servers become the session's archive."""
    core = importlib.import_module("s3fs.tests.test_s3fs")

    def point_at(module: ModuleType, archive: EmulatedArchive) -> None:
        # the suite reads these globals at run time (clients, resets, its own S3FileSystems)
        module.port = int(archive.endpoint_url.rsplit(":", 1)[1])
        module.endpoint_uri = archive.endpoint_url + "/"

    @pytest.fixture(scope="module")
    def s3_base(emulated_archive: EmulatedArchive) -> None:
        point_at(core, emulated_archive)
        emulated_archive.reset()

    core.s3_base = s3_base
    core.s3 = wrap(core.s3, "function")

    derived = importlib.import_module("s3fs.tests.derived.s3fs_fixtures")
    fixtures = derived.S3fsFixtures

    @pytest.fixture(scope="class")
    def _s3_base(self: Any, emulated_archive: EmulatedArchive) -> None:
        point_at(derived, emulated_archive)
        emulated_archive.reset()

    fixtures._s3_base = _s3_base
    fixtures.fs = wrap(fixtures.__dict__["fs"], "class")


@pytest.fixture(scope="session", autouse=True)
def _suite_credentials() -> Iterator[None]:
    """s3fs's ``s3_base`` sets fake AWS credentials in the environment; so does this,
    for the suite's session only."""
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "foo")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "foo")
    profile = os.environ.pop("AWS_PROFILE", None)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if profile is not None:
        os.environ["AWS_PROFILE"] = profile


# -- collection -------------------------------------------------------------------------


class SuiteModule(pytest.Module):
    """One module of the fetched suite, imported as ``s3fs.tests.<name>``."""

    def _getobj(self) -> ModuleType:
        relative = self.path.relative_to(self.parent.suite).with_suffix("")  # type: ignore[attr-defined]
        return importlib.import_module("s3fs.tests." + ".".join(relative.parts))


class S3fsSuite(pytest.File):
    """``suite.toml``: collects s3fs's test modules (fetched) with the fixtures swapped."""

    suite: Path

    def collect(self) -> Iterator[pytest.Module]:
        try:
            self.suite = suite_dir(s3fs_version())
        except FetchError as error:
            raise self.CollectError(str(error)) from error
        import_suite(self.suite)
        patch_fixture_modules()
        for name in TEST_MODULES:
            yield SuiteModule.from_parent(self, path=self.suite / name, name=name)


def pytest_configure(config: pytest.Config) -> None:
    # s3fs's suite marks its one coroutine test for pytest-asyncio (not installed here)
    config.addinivalue_line("markers", "asyncio: a coroutine test (pytest-asyncio)")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == SUITE_FILE:
        return S3fsSuite.from_parent(parent, path=file_path)
    return None


def suite_name(item: pytest.Item) -> tuple[str, str]:
    """``("test_s3fs.py::test_x[param]", "test_s3fs.py::test_x")`` for a suite item."""
    module = item.getparent(SuiteModule)
    assert module is not None
    suite = item.getparent(S3fsSuite)
    assert suite is not None
    rel = module.path.relative_to(suite.suite).as_posix()
    names = [n.name for n in item.iter_parents() if isinstance(n, (pytest.Class, pytest.Item))]
    full = "::".join([rel, *reversed(names)])
    return full, full.split("[", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if item.getparent(SuiteModule) is not None]
    if not ours:
        return
    suite_file = ours[0].getparent(S3fsSuite)
    assert suite_file is not None
    sdist.mark_suite_items(
        config,
        items,
        ours,
        listed=suite_file.path,
        library="s3fs",
        name_of=suite_name,
        swapped_fixtures=SWAPPED_FIXTURES,
        swapped=target() == "archivefs",
    )
