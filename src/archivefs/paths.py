"""Where archivefs keeps its per-user files (the restore journal, caches).

The cache directory is, in order: ``$ARCHIVEFS_CACHE_DIR``, ``$XDG_CACHE_HOME/archivefs``,
``~/.cache/archivefs``. Directories archivefs creates are private to the user (mode 0700).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "ARCHIVEFS_CACHE_DIR"
JOURNAL_FILENAME = "journal.sqlite"
PRIVATE_DIR_MODE = 0o700


def cache_dir() -> Path:
    """The user's archivefs cache directory, created (mode 0700) if missing."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return private_dir(Path(explicit).expanduser())
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The XDG spec says relative paths are invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return private_dir(Path(xdg) / "archivefs")
    return private_dir(Path.home() / ".cache" / "archivefs")


def default_journal_path() -> Path:
    """Where the restore journal lives unless the caller names another file."""
    return cache_dir() / JOURNAL_FILENAME


def private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents with mode 0700; return it.

    Directories that already exist are left as they are: they belong to the user.
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # created meanwhile by another process: fine
        os.chmod(directory, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    return path
