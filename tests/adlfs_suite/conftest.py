"""adlfs's own test suite, run with every filesystem it builds swapped to ArchiveFileSystem.

archivefs promises to behave as the filesystem it wraps on objects that need no
restore. This conftest holds it to adlfs's own tests, as ``tests/s3fs_suite`` does to
s3fs's: the ``adlfs/tests`` directory of the adlfs sdist matching the installed adlfs
(fetched once with pip into the user cache, never copied into the repository),
collected from ``suite.toml`` in this directory, run against an Azurite of its own
started as the project starts it (``archivefs.testing.EmulatedAzureArchive``) instead
of adlfs's Docker container on the fixed port 10000.

- Every ``AzureBlobFileSystem(**options)`` a test builds gives it
  ``ArchiveFileSystem(target_protocol="abfs", target_options=options)``: the suite's
  modules see :class:`Swapped` under adlfs's class name (its class attributes and
  static methods are adlfs's own).
- adlfs's ``assert_blob_equals`` (its entries compared whole) compares adlfs's keys:
  archivefs's own keys (``storage_class``, ``restore``, ...) must be in every file's
  entry, and are set aside first (an entry is adlfs's plus archivefs's keys).
- adlfs's ``storage`` fixture (its conftest, imported without its Docker set-up) seeds
  the container ``data`` as in adlfs's CI; the suite's constants (``HOST``, ``URL``,
  ``CONN_STR``) are pointed at this session's Azurite.
- Tests that never request ``storage`` test adlfs alone (its module, its URL parsing);
  they are deselected.
- ``suite.toml`` lists the tests too heavy for the project's machines (skipped for
  both targets), the tests that reach into adlfs internals (skipped), the tests
  adlfs itself fails here (expected to fail), and the real differences not yet closed
  (expected to fail, strictly: one that starts passing must leave the list).
- ``ARCHIVEFS_ADLFS_SUITE_TARGET=adlfs`` runs the same selection unswapped: adlfs's own
  result, the baseline archivefs is measured against.

If the sdist cannot be fetched (offline), collection fails with the pip command and
what to do; the suite never skips silently.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from archivefs.entries import ARCHIVE_KEYS
from archivefs.filesystem import ArchiveFileSystem
from archivefs.testing import EmulatedAzureArchive
from tests.support.sdist import FetchError, import_suite, mark_suite_items, suite_dir

SUITE_FILE = "suite.toml"
TARGET_ENV = "ARCHIVEFS_ADLFS_SUITE_TARGET"
GROUP = pytest.mark.xdist_group("adlfs-suite")  # one worker, one Azurite
# a test that requests none of these builds no filesystem on the emulator: adlfs alone
SWAPPED_FIXTURES = frozenset({"storage"})
TEST_MODULES = (
    "test_spec.py",
    "test_pickling.py",
    "test_fetch_range.py",
    "test_loop.py",
    "test_connect_client.py",
    "test_uri_format.py",
    "test_init.py",
)


def target() -> str:
    """``archivefs`` (the swapped class, the default) or ``adlfs`` (the baseline)."""
    value = os.environ.get(TARGET_ENV, "archivefs")
    if value not in ("archivefs", "adlfs"):
        raise pytest.UsageError(f"{TARGET_ENV}={value!r}: use 'archivefs' or 'adlfs'")
    return value


def adlfs_version() -> str:
    return importlib.metadata.version("adlfs")


def adlfs_tests() -> Path:
    """``adlfs/tests`` of the installed adlfs's sdist (fetched into the user cache)."""
    return suite_dir("adlfs", adlfs_version(), "test_spec.py")


# -- the swap ---------------------------------------------------------------------------


class Swapped:
    """What the suite's modules call ``AzureBlobFileSystem``: calling it builds an
    ``ArchiveFileSystem`` over ``abfs`` with the same options; its attributes are adlfs's
    class's (``_get_kwargs_from_urls``, ``cachable``, ...)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from adlfs import AzureBlobFileSystem

        if target() == "adlfs":
            return AzureBlobFileSystem(*args, **kwargs)
        if args:  # adlfs's one positional parameter
            kwargs = {"account_name": args[0], **kwargs}
        return ArchiveFileSystem(target_protocol="abfs", target_options=kwargs)

    def __getattr__(self, name: str) -> Any:
        from adlfs import AzureBlobFileSystem

        return getattr(AzureBlobFileSystem, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # test_anon_env turns instance caching off and on again: for both classes
        from adlfs import AzureBlobFileSystem

        setattr(AzureBlobFileSystem, name, value)
        setattr(ArchiveFileSystem, name, value)


def suite_modules() -> list[types.ModuleType]:
    return [m for n, m in sys.modules.items() if n.startswith("adlfs.tests.") and m is not None]


def point_at(archive: EmulatedAzureArchive) -> None:
    """The suite's constants (read by its tests and fixtures at run time) name ``archive``."""
    url = archive.blob_endpoint.rsplit("/", 1)[0]
    constants = importlib.import_module("adlfs.tests.constants")
    values = {
        "HOST": url.removeprefix("http://"),
        "URL": url,
        "CONN_STR": archive.connection_string,
        "ACCOUNT_NAME": constants.ACCOUNT_NAME,
    }
    for module in suite_modules():
        for name, value in values.items():
            if hasattr(module, name):
                setattr(module, name, value)


