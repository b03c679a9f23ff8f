"""The archivefs exception hierarchy.

Every error says what happened, to which object, and how to fix it. Errors
dual-inherit the standard exception they resemble (as ``zarr.errors`` does) so
that callers who catch ``PermissionError`` or ``ValueError`` keep working.

An object that is archived is *not* missing: no error about archived or
restoring objects subclasses ``FileNotFoundError``, because zarr turns that
into a silently missing chunk (fill values). Only objects that really do not
exist raise :class:`ObjectNotFoundError`.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any


class ArchiveError(OSError):
    """Base class of every archivefs error.

    Parameters
    ----------
    problem:
        What went wrong, as a sentence.
    path:
        The object (``bucket/key``), bundle or file concerned, if any.
    fix:
        What the user can do about it.
    """

    def __init__(self, problem: str, *, path: str | None = None, fix: str | None = None) -> None:
        self.problem = problem
        self.path = path
        self.fix = fix
        message = f"{path}: {problem}" if path else problem
        if fix:
            message = f"{message} Fix: {fix}"
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def in_context(self, context: str) -> ArchiveError:
        """A copy whose problem starts with ``context`` (e.g. which member was being read)."""
        clone = copy.copy(self)
        clone.problem = f"{context} {self.problem}"
        message = f"{self.path}: {clone.problem}" if self.path else clone.problem
        if self.fix:
            message = f"{message} Fix: {self.fix}"
        clone.args = (message,)
        return clone

    def __reduce__(self) -> tuple[Any, ...]:
        # OSError's default pickling calls cls(*args); keep every attribute so
        # errors raised on Dask workers arrive intact on the client.
        return (_rebuild, (type(self), self.__dict__.copy(), self.args))


def _rebuild(cls: type[ArchiveError], state: dict[str, Any], args: tuple[Any, ...]) -> ArchiveError:
    error = cls.__new__(cls)
    OSError.__init__(error, *args)
    error.__dict__.update(state)
    return error


class InvalidPathError(ArchiveError, ValueError):
    """A URL or path that archivefs cannot use (empty, malformed, escaping its root)."""


class ObjectNotFoundError(ArchiveError, FileNotFoundError):
    """The object (or its bucket) does not exist. Never raised for archived objects."""


class AccessDeniedError(ArchiveError, PermissionError):
    """The store refused the request for lack of permission."""


class UnknownStorageClassError(ArchiveError, ValueError):
    """A storage-class name archivefs does not know."""


class InvalidRestoreRequestError(ArchiveError, ValueError):
    """A restore request that S3 would refuse: bad tier, bad days, wrong class."""


class NotArchivedError(InvalidRestoreRequestError):
    """A restore was asked for an object that reads at once (it is not archived)."""


class RestoresNotImplementedError(NotArchivedError):
    """The server does not implement restores (Ceph RGW): its archive classes read at once."""


class ObjectArchivedError(ArchiveError, PermissionError):
    """The object is archived and must be restored before it can be read."""

    def __init__(
        self,
        problem: str,
        *,
        path: str | None = None,
        fix: str | None = None,
        paths: tuple[str, ...] = (),
        storage_class: str | None = None,
    ) -> None:
        self.paths = paths or ((path,) if path else ())
        self.storage_class = storage_class
        super().__init__(problem, path=path, fix=fix)


class RestoreInProgressError(ArchiveError, BlockingIOError):
    """A restore of the object has been requested and has not finished yet."""

    def __init__(
        self,
        problem: str,
        *,
        path: str | None = None,
        fix: str | None = None,
        ready_at: datetime | None = None,
    ) -> None:
        self.ready_at = ready_at
        super().__init__(problem, path=path, fix=fix)


class RestoreTimeoutError(ArchiveError):
    """Waiting for a restore took longer than the caller allowed.

    Deliberately not a ``TimeoutError``: fsspec's sync layer replaces any
    ``TimeoutError`` raised inside a coroutine with a bare ``FSTimeoutError``,
    which would lose the message that says which restores are still running.
    ``pending`` names the groups not readable yet (when the waiter knows them).
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | None = None,
        fix: str | None = None,
        pending: tuple[str, ...] = (),
    ) -> None:
        self.pending = tuple(pending)
        super().__init__(problem, path=path, fix=fix)


