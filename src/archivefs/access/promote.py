"""Promotion: copies of readable objects that outlive the restore (hot store, or in place)."""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from typing import Any

from archivefs.access.copies import local_target
from archivefs.access.hot import HotCopies
from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.access.resolve import Resolver
from archivefs.access.transfer import Transfers
from archivefs.errors import ArchiveError, ChecksumMismatchError, ObjectNotFoundError
from archivefs.model import ObjectState
from archivefs.stores.base import split_path
from archivefs.stores.s3 import S3Store
from archivefs.wrapped import unwrapped


class Promotion:
    """``promote`` (into the hot store) and ``promote_in_place`` (S3: a copy onto itself)."""

    def __init__(
        self,
        parts: Parts,
        hot: HotCopies,
        policy: ReadPolicy,
        resolver: Resolver,
        transfers: Transfers,
    ) -> None:
        self.parts = parts
        self.hot = hot
        self.policy = policy
        self.resolver = resolver
        self.transfers = transfers

    async def promote(self, paths: str | list[str]) -> list[str]:
        """Copy readable (hot or restored) objects into the hot store, verified by size.

        Same S3 service: a server-side copy. Otherwise: downloaded in ranged parts
        into a private temporary file (bounded memory), then put. Copies appear atomically.
        Returns the hot-store paths written.
        """
        hot = await self.hot.store()
        if hot is None:
            raise ArchiveError(
                "promotion needs a hot store, and none is configured.",
                fix="open the filesystem with hot='s3://hot-bucket/prefix' or a local directory.",
            )
        hot_fs, root = hot
        states = await self.resolver.expand(paths)
        if _is_local(hot_fs):  # keys may hold '..' parts: refuse any that leaves the hot store
            for key in states:
                local_target(root, key)
        semaphore = asyncio.Semaphore(min(self.parts.concurrency, 16))

        async def one(state: ObjectState) -> str:
            async with semaphore:
                target = self.hot.path(root, state.path)
                if not state.readable:
                    raise self.policy.archived_error(state)
                if _same_s3_service(self.parts.fs, hot_fs):
                    await self.policy.guarded(
                        state.path, lambda: self.parts.fs._cp_file(state.path, target)
                    )
                else:
                    await self._stream_copy(state.path, hot_fs, target)
                size = (await hot_fs._info(target))["size"]
                if size != state.size:
                    await hot_fs._rm_file(target)
                    raise ChecksumMismatchError(
                        f"the promoted copy has {size} bytes, the archived object {state.size}.",
                        path=state.path,
                        fix="promote it again; if it repeats, the object changed during the copy.",
                    )
                return str(target)

        missing = [p for p, s in states.items() if s is None]
        if missing:
            raise ObjectNotFoundError(
                f"{len(missing)} object(s) to promote do not exist (first: {missing[0]}).",
                path=missing[0],
                fix="check the paths; nothing was promoted.",
            )
        return list(await asyncio.gather(*(one(s) for s in states.values() if s is not None)))

    async def _stream_copy(self, path: str, hot_fs: Any, target: str) -> None:
        with tempfile.TemporaryDirectory(prefix="archivefs-promote-") as tmp:
            local = os.path.join(tmp, "object")
            await self.transfers.download_object(path, local)
            await hot_fs._makedirs(hot_fs._parent(target), exist_ok=True)
            partial = f"{target}.archivefs-partial-{uuid.uuid4().hex}"
            await hot_fs._put_file(local, partial)
            await hot_fs._mv(partial, target)  # readers never see a half-written copy

    async def promote_in_place(self, paths: str | list[str]) -> list[str]:
        """Make restored objects permanent: copy each onto itself in STANDARD.

        The contract is documented on ``ArchiveFileSystem.promote_in_place``.
        """
        resolved = await self.resolver.resolve(paths)
        missing = resolved.missing
        if missing:
            raise ObjectNotFoundError(
                f"{len(missing)} object(s) to promote do not exist (first: {missing[0]}).",
                path=missing[0],
                fix="check the paths; nothing was promoted.",
            )
        done = []
        for key in sorted({p.group for p in resolved.placements()}):
            state = resolved.groups[key]
            assert state is not None
            if not state.storage_class.needs_restore and state.archive_access is None:
                continue  # already reads at once
            if not state.readable:
                raise self.policy.archived_error(state)
            if not isinstance(self.parts.store, S3Store):
                raise ArchiveError(
                    "promotion in place is implemented for S3 only.",
                    path=key,
                    fix="promote into a hot store instead (hot=...), or copy the blob yourself.",
                )
            bucket, name = split_path(key)
            await self.parts.store._call(
                "copy_object",
                key,
                "promote",
                Bucket=bucket,
                Key=name,
                CopySource={"Bucket": bucket, "Key": name},
                StorageClass="STANDARD",
                MetadataDirective="COPY",
            )
            self.parts.invalidate_cache(key)
            done.append(key)
        return done


def _is_local(fs: Any) -> bool:
    """A filesystem on this machine's disk (possibly wrapped to look async)."""
    inner = unwrapped(fs)
    protocol = inner.protocol if isinstance(inner.protocol, tuple) else (inner.protocol,)
    return "file" in protocol or "local" in protocol


def _same_s3_service(cold: Any, hot: Any) -> bool:
    """Both filesystems are S3 on the same endpoint: a server-side copy works."""
    if type(cold).__name__ != "S3FileSystem" or type(hot).__name__ != "S3FileSystem":
        return False
    cold_kwargs = getattr(cold, "client_kwargs", None) or {}
    hot_kwargs = getattr(hot, "client_kwargs", None) or {}
    return bool(cold_kwargs.get("endpoint_url") == hot_kwargs.get("endpoint_url"))
