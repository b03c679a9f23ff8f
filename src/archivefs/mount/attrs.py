"""POSIX attributes of a listed entry: what ``stat`` and ``ls -l`` show."""

from __future__ import annotations

import stat
from datetime import datetime
from typing import Any

BLOCK = 512  # st_blocks counts 512-byte blocks (du)


def mtime_of(entry: dict[str, Any], default: float) -> float:
    """The entry's modification time in seconds: the object's ``LastModified``, a bundle
    member's own ``mtime`` (kept in the catalog), else ``default`` (directories)."""
    when = entry.get("LastModified") or entry.get("mtime") or entry.get("last_modified")
    if isinstance(when, datetime):
        return when.timestamp()
    if isinstance(when, int | float) and when > 0:
        return float(when)
    return default


def stat_of(
    entry: dict[str, Any], *, uid: int, gid: int, mounted_at: float, writable: bool = False
) -> dict[str, Any]:
    """``stat`` fields of ``entry``: a regular file of its size (read-only unless the mount
    is ``writable``), or a directory; owned by whoever mounted."""
    mtime = int(mtime_of(entry, mounted_at) * 1_000_000_000)  # nanoseconds (use_ns)
    write = 0o200 if writable else 0
    if entry.get("type") == "directory":
        mode, size, links = stat.S_IFDIR | 0o555 | write, 0, 2
    else:
        mode, size, links = stat.S_IFREG | 0o444 | write, int(entry.get("size") or 0), 1
    return {
        "st_mode": mode,
        "st_nlink": links,
        "st_size": size,
        "st_blocks": -(-size // BLOCK),
        "st_blksize": 1 << 20,
        "st_uid": uid,
        "st_gid": gid,
        "st_mtime": mtime,
        "st_ctime": mtime,
        "st_atime": mtime,
    }
