"""Secrets in store options: kept out of pickles and JSON, kept in the process that was given them.

A filesystem made with explicit keys (``key``/``secret``/``token``, botocore's
``aws_*`` names, an SSE-C key) pickles (for Dask workers, zarr, ``to_json``)
*without* them: the serialised options carry every other option and a random
reference. Unpickled in the same process, the reference finds the original
options here; in another process (a Dask worker) it finds nothing, and the
worker uses the credentials it has itself: environment variables, a profile
named in the options, a credentials file, an instance or container role.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

SECRET_NAMES = frozenset(
    {
        "key",
        "secret",
        "token",
        "password",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "SSECustomerKey",
    }
)

GCSFS_TOKEN_MODES = frozenset({"anon", "google_default", "cloud", "browser"})
"""gcsfs's ``token`` values that name a way to find credentials, not a credential:
kept in pickles (a worker needs ``token="anon"`` to read a public bucket)."""

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
                if name == "token" and isinstance(inner, str) and inner in GCSFS_TOKEN_MODES:
                    out[name] = inner
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


def has_ambient_credentials(profile: str | None = None) -> bool:
    """Whether botocore finds credentials without explicit keys (env, profile, file, role)."""
    import botocore.exceptions
    import botocore.session

    try:
        session = botocore.session.Session(profile=profile)
        return session.get_credentials() is not None
    except botocore.exceptions.BotoCoreError:
        return False
