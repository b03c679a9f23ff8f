"""The one place archivefs looks inside fsspec's AsyncFileSystemWrapper."""

from __future__ import annotations

from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper
from fsspec.implementations.local import LocalFileSystem

from archivefs.wrapped import unwrapped, wrapped_sync


def test_a_wrapper_gives_the_filesystem_it_wraps() -> None:
    local = LocalFileSystem()
    wrapper = AsyncFileSystemWrapper(local)
    assert unwrapped(wrapper) is local
    assert wrapped_sync(wrapper) is local


def test_a_plain_filesystem_is_its_own_worker_and_wraps_none() -> None:
    local = LocalFileSystem()
    assert unwrapped(local) is local
    assert wrapped_sync(local) is None
