"""The "Compute Failed" records of Dask workers: archivefs errors without their traceback."""

from __future__ import annotations

import logging

import pytest

from archivefs.errors import ArchiveError, ObjectArchivedError
from archivefs.worker_logs import OMITTED, WORKER_LOGGER, quiet_worker_tracebacks

TRACEBACK = (
    '  File "/site-packages/dask/array/core.py", line 140, in getter\n    c = np.asarray(c)\n'
)


def compute_failed(error: BaseException, caplog: pytest.LogCaptureFixture) -> str:
    """What distributed's worker logs for a task that raised ``error`` (its format)."""
    quiet_worker_tracebacks()
    quiet_worker_tracebacks()  # idempotent
    assert len(logging.getLogger(WORKER_LOGGER).filters) >= 1
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger=WORKER_LOGGER):
        logging.getLogger(WORKER_LOGGER).error(
            "Compute Failed\nKey:       %s\nState:     %s\nTask:  %s\n"
            "Exception: %r\nTraceback: %r\n",
            "('sum', 0)",
            "executing",
            "<Task ('sum', 0) getter(...)>",
            repr(error),
            TRACEBACK,
        )
    (record,) = caplog.records
    return record.getMessage()


def test_an_archivefs_error_is_logged_with_its_fix_and_without_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = ObjectArchivedError("must be restored.", path="b/k", fix="restore it.")
    message = compute_failed(error, caplog)
    assert "ObjectArchivedError('b/k: must be restored. Fix: restore it.')" in message
    assert OMITTED in message
    assert "dask/array/core.py" not in message


def test_other_errors_keep_their_traceback(caplog: pytest.LogCaptureFixture) -> None:
    message = compute_failed(ValueError("not ours"), caplog)
    assert "dask/array/core.py" in message
    assert OMITTED not in message


def test_a_subclass_defined_outside_archivefs_errors_counts_as_ours(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class PluginError(ArchiveError):
        pass

    message = compute_failed(PluginError("broke.", fix="mend it."), caplog)
    assert OMITTED in message
