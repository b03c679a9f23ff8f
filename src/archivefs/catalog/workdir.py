"""Where a bundling run writes its temporary bundles, so that the next run finds and removes them.

Not ``$TMPDIR`` (a killed run left up to 256 MiB there per bundle, never
cleaned): a private directory per destination under the user's archivefs
cache (``<cache>/bundling/<hash of the destination>/``, mode 0700). Each
temporary file carries its writer's process id; a run removes the files of
writers that are no longer alive before it starts.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from typing import TYPE_CHECKING

from archivefs.paths import cache_dir, private_dir

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SUFFIX = ".zip.partial"


def work_dir(destination: str) -> Path:
    """The private directory for temporary bundles bound for ``destination``."""
    digest = hashlib.sha256(destination.encode()).hexdigest()[:16]
    return private_dir(cache_dir() / "bundling" / digest)


def clean_stale(directory: Path) -> list[Path]:
    """Remove temporary bundles whose writer is gone; return what was removed."""
    removed = []
    for path in directory.glob(f"bundle-*{SUFFIX}"):
        pid = path.name.split("-")[1]
        if pid.isdigit() and _alive(int(pid)):
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


@contextlib.contextmanager
def temporary_bundle(directory: Path) -> Iterator[Path]:
    """A fresh temporary file name in ``directory``, removed afterwards."""
    path = directory / f"bundle-{os.getpid()}-{uuid.uuid4().hex}{SUFFIX}"
    try:
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
