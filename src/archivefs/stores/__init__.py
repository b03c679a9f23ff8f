"""Store adapters: the only layer that talks to storage services.

One module per provider (``s3.py``, ``azure.py``, ``gcs.py``, ``oracle.py``);
:func:`make_store` picks the adapter for the fsspec filesystem being wrapped, so
``filesystem.py`` and the restore engine never name a provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError
from archivefs.providers import S3, ProviderSpec, provider_for_protocol
from archivefs.stores.s3 import Listing, RestoreOutcome, S3Store, split_path

if TYPE_CHECKING:
    from archivefs.stores.base import ColdStore


def provider_of(fs: Any) -> ProviderSpec:
    """The provider behind an fsspec filesystem (by its protocol; anything unknown is S3-like)."""
    protocols = getattr(fs, "protocol", "s3")
    for protocol in (protocols,) if isinstance(protocols, str) else tuple(protocols):
        try:
            return provider_for_protocol(protocol)
        except ArchiveError:
            continue
    return S3  # e.g. a wrapper or test double over an S3-compatible store, as before


def make_store(provider: ProviderSpec, fs: Any, **options: Any) -> ColdStore:
    """The store adapter of ``provider`` over ``fs`` (adapters are imported on demand)."""
    if provider.name == "azure":
        from archivefs.stores.azure import AzureStore

        return AzureStore(fs, **options)
    if provider.name == "gcs":
        from archivefs.stores.gcs import GcsStore

        return GcsStore(fs, **options)
    if provider.name == "oracle":
        from archivefs.stores.oracle import OracleStore

        return OracleStore(fs, **options)
    if provider.name != "s3":
        raise ArchiveError(
            f"archivefs describes {provider.name} but has no store adapter for it yet.",
            fix="see docs/providers.md for the providers archivefs can restore from.",
        )
    return S3Store(fs, **options)


__all__ = ["Listing", "RestoreOutcome", "S3Store", "make_store", "provider_of", "split_path"]
