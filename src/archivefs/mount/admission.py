"""Opening an archived file: the mount's ``--on-archived`` policy (raise, restore, wait).

``raise`` refuses at once; ``restore`` requests the file's group and refuses; ``wait``
requests it and blocks until it reads (``wait_timeout``). Restores go through the
filesystem's one restore operation (``fs.restore``: plan, budget, journal, claims, one
request per group), and opens that arrive within ``window`` seconds of each other are
one call of it (:class:`~archivefs.mount.batches.Batcher`). What the program is told is
an errno (:mod:`archivefs.mount.errnos`); what the user is told goes to the log.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from archivefs.entries import state_from_entry
from archivefs.errors import ArchiveError
from archivefs.mount.batches import DEFAULT_BATCH_WINDOW, Batcher
from archivefs.mount.errnos import NOT_READABLE, errno_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem

log = logging.getLogger("archivefs.mount")

OnArchived = Literal["raise", "restore", "wait"]


class Refused(OSError):
    """An open the policy refuses, with the errno the program sees."""

    def __init__(self, code: int) -> None:
        super().__init__(code, "refused by --on-archived")


class Admission:
    """Decides whether an open of a listed entry may read, per the ``on_archived`` policy."""

    def __init__(
        self,
        fs: ArchiveFileSystem,
        policy: OnArchived = "raise",
        *,
        wait_timeout: float | None = None,
        window: float = DEFAULT_BATCH_WINDOW,
        restored: Callable[[list[str]], None] = lambda paths: None,
    ) -> None:
        if policy not in ("raise", "restore", "wait"):
            raise ValueError(f"on_archived must be raise, restore or wait, not {policy!r}")
        self.fs = fs
        self.policy = policy
        self.wait_timeout = wait_timeout
        self.restored = restored  # told the paths of each batch once it was submitted
        self.batches = Batcher(self._submit, window)

    def url(self, path: str) -> str:
        return f"{self.fs.store_protocol}://{path}"

    def admit(self, path: str, entry: dict[str, Any]) -> None:
        """Return if ``path`` (listed as ``entry``) reads now, or once the policy made it
        readable; else raise :class:`Refused` with the errno, having logged why."""
        state = state_from_entry(entry)
        if state.readable:
            return
        what = f"{self.url(path)}: {state.restore.value} in {state.storage_class.value}"
        restore = f"`archivefs restore {self.url(path)} --tier Bulk`"
        if self.policy == "raise":
            log.warning(
                "%s; not opened (--on-archived raise). Fix: restore it with %s (or "
                "`setfattr -n user.archivefs.restore -v Bulk FILE` on the mount), then open "
                "it again.",
                what,
                restore,
            )
            raise Refused(NOT_READABLE)
        error = self.batches.join(path)
        if error is not None:
            log.warning("%s; not opened: %s", what, error)
            raise Refused(errno_of(error)) from error
        if self.policy == "restore":
            log.warning(
                "%s; its restore was requested (--on-archived restore): open it again once "
                "`getfattr -n user.archivefs.state FILE` says restored.",
                what,
            )
            raise Refused(NOT_READABLE)

    def _submit(self, paths: list[str]) -> None:
        """One restore call for every path of a batch (waiting for them under ``wait``)."""
        wait = self.policy == "wait"
        log.info("restoring %d file(s) in one batch%s", len(paths), " and waiting" if wait else "")
        try:
            result = self.fs.restore(paths, wait=wait, timeout=self.wait_timeout)
        except ArchiveError:
            self.restored(paths)
            raise
        self.restored(paths)
        log.info(
            "restore batch of %d file(s): %d request(s) sent%s",
            len(paths),
            result.requests_sent,
            "; readable now" if wait else "",
        )
