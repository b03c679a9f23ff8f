"""The FUSE operations of a mount, over an ArchiveFileSystem's public operations only.

``stat``/``readdir`` from directory listings (:class:`~archivefs.mount.listings.Listings`),
opens through the ``--on-archived`` policy (:class:`~archivefs.mount.admission.Admission`),
reads through ``fs.open()``'s file (the filesystem's one read path: coalescing, readahead,
read policy, counting). Every error becomes an errno in one place (``errnos.errno_of``).
"""

from __future__ import annotations

import errno
import functools
import itertools
import logging
import os
import time
from typing import TYPE_CHECKING, Any, TypeVar

import mfusepy

from archivefs.mount import xattrs
from archivefs.mount.admission import Refused
from archivefs.mount.attrs import stat_of
from archivefs.mount.cache import identity
from archivefs.mount.errnos import READ_ONLY, errno_of
from archivefs.mount.files import OpenFiles

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.mount.admission import Admission
    from archivefs.mount.cache import DiskCache, Filling
    from archivefs.mount.files import SharedFile
    from archivefs.mount.listings import Listings

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


class ArchiveOperations(mfusepy.Operations):  # type: ignore[misc]
    """A read-only tree of the archive below one root (``bucket/prefix``)."""

    use_ns = True  # times in nanoseconds (mfusepy's modern form)

    def __init__(
        self,
        fs: ArchiveFileSystem,
        listings: Listings,
        admission: Admission,
        cache: DiskCache | None = None,
    ) -> None:
        self.fs = fs
        self.listings = listings
        self.admission = admission
        self.cache = cache
        self.files = OpenFiles()
        self.uid, self.gid = os.getuid(), os.getgid()
        self.mounted_at = time.time()
        self._handles: dict[int, _Handle | _CachedHandle] = {}
        self._numbers = itertools.count(1)

    def _entry(self, path: str) -> dict[str, Any]:
        entry = self.listings.entry(path)
        if entry is None:
            raise mfusepy.FuseOSError(errno.ENOENT)
        return entry

    @as_errno
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        return stat_of(self._entry(path), uid=self.uid, gid=self.gid, mounted_at=self.mounted_at)

    @as_errno
    def readdir(self, path: str, fh: int) -> list[str]:
        if self._entry(path).get("type") != "directory":
            raise mfusepy.FuseOSError(errno.ENOTDIR)
        return [".", "..", *self.listings.entries(path)]

    @as_errno
    def open(self, path: str, flags: int) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND):
            raise mfusepy.FuseOSError(READ_ONLY)
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
        if handle is not None:
            handle.close()
        return 0

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
        return {"f_bsize": 1 << 20, "f_frsize": 1 << 20, "f_namemax": 1024}

    # what would change the tree: refused with EROFS (registered, so the kernel asks us
    # and the program hears EROFS, not ENOSYS)
    def create(self, path: str, mode: int, fi: Any = None) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def mkdir(self, path: str, mode: int) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def mknod(self, path: str, mode: int, dev: int) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def unlink(self, path: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def rmdir(self, path: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def rename(self, old: str, new: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def symlink(self, target: str, source: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def link(self, target: str, source: str) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def chmod(self, path: str, mode: int) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def chown(self, path: str, uid: int, gid: int) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        raise mfusepy.FuseOSError(READ_ONLY)
