"""Shared test configuration: the emulated archive fixtures, and an archive filesystem factory."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from archivefs.testing import (
        EmulatedArchive,
        EmulatedAzureArchive,
        EmulatedGcsArchive,
        EmulatedOracleArchive,
    )

pytest_plugins = ["archivefs.testing.pytest_plugin", "pytester"]


@pytest.fixture
def make_fs(archive: EmulatedArchive, tmp_path: Path) -> Callable[..., ArchiveFileSystem]:
    """ArchiveFileSystem on the emulated archive: a private journal, AWS-like listings,
    and restore times scaled so the poll schedule fits emulated delays of seconds."""

    def make(**kwargs: Any) -> ArchiveFileSystem:
        kwargs.setdefault("journal", str(tmp_path / "journal.sqlite"))
        kwargs.setdefault("restore_status_in_listings", True)
        kwargs.setdefault("restore_time_scale", 1 / 3600)
        return ArchiveFileSystem(
            target_protocol="s3",
            target_options=archive.storage_options(),
            skip_instance_cache=True,
            **kwargs,
        )

    return make


def kill_when(script: Path, config: dict[str, Any], ready: Callable[[], bool]) -> None:
    """Run ``script config-json`` in a subprocess and SIGKILL it once ``ready()`` is true."""
    with subprocess.Popen(
        [sys.executable, str(script), json.dumps(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as process:
        deadline = time.monotonic() + 60
        while not ready():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait(10)


def start_workers(script: Path, configs: list[dict[str, Any]]) -> list[subprocess.Popen[bytes]]:
    """Start ``script config-json`` once per config, all at once (see :func:`finish_workers`)."""
    return [
        subprocess.Popen(
            [sys.executable, str(script), json.dumps(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for config in configs
    ]


def finish_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    """Wait for each worker and require it to exit 0, or fail with its stderr.

    When one fails the others are killed, so no process outlives the test (and no
    Popen is left to warn, as an unraisable exception, in a later test).
    """
    try:
        for proc in procs:
            _, stderr = proc.communicate(timeout=600)
            assert proc.returncode == 0, stderr.decode()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


@pytest.fixture
def make_az(
    azure_archive: EmulatedAzureArchive, tmp_path: Path
) -> Callable[..., ArchiveFileSystem]:
    """ArchiveFileSystem on the emulated Azure archive: a private journal, Azure prices,
    and restore times scaled so the poll schedule fits emulated delays of seconds."""

    def make(**kwargs: Any) -> ArchiveFileSystem:
        options: dict[str, Any] = {
            "target_protocol": "az",
            "target_options": azure_archive.storage_options(),
            "journal": str(tmp_path / "journal.sqlite"),
            "restore_time_scale": 1 / 3600,
            "price_sheet": "azure-eastus",
            "skip_instance_cache": True,
            **kwargs,
        }
        fs = fsspec.filesystem("archive", **options)
        assert isinstance(fs, ArchiveFileSystem)
        return fs

    return make


@pytest.fixture
def make_gs(gcs_archive: EmulatedGcsArchive, tmp_path: Path) -> Callable[..., ArchiveFileSystem]:
    """ArchiveFileSystem on the emulated GCS server: a private journal and GCS prices."""

    def make(**kwargs: Any) -> ArchiveFileSystem:
        options: dict[str, Any] = {
            "target_protocol": "gs",
            "target_options": gcs_archive.storage_options(),
            "journal": str(tmp_path / "journal.sqlite"),
            "price_sheet": "gcs-us-central1",
            "skip_instance_cache": True,
            **kwargs,
        }
        fs = fsspec.filesystem("archive", **options)
        assert isinstance(fs, ArchiveFileSystem)
        return fs

    return make


@pytest.fixture
def make_oci(
    oracle_archive: EmulatedOracleArchive, tmp_path: Path
) -> Callable[..., ArchiveFileSystem]:
    """ArchiveFileSystem on the emulated Oracle archive: a private journal, OCI prices,
    and restore times scaled so the poll schedule fits emulated delays of seconds."""

    def make(**kwargs: Any) -> ArchiveFileSystem:
        options: dict[str, Any] = {
            "target_protocol": "oci",
            "target_options": oracle_archive.storage_options(),
            "journal": str(tmp_path / "journal.sqlite"),
            "restore_time_scale": 1 / 3600,
            "price_sheet": "oci-us-ashburn-1",
            "skip_instance_cache": True,
            **kwargs,
        }
        fs = fsspec.filesystem("archive", **options)
        assert isinstance(fs, ArchiveFileSystem)
        return fs

    return make
