"""``archivefs mount``: the archive as a POSIX tree, for programs that read files.

A FUSE face over an ArchiveFileSystem's public operations (docs/mount.md):
listings answer ``stat`` and ``readdir``, the filesystem's read path answers reads,
opens of archived files follow ``on_archived``. Import-light: the FUSE binding loads
when a mount starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import contextlib
    from pathlib import Path

__all__ = ["mount", "unmount"]


def mount(url: str, mountpoint: Any, **options: Any) -> contextlib.AbstractContextManager[Path]:
    """Mount ``url`` at ``mountpoint`` for a ``with`` block (:func:`archivefs.mount.runner.mount`).

    Examples
    --------
    ```python
    with archivefs.mount("s3://bucket/run42/", "/mnt/run42", on_archived="wait") as root:
        data = (root / "a.nc").read_bytes()
    ```
    """
    from archivefs.mount.runner import mount as mounted

    return mounted(url, mountpoint, **options)


def unmount(mountpoint: Any, *, lazy: bool = False) -> None:
    """Unmount ``mountpoint`` (``fusermount3 -u``; ``lazy``: ``-uz``)."""
    from archivefs.mount.runner import unmount as run

    run(mountpoint, lazy=lazy)
