"""The error hierarchy: stdlib bases, messages, pickling (errors cross Dask workers)."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime

import pytest

from archivefs import errors


def test_archived_errors_are_never_file_not_found() -> None:
    for cls in (errors.ObjectArchivedError, errors.RestoreInProgressError):
        assert issubclass(cls, errors.ArchiveError)
        assert issubclass(cls, OSError)
        assert not issubclass(cls, FileNotFoundError)
    assert issubclass(errors.ObjectArchivedError, PermissionError)
    assert issubclass(errors.RestoreInProgressError, BlockingIOError)
    assert issubclass(errors.ObjectNotFoundError, FileNotFoundError)


def test_message_names_object_problem_and_fix() -> None:
    error = errors.ArchiveError("it broke.", path="b/k", fix="do this.")
    assert str(error) == "b/k: it broke. Fix: do this."
    assert (error.path, error.problem, error.fix) == ("b/k", "it broke.", "do this.")
    assert str(errors.ArchiveError("plain.")) == "plain."


@pytest.mark.parametrize(
    "error",
    [
        errors.ObjectArchivedError(
            "archived.", path="b/k", fix="restore.", paths=("b/k",), storage_class="GLACIER"
        ),
        errors.RestoreInProgressError(
            "busy.", path="b/k", ready_at=datetime(2026, 1, 1, tzinfo=UTC)
        ),
        errors.BudgetExceededError("too much.", estimate=12.5, budget=10.0),
        errors.RestoreFailedError("failed.", failures={"b/k": "AccessDenied"}),
        errors.ObjectNotFoundError("missing.", path="b/k"),
    ],
)
def test_errors_pickle_with_their_attributes(error: errors.ArchiveError) -> None:
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error)
    assert str(clone) == str(error)
    assert clone.__dict__ == error.__dict__
