"""Mounting and unmounting: in the foreground (the CLI), in a thread (:func:`mount`), or
detached (``archivefs mount --daemon``). Unmounting is ``fusermount3 -u``, which also
clears the mount a killed process left behind."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError
from archivefs.model import StorageClass
from archivefs.mount.admission import Admission, OnArchived
from archivefs.mount.batches import DEFAULT_BATCH_WINDOW
from archivefs.mount.listings import DEFAULT_LISTING_TTL, Listings

DEFAULT_CACHE_SIZE = 10 * 2**30  # --cache-size: 10 GiB

if TYPE_CHECKING:
    from collections.abc import Iterator

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.mount.writes import Writer

log = logging.getLogger("archivefs.mount")

UNMOUNT_TIMEOUT = 30.0  # seconds fusermount3 may take
READY_TIMEOUT = 60.0  # seconds a new mount may take to appear (a busy machine)


@dataclass(frozen=True)
class MountOptions:
    """How a mount behaves (``archivefs mount``'s options; docs/mount.md)."""

    on_archived: OnArchived = "raise"
    wait_timeout: float | None = None  # --on-archived wait: longest an open blocks
    listing_ttl: float = DEFAULT_LISTING_TTL  # seconds a directory listing answers stat
    batch_window: float = DEFAULT_BATCH_WINDOW  # seconds opens gather into one restore
    cache: str | None = None  # the disk cache's directory (None: no disk cache)
    cache_size: int = DEFAULT_CACHE_SIZE  # bytes it may hold (LRU beyond)
    writable: bool = False  # files written are uploaded (else every write is EROFS)
    storage_class: str | None = None  # the class uploads go in (None: the provider's default)
    allow_early_delete: bool = False  # delete/replace objects within their minimum days


def fuse_problem() -> str | None:
    """Why this machine cannot mount (None: it can)."""
    if not os.path.exists("/dev/fuse"):
        return (
            "/dev/fuse is missing (load the fuse module, or give the container --device /dev/fuse)"
        )
    if shutil.which("fusermount3") is None:
        return "fusermount3 is missing (install Debian's fuse3 package)"
    try:
        from archivefs.mount.binding import mfusepy  # noqa: F401
    except (ImportError, OSError) as error:
        return (
            f"the FUSE binding does not load ({error}); pip install 'archivefs[mount]' and libfuse3"
        )
    return None


def root_of(url: str) -> str:
    """The mounted root (``bucket/prefix``) of ``url`` (``s3://bucket/prefix/``)."""
    last = url.rsplit("::", 1)[-1]
    return last.split("://", 1)[-1].strip("/")


def check_mountpoint(mountpoint: str | os.PathLike[str]) -> Path:
    """``mountpoint`` as a path, if it is an existing directory with no mount on it."""
    path = Path(mountpoint).absolute()
    if not path.is_dir():
        raise ArchiveError(
            "the mount point is not a directory.", path=str(path), fix=f"mkdir -p {path}"
        )
    if os.path.ismount(path):
        raise ArchiveError(
            "something is mounted there already.",
            path=str(path),
            fix=f"archivefs unmount {path} (or fusermount3 -u {path}), then mount again.",
        )
    return path


def serve(
    fs: ArchiveFileSystem,
    url: str,
    mountpoint: str | os.PathLike[str],
    options: MountOptions = MountOptions(),
) -> None:
    """Mount ``url`` at ``mountpoint`` and answer requests until it is unmounted (Ctrl-C or
    SIGTERM in the main thread, ``fusermount3 -u``)."""
    from archivefs.mount.binding import libfuse_version, mfusepy
    from archivefs.mount.operations import ArchiveOperations

    problem = fuse_problem()
    if problem:
        raise ArchiveError(f"cannot mount: {problem}.", path=str(mountpoint))
    path = check_mountpoint(mountpoint)
    root = root_of(url)
    fs.ls(root)  # a root that cannot be listed fails here, in words, not at the first ls
    listings = Listings(fs, root, options.listing_ttl)

    def restored(paths: list[str]) -> None:  # states changed: list their folders again
        for target in paths:
            inner = target[len(root) :].strip("/")
            listings.forget("/" + inner.rpartition("/")[0])

    admission = Admission(
        fs,
        options.on_archived,
        wait_timeout=options.wait_timeout,
        window=options.batch_window,
        restored=restored,
    )
    cache = None
    if options.cache is not None:
        from archivefs.mount.cache import DiskCache

        cache = DiskCache(options.cache, options.cache_size, fs.store_scope)
    writer = writer_for(fs, listings, options)
    operations = ArchiveOperations(fs, listings, admission, cache, writer)
    log.info(
        "mounted %s at %s (--on-archived %s, libfuse %d.%d)",
        url,
        path,
        options.on_archived,
        *libfuse_version(),
    )
    if writer is not None:
        klass = writer.storage_class
        log.info(
            "writable: files written are uploaded in %s%s; local copies of open files in %s",
            klass.name,
            " (an archive class: reading them back needs a restore)" if klass.needs_restore else "",
            writer.dir,
        )
    try:
        mfusepy.FUSE(
            operations,
            str(path),
            foreground=True,
            fsname=f"archivefs:{root}",
            subtype="archivefs",
        )
    except RuntimeError as error:
        # libfuse's loop ended by SIGINT/SIGTERM/SIGHUP reports the signal (fuse_main_real:
        # 8); an end that left the mount point unmounted is a clean one
        if os.path.ismount(path):
            raise ArchiveError(f"the FUSE loop failed ({error}).", path=str(path)) from error
    finally:
        if writer is not None:
            writer.close()
    log.info("unmounted %s", path)


def storage_class_for(fs: ArchiveFileSystem, name: str | None) -> StorageClass:
    """The class a writable mount uploads in: ``name`` in the store's provider's names
    (None: the provider's default, hot class); an unknown name is an error naming them."""
    return StorageClass.parse(name, provider=fs.provider.name)


def writer_for(fs: ArchiveFileSystem, listings: Listings, options: MountOptions) -> Writer | None:
    """The mount's writer (None: read-only), its local copies in a private directory under
    the user cache (``mounts/writes-*``, mode 0700; removed at unmount)."""
    if not options.writable:
        if options.storage_class is not None or options.allow_early_delete:
            raise ValueError("storage_class and allow_early_delete need writable=True")
        return None
    from archivefs.mount.writes import Writer
    from archivefs.paths import cache_dir

    return Writer(
        fs,
        listings,
        storage_class_for(fs, options.storage_class),
        cache_dir() / "mounts",
        allow_early_delete=options.allow_early_delete,
    )


_LIBFUSE_SIGNALS = (signal.SIGPIPE, signal.SIGHUP, signal.SIGTERM, signal.SIGINT)


def _signal_dispositions() -> dict[int, Any]:
    """The Python-level handlers of the signals libfuse's loop changes (main thread only:
    elsewhere they cannot be set back, and an empty record restores nothing)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in _LIBFUSE_SIGNALS}


def _restore_signal_dispositions(saved: dict[int, Any]) -> None:
    """Set each signal back to ``saved`` (the process's real disposition, which libfuse
    changed beneath Python's own record)."""
    for sig, handler in saved.items():
        if handler is not None:
            signal.signal(sig, handler)


def unmount(mountpoint: str | os.PathLike[str], *, lazy: bool = False) -> None:
    """Unmount ``mountpoint`` (``fusermount3 -u``; ``lazy``: ``-uz``, detached now and
    gone once nothing uses it). Also clears the mount of a process that was killed."""
    flags = "-uz" if lazy else "-u"
    try:
        done = subprocess.run(
            ["fusermount3", flags, str(mountpoint)],
            capture_output=True,
            text=True,
            timeout=UNMOUNT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise ArchiveError(
            "fusermount3 did not finish.", path=str(mountpoint), fix="run it with -uz."
        ) from error
    if done.returncode != 0:
        raise ArchiveError(
            f"could not unmount: {done.stderr.strip()}",
            path=str(mountpoint),
            fix="close the programs using it (fuser -m MOUNTPOINT) or unmount with --lazy.",
        )


def wait_mounted(mountpoint: Path, alive: Any, timeout: float = READY_TIMEOUT) -> bool:
    """Wait until ``mountpoint`` is a mount (True) or ``alive()`` turns false (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.ismount(mountpoint):
            return True
        if not alive():
            return False
        time.sleep(0.02)
    return False


@contextlib.contextmanager
def mount(
    url: str,
    mountpoint: str | os.PathLike[str],
    *,
    fs: ArchiveFileSystem | None = None,
    on_archived: OnArchived = "raise",
    wait_timeout: float | None = None,
    listing_ttl: float = DEFAULT_LISTING_TTL,
    batch_window: float = DEFAULT_BATCH_WINDOW,
    cache: str | os.PathLike[str] | None = None,
    cache_size: int = DEFAULT_CACHE_SIZE,
    writable: bool = False,
    storage_class: str | None = None,
    allow_early_delete: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Iterator[Path]:
    """Mount ``url`` at ``mountpoint`` for the ``with`` block (served by a thread of this
    process) and unmount at its end.

    ``fs``: the ArchiveFileSystem to read through (its budget, tier, journal...); else one
    over ``url``'s store with ``storage_options``. The other options are
    :class:`MountOptions`'.

    Examples
    --------
    ```python
    with archivefs.mount("s3://bucket/run42/", "/mnt/run42") as root:
        print(sorted(p.name for p in root.iterdir()))
    ```
    """
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.providers import url_protocol

    if fs is None:
        fs = ArchiveFileSystem(target_protocol=url_protocol(url), target_options=storage_options)
    options = MountOptions(
        on_archived,
        wait_timeout,
        listing_ttl,
        batch_window,
        None if cache is None else str(cache),
        cache_size,
        writable,
        storage_class,
        allow_early_delete,
    )
    if writable:
        storage_class_for(fs, storage_class)  # an unknown class fails here, not in the thread
    path = check_mountpoint(mountpoint)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            serve(fs, url, path, options)
        except BaseException as error:
            failed.append(error)

    # libfuse sets SIGPIPE (and SIGHUP/SIGTERM) for its loop and, when the loop ends, sets
    # SIGPIPE back to SIG_DFL whatever it was: a Python process (which ignores SIGPIPE)
    # would then die on its next write to a closed socket. Put them back as they were.
    saved = _signal_dispositions()
    thread = threading.Thread(target=run, name=f"archivefs mount {path}", daemon=True)
    thread.start()
    if not wait_mounted(path, thread.is_alive):
        if os.path.ismount(path):
            unmount(path, lazy=True)
        thread.join(UNMOUNT_TIMEOUT)
        _restore_signal_dispositions(saved)
        if failed:
            raise failed[0]
        raise ArchiveError("the mount did not appear in time.", path=str(path))
    try:
        yield path
    finally:
        try:
            unmount(path)
        except ArchiveError:
            unmount(path, lazy=True)  # a program still has a file open: detach now
        thread.join(UNMOUNT_TIMEOUT)
        _restore_signal_dispositions(saved)


def daemonize(mountpoint: Path, log_file: Path) -> int | None:
    """Fork the command (``--daemon``; call it before any thread or store connection
    exists). In the child: a new session whose output goes to ``log_file``; returns None,
    and the child goes on to serve in the foreground. In the parent: waits until the mount
    is there and returns the child's pid (raises, with the log's last lines, if the child
    ended first). Nothing is passed on a command line: options and secrets stay in memory."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        sink = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.dup2(sink, 1)
        os.dup2(sink, 2)
        os.close(quiet)
        os.close(sink)
        return None

    ended: list[int] = []  # the child's wait status once it ended (reaped)

    def alive() -> bool:
        if not ended:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                ended.append(status)
        return not ended

    if wait_mounted(mountpoint, alive):
        return pid
    if alive():
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    tail = log_file.read_text(errors="replace").strip().splitlines()[-5:]
    raise ArchiveError(
        "the mount did not start: " + " / ".join(tail),
        path=str(mountpoint),
        fix=f"see {log_file}, or run the same command without --daemon.",
    )