def adlfs_conftest() -> types.ModuleType:
    """adlfs's conftest, for its ``storage`` fixture: imported with a placeholder for the
    ``docker`` module its Azurite container needs (this suite starts Azurite itself)."""
    placeholder = "docker" not in sys.modules and importlib.util.find_spec("docker") is None
    if placeholder:
        sys.modules["docker"] = types.ModuleType("docker")
    try:
        return importlib.import_module("adlfs.tests.conftest")
    finally:
        if placeholder:
            del sys.modules["docker"]


@pytest.fixture(scope="session")
def adlfs_azurite() -> Iterator[EmulatedAzureArchive]:
    """An Azurite of the suite's own (its account holds only adlfs's container ``data``,
    which adlfs's listings of the account assert)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the emulated Azure archive needs Node.js and npm (for Azurite) on PATH")
    with EmulatedAzureArchive() as archive:
        yield archive


@pytest.fixture(scope="session")
def host(adlfs_azurite: EmulatedAzureArchive) -> str:
    """adlfs's ``host`` fixture (its ``--host`` option): this session's Azurite."""
    point_at(adlfs_azurite)
    return str(importlib.import_module("adlfs.tests.constants").HOST)


@pytest.fixture
def storage(host: str) -> Iterator[Any]:
    """adlfs's own ``storage`` fixture: the container ``data`` seeded as in adlfs's CI."""
    ArchiveFileSystem.clear_instance_cache()
    seeded = adlfs_conftest().storage._get_wrapped_function()(host)
    yield next(seeded)
    for _ in seeded:
        pass


def adlfs_keys_only(compare: Callable[[dict[str, Any], dict[str, Any]], None]) -> Any:
    """adlfs's ``assert_blob_equals(entry, expected)`` on adlfs's keys: an archivefs entry
    is adlfs's plus archivefs's keys (docs/api.md), which must be there (every file's) and
    are dropped before adlfs's own comparison."""

    def on_adlfs_keys(blob: dict[str, Any], expected_blob: dict[str, Any]) -> None:
        if target() == "archivefs" and blob.get("type") == "file":
            missing = [k for k in ARCHIVE_KEYS if k not in blob]
            assert not missing, f"{blob['name']}: archivefs's keys {missing} are missing"
            blob = {k: v for k, v in blob.items() if k not in ARCHIVE_KEYS}
        compare(blob, expected_blob)

    return on_adlfs_keys


def swap_classes() -> None:
    """Every suite module that names adlfs's class gets :class:`Swapped` under its name;
    its entry comparison compares adlfs's keys (:func:`adlfs_keys_only`)."""
    swapped = Swapped()
    for module in suite_modules():
        if "AzureBlobFileSystem" in vars(module) and module.__name__ != "adlfs.tests.conftest":
            module.AzureBlobFileSystem = swapped  # type: ignore[attr-defined]
        compare = vars(module).get("assert_blob_equals")
        if compare is not None and not getattr(compare, "adlfs_keys_only", False):
            wrapped = adlfs_keys_only(compare)
            wrapped.adlfs_keys_only = True
            module.assert_blob_equals = wrapped  # type: ignore[attr-defined]


# -- collection -------------------------------------------------------------------------


class SuiteModule(pytest.Module):
    """One module of the fetched suite, imported as ``adlfs.tests.<name>``."""

    def _getobj(self) -> types.ModuleType:
        module = importlib.import_module("adlfs.tests." + self.path.stem)
        swap_classes()
        return module


class AdlfsSuite(pytest.File):
    """``suite.toml``: collects adlfs's test modules (fetched) with the class swapped."""

    suite: Path

    def collect(self) -> Iterator[pytest.Module]:
        try:
            self.suite = adlfs_tests()
        except FetchError as error:
            raise self.CollectError(str(error)) from error
        import_suite("adlfs", self.suite)
        for name in TEST_MODULES:
            yield SuiteModule.from_parent(self, path=self.suite / name, name=name)


def pytest_configure(config: pytest.Config) -> None:
    # adlfs's suite marks its coroutine tests for pytest-asyncio (not installed here)
    config.addinivalue_line("markers", "asyncio: a coroutine test (pytest-asyncio)")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == SUITE_FILE:
        return AdlfsSuite.from_parent(parent, path=file_path)
    return None


def suite_name(item: pytest.Item) -> tuple[str, str]:
    """``("test_spec.py::test_x[param]", "test_spec.py::test_x")`` for a suite item."""
    module = item.getparent(SuiteModule)
    assert module is not None
    names = [n.name for n in item.iter_parents() if isinstance(n, (pytest.Class, pytest.Item))]
    full = "::".join([module.path.name, *reversed(names)])
    return full, full.split("[", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if item.getparent(SuiteModule) is not None]
    if not ours:
        return
    suite_file = ours[0].getparent(AdlfsSuite)
    assert suite_file is not None
    for item in ours:
        item.add_marker(GROUP)
    mark_suite_items(
        config,
        items,
        ours,
        listed=suite_file.path,
        library="adlfs",
        name_of=suite_name,
        swapped_fixtures=SWAPPED_FIXTURES,
        swapped=target() == "archivefs",
    )
