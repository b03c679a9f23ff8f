"""Where a restore journal record stands: shared by the journal and its records' model."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RecordState"]


class RecordState(StrEnum):
    """Where a record stands."""

    CLAIMED = "claimed"  # about to be sent; if the owner died, it may or may not have been
    ACCEPTED = "accepted"
    IN_PROGRESS = "in_progress"
    RESTORED = "restored"
    FAILED = "failed"
    EXPIRED = "expired"
