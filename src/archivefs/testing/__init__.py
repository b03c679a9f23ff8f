"""An emulated S3 archive for tests: moto's S3 server, in-process, with archive behaviour.

:class:`EmulatedArchive` runs moto's server on 127.0.0.1 (an ephemeral port)
behind a small shim that gives restores a wall-clock delay, answers duplicate
restores with ``RestoreAlreadyInProgress``, expires restored copies, reports
``RestoreStatus`` in listings and emulates Intelligent-Tiering archive tiers;
:class:`FaultInjector` throttles, fails or drops requests on demand and
:class:`RequestLog` counts every request and body byte at the server side. ``latency=`` delays
every request at the server, and :class:`RemoteArchive` runs the archive in
its own process (for benchmarks: a server that does not share the client's GIL).
:class:`EmulatedAzureArchive` does the same for Azure Blob Archive (Azurite
behind a thin proxy); :class:`EmulatedGcsArchive` runs gcp-storage-emulator for Google Cloud
Storage, counted; :class:`EmulatedOracleArchive` is for Oracle Cloud Archive Storage (a small
fake of the OCI Object Storage endpoints ocifs uses); :class:`LocalRGW` runs a real Ceph RGW
(an S3 server without archive behaviour: GLACIER reads at once, no restores).
Pytest fixtures: ``archivefs.testing.pytest_plugin``. See ``docs/testing.md``.
"""

from __future__ import annotations

from archivefs.testing._azure import AzureRequestLog, EmulatedAzureArchive
from archivefs.testing._counters import OPS, RequestLog, RequestRecord
from archivefs.testing._faults import FaultInjector
from archivefs.testing._gcs import EmulatedGcsArchive, GcsRequestLog
from archivefs.testing._oracle import EmulatedOracleArchive, OracleRequestLog
from archivefs.testing._remote import RemoteArchive, RemoteRequestLog
from archivefs.testing._rgw import LocalRGW, RGWRequestLog
from archivefs.testing._server import EmulatedArchive

__all__ = [
    "OPS",
    "AzureRequestLog",
    "EmulatedArchive",
    "EmulatedAzureArchive",
    "EmulatedGcsArchive",
    "EmulatedOracleArchive",
    "FaultInjector",
    "GcsRequestLog",
    "LocalRGW",
    "OracleRequestLog",
    "RGWRequestLog",
    "RemoteArchive",
    "RemoteRequestLog",
    "RequestLog",
    "RequestRecord",
]
