"""Dask worker logs without the traceback of an error that already says its fix.

A task that raises on a ``distributed`` worker is logged there as "Compute
Failed" with the task's whole traceback (through dask, xarray, zarr and
fsspec), once per failed task, before the client receives the error.
For an archivefs error that names the object, the problem and the fix, those
tracebacks only bury the one line that matters. :func:`quiet_worker_tracebacks`
keeps the record and its exception line and replaces the traceback with a note;
the client's exception still carries the full traceback.
"""

from __future__ import annotations

import logging

from archivefs.errors import ArchiveError

WORKER_LOGGER = "distributed.worker"
"""The logger ``distributed`` writes "Compute Failed" records to."""

OMITTED = (
    "(omitted: the archivefs error above names the object, the problem and the fix; "
    "the exception raised on the client carries the full traceback)"
)


def _archivefs_error_names() -> set[str]:
    names: set[str] = set()
    pending: list[type[BaseException]] = [ArchiveError]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return names


class _QuietArchivefsTracebacks(logging.Filter):
    """Replaces the traceback of a "Compute Failed" record whose exception is archivefs's."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not (
            isinstance(record.msg, str)
            and record.msg.startswith("Compute Failed")
            and isinstance(args, tuple)
        ):
            return True
        names = _archivefs_error_names()
        ours = any(
            isinstance(arg, str) and arg.partition("(")[0] in names and "(" in arg for arg in args
        )
        if ours:
            record.args = tuple(
                OMITTED if isinstance(arg, str) and arg.lstrip().startswith("File ") else arg
                for arg in args
            )
        return True


_QUIET = _QuietArchivefsTracebacks()


def quiet_worker_tracebacks() -> None:
    """Install the filter on distributed's worker logger in this process (idempotent)."""
    logger = logging.getLogger(WORKER_LOGGER)
    if _QUIET not in logger.filters:
        logger.addFilter(_QUIET)
