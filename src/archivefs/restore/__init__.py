"""The restore engine: journal, poll schedule, notification sources.

Import-light: the names below load their modules on first use (PEP 562), so a
command that only reads (``get``, ``cat``) does not import the journal's SQLite
and pydantic when it imports :mod:`archivefs.restore.schedule`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from archivefs.lazy import lazy_names

if TYPE_CHECKING:
    from archivefs.restore.journal import Journal, Outcome
    from archivefs.restore.journal_record import JournalRecord
    from archivefs.restore.journal_states import RecordState
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
    "JournalRecord": "archivefs.restore.journal_record",
    "NotificationSource": "archivefs.restore.notify",
    "Outcome": "archivefs.restore.journal",
    "PollSchedule": "archivefs.restore.schedule",
    "QueueNotificationSource": "archivefs.restore.notify",
    "RecordState": "archivefs.restore.journal_states",
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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
