"""``archivefs serve``: the emulated archive as a server that every CLI command can use.

It runs :class:`archivefs.testing.EmulatedArchive` (moto's S3 server with
archive behaviour) on 127.0.0.1 until interrupted, and prints the endpoint and
the environment to export in another shell: dummy credentials, the endpoint,
and the restore time scale that matches the emulated restore delay, so the
poller checks on the emulator's clock instead of AWS's hours.
"""

from __future__ import annotations

import signal
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivefs.restore.schedule import restore_window

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

REFERENCE_WINDOW_S = restore_window("DEEP_ARCHIVE", "Standard").max_s
"""A restore delay of D seconds stands for Deep Archive Standard's "within 12 hours"; every
other class and tier takes its own window on the same scale (``restore_windows``)."""


def time_scale_for(delay: float) -> float:
    """The ``restore_time_scale`` under which AWS's windows match an emulated ``delay``."""
    return max(delay, 1.0) / REFERENCE_WINDOW_S


@dataclass
class Served:
    """What a running ``archivefs serve`` tells its users."""

    endpoint_url: str
    buckets: list[str]
    environment: dict[str, str]
    restore_delay: float

    def as_json(self) -> dict[str, Any]:
        return {
            "endpoint_url": self.endpoint_url,
            "buckets": self.buckets,
            "environment": self.environment,
            "restore_delay": self.restore_delay,
        }

    def text(self) -> str:
        exports = "\n".join(f"  export {k}={v}" for k, v in self.environment.items())
        first = self.buckets[0] if self.buckets else "BUCKET"
        return (
            f"archivefs serve: an emulated S3 archive at {self.endpoint_url}\n"
            f"  restores take {self.restore_delay:g} s; buckets: {', '.join(self.buckets) or '-'}"
            "\n\nIn another shell:\n"
            f"{exports}\n  archivefs ls -l s3://{first}/\n\n"
            f"(or pass --endpoint-url {self.endpoint_url} to each command). "
            "Ctrl-C stops the server; its data is gone then."
        )


def start(
    *, port: int, delay: float, buckets: list[str], seed_demo: bool
) -> tuple[EmulatedArchive, Served, tempfile.TemporaryDirectory[str]]:
    """Start the emulated archive, create ``buckets``, seed the demo dataset if asked."""
    from archivefs.testing import EmulatedArchive

    workdir = tempfile.TemporaryDirectory(prefix="archivefs-serve-")
    archive = EmulatedArchive(
        restore_delay=delay, seconds_per_day=3600.0, port=port, restore_windows=True
    ).start()
    try:
        for bucket in buckets:
            archive.create_bucket(bucket)
        names = list(buckets)
        if seed_demo:
            from archivefs.demo import BUCKET, make_dataset, seed_archive

            seed_archive(archive, Path(workdir.name), make_dataset())
            names.append(BUCKET)
    except BaseException:
        archive.stop()
        workdir.cleanup()
        raise
    environment = {
        "AWS_ENDPOINT_URL": archive.endpoint_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": archive.region,
        "ARCHIVEFS_RESTORE_TIME_SCALE": f"{time_scale_for(delay):.6g}",
    }
    return archive, Served(archive.endpoint_url, names, environment, delay), workdir


def run_until_interrupted(archive: EmulatedArchive) -> None:
    """Block until SIGINT or SIGTERM, then stop the server."""
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        stop.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        archive.stop()
