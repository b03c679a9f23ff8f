"""Store adapters: the only layer that talks to storage services.

One module per provider (``s3.py``, ``azure.py``, ``gcs.py``, ``oracle.py``);
:func:`make_store` picks the adapter for the fsspec filesystem being wrapped, so
``filesystem.py`` and the restore engine never name a provider.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError, InvalidOptionsError
from archivefs.providers import S3, ProviderSpec, provider_for_protocol
from archivefs.stores.base import Listing, RestoreOutcome, split_path
from archivefs.stores.s3 import S3Store

if TYPE_CHECKING:
    from archivefs.model import StorageClass
    from archivefs.stores.base import ColdStore


def provider_of(fs: Any) -> ProviderSpec:
    """The provider behind an fsspec filesystem (by its protocol; anything unknown is S3-like)."""
    # e.g. a wrapper or test double over an S3-compatible store, as before
    return provider_speaking(fs) or S3


def provider_speaking(fs: Any) -> ProviderSpec | None:
    """The provider whose fsspec protocol ``fs`` speaks (``None``: local, memory, others)."""
    protocols = getattr(fs, "protocol", "s3")
    for protocol in (protocols,) if isinstance(protocols, str) else tuple(protocols):
        try:
            return provider_for_protocol(protocol)
        except ArchiveError:
            continue
    return None


def listed_key(fs: Any, path: str) -> str:
    """A listed or given path of ``fs`` as the catalog records keys: no protocol, and on
    Oracle no ``@namespace`` (ocifs lists ``bucket@namespace/key``). The one place a
    listing's names become keys."""
    key = str(fs._strip_protocol(path)).rstrip("/")
    spec = provider_speaking(fs)
    if spec is not None and spec.name == "oracle":
        from archivefs.stores.oracle import bucket_key

        key = bucket_key(key)
    return key


def forget_listings(fs: Any, path: str) -> None:
    """Drop what ``fs``'s listing cache (fsspec's dircache) holds at, below or above
    ``path``, in any spelling of its keys (ocifs's ``bucket@namespace``): the next
    ``find``/``ls``/``info`` there asks the store. fsspec hands out one cached instance
    per set of options, so another writer's changes are never seen through its cache."""
    fs.invalidate_cache(path)
    cache = getattr(fs, "dircache", None)
    if not cache:
        return
    wanted = listed_key(fs, path)
    for key in list(cache):
        known = listed_key(fs, str(key))
        if known == wanted or known.startswith(f"{wanted}/") or wanted.startswith(f"{known}/"):
            cache.pop(key, None)


def user_metadata(fs: Any, path: str) -> dict[str, str]:
    """The user metadata an upload recorded on ``path`` (S3 ``Metadata``, Azure and GCS
    metadata, Oracle ``opc-meta-*``), by its names as uploaded."""
    spec = provider_speaking(fs)
    if spec is not None and spec.name == "oracle":
        from archivefs.stores.oracle import user_metadata as oracle_metadata

        return oracle_metadata(fs, path)
    return {str(k): str(v) for k, v in (fs.metadata(path) or {}).items()}


def before_connect(protocol: str, options: dict[str, Any]) -> None:
    """What a provider's client library needs settled before it is imported and given
    ``options`` (GCS: no gRPC bucket probe against endpoints that are not Google's)."""
    try:
        provider = provider_for_protocol(protocol)
    except ArchiveError:
        return
    if provider.name == "gcs":
        from archivefs.stores.gcs import before_connect as gcs_before_connect

        gcs_before_connect(options)


def make_store(
    provider: ProviderSpec,
    fs: Any,
    *,
    restore_status_in_listings: bool | None = None,
    **options: Any,
) -> ColdStore:
    """The store adapter of ``provider`` over ``fs`` (adapters are imported on demand).

    ``options`` are the user's ``store_options``; one the adapter does not take is
    refused by name, never dropped (a misspelt ``rehydrate="copy"`` would otherwise
    rehydrate in place and pay an early-deletion fee). ``restore_status_in_listings``
    only means something to S3's listings.
    """
    adapter = _adapter(provider)
    if adapter is S3Store:
        options["restore_status_in_listings"] = restore_status_in_listings
    accepted = sorted(
        name
        for name, parameter in inspect.signature(adapter).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "restore_status_in_listings"
    )
    unknown = sorted(set(options) - set(accepted) - {"restore_status_in_listings"})
    if unknown:
        raise InvalidOptionsError(
            f"store_options {', '.join(map(repr, unknown))} "
            f"{'is not an option' if len(unknown) == 1 else 'are not options'} of the "
            f"{provider.name} adapter.",
            path="store_options",
            fix=f"use {', '.join(accepted)} (see docs/providers.md)."
            if accepted
            else f"pass no store_options: the {provider.name} adapter takes none.",
        )
    store: ColdStore = adapter(fs, **options)
    return store


def remove_object(fs: Any, path: str) -> None:
    """Delete one object with the library's one-object call (S3: one DeleteObject), or its
    ``rm`` where it has none (ocifs has no ``rm_file``)."""
    try:
        fs.rm_file(path)
    except NotImplementedError:
        fs.rm(path)


def upload_in_class(
    fs: Any, local: str, path: str, klass: StorageClass, metadata: dict[str, str]
) -> None:
    """Upload the local file ``local`` to ``path`` straight into ``klass`` (blocking), with
    the store's own call for it; a filesystem of no provider (a local directory) gets a
    plain copy."""
    if type(fs).__name__ == "S3FileSystem":
        fs.put_file(local, path, StorageClass=klass.value, Metadata=metadata)
    elif klass.provider == "gcs" and hasattr(fs, "_location"):
        from archivefs.stores.gcs import upload_in_class as upload_gcs

        upload_gcs(fs, local, path, klass.value, metadata)
    elif klass.provider == "azure" and hasattr(fs, "service_client"):
        from archivefs.stores.azure import upload_at_tier

        upload_at_tier(fs, local, path, klass.value, metadata)
    elif klass.provider == "oracle" and hasattr(fs, "oci_client"):
        from archivefs.stores.oracle import upload_in_tier

        upload_in_tier(fs, local, path, klass.value, metadata)
    else:
        fs.makedirs(fs._parent(path), exist_ok=True)
        fs.put_file(local, path)
    fs.invalidate_cache()  # SDK calls bypass the library's listing cache (ocifs: bucket@ns keys)


def _adapter(provider: ProviderSpec) -> type[Any]:
    if provider.name == "azure":
        from archivefs.stores.azure import AzureStore

        return AzureStore
    if provider.name == "gcs":
        from archivefs.stores.gcs import GcsStore

        return GcsStore
    if provider.name == "oracle":
        from archivefs.stores.oracle import OracleStore

        return OracleStore
    if provider.name != "s3":
        raise ArchiveError(
            f"archivefs describes {provider.name} but has no store adapter for it yet.",
            fix="see docs/providers.md for the providers archivefs can restore from.",
        )
    return S3Store


__all__ = [
    "Listing",
    "RestoreOutcome",
    "S3Store",
    "forget_listings",
    "listed_key",
    "make_store",
    "provider_of",
    "provider_speaking",
    "remove_object",
    "split_path",
    "upload_in_class",
    "user_metadata",
]
