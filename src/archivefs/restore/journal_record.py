"""A restore journal record: one cold object's restore history, as a pydantic model.

Its own module so that opening a journal (every command that may restore) does not
import pydantic: only reading records does (:mod:`archivefs.restore.journal`).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from archivefs.restore.journal_states import RecordState

__all__ = ["JournalRecord"]


class JournalRecord(BaseModel):
    """One cold object's restore history (times are UTC)."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    key: str
    tier: str | None
    days: int | None
    state: RecordState
    attempts: int
    owner: str | None
    claimed_at: datetime | None
    lease_until: datetime | None
    sent_at: datetime | None
    http_status: int | None
    code: str | None
    expected_ready_at: datetime | None
    restored_at: datetime | None
    expiry: datetime | None
    last_error: str | None
    updated_at: datetime
