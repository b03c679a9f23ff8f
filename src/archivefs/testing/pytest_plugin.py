"""Pytest fixtures for the emulated archive.

Enable with ``pytest_plugins = ["archivefs.testing.pytest_plugin"]`` in your
top-level ``conftest.py``.

* ``emulated_archive`` (session): one started :class:`EmulatedArchive`.
* ``archive`` (function): the same archive after ``reset()``, with s3fs's
  instance cache cleared (so no filesystem talks to a previous test's state).
* ``bucket`` (function): a new bucket with a unique name on ``archive``.
* ``s3_storage_options`` (function): ``archive.storage_options()``.
* ``emulated_azure_archive`` (session), ``azure_archive`` (function, reset) and
  ``azure_container`` (function): the same for Azure (Azurite, installed with npm
  on first use; skipped when Node/npm are absent).
* ``emulated_gcs_archive`` (session), ``gcs_archive`` (function, reset) and
  ``gcs_bucket`` (function): the same for Google Cloud Storage
  (gcp-storage-emulator; skipped when it or gcsfs is not installed).
* ``emulated_oracle_archive`` (session), ``oracle_archive`` (function, reset) and
  ``oracle_bucket`` (function): the same for Oracle Cloud Object Storage (the fake
  in ``archivefs.testing._oracle``; skipped without ``archivefs[oracle]``).
* ``local_rgw`` (session) and ``rgw_bucket`` (function): a real Ceph RGW on
  127.0.0.1 and a new bucket on it (skipped when the Ceph packages are absent).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from archivefs.testing._azure import EmulatedAzureArchive
from archivefs.testing._gcs import EmulatedGcsArchive
from archivefs.testing._oracle import EmulatedOracleArchive, circuit_breaker_off
from archivefs.testing._rgw import PACKAGES, LocalRGW, missing_binaries
from archivefs.testing._server import EmulatedArchive


@pytest.fixture(scope="session")
def emulated_archive() -> Iterator[EmulatedArchive]:
    """A started emulated archive shared by the whole session."""
    with EmulatedArchive() as archive:
        yield archive


@pytest.fixture
def archive(emulated_archive: EmulatedArchive) -> EmulatedArchive:
    """The session's emulated archive, reset: empty, no faults, zero counters, default timing."""
    import s3fs

    emulated_archive.reset()
    s3fs.S3FileSystem.clear_instance_cache()
    return emulated_archive


@pytest.fixture
def bucket(archive: EmulatedArchive) -> str:
    """The name of a new, empty bucket on ``archive``."""
    name = f"test-{uuid.uuid4().hex[:16]}"
    archive.create_bucket(name)
    return name


@pytest.fixture
def s3_storage_options(archive: EmulatedArchive) -> dict[str, Any]:
    """``storage_options`` for s3fs/fsspec pointing at ``archive``."""
    return archive.storage_options()


# -- the emulated Azure archive (Azurite + archivefs.testing._azure) ----------------------


@pytest.fixture(scope="session")
def emulated_azure_archive() -> Iterator[EmulatedAzureArchive]:
    """Azurite behind the archive proxy, shared by the session; skipped without Node/npm."""
    import shutil

    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the emulated Azure archive needs Node.js and npm (for Azurite) on PATH")
    pytest.importorskip("adlfs", reason="install archivefs[azure] for the Azure tests")
    with EmulatedAzureArchive() as archive:
        yield archive


@pytest.fixture
def azure_archive(emulated_azure_archive: EmulatedAzureArchive) -> EmulatedAzureArchive:
    """The session's emulated Azure archive: no pending rehydrations, faults or counts."""
    emulated_azure_archive.reset()
    return emulated_azure_archive


@pytest.fixture
def azure_container(azure_archive: EmulatedAzureArchive) -> str:
    """The name of a new, empty container on ``azure_archive``."""
    return azure_archive.create_container()


# -- the emulated GCS archive (gcp-storage-emulator + archivefs.testing._gcs) ---------------


@pytest.fixture(scope="session")
def emulated_gcs_archive() -> Iterator[EmulatedGcsArchive]:
    """gcp-storage-emulator with request counters, shared by the session."""
    pytest.importorskip("gcsfs", reason="install archivefs[gcs] for the GCS tests")
    pytest.importorskip("gcp_storage_emulator", reason="install archivefs[test] for the GCS tests")
    with EmulatedGcsArchive() as archive:
        yield archive


@pytest.fixture
def gcs_archive(emulated_gcs_archive: EmulatedGcsArchive) -> EmulatedGcsArchive:
    """The session's emulated GCS archive: empty, no faults, zero counters."""
    emulated_gcs_archive.reset()
    return emulated_gcs_archive


@pytest.fixture
def gcs_bucket(gcs_archive: EmulatedGcsArchive) -> str:
    """The name of a new, empty bucket on ``gcs_archive``."""
    return gcs_archive.create_bucket()


# -- the emulated Oracle archive (archivefs.testing._oracle) ---------------------------------


@pytest.fixture(scope="session")
def emulated_oracle_archive() -> Iterator[EmulatedOracleArchive]:
    """The fake OCI Object Storage endpoint, shared by the session (a throwaway key).

    The OCI SDK's circuit breaker is off meanwhile: the fake throttles on purpose.
    """
    pytest.importorskip("ocifs", reason="install archivefs[oracle] for the Oracle tests")
    with circuit_breaker_off(), EmulatedOracleArchive() as archive:
        yield archive


@pytest.fixture
def oracle_archive(emulated_oracle_archive: EmulatedOracleArchive) -> EmulatedOracleArchive:
    """The session's emulated Oracle archive: no buckets, faults or counts, default timing."""
    emulated_oracle_archive.reset()
    return emulated_oracle_archive


@pytest.fixture
def oracle_bucket(oracle_archive: EmulatedOracleArchive) -> str:
    """The name of a new, empty bucket on ``oracle_archive``."""
    return oracle_archive.create_bucket()


# -- a real Ceph RGW (archivefs.testing._rgw) ----------------------------------------------


@pytest.fixture(scope="session")
def local_rgw() -> Iterator[LocalRGW]:
    """A one-node Ceph cluster with radosgw, shared by the session; skipped without Ceph."""
    missing = missing_binaries()
    if missing:
        pytest.skip(
            f"the Ceph RGW tests need {', '.join(missing)} on PATH "
            f"(Debian/Ubuntu: apt-get install -y {PACKAGES})"
        )
    with LocalRGW() as rgw:
        yield rgw


@pytest.fixture
def rgw_bucket(local_rgw: LocalRGW) -> str:
    """The name of a new, empty bucket on ``local_rgw`` (s3fs's instance cache cleared)."""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    return local_rgw.create_bucket()
