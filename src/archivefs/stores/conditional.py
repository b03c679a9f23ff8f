"""Small objects that many writers share: read with a version, write only over that version.

A catalog pointer or a bucket's registry is read, changed and written back by
whoever bundles into that bucket. :func:`read_versioned` returns the bytes and
the version they are (one request, so the two always belong together), and
:func:`write_versioned` writes only if the object still has that version (or,
given ``None``, only if there is no object): a writer that lost a race gets
``False``, re-reads and merges, and never replaces what it did not read.

Each store's own conditional write is used, through its adapter's
``read_tagged``/``create_exclusive``/``replace_if_unchanged``: S3 ``If-Match`` /
``If-None-Match: *`` (ETags), Azure the same headers on Put Blob, GCS
``ifGenerationMatch`` (0 to create), Oracle ``if-match`` / ``if-none-match: *``.
A local directory has none: there the version is the SHA-256 of the bytes, and
the check and the write (a rename of a temporary file) happen under an
exclusive ``flock`` of the directory that holds it (fsspec's in-process
``memory://``: under a lock of this process).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsspec.asyn import get_loop, sync
from fsspec.implementations.dirfs import DirFileSystem

from archivefs.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterator

    from archivefs.stores.base import ColdStore


def is_local(fs: Any) -> bool:
    """Whether ``fs`` is fsspec's local filesystem (paths are this machine's paths)."""
    return bool({"file", "local"} & _protocols(fs))


def _protocols(fs: Any) -> set[str]:
    protocol = fs.protocol  # a str, or a tuple (ocifs: a list) of them
    return {protocol} if isinstance(protocol, str) else set(protocol)


MAX_SHARED_BYTES = 256 << 20  # a catalog pointer of 10^9 members is about 60 MiB
_IN_PROCESS = threading.Lock()  # stores with no conditional write of their own


def read_versioned(
    fs: Any,
    path: str,
    *,
    limit: int = MAX_SHARED_BYTES,
    too_large: type[ArchiveError] = ArchiveError,
) -> tuple[bytes, str] | None:
    """``(bytes, version)`` of ``path``, or ``None`` when there is no such object; an
    object larger than ``limit`` bytes is not read whole: ``too_large`` is raised."""
    fs, path = _unwrapped(fs, path)
    reading = read_versioned_async(fs, path, limit=limit, too_large=too_large)
    return run_blocking(fs, reading)  # type: ignore[no-any-return]


def write_versioned(fs: Any, path: str, data: bytes, version: str | None) -> bool:
    """Write ``data`` to ``path`` only if it still has ``version`` (``None``: only if absent).

    ``False`` when another writer changed (or created) the object first; nothing
    is written then.
    """
    fs, path = _unwrapped(fs, path)
    return bool(run_blocking(fs, write_versioned_async(fs, path, data, version)))


async def read_versioned_async(
    fs: Any,
    path: str,
    *,
    limit: int = MAX_SHARED_BYTES,
    too_large: type[ArchiveError] = ArchiveError,
) -> tuple[bytes, str] | None:
    """:func:`read_versioned` for code on the filesystem's event loop."""
    fs, path = _unwrapped(fs, path)
    if _has_store(fs):
        tagged = await _store(fs).read_tagged(path, limit=limit)
        if tagged is None:
            return None
        if not tagged.whole:
            raise _too_large(path, limit, too_large)
        return tagged.data, tagged.etag
    try:
        data = await _cat(fs, path, limit + 1)
    except FileNotFoundError:
        return None
    if len(data) > limit:
        raise _too_large(path, limit, too_large)
    return data, _digest(data)


def _too_large(path: str, limit: int, error: type[ArchiveError]) -> ArchiveError:
    return error(
        f"the object is larger than {limit:,} bytes, more than archivefs keeps in it, so "
        "it was not read.",
        path=path,
        fix="check what wrote it: archivefs's own catalog pointers and registries are far "
        "smaller; `archivefs catalog rebuild` writes a catalog pointer again.",
    )


async def write_versioned_async(fs: Any, path: str, data: bytes, version: str | None) -> bool:
    """:func:`write_versioned` for code on the filesystem's event loop."""
    fs, path = _unwrapped(fs, path)
    if is_local(fs):
        return _write_local(Path(path), data, version)
    if _has_store(fs):
        store = _store(fs)
        if version is None:
            return bool(await store.create_exclusive(path, data))
        return bool(await store.replace_if_unchanged(path, data, version))
    # memory:// and filesystems of no provider: compare and write under this process's lock
    with _IN_PROCESS:
        current = await read_versioned_async(fs, path)
        if (current[1] if current else None) != version:
            return False
        if getattr(fs, "async_impl", False):
            await fs._pipe_file(path, data)
        else:
            fs.pipe_file(path, data)
    return True


def _unwrapped(fs: Any, path: str) -> tuple[Any, str]:
    """The filesystem that stores ``path`` and its path there (through fsspec's ``dir://``)."""
    path = fs._strip_protocol(path)
    while isinstance(fs, DirFileSystem):
        fs, path = fs.fs, fs.fs._strip_protocol(fs._join(path))
    return fs, path


def _has_store(fs: Any) -> bool:
    """Whether ``fs`` speaks a provider's protocol (its adapter has conditional writes)."""
    from archivefs.stores import provider_speaking  # the adapters import this layer

    return provider_speaking(fs) is not None


async def _cat(fs: Any, path: str, end: int | None = None) -> bytes:
    """``path``'s bytes (its first ``end`` with ``end``: a ranged read)."""
    start = None if end is None else 0
    if getattr(fs, "async_impl", False):
        return bytes(await fs._cat_file(path, start=start, end=end))
    return bytes(fs.cat_file(path, start=start, end=end))


def _store(fs: Any) -> ColdStore:
    from archivefs.stores import make_store, provider_of  # the adapters import this layer

    return make_store(provider_of(fs), fs)


def run_blocking(fs: Any, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` from synchronous code, on the filesystem's loop if it has one."""

    async def run() -> Any:
        return await coroutine

    return sync(getattr(fs, "loop", None) or get_loop(), run)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive ``flock`` of ``directory`` itself (no lock file left beside the data)."""
    directory.mkdir(parents=True, exist_ok=True)
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing the last descriptor releases the lock


def _write_local(path: Path, data: bytes, version: str | None) -> bool:
    with _locked(path.parent):
        try:
            current: str | None = _digest(path.read_bytes())
        except FileNotFoundError:
            current = None
        if current != version:
            return False
        temporary = path.with_name(f"{path.name}.tmp-{uuid.uuid4().hex}")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    return True
