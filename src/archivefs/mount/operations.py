"""The FUSE operations of a mount, over an ArchiveFileSystem's public operations only.

``stat``/``readdir`` from directory listings (:class:`~archivefs.mount.listings.Listings`),
opens through the ``--on-archived`` policy (:class:`~archivefs.mount.admission.Admission`),
reads through ``fs.open()``'s file (the filesystem's one read path: coalescing, readahead,
read policy, counting); with a :class:`~archivefs.mount.writes.Writer` (``--writable``),
writes, deletes, renames and mkdir go to it, and without one they fail with ``EROFS``.
Every error becomes an errno in one place (``errnos.errno_of``).
"""

from __future__ import annotations

import errno
import functools
import itertools
import logging
import os
import time
from typing import TYPE_CHECKING, Any, TypeVar

from archivefs.mount import xattrs
from archivefs.mount.admission import Refused
from archivefs.mount.attrs import stat_of
from archivefs.mount.binding import mfusepy
from archivefs.mount.cache import identity
from archivefs.mount.errnos import READ_ONLY, errno_of
from archivefs.mount.files import OpenFiles
from archivefs.mount.writes import WriteHandle

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.mount.admission import Admission
    from archivefs.mount.cache import DiskCache, Filling
    from archivefs.mount.files import SharedFile
    from archivefs.mount.listings import Listings
    from archivefs.mount.writes import Writer

log = logging.getLogger("archivefs.mount")

T = TypeVar("T")


def as_errno(method: Callable[..., T]) -> Callable[..., T]:
    """Run a FUSE operation; an error becomes the errno a program sees, its words the log's."""

    @functools.wraps(method)
    def run(self: Any, path: str, *args: Any) -> T:
        try:
            return method(self, path, *args)
        except mfusepy.FuseOSError:
            raise
        except Refused as refused:  # the policy logged why
            raise mfusepy.FuseOSError(refused.errno) from None
        except Exception as error:
            code = errno_of(error)
            if code != errno.ENOENT:
                log.warning("%s %s: %s", method.__name__, path, error)
            raise mfusepy.FuseOSError(code) from None

    return run


class _Handle:
    """An open file: its shared file object (``files.py``); what it delivers also fills
    the disk cache when the mount has one."""

    def __init__(self, files: OpenFiles, shared: SharedFile, filling: Filling | None) -> None:
        self.files = files
        self.shared = shared
        self.filling = filling

    def read(self, size: int, offset: int) -> bytes:
        data = self.shared.read(size, offset)
        if self.filling is not None:
            self.filling.wrote(offset, data)
        return data

    def close(self) -> None:
        self.files.release(self.shared)
        if self.filling is not None:
            self.filling.close()


