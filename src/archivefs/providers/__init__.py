"""Provider descriptions: storage classes, restore options, rules and windows, per provider.

Look a provider up by name (``"s3"``, ``"azure"``) or by fsspec protocol
(``"s3"``, ``"az"``). The order of :data:`PROVIDERS` is part of the catalog
format (classes are stored as indexes): only ever append.
"""

from __future__ import annotations

from archivefs.errors import ArchiveError
from archivefs.providers.azure import AZURE, check_rehydrate
from archivefs.providers.base import (
    Access,
    ClassSpec,
    CommandLineOptions,
    ProviderSpec,
    RestoreCheck,
    Window,
)
from archivefs.providers.gcs import GCS
from archivefs.providers.oracle import ORACLE, check_restore_objects
from archivefs.providers.s3 import S3, check_restore_object

PROVIDERS: dict[str, ProviderSpec] = {p.name: p for p in (S3, AZURE, GCS, ORACLE)}
SECRET_OPTIONS: frozenset[str] = frozenset().union(*(p.secret_options for p in PROVIDERS.values()))
"""Every provider's secret option names: options of any store (a hot store's too) are
scrubbed with all of them, so a credential is withheld whichever library it is for."""
CREDENTIAL_MODES: dict[str, frozenset[str]] = {
    name: frozenset().union(*(p.credential_modes.get(name, ()) for p in PROVIDERS.values()))
    for name in sorted({n for p in PROVIDERS.values() for n in p.credential_modes})
}
"""Values of a secret option that name a way to find credentials (they travel)."""
SECRET_HEADERS: frozenset[str] = frozenset().union(*(p.secret_headers for p in PROVIDERS.values()))
SDK_LOGGERS: tuple[str, ...] = tuple(n for p in PROVIDERS.values() for n in p.sdk_loggers)
RESTORE_CHECKS: dict[str, RestoreCheck] = {
    "s3": check_restore_object,
    "azure": check_rehydrate,
    "oracle": check_restore_objects,
}
"""Each provider's pre-send rules for its restore verb (a provider without one, GCS, has
nothing to restore)."""


def provider_named(name: str) -> ProviderSpec:
    """The provider called ``name``; a clear error for an unknown one."""
    try:
        return PROVIDERS[name.lower()]
    except KeyError:
        raise ArchiveError(
            f"unknown provider {name!r}.",
            fix=f"use one of: {', '.join(PROVIDERS)}.",
        ) from None


def provider_for_protocol(protocol: str) -> ProviderSpec:
    """The provider behind an fsspec protocol (``"s3"`` -> S3, ``"az"`` -> Azure)."""
    for spec in PROVIDERS.values():
        if protocol in spec.protocols:
            return spec
    raise ArchiveError(
        f"archivefs has no provider for the {protocol!r} protocol.",
        fix="use target_protocol='s3', 'az', 'gs' or 'oci' (see docs/providers.md for what "
        "is supported).",
    )


def url_protocol(url: str) -> str:
    """The store protocol ``url`` names: its last chained URL's scheme
    (``archivefs::az://c/p`` -> ``az``); ``s3`` when it names none, or only archivefs's own."""
    last = url.rsplit("::", 1)[-1]
    protocol = last.split("://", 1)[0] if "://" in last else "s3"
    return "s3" if protocol in ("archive", "archivefs") else protocol


def provider_for_url(url: str) -> ProviderSpec:
    """The provider whose store ``url`` names (``az://c/p`` -> Azure, ``bucket/key`` -> S3);
    a clear error for a scheme no provider has."""
    return provider_for_protocol(url_protocol(url))


__all__ = [
    "AZURE",
    "CREDENTIAL_MODES",
    "GCS",
    "ORACLE",
    "PROVIDERS",
    "RESTORE_CHECKS",
    "S3",
    "SDK_LOGGERS",
    "SECRET_HEADERS",
    "SECRET_OPTIONS",
    "Access",
    "ClassSpec",
    "CommandLineOptions",
    "ProviderSpec",
    "RestoreCheck",
    "Window",
    "provider_for_protocol",
    "provider_for_url",
    "provider_named",
    "url_protocol",
]
