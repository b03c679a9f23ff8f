"""Member names: one normal form, and never a way out of the target directory.

A name is a relative POSIX path in Unicode NFC: no empty, ``.`` or ``..``
parts, no leading ``/``, no backslashes, drive letters, NUL or other control
characters, at most 1,024 UTF-8 bytes (S3's key limit).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

from archivefs.errors import BundleError

MAX_NAME_BYTES = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


def normalize_member_name(name: str, *, bundle: str | None = None) -> str:
    """The normal form of ``name``, or :class:`BundleError` saying what is wrong with it."""
    if not isinstance(name, str):
        return _normalize(name, bundle)  # refused there, without hashing it
    return _normalize_cached(name, bundle)


def _normalize(name: str, bundle: str | None) -> str:
    def refuse(problem: str) -> BundleError:
        return BundleError(
            f"member name {name!r} {problem}.",
            path=bundle,
            fix="use relative POSIX paths of printable characters, without '..' or '.' parts.",
        )

    if not isinstance(name, str) or not name:
        raise refuse("is empty")
    if _CONTROL.search(name):
        raise refuse("contains NUL or control characters")
    if "\\" in name:
        raise refuse("contains a backslash")
    if name.startswith("/") or _DRIVE.match(name):
        raise refuse("is absolute")
    normal = unicodedata.normalize("NFC", name)
    parts = normal.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise refuse("has an empty, '.' or '..' part")
    if len(normal.encode("utf-8")) > MAX_NAME_BYTES:
        raise refuse(f"is longer than {MAX_NAME_BYTES} UTF-8 bytes")
    return normal


# bundling normalises each name when sorting, writing and verifying a bundle: once is enough
# (only answers are cached; a refused name raises again each time)
_normalize_cached = functools.lru_cache(maxsize=1 << 16)(_normalize)


def safe_target_path(root: str | Path, name: str, *, bundle: str | None = None) -> Path:
    """Where member ``name`` goes below ``root``; never outside it (symlinks included)."""
    base = Path(root).resolve()
    target = (base / normalize_member_name(name, bundle=bundle)).resolve()
    if not target.is_relative_to(base):
        raise BundleError(
            f"member {name!r} would be written outside {base}.",
            path=bundle,
            fix="remove symbolic links from the target directory, or extract elsewhere.",
        )
    return target
