"""Writes on a ``--writable`` mount: files buffered on local disk, uploaded once closed.

A file created or opened for writing is a private local copy (a directory of mode 0700
under the cache directory); its first close after a change (``flush``) uploads it with
the filesystem's one upload into a storage class (``fs.put_file(..., storage_class=)``),
and the log says what that costs (the PUT and the storage a month, from the price sheet).
Deletes are one request, never of a bundle member, and never billed early deletion
unless the mount allows it (``allow_early_delete``). A rename moves only files this mount
wrote, in a class with no minimum storage time; other renames answer ``EXDEV`` so that
``mv`` copies and deletes through these same rules. docs/mount.md says all of it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Any

from archivefs.entries import state_from_entry
from archivefs.errors import ArchiveError
from archivefs.model import StorageClass
from archivefs.mount.attrs import mtime_of
from archivefs.mount.binding import mfusepy
from archivefs.mount.errnos import NOT_READABLE, REFUSED_DELETE
from archivefs.pricing.amounts import format_amount
from archivefs.pricing.estimate import early_deletion_cost, write_cost

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.mount.listings import Listings

log = logging.getLogger("archivefs.mount")

SECONDS_PER_DAY = 86400.0


def refuse(code: int, message: str, *args: Any) -> mfusepy.FuseOSError:
    """Log why (the words) and make the errno the program gets."""
    log.warning(message, *args)
    return mfusepy.FuseOSError(code)


class Written:
    """A file this mount wrote: its local copy, and whether the store has its last change."""

    def __init__(self, path: str, local: str, *, pending: bool) -> None:
        self.path = path  # its mount path (a rename changes it)
        self.local = local
        self.dirty = False  # written to since its last upload: sent at the next close
        # created or truncated by an open, nothing written since: sent when the last
        # handle is released (a shell's `> f` closes a duplicate before the program writes)
        self.pending = pending
        self.uploaded = False  # the store holds a copy of it at ``path``
        self.handles = 0
        self.mtime = time.time()
        self.lock = threading.Lock()

    def entry(self) -> dict[str, Any]:
        return {
            "name": self.path,
            "type": "file",
            "size": os.path.getsize(self.local),
            "mtime": self.mtime,
        }


class WriteHandle:
    """An open file of the mount's writes: reads and writes go to its local copy."""

    def __init__(self, written: Written, fd: int) -> None:
        self.written = written
        self.fd = fd

    def read(self, size: int, offset: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def write(self, data: bytes, offset: int) -> int:
        done = os.pwrite(self.fd, data, offset)
        self.written.dirty = True
        self.written.mtime = time.time()
        return done

    def truncate(self, length: int) -> None:
        if os.fstat(self.fd).st_size == length:
            return  # the kernel's truncate of an O_TRUNC open: nothing changes
        os.ftruncate(self.fd, length)
        self.written.dirty = True
        self.written.mtime = time.time()

    def close(self) -> None:
        os.close(self.fd)


class Writer:
    """What a ``--writable`` mount writes, deletes and renames, over the filesystem's
    public operations (``put_file`` into a class, ``rm_file``, ``get_file``)."""

    def __init__(
        self,
        fs: ArchiveFileSystem,
        listings: Listings,
        storage_class: StorageClass,
        scratch: Path,
        *,
        allow_early_delete: bool = False,
    ) -> None:
        self.fs = fs
        self.listings = listings
        self.storage_class = storage_class
        self.allow_early_delete = allow_early_delete
        scratch.mkdir(parents=True, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="writes-", dir=scratch)  # mode 0700
        self.written: dict[str, Written] = {}
        self.directories: set[str] = set()  # made by mkdir, with nothing below them yet
        self.wrote: set[str] = set()  # uploaded by this mount, local copy removed (closed)
        self._lock = threading.Lock()

    def url(self, path: str) -> str:
        return f"{self.fs.store_protocol}://{self.listings.target(path)}"

    def close(self) -> None:
        """Remove the local copies at unmount, unless one holds what the store lacks (an
        upload that failed): then the directory stays, and the log says where."""
        unsent = [w.path for w in self.written.values() if w.dirty or w.pending]
        if unsent:
            log.warning(
                "not uploaded (their last upload failed): %s; their local copies stay in %s",
                ", ".join(self.url(p) for p in unsent),
                self.dir,
            )
            return
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- what stat and readdir see of the mount's own writes ----------------------------

    def entry(self, path: str) -> dict[str, Any] | None:
        """The entry of a file this mount wrote or a directory it made (None: neither)."""
        written = self.written.get(path)
        if written is not None:
            return written.entry()
        if path in self.directories:
            return {"name": path, "size": 0, "type": "directory"}
        return None

    def names_in(self, directory: str) -> list[str]:
        """The names of the files this mount wrote and directories it made in ``directory``."""
        prefix = directory.rstrip("/") + "/"
        return [
            p[len(prefix) :]
            for p in [*self.written, *self.directories]
            if p.startswith(prefix) and "/" not in p[len(prefix) :]
        ]

    # -- opening ---------------------------------------------------------------------------

    def _local(self) -> str:
        fd, local = tempfile.mkstemp(dir=self.dir)
        os.close(fd)
        return local

    def _handle(self, written: Written) -> WriteHandle:
        written.handles += 1
        return WriteHandle(written, os.open(written.local, os.O_RDWR))

    def create(self, path: str) -> WriteHandle:
        """A new empty file at ``path`` (uploaded at its first close)."""
        with self._lock:
            written = self.written.get(path)
            if written is None:
                written = self.written[path] = Written(path, self._local(), pending=True)
            else:
                os.truncate(written.local, 0)
                written.pending = True
            return self._handle(written)

    def open(self, path: str, entry: dict[str, Any] | None, *, truncate: bool) -> WriteHandle:
        """An open of ``path`` that may write: the mount's own copy, or a copy of the
        object listed as ``entry`` (fetched whole unless ``truncate``), if it may be
        replaced (not a bundle member, no early deletion unless allowed)."""
        with self._lock:
            if path in self.written:
                return self._reopen(path, truncate)
        if entry is None:
            raise mfusepy.FuseOSError(errno.ENOENT)
        self.check_removal(path, entry, "replaced")
        local = self._local()
        if not truncate:
            if not state_from_entry(entry).readable:
                os.unlink(local)
                raise refuse(
                    NOT_READABLE,
                    "%s: archived; not opened for writing (its bytes cannot be read "
                    "to change them). Fix: restore it first, or replace it whole "
                    "(open with O_TRUNC, as `cp` and `>` do).",
                    self.url(path),
                )
            self.fs.get_file(self.listings.target(path), local)
        with self._lock:
            if path in self.written:  # another open made a copy meanwhile: use that one
                os.unlink(local)
            else:
                self.written[path] = Written(path, local, pending=False)
            return self._reopen(path, truncate)

    def _reopen(self, path: str, truncate: bool) -> WriteHandle:
        """A handle of the local copy of ``path`` (emptied with ``truncate``); hold the lock."""
        written = self.written[path]
        if truncate:
            os.truncate(written.local, 0)
            written.pending = True
        return self._handle(written)

    # -- uploading -------------------------------------------------------------------------

    def flush(self, handle: WriteHandle) -> None:
        """Upload the handle's file if it was written to since its last upload (a close)."""
        self.upload(handle.written)

    def release(self, handle: WriteHandle) -> None:
        """The last close of a handle: upload what a failed flush left unsent, and a file
        created (or truncated) empty once nothing has it open."""
        handle.close()
        with self._lock:
            handle.written.handles -= 1
        self.upload(handle.written, closing=True)
        self._drop(handle.written)

    def _drop(self, written: Written) -> None:
        """Remove the local copy of a file nothing has open and the store has as it is
        (local disk holds only what is open or unsent); the mount remembers the files it
        uploaded (they may be renamed)."""
        with written.lock, self._lock:
            if written.handles or written.dirty or written.pending:
                return
            if self.written.get(written.path) is written:
                del self.written[written.path]
            if written.uploaded:
                self.wrote.add(written.path)
        with contextlib.suppress(FileNotFoundError):  # deleted or replaced while open
            os.unlink(written.local)

    def upload(self, written: Written, *, closing: bool = False) -> None:
        """One upload of ``written``'s local copy into the mount's class, if it changed;
        its cost goes to the log."""
        with written.lock:
            empty = closing and written.pending and written.handles == 0
            with self._lock:
                current = self.written.get(written.path) is written  # not deleted or replaced
            if not current or not (written.dirty or empty):
                return
            written.dirty = written.pending = False  # a write from now on sends it again
            path = written.path
            size = os.path.getsize(written.local)
            klass = self.storage_class
            try:
                self.fs.put_file(
                    written.local, self.listings.target(path), storage_class=klass.name
                )
            except BaseException:
                written.dirty = True  # sent again at the next close
                raise
            written.uploaded = True
        self.listings.forget(path.rpartition("/")[0] or "/")
        cost = write_cost(self.fs.price_sheet, klass, size)
        note = ""
        if klass.needs_restore:
            note = f"; {klass.name} is an archive class: reading it back needs a restore"
        if cost.min_storage_days:
            note += (
                f"; deleting or replacing it within {cost.min_storage_days} days bills "
                "early deletion"
            )
        log.info(
            "uploaded %s (%d bytes) in %s: %s for %d PUT request(s), %s a month of "
            "storage (price sheet %s)%s",
            self.url(path),
            size,
            klass.name,
            format_amount(cost.requests, cost.currency),
            cost.put_requests,
            format_amount(cost.storage_per_month, cost.currency),
            cost.sheet,
            note,
        )

    def truncate(self, path: str, length: int, entry: dict[str, Any] | None) -> None:
        """``truncate`` of a path no open file names: change the copy and upload it now."""
        handle = self.open(path, entry, truncate=length == 0)
        try:
            handle.truncate(length)
        finally:
            self.release(handle)

    # -- deleting and renaming -------------------------------------------------------------

    def check_removal(self, path: str, entry: dict[str, Any], verb: str) -> float:
        """What removing the object listed as ``entry`` bills for early deletion (0:
        nothing); raise ``EPERM`` (having logged why) for a bundle member, and for an early
        deletion the mount does not allow."""
        url = self.url(path)
        if entry.get("bundle"):
            raise refuse(
                REFUSED_DELETE,
                "%s: a member of bundle %s; not %s (its bytes live in the shared bundle). "
                "Fix: re-bundle its folder without it (`archivefs bundle`).",
                url,
                entry["bundle"],
                verb,
            )
        try:
            klass = StorageClass.parse(
                str(entry.get("storage_class") or "") or None, provider=self.fs.provider.name
            )
            now = time.time()
            age_days = (now - mtime_of(entry, now)) / SECONDS_PER_DAY
            size = int(entry.get("size") or 0)
            cost = early_deletion_cost(self.fs.price_sheet, klass, size, age_days)
        except (ArchiveError, ValueError) as error:  # a class the price sheet lacks
            log.info("%s: early deletion not priced (%s)", url, error)
            return 0.0
        if cost <= 0:
            return 0.0
        amount = format_amount(cost, self.fs.price_sheet.currency)
        days = klass.spec.min_storage_days
        if not self.allow_early_delete:
            raise refuse(
                REFUSED_DELETE,
                "%s: in %s for %.1f of its %d minimum days; not %s: that bills %s of early "
                "deletion. Fix: mount with --allow-early-delete to pay it, or wait.",
                url,
                klass.name,
                age_days,
                days,
                verb,
                amount,
            )
        log.warning(
            "%s: %s in %s after %.1f of its %d minimum days: %s of early deletion billed "
            "(--allow-early-delete)",
            url,
            verb,
            klass.name,
            age_days,
            days,
            amount,
        )
        return cost

    def unlink(self, path: str, entry: dict[str, Any] | None) -> None:
        """Remove the file: the object (one delete request, if the store has it) and the
        mount's own copy."""
        with self._lock:
            written = self.written.get(path)
        if entry is None and written is not None and written.uploaded:
            entry = written.entry() | {"storage_class": self.storage_class.name}
        if entry is None and written is None:
            raise mfusepy.FuseOSError(errno.ENOENT)
        if entry is not None:
            if entry.get("type") == "directory":
                raise mfusepy.FuseOSError(errno.EISDIR)
            self.check_removal(path, entry, "deleted")
            self.fs.rm_file(self.listings.target(path))
            self.listings.forget(path.rpartition("/")[0] or "/")
            log.info("deleted %s (1 delete request)", self.url(path))
        with self._lock:
            self.wrote.discard(path)
            if written is not None:
                self.written.pop(path, None)
        if written is not None:
            os.unlink(written.local)

    def rename(self, old: str, new: str, new_entry: dict[str, Any] | None) -> None:
        """Rename a file this mount wrote (an upload at ``new``, then a delete of ``old``
        if the store had it) or a directory it made; anything else is ``EXDEV`` (a store
        has no rename: ``mv`` then copies and deletes, through the same rules)."""
        with self._lock:
            written = self.written.get(old)
            if written is None and old in self.directories and not self.names_in(old):
                self.directories.discard(old)
                self.directories.add(new)
                return
        if written is None and old not in self.wrote:
            raise refuse(
                errno.EXDEV,
                "%s: not written by this mount; not renamed in place (a rename in the "
                "store is a copy and a delete). `mv` copies and deletes it instead.",
                self.url(old),
            )
        if self.storage_class.spec.min_storage_days or self.storage_class.needs_restore:
            raise refuse(
                REFUSED_DELETE,
                "%s: written in %s; not renamed (its copy under the new name would be a "
                "second upload and the old one an early deletion). Fix: write it under its "
                "final name (`cp`, not `rsync`), or mount with a class that has no minimum "
                "storage time.",
                self.url(old),
                self.storage_class.name,
            )
        if new_entry is not None and new not in self.written:
            if new_entry.get("type") == "directory":
                raise mfusepy.FuseOSError(errno.EISDIR)
            self.check_removal(new, new_entry, "replaced")
        if written is None:  # uploaded and closed: its bytes again, from the store
            local = self._local()
            self.fs.get_file(self.listings.target(old), local)
            written = Written(old, local, pending=False)
            written.uploaded = True
            with self._lock:
                self.written[old] = written
        with self._lock:
            self.wrote.discard(old)
            replaced = self.written.pop(new, None)
            self.written[new] = self.written.pop(old)
            written.path = new
        if replaced is not None and not replaced.handles:
            os.unlink(replaced.local)
        if written.uploaded:
            written.dirty = True
            self.upload(written)
            self.fs.rm_file(self.listings.target(old))
            self.listings.forget(old.rpartition("/")[0] or "/")
            log.info(
                "renamed %s to %s: one upload and 1 delete request", self.url(old), self.url(new)
            )
        elif written.handles == 0:  # not open: what it waited to send goes out under the new name
            self.upload(written, closing=True)
        if written.handles == 0:
            self._drop(written)

    # -- directories -------------------------------------------------------------------------

    def mkdir(self, path: str) -> None:
        """A directory of the mount only: the store has one once a file is below it."""
        with self._lock:
            self.directories.add(path)

    def rmdir(self, path: str, listed: bool) -> None:
        """Remove an empty directory (``listed``: the store has files below it, and it is
        ``ENOTEMPTY``). A prefix is gone from the store with its last file: one the mount
        made is forgotten, and the parent is listed again at the next look."""
        if listed or self.names_in(path):
            raise mfusepy.FuseOSError(errno.ENOTEMPTY)
        with self._lock:
            self.directories.discard(path)
        self.listings.forget(path.rpartition("/")[0] or "/")
