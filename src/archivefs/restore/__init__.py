"""The restore engine: journal, poll schedule, notification sources."""

from __future__ import annotations

from archivefs.restore.journal import Journal, JournalRecord, Outcome, RecordState
from archivefs.restore.notify import (
    CallbackNotificationSource,
    NotificationSource,
    QueueNotificationSource,
    restored_keys,
)
from archivefs.restore.schedule import PollSchedule, RestoreWindow, restore_window

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
