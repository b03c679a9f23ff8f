"""Secrets in store options: kept out of pickles and JSON, kept in the process that was given them.

A filesystem made with explicit keys (every provider's ``secret_options``: S3's
``key``/``secret``/``token`` and botocore's ``aws_*`` names, an SSE-C key; adlfs's
``account_key``/``connection_string``/``sas_token``/``client_secret``/``credential``;
ocifs's ``config`` ``key_content``/``pass_phrase``; gcsfs's ``token``) pickles
(for Dask workers, zarr, ``to_json``) *without* them: the serialised options
carry every other option and a random reference. Unpickled in the same process,
the reference finds the original options here; in another process (a Dask
worker) it finds nothing, and the worker uses the credentials it has itself:
environment variables, a profile named in the options, a credentials or config
file, an instance or container role, a managed identity.

Some client libraries log credentials at DEBUG (ocifs prints its whole ``config``,
private key included; botocore prints each request's session token):
:func:`redact_library_logs` scrubs secret options and headers from the records of
the loggers each provider names (``ProviderSpec.sdk_loggers``).
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from typing import Any

from archivefs.errors import ArchiveError
from archivefs.providers import (
    CREDENTIAL_MODES,
    S3,
    SDK_LOGGERS,
    SECRET_HEADERS,
    SECRET_OPTIONS,
    provider_for_protocol,
)

SECRET_NAMES = SECRET_OPTIONS
"""The option names withheld: every provider's ``secret_options`` (``providers/``)."""

_VAULT: dict[str, dict[str, Any]] = {}
_LOCK = threading.Lock()


def withhold(options: Any) -> tuple[Any, list[str]]:
    """A copy of ``options`` without secret values (at any depth), and the names removed."""
    removed: list[str] = []

    def strip(value: Any, where: str) -> Any:
        if isinstance(value, dict):
            out = {}
            for name, inner in value.items():
                path = f"{where}.{name}" if where else str(name)
                if isinstance(inner, str) and inner in CREDENTIAL_MODES.get(name, ()):
                    out[name] = inner  # names a way to find credentials, e.g. token="anon"
                    continue
                if name in SECRET_NAMES and inner is not None:
                    removed.append(path)
                    continue
                out[name] = strip(inner, path)
            return out
        return value

    return strip(options, ""), removed


def deposit(options: dict[str, Any]) -> str:
    """Keep ``options`` (with their secrets) in this process; return the reference."""
    reference = uuid.uuid4().hex
    with _LOCK:
        _VAULT[reference] = options
    return reference


def recover(reference: str) -> dict[str, Any] | None:
    """The options deposited under ``reference`` in this process, or ``None`` elsewhere."""
    with _LOCK:
        return _VAULT.get(reference)


def found_by_botocore(protocol: str | None) -> bool:
    """Whether a store's own credentials are botocore's (S3 and S3-compatible stores).

    Only there can a process tell, before any request, that it has none
    (:func:`has_ambient_credentials`). Other libraries (adlfs, ocifs, gcsfs) look for
    their own when they start, and say why they found none."""
    try:
        return provider_for_protocol(protocol or "s3") is S3
    except ArchiveError:
        return True  # an unknown protocol is S3-like, as ``stores.provider_of`` assumes


def has_ambient_credentials(profile: str | None = None) -> bool:
    """Whether botocore finds credentials without explicit keys (env, profile, file, role)."""
    import botocore.exceptions
    import botocore.session

    try:
        session = botocore.session.Session(profile=profile)
        return session.get_credentials() is not None
    except botocore.exceptions.BotoCoreError:
        return False


_OPTIONS = "|".join(sorted(map(re.escape, SECRET_NAMES)))
_HEADERS = "|".join(sorted(map(re.escape, SECRET_HEADERS)))  # HTTP: any case
_QUOTED = r"""b?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_SECRET_ITEM = re.compile(
    rf"""(?P<name>['"](?:{_OPTIONS}|(?i:{_HEADERS}))['"]\s*:\s*)(?:{_QUOTED}|<[^>]*>)"""
)
"""A secret option or header in a printed dict: ``'key_content': '...'``."""
_SECRET_LINE = re.compile(rf"^(?P<name>(?i:{_HEADERS}):).*$", re.M)
"""A secret header in a printed request: ``x-amz-security-token:...``."""


class _RedactSecrets(logging.Filter):
    """Replaces the value of every secret option or header in a record's message with ``***``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRET_ITEM.sub(r"\g<name>'***'", message)
        redacted = _SECRET_LINE.sub(r"\g<name>***", redacted)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_REDACT = _RedactSecrets()


def redact_library_logs() -> None:
    """Scrub secrets from the records of each provider's ``sdk_loggers`` (idempotent)."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _REDACT not in logger.filters:
            logger.addFilter(_REDACT)
