"""ArchiveFile: the read-only file ``ArchiveFileSystem.open`` returns.

Its ranges come through the filesystem's :class:`~archivefs.access.reads.Reads` (the
read policy, members from their bundles), and its metadata calls are the target's
(:class:`~archivefs.s3compat.TargetFileCalls`). It is given the filesystem, whose
collaborators it reaches as ``fs._crew``; nothing here imports the face.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fsspec.asyn import sync
from fsspec.spec import AbstractBufferedFile

from archivefs.bulk import gc_paused
from archivefs.providers.base import PATH_BUCKET, PATH_KEY
from archivefs.readahead import ReadaheadCache
from archivefs.s3compat import TargetFileCalls, split_version
from archivefs.wrapped import unwrapped

if TYPE_CHECKING:
    from collections.abc import Mapping

if TYPE_CHECKING:
    from concurrent.futures import Future


class ArchiveFile(TargetFileCalls, AbstractBufferedFile):  # type: ignore[misc]
    """A read-only file whose ranges come through the filesystem's read policy.

    Counts bytes fetched (per block) and bytes read by the caller separately,
    which is how the filesystem measures read amplification.
    """

    def __init__(self, fs: Any, path: str, mode: str = "rb", **kwargs: Any) -> None:
        pinned = sync(fs.loop, fs._crew.target.pinned, path, kwargs.pop("version_id", None))
        path, self.version_id, details = pinned
        if details is None and kwargs.get("size") is None:
            details = fs.info(path)  # as fsspec's file asks it; its access is used here too
        if details is not None:
            kwargs.setdefault("size", details["size"])
        if kwargs.get("cache_type") == ReadaheadCache.name:  # its readaheads in parts at once
            kwargs["cache_options"] = {
                "bulk_block": bulk_block(fs, details),
                **(kwargs.get("cache_options") or {}),
                "fetch_ranges": self._fetch_ranges,
                "fetch_later": self._fetch_later,
            }
        super().__init__(fs, path, mode, **kwargs)
        if details is not None:
            self.details = details
        self._target_attributes(fs._crew.parts.provider.file_attributes)

    def _target_attributes(self, wanted: Mapping[str, tuple[str, Any]]) -> None:
        """The attributes the target's own file has (``ProviderSpec.file_attributes``:
        adlfs's ``container_name``, ``blob`` and ``metadata`` dict...): the path's parts
        now, those of the info entry when first read (:meth:`target_field`), so a file
        opened with its ``size`` asks nothing more of the store until then."""
        bucket, _, key = split_version(self.path)[0].partition("/")
        self._fields = {}
        for attribute, (source, default) in wanted.items():
            if source in (PATH_BUCKET, PATH_KEY):
                setattr(self, attribute, bucket if source == PATH_BUCKET else key)
            else:
                self._fields[attribute] = (source, default)

    def _fetch_range(self, start: int, end: int) -> bytes:
        version = {} if self.version_id is None else {"version_id": self.version_id}
        data: bytes = sync(
            self.fs.loop, self.fs._crew.reads.fetch, self.path, start, end, **version
        )
        return data

    def _fetch_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """Each ``[start, end)`` of ``ranges`` at once (one read each), in their order."""
        version = {} if self.version_id is None else {"version_id": self.version_id}
        reads = self.fs._crew.reads

        async def fetch_all() -> list[bytes]:
            return list(
                await asyncio.gather(*(reads.fetch(self.path, s, e, **version) for s, e in ranges))
            )

        data: list[bytes] = sync(self.fs.loop, fetch_all)
        return data

    def _fetch_later(self, ranges: list[tuple[int, int]]) -> list[Future[list[bytes]]]:
        """Each ``[start, end)`` of ``ranges`` started now on the filesystem's loop (one
        read each, through the same read policy and counting as every read), in order;
        each future gives its bytes in the pieces they arrived in (``fetch_pieces``)."""
        version = {} if self.version_id is None else {"version_id": self.version_id}
        reads = self.fs._crew.reads
        return [
            asyncio.run_coroutine_threadsafe(
                reads.fetch_pieces(self.path, s, e, **version), self.fs.loop
            )
            for s, e in ranges
        ]

    def close(self) -> None:
        """Close, cancelling the readahead still in flight."""
        if not self.closed and isinstance(self.cache, ReadaheadCache):
            self.cache.close()
        super().close()

    def read(self, length: int = -1) -> bytes:
        """Read as fsspec's files do; the cyclic GC is paused meanwhile, as h5py asks of
        file objects it reads while holding its lock (:func:`~archivefs.bulk.gc_paused`)."""
        with gc_paused():
            data: bytes = super().read(length)
        self.fs._crew.reads.delivered(len(data))
        return data


def bulk_block(fs: Any, details: dict[str, Any] | None) -> int | None:
    """The target's block size (adlfs's ``blocksize``; s3fs's, gcsfs's, ocifs's
    ``default_block_size``) for an object that reads at once without a retrieval fee
    (``access`` "immediate"): a first bulk read of it reads as the target would
    (:class:`~archivefs.readahead.ReadaheadCache`'s ``bulk_block``). None for anything
    else (fee-charging, archived, restored, or of unknown state: the mount opens by
    size): a read of those fetches what it needs."""
    if details is None or details.get("access") != "immediate":
        return None
    target = unwrapped(fs._crew.parts.fs)
    block = getattr(target, "default_block_size", None) or getattr(target, "blocksize", None)
    return block if isinstance(block, int) and block > 0 else None