class RestoreFailedError(ArchiveError):
    """One or more restore requests failed permanently (see ``failures``)."""

    def __init__(
        self,
        problem: str,
        *,
        path: str | None = None,
        fix: str | None = None,
        failures: dict[str, str] | None = None,
    ) -> None:
        self.failures = dict(failures or {})
        super().__init__(problem, path=path, fix=fix)


class InvalidOptionsError(ArchiveError, ValueError):
    """Storage options archivefs refuses (unknown to the store, or trying to run templates)."""


class MissingCredentialsError(ArchiveError, PermissionError):
    """No credentials to reach the store (e.g. a worker given a pickle without keys)."""


class StoreUnavailableError(ArchiveError, ConnectionError):
    """The store kept failing (throttling, resets, 5xx) after every retry."""


class BudgetExceededError(ArchiveError):
    """The estimated cost of a plan is above the caller's budget."""

    def __init__(
        self,
        problem: str,
        *,
        path: str | None = None,
        fix: str | None = None,
        estimate: float | None = None,
        budget: float | None = None,
    ) -> None:
        self.estimate = estimate
        self.budget = budget
        super().__init__(problem, path=path, fix=fix)


class ChecksumMismatchError(ArchiveError):
    """Bytes read from the store do not match their recorded checksum."""


class BundleError(ArchiveError, ValueError):
    """A bundle (zip) that is malformed, hostile, or not one archivefs can use."""


class CatalogError(ArchiveError):
    """The catalog is missing, corrupt, or disagrees with the bundles."""


class CatalogConflictError(CatalogError):
    """Another writer saved the catalog after it was read: nothing of this save was named.

    Writers that can merge (``bundle``) re-read, merge and save again.
    """


class MissingBundleError(CatalogError):
    """A catalog lists a member whose bundle object is gone: damage, not absence.

    Deliberately not a ``FileNotFoundError``: zarr would read the member as a
    missing chunk and return fill values.
    """


class BundleChangedError(ChecksumMismatchError):
    """The object at a bundle's key is not the bundle the catalog recorded (size or ETag)."""


class ReferencesError(CatalogError):
    """A file's stored chunk references that cannot be read or used (damaged, newer format)."""


class ObjectChangedError(ChecksumMismatchError):
    """An object is no longer the one its references describe (size or ETag differ): its
    bytes are refused before any is used, never read as if they were the old ones."""


class PriceSheetError(ArchiveError, ValueError):
    """A price sheet that cannot be loaded or fails validation."""


class WorkloadError(ArchiveError, ValueError):
    """A workload file (docs/cost-model.md) that cannot be loaded, fails validation or
    does not fit its price sheet."""


class JournalError(ArchiveError):
    """The restore journal cannot be opened or is corrupt."""


__all__ = [
    "AccessDeniedError",
    "ArchiveError",
    "BudgetExceededError",
    "BundleChangedError",
    "BundleError",
    "CatalogConflictError",
    "CatalogError",
    "ChecksumMismatchError",
    "InvalidOptionsError",
    "InvalidPathError",
    "InvalidRestoreRequestError",
    "JournalError",
    "MissingBundleError",
    "MissingCredentialsError",
    "NotArchivedError",
    "ObjectArchivedError",
    "ObjectNotFoundError",
    "PriceSheetError",
    "RestoreFailedError",
    "RestoreInProgressError",
    "RestoreTimeoutError",
    "RestoresNotImplementedError",
    "StoreUnavailableError",
    "UnknownStorageClassError",
]
