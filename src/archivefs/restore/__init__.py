"""The restore engine: journal, poll schedule, notification sources.

Import-light: the names below load their modules on first use (PEP 562), so a
command that only reads (``get``, ``cat``) does not import the journal's SQLite
and pydantic when it imports :mod:`archivefs.restore.schedule`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivefs.restore.journal import Journal, JournalRecord, Outcome, RecordState
    from archivefs.restore.notify import (
        CallbackNotificationSource,
        NotificationSource,
        QueueNotificationSource,
        restored_keys,
    )
    from archivefs.restore.schedule import PollSchedule, RestoreWindow, restore_window

_LAZY = {
    "CallbackNotificationSource": "archivefs.restore.notify",
    "Journal": "archivefs.restore.journal",
    "JournalRecord": "archivefs.restore.journal",
    "NotificationSource": "archivefs.restore.notify",
    "Outcome": "archivefs.restore.journal",
    "PollSchedule": "archivefs.restore.schedule",
    "QueueNotificationSource": "archivefs.restore.notify",
    "RecordState": "archivefs.restore.journal",
    "RestoreWindow": "archivefs.restore.schedule",
    "restore_window": "archivefs.restore.schedule",
    "restored_keys": "archivefs.restore.notify",
}

__all__ = [
    "CallbackNotificationSource",
    "Journal",
    "JournalRecord",
    "NotificationSource",
    "Outcome",
    "PollSchedule",
    "QueueNotificationSource",
    "RecordState",
    "RestoreWindow",
    "restore_window",
    "restored_keys",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'archivefs.restore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
