"""Extended attributes: an entry's archive state where ``getfattr`` finds it, and a
restore asked for with ``setfattr -n user.archivefs.restore -v TIER PATH``.

Every value comes from the entry the listing already holds, except ``estimate``, which
plans the file (the filesystem's ``plan`` and ``estimate_plan``: one bulk probe) when read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archivefs.pricing.amounts import format_amount

if TYPE_CHECKING:
    from archivefs.filesystem import ArchiveFileSystem

PREFIX = "user.archivefs."
STORAGE_CLASS = PREFIX + "storage_class"
STATE = PREFIX + "state"
RESTORE_EXPIRY = PREFIX + "restore_expiry"
GROUP = PREFIX + "group"
ESTIMATE = PREFIX + "estimate"
RESTORE = PREFIX + "restore"  # write-only: the tier to restore a file or a subtree at


def names(entry: dict[str, Any]) -> list[str]:
    """The attributes ``entry`` has (directories: none; ``restore_expiry`` when set)."""
    if entry.get("type") == "directory":
        return []
    found = [STORAGE_CLASS, STATE]
    if entry.get("restore_expiry") is not None:
        found.append(RESTORE_EXPIRY)
    return [*found, GROUP, ESTIMATE]


def value(fs: ArchiveFileSystem, path: str, entry: dict[str, Any], name: str) -> str | None:
    """The value of attribute ``name`` of ``path`` (listed as ``entry``); None: it has none."""
    if name not in names(entry):
        return None
    if name == STORAGE_CLASS:
        return str(entry.get("storage_class") or "")
    if name == STATE:
        return str(entry.get("restore") or "")
    if name == RESTORE_EXPIRY:
        return str(entry["restore_expiry"].isoformat())
    if name == GROUP:  # the object a restore requests: the member's bundle, or itself
        return f"{fs.store_protocol}://{entry.get('bundle') or path}"
    estimate = fs.estimate_plan(fs.plan([path]))
    return (
        f"{format_amount(estimate.total, estimate.currency)} "
        f"({estimate.restore_request_count} restore request(s), "
        f"{estimate.bytes_restored} bytes restored, {estimate.bytes_read} bytes read; "
        f"{estimate.sheet})"
    )
