"""Shared test configuration: the emulated archive fixtures, and an archive filesystem factory."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.filesystem import ArchiveFileSystem
from tests.support.groups import (
    DASK_WORKERS,
    HEAVY_SERVERS,
    IDLE_QUIETLY,
    name_with_group,
    usable_cores,
    workers_for_cores,
)
from tests.support.providers import Provider, fs_factory, provider_for, provider_params

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from archivefs.testing import (
        EmulatedArchive,
        EmulatedAzureArchive,
        EmulatedGcsArchive,
        EmulatedOracleArchive,
    )

pytest_plugins = ["archivefs.testing.pytest_plugin", "pytester"]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: :func:`workers_for_cores` on the cores this process may use;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` (read by xdist's own hook) still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return workers_for_cores(usable_cores())


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put each test in the xdist group of the heavy server it uses (HEAVY_SERVERS)."""
    for item in items:
        groups = {HEAVY_SERVERS[f] for f in getattr(item, "fixturenames", ()) if f in HEAVY_SERVERS}
        assert len(groups) <= 1, f"{item.nodeid} uses two heavy servers: {sorted(groups)}"
        if groups and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(groups.pop()))
        if config.getoption("loadgroup", False):  # an xdist worker of a --dist loadgroup run
            name_with_group(item)


@pytest.fixture(scope="session")
def _dask_cluster() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    import dask

    with (
        dask.config.set(IDLE_QUIETLY),
        distributed.LocalCluster(
            n_workers=DASK_WORKERS, threads_per_worker=2, processes=True, dashboard_address=":0"
        ) as cluster,
        # not the process's default: under xdist, the tests that run after a cluster test
        # in the same worker would otherwise compute on the cluster (and fail there on
        # credentials kept out of pickles, or find a client where they test that none is)
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


@pytest.fixture
def dask_client(_dask_cluster: Any) -> Iterator[Any]:
    """The client of the session's one local Dask cluster (DASK_WORKERS processes), with
    all its workers up (a test may kill one: its nanny restarts it), current (the default
    for dask and ``restore_aware``) for this test only."""
    _dask_cluster.wait_for_workers(DASK_WORKERS, timeout=300)
    with _dask_cluster.as_current():
        yield _dask_cluster


# -- ArchiveFileSystem factories: one per emulated server, all from tests/support/providers


@pytest.fixture(params=provider_params())
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Provider:
    """Each provider in turn (tests/support/providers.py): its server reset, a new bucket."""
    return provider_for(request.param, request, tmp_path)


@pytest.fixture
def make_fs(archive: EmulatedArchive, tmp_path: Path) -> Callable[..., ArchiveFileSystem]:
    """``make(**overrides)``: an ArchiveFileSystem on the emulated S3 archive."""
    return fs_factory("s3", archive, tmp_path)


@pytest.fixture
def make_az(
    azure_archive: EmulatedAzureArchive, tmp_path: Path
) -> Callable[..., ArchiveFileSystem]:
    """``make(**overrides)``: an ArchiveFileSystem on the emulated Azure archive."""
    return fs_factory("azure", azure_archive, tmp_path)


@pytest.fixture
def make_gs(gcs_archive: EmulatedGcsArchive, tmp_path: Path) -> Callable[..., ArchiveFileSystem]:
    """``make(**overrides)``: an ArchiveFileSystem on the emulated GCS server."""
    return fs_factory("gcs", gcs_archive, tmp_path)


@pytest.fixture
def make_oci(
    oracle_archive: EmulatedOracleArchive, tmp_path: Path
) -> Callable[..., ArchiveFileSystem]:
    """``make(**overrides)``: an ArchiveFileSystem on the emulated Oracle archive."""
    return fs_factory("oracle", oracle_archive, tmp_path)
