"""Shared test configuration: the emulated archive fixtures, and an archive filesystem factory."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

import fsspec
import pytest

from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
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
        # counts must not depend on how long a test runs (test_catalog_freshness: the ttl)
        kwargs.setdefault("catalog_ttl", math.inf)
        return ArchiveFileSystem(
            target_protocol="s3",
            target_options=archive.storage_options(),
            skip_instance_cache=True,
            **kwargs,
        )

    return make


class Idles(Protocol):
    """A server that can tell when it has answered every request it received."""

    def wait_idle(self, timeout: float = ...) -> None: ...


def kill_when(
    script: Path, config: dict[str, Any], ready: Callable[[], bool], *, server: Idles | None
) -> bool:
    """Run ``script config-json``, SIGKILL it once ``ready()`` is true, and return once the
    process is gone and ``server`` is idle: count only then.

    A count read at the kill races the requests the worker sent just before it died
    (issue #33); once the process is reaped and ``server.wait_idle()`` returned, every one
    of them has been answered and counted. ``server=None`` waits for the process only
    (for :class:`~archivefs.testing.LocalRGW`, a separate radosgw process without
    ``wait_idle``). Returns False if the worker finished before ``ready()`` (it must have
    exited 0).
    """
    with subprocess.Popen(
        [sys.executable, str(script), json.dumps(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as process:
        deadline = time.monotonic() + 600  # generous: a busy machine starts slowly
        killed = False
        while not ready():
            if process.poll() is not None:
                stderr = process.stderr.read() if process.stderr else b""
                assert process.returncode == 0, stderr.decode()
                break
            assert time.monotonic() < deadline, "the worker never reached the kill point"
            time.sleep(0.005)
        else:
            process.send_signal(signal.SIGKILL)
            killed = True
        process.wait(60)
    if server is not None:
        server.wait_idle()
    return killed


def assert_each_once(started: Mapping[str, int], paths: Iterable[str]) -> None:
    """Every path had exactly one restore started (none twice, none missed, no other)."""
    wanted = set(paths)
    twice = sorted(p for p, n in started.items() if n > 1)
    never = sorted(wanted - {p for p, n in started.items() if n > 0})
    other = sorted(set(started) - wanted)
    assert (twice, never, other) == ([], [], []), "(restored twice, never, not asked for)"


def s3_restores(archive: EmulatedArchive) -> Counter[str]:
    """``bucket/key`` -> RestoreObject requests the emulated S3 archive accepted (202)."""
    return Counter(
        f"{r.bucket}/{r.key}" for r in archive.requests.matching(op="RestoreObject", status=202)
    )


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
            "catalog_ttl": math.inf,  # counts must not depend on how long a test runs
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
            "catalog_ttl": math.inf,  # counts must not depend on how long a test runs
            **kwargs,
        }
        fs = fsspec.filesystem("archive", **options)
        assert isinstance(fs, ArchiveFileSystem)
        return fs

    return make
