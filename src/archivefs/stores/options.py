"""Storage options from users (``--storage-options``): checked once, before any filesystem is made.

They are s3fs options (adlfs options for ``az://`` URLs, gcsfs options for
``gs://``, ocifs options for ``oci://``). Anything else is refused with one line:
a key the library does not take (``fo``, ``templates``, ``target_protocol``... —
what a ``reference://`` filesystem would use to render jinja2 templates), and any
string that looks like a template (``{{ }}``, ``{% %}``), wherever it is nested.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from archivefs.errors import ArchiveError, InvalidOptionsError
from archivefs.providers import provider_for_protocol

# fsspec's own instance options, accepted by every filesystem
_FSSPEC_OPTIONS = frozenset(
    {"skip_instance_cache", "use_listings_cache", "listings_expiry_time", "max_paths", "loop"}
)
_TEMPLATE = re.compile(r"\{\{|\{%|%\}|\}\}")


def s3_option_names() -> frozenset[str]:
    """The keyword arguments ``s3fs.S3FileSystem`` takes."""
    import s3fs

    names = set(inspect.signature(s3fs.S3FileSystem.__init__).parameters)
    names.discard("self")
    names.discard("kwargs")
    return frozenset(names) | _FSSPEC_OPTIONS


def azure_option_names() -> frozenset[str]:
    """The keyword arguments ``adlfs.AzureBlobFileSystem`` takes."""
    import adlfs  # type: ignore[import-untyped]

    names = set(inspect.signature(adlfs.AzureBlobFileSystem.__init__).parameters)
    names.discard("self")
    names.discard("kwargs")
    return frozenset(names) | _FSSPEC_OPTIONS


def gcs_option_names() -> frozenset[str]:
    """The keyword arguments ``gcsfs.GCSFileSystem`` takes."""
    from gcsfs.core import GCSFileSystem

    names = set(inspect.signature(GCSFileSystem.__init__).parameters)
    names.discard("self")
    names.discard("kwargs")
    return frozenset(names) | _FSSPEC_OPTIONS


def oracle_option_names() -> frozenset[str]:
    """The keyword arguments ``ocifs.OCIFileSystem`` takes (``namespace``/``tenancy``: its
    documented extra defaults)."""
    import ocifs

    names = set(inspect.signature(ocifs.OCIFileSystem.__init__).parameters)
    names.discard("self")
    names.discard("kwargs")
    return frozenset(names) | {"namespace", "tenancy"} | _FSSPEC_OPTIONS


_LIBRARIES: dict[str, tuple[Callable[[], frozenset[str]], str, str]] = {
    "s3": (s3_option_names, "s3fs", '\'{"anon": false, "requester_pays": true}\''),
    "azure": (azure_option_names, "adlfs", '\'{"account_name": "myaccount"}\''),
    "gcs": (gcs_option_names, "gcsfs", '\'{"project": "my-project", "token": "anon"}\''),
    "oracle": (
        oracle_option_names,
        "ocifs",
        '\'{"config": "~/.oci/config", "namespace": "myns"}\'',
    ),
}
"""Per provider: its fsspec library's option names, the library, an example of its options."""


def check_storage_options(
    options: dict[str, Any], *, source: str = "--storage-options", protocol: str = "s3"
) -> None:
    """Refuse options the store's library does not take, and template syntax in the values."""
    try:
        provider = provider_for_protocol(protocol).name
    except ArchiveError:
        provider = "s3"  # an unknown protocol is refused where the filesystem is made
    names, library, example = _LIBRARIES[provider]
    allowed = names()

    unknown = sorted(str(k) for k in options if k not in allowed)
    if unknown:
        single = "is not an" if library[0] in "aeiou" else "is not a"  # an adlfs, a gcsfs
        raise InvalidOptionsError(
            f"{', '.join(repr(k) for k in unknown[:5])} "
            f"{single if len(unknown) == 1 else 'are not'} {library} "
            f"{'option' if len(unknown) == 1 else 'options'}.",
            path=source,
            fix=f"pass only {library} options, e.g. {example}.",
        )
    found = _template_in(options)
    if found is not None:
        raise InvalidOptionsError(
            f"the value of {found!r} contains template syntax ({{{{ }}}} or {{% %}}), "
            "which archivefs never renders.",
            path=source,
            fix="pass plain values.",
        )


def _template_in(value: Any, where: str = "") -> str | None:
    if isinstance(value, str):
        return where or "value" if _TEMPLATE.search(value) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str) and _TEMPLATE.search(key):
                return f"{where}.{key}" if where else key
            found = _template_in(inner, f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for i, inner in enumerate(value):
            found = _template_in(inner, f"{where}[{i}]")
            if found is not None:
                return found
    return None