class _CachedHandle:
    """An open file read from its copy in the disk cache (no request)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read(self, size: int, offset: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def close(self) -> None:
        os.close(self.fd)


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND


class ArchiveOperations(mfusepy.Operations):  # type: ignore[misc]
    """The tree of the archive below one root (``bucket/prefix``): read-only, unless a
    ``writer`` takes the writes."""

    use_ns = True  # times in nanoseconds (mfusepy's modern form)

    def __init__(
        self,
        fs: ArchiveFileSystem,
        listings: Listings,
        admission: Admission,
        cache: DiskCache | None = None,
        writer: Writer | None = None,
    ) -> None:
        self.fs = fs
        self.listings = listings
        self.admission = admission
        self.cache = cache
        self.writer = writer
        self.files = OpenFiles()
        self.uid, self.gid = os.getuid(), os.getgid()
        self.mounted_at = time.time()
        self._handles: dict[int, _Handle | _CachedHandle | WriteHandle] = {}
        self._numbers = itertools.count(1)

    def _entry(self, path: str) -> dict[str, Any]:
        entry = self.writer.entry(path) if self.writer is not None else None
        if entry is None:
            entry = self.listings.entry(path)
        if entry is None:
            raise mfusepy.FuseOSError(errno.ENOENT)
        return entry

    def _writer(self) -> Writer:
        """The mount's writer (``EROFS`` without ``--writable``)."""
        if self.writer is None:
            raise mfusepy.FuseOSError(READ_ONLY)
        return self.writer

    def _add(self, handle: _Handle | _CachedHandle | WriteHandle) -> int:
        number = next(self._numbers)
        self._handles[number] = handle
        return number

    @as_errno
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        return stat_of(
            self._entry(path),
            uid=self.uid,
            gid=self.gid,
            mounted_at=self.mounted_at,
            writable=self.writer is not None,
        )

    @as_errno
    def readdir(self, path: str, fh: int) -> list[str]:
        if self._entry(path).get("type") != "directory":
            raise mfusepy.FuseOSError(errno.ENOTDIR)
        if self.writer is None:
            return [".", "..", *self.listings.entries(path)]
        try:
            listed = list(self.listings.entries(path))
        except (FileNotFoundError, NotADirectoryError):  # a directory only the mount made
            listed = []
        own = [name for name in self.writer.names_in(path) if name not in listed]
        return [".", "..", *listed, *own]

    @as_errno
    def open(self, path: str, flags: int) -> int:
        writes = bool(flags & WRITE_FLAGS)
        if writes or (self.writer is not None and path in self.writer.written):
            writer = self._writer()
            if self._entry(path).get("type") == "directory":
                raise mfusepy.FuseOSError(errno.EISDIR)
            listed = self.listings.entry(path)
            return self._add(writer.open(path, listed, truncate=bool(flags & os.O_TRUNC)))
        entry = self._entry(path)
        if entry.get("type") == "directory":
            raise mfusepy.FuseOSError(errno.EISDIR)
        target = self.listings.target(path)
        size = int(entry.get("size") or 0)
        name = self.cache.name(target, entry) if self.cache is not None else None
        number = next(self._numbers)
        if self.cache is not None and name is not None:
            fd = self.cache.open(name)
            if fd is not None:  # this version was read whole before: no request
                self._handles[number] = _CachedHandle(fd)
                return number
        self.admission.admit(target, entry)
        version = identity(entry)
        shared = self.files.acquire(
            None if version is None else (target, version),
            lambda: self.fs.open(target, "rb", size=size),
        )
        filling = self.cache.filling(name, size) if self.cache and name else None
        self._handles[number] = _Handle(self.files, shared, filling)
        return number

    @as_errno
    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return self._handles[fh].read(size, offset)

    @as_errno
    def release(self, path: str, fh: int) -> int:
        handle = self._handles.pop(fh, None)
        if isinstance(handle, WriteHandle):
            self._writer().release(handle)  # uploads what a failed flush left unsent
        elif handle is not None:
            handle.close()
        return 0

    @as_errno
    def flush(self, path: str, fh: int) -> int:
        """A close: a file changed through this handle is uploaded now (once), so the
        program's ``close()`` returns after the store has it, or fails if it does not."""
        handle = self._handles.get(fh)
        if isinstance(handle, WriteHandle):
            self._writer().flush(handle)
        return 0

    @as_errno
    def fsync(self, path: str, datasync: int, fh: int) -> int:
        return self.flush(path, fh)

    @as_errno
    def listxattr(self, path: str) -> list[str]:
        return xattrs.names(self._entry(path))

    @as_errno
    def getxattr(self, path: str, name: str, position: int = 0) -> bytes:
        found = xattrs.value(self.fs, self.listings.target(path), self._entry(path), name)
        if found is None:
            raise mfusepy.FuseOSError(errno.ENODATA)
        return found.encode()

    @as_errno
    def setxattr(self, path: str, name: str, value: bytes, options: int, position: int = 0) -> int:
        """``user.archivefs.restore`` = a tier: restore the file, or a directory's subtree,
        in one call of the filesystem's restore (one request per group, the budget)."""
        if name != xattrs.RESTORE:
            raise mfusepy.FuseOSError(errno.ENOTSUP)
        entry = self._entry(path)
        tier = value.decode(errors="replace").strip() or None
        result = self.fs.restore(self.listings.target(path), tier=tier)
        log.info(
            "restore of %s at %s: %d request(s) sent",
            self.admission.url(self.listings.target(path)),
            tier or "the default tier",
            result.requests_sent,
        )
        directory = path if entry.get("type") == "directory" else path.rpartition("/")[0]
        self.listings.forget(directory or "/")
        if entry.get("type") == "directory":
            self.listings.forget()  # states below it changed: list again on the next look
        return 0

    def removexattr(self, path: str, name: str) -> int:
        raise mfusepy.FuseOSError(errno.ENOTSUP)

    def statfs(self, path: str) -> dict[str, int]:
        found = {"f_bsize": 1 << 20, "f_frsize": 1 << 20, "f_namemax": 1024}
        if self.writer is not None:  # a bucket has no size: room, for programs that check
            found |= {"f_blocks": 1 << 30, "f_bfree": 1 << 30, "f_bavail": 1 << 30}
        return found

    # what changes the tree: the writer's (--writable), else refused with EROFS (registered,
    # so the kernel asks us and the program hears EROFS, not ENOSYS)
    @as_errno
    def create(self, path: str, mode: int, fi: Any = None) -> int:
        writer = self._writer()
        self._directory(path.rpartition("/")[0] or "/")
        return self._add(writer.create(path))

    @as_errno
    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        handle = self._handles.get(fh)
        if not isinstance(handle, WriteHandle):
            raise mfusepy.FuseOSError(READ_ONLY if self.writer is None else errno.EBADF)
        return handle.write(data, offset)

    @as_errno
    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        writer = self._writer()
        handle = self._handles.get(fh) if fh is not None else None
        if isinstance(handle, WriteHandle):
            handle.truncate(length)
        else:
            writer.truncate(path, length, self.listings.entry(path))
        return 0

    def _directory(self, path: str) -> None:
        """``path`` is a directory (else ENOENT or ENOTDIR)."""
        if self._entry(path).get("type") != "directory":
            raise mfusepy.FuseOSError(errno.ENOTDIR)

    @as_errno
    def mkdir(self, path: str, mode: int) -> int:
        writer = self._writer()
        if writer.entry(path) or self.listings.entry(path):
            raise mfusepy.FuseOSError(errno.EEXIST)
        self._directory(path.rpartition("/")[0] or "/")
        writer.mkdir(path)
        return 0

    def mknod(self, path: str, mode: int, dev: int) -> int:
        raise mfusepy.FuseOSError(READ_ONLY if self.writer is None else errno.EPERM)

    @as_errno
    def unlink(self, path: str) -> int:
        self._writer().unlink(path, self.listings.entry(path))
        return 0

    @as_errno
    def rmdir(self, path: str) -> int:
        writer = self._writer()
        self._directory(path)
        try:
            listed = bool(self.listings.entries(path))
        except (FileNotFoundError, NotADirectoryError):
            listed = False
        writer.rmdir(path, listed)
        return 0

    @as_errno
    def rename(self, old: str, new: str) -> int:
        writer = self._writer()
        self._entry(old)
        self._directory(new.rpartition("/")[0] or "/")
        writer.rename(old, new, self.listings.entry(new))
        return 0

    def symlink(self, target: str, source: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY if self.writer is None else errno.EPERM)

    def link(self, target: str, source: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY if self.writer is None else errno.EPERM)

    # modes, owners and times are not kept by the store: a --writable mount accepts them
    # (tar, cp -p set them) and keeps nothing
    @as_errno
    def chmod(self, path: str, mode: int) -> int:
        self._writer()
        self._entry(path)
        return 0

    @as_errno
    def chown(self, path: str, uid: int, gid: int) -> int:
        self._writer()
        self._entry(path)
        return 0

    @as_errno
    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        self._writer()
        self._entry(path)
        return 0
