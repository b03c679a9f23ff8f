"""What a POSIX program is told, as an errno, for each archivefs error: decided here only.

A program cannot read words; the mount's log says the words (which object, its class, the
command that fixes it), and the program gets the errno below (docs/mount.md lists them).
"""

from __future__ import annotations

import errno

from archivefs.errors import (
    ArchiveError,
    BudgetExceededError,
    ObjectArchivedError,
    ObjectNotFoundError,
    RestoreInProgressError,
    RestoreTimeoutError,
)

# an archived or restoring object cannot be read now: "Permission denied", as s3fs's
# PermissionError for InvalidObjectState; never EIO, which means a broken device
NOT_READABLE = errno.EACCES
BUDGET = errno.EDQUOT  # the mount's --max-cost refused the restore or the read
WAITED_TOO_LONG = errno.ETIMEDOUT  # --on-archived wait: not readable within --wait-timeout
READ_ONLY = errno.EROFS  # a write to a mount without --writable
# --writable: deleting (or replacing) a bundle member, an early deletion not allowed, a
# rename of a file written in a class with a minimum storage time
REFUSED_DELETE = errno.EPERM


def errno_of(error: BaseException) -> int:
    """The errno a program sees for ``error`` (EIO for what it cannot act on)."""
    if isinstance(error, ObjectArchivedError | RestoreInProgressError):
        return NOT_READABLE
    if isinstance(error, BudgetExceededError):
        return BUDGET
    if isinstance(error, RestoreTimeoutError):
        return WAITED_TOO_LONG
    if isinstance(error, ObjectNotFoundError | FileNotFoundError):
        return errno.ENOENT
    if isinstance(error, ValueError):
        return errno.EINVAL  # e.g. a tier the provider does not have (setfattr)
    if isinstance(error, ArchiveError):
        return errno.EIO  # damage, a store that fails: the log says which and the fix
    if isinstance(error, OSError) and error.errno:
        return error.errno
    return errno.EIO
