"""Local paths derived from object keys, never outside their directory.

Keys are chosen by whoever can write the bucket, and S3 allows ``..`` parts, so
every local copy of a key (``prefetch --to DIR``, promotion into a local hot
store) goes through :func:`local_target` before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from archivefs.errors import InvalidPathError


def local_target(directory: str | Path, path: str) -> Path:
    """Where ``bucket/key`` goes below ``directory``; :class:`InvalidPathError` if outside it."""
    base = Path(directory).resolve()
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts) or "\0" in path or "\\" in path:
        raise InvalidPathError(
            "this key has an empty, '.' or '..' part (or a NUL or backslash), so it has no "
            f"safe local name below {base}; nothing was written.",
            path=path,
            fix="leave it out of the selection, or rename the object in the bucket.",
        )
    target = base.joinpath(*parts).resolve()
    if not target.is_relative_to(base) or target == base:
        raise InvalidPathError(
            f"its local copy would be written outside {base} (a symbolic link in the "
            "target directory leads out of it); nothing was written.",
            path=path,
            fix="remove the symbolic link from the target directory, or copy elsewhere.",
        )
    return target
