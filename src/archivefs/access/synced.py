"""What ``prefetch(to=DIR)`` wrote before, so that running it again fetches only what changed.

As ``aws s3 sync`` compares sizes (and times), a second prefetch to the same
directory leaves out each file whose local copy is the one a previous run wrote
and whose object is unchanged: the manifest ``DIR/.archivefs-prefetch.json``
records, per ``bucket/key``, the object's identity when it was written (its ETag;
for a bundle member, its bundle's ETag, since a bundle is never rewritten in
place) and the local file's size and modification time then. A file edited,
truncated or removed since, or an object replaced (a new ETag), is fetched again;
an object whose store gives no ETag always is. No request is made to decide.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from archivefs.plans import Plan

MANIFEST = ".archivefs-prefetch.json"


def identities(plan: Plan) -> dict[str, str]:
    """Each requested path's object identity: its group's ETag (a member: its bundle's)."""
    found: dict[str, str] = {}
    for group in plan.groups:
        etag = group.state.etag
        if etag:
            for path in group.paths:
                found[path] = f"{group.key}@{etag}"
    return found


def _load(directory: Path) -> dict[str, Any]:
    try:
        data = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: everything is fetched (and it is rewritten)
    return data if isinstance(data, dict) else {}


def up_to_date(directory: Path, targets: Mapping[str, Path], ids: Mapping[str, str]) -> set[str]:
    """The paths whose local file in ``targets`` is the one written for the same object."""
    recorded = _load(directory)
    fresh: set[str] = set()
    for path, target in targets.items():
        entry = recorded.get(path)
        if not isinstance(entry, dict) or path not in ids or entry.get("id") != ids[path]:
            continue
        try:
            stat = target.stat()
        except OSError:
            continue
        if [stat.st_size, stat.st_mtime_ns] == [entry.get("size"), entry.get("mtime_ns")]:
            fresh.add(path)
    return fresh


def record(
    directory: Path, targets: Mapping[str, Path], ids: Mapping[str, str], written: Iterable[str]
) -> None:
    """Note the files just written (with their objects' identities) in the manifest."""
    recorded = _load(directory)
    for path in written:
        if path not in ids:
            recorded.pop(path, None)
            continue
        stat = targets[path].stat()
        recorded[path] = {"id": ids[path], "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    partial = directory / f"{MANIFEST}.{os.getpid()}.tmp"
    partial.write_text(json.dumps(recorded, sort_keys=True), encoding="utf-8")
    partial.replace(directory / MANIFEST)
