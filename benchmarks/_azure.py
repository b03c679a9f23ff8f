"""The emulated Azure archive for the Azure benchmarks: start, seed, filesystem.

Azurite (in its own Node process) behind the archive proxy (threads of the
benchmark's own process); the proxy injects no latency, unlike the S3
emulator, so Azure timings are local round trips on a shared machine: the
counts (Set Blob Tier, Blob Batch, List Blobs, Get Blob Properties) are what
these benchmarks compare.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivefs.testing import EmulatedAzureArchive

SERVER = {"process": "Azurite (own process) + archive proxy (threads)", "latency_s": 0.0}
TIME_SCALE = 1 / 3600  # Standard's 15 h window -> 15 s: the poll schedule fits seconds


def seed(archive: EmulatedAzureArchive, n: int, payload: int) -> tuple[str, list[str]]:
    """A new container with ``n`` blobs of ``payload`` bytes in Archive; their paths."""
    container = archive.create_container()
    blobs = {f"o/{i:06d}": bytes([i % 251]) * payload for i in range(n)}
    archive.put_blobs(container, blobs, tier="Archive")
    return container, [f"{container}/{name}" for name in sorted(blobs)]


def archive_fs(archive: EmulatedAzureArchive, **kwargs: Any) -> Any:
    """An ArchiveFileSystem on the emulated Azure archive (no journal unless given)."""
    from archivefs.filesystem import ArchiveFileSystem

    kwargs.setdefault("journal", False)
    kwargs.setdefault("restore_time_scale", TIME_SCALE)
    return ArchiveFileSystem(
        target_protocol="az",
        target_options=archive.storage_options(),
        price_sheet="azure-eastus",
        skip_instance_cache=True,
        **kwargs,
    )


def service(archive: EmulatedAzureArchive) -> Any:
    """azure-storage-blob's (sync) client on the proxy, as a user's script makes it."""
    from azure.storage.blob import BlobServiceClient

    return BlobServiceClient.from_connection_string(archive.connection_string)


def set_tiers(archive: EmulatedAzureArchive) -> int:
    """Set Blob Tier sent, alone or inside Blob Batches."""
    return archive.requests.count("SetBlobTier", batched=None)


def versions() -> dict[str, str]:
    """The Azure side's versions, recorded with the parameters."""
    from importlib.metadata import version

    from archivefs.testing._azure import AZURITE_VERSION

    return {
        "adlfs": version("adlfs"),
        "azure-storage-blob": version("azure-storage-blob"),
        "azurite": AZURITE_VERSION,
    }
