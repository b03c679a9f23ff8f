"""Writes, straight to the cold store's own implementation; bundle members are refused."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from fsspec.asyn import sync

from archivefs.access.approval import Approval
from archivefs.access.bundles import BundleReads
from archivefs.access.listing import Lister
from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.access.resolve import GLOB_CHARS
from archivefs.catalog.layout import registry_path
from archivefs.catalog.registry import change_registry
from archivefs.errors import ArchiveError, InvalidPathError
from archivefs.model import StorageClass
from archivefs.stores import upload_in_class
from archivefs.stores.base import split_path
from archivefs.stores.translate import raise_translated
from archivefs.wrapped import unwrapped

if TYPE_CHECKING:
    from archivefs.catalog.table import MemberInfo


class Writes:
    """``pipe``/``put``/``cp``/``rm`` and the registry of catalog roots they keep current."""

    def __init__(
        self,
        parts: Parts,
        bundles: BundleReads,
        policy: ReadPolicy,
        lister: Lister,
        approval: Approval,
    ) -> None:
        self.parts = parts
        self.approval = approval
        self.bundles = bundles
        self.policy = policy
        self.lister = lister

    async def _member_at(self, path: str) -> MemberInfo | None:
        """The bundle member at ``path`` (``None``: a plain object or nothing).

        The one resolution every verb uses: a member is read from its bundle,
        never asked of the cold store at its logical path.
        """
        return (await self.parts.catalogs.locate(path)).member

    def _refuse_member_write(self, member: MemberInfo, verb: str) -> ArchiveError:
        return InvalidPathError(
            f"is a member of bundle {member.bundle!r}; a bundle member cannot be {verb} "
            "in place (the catalog would keep pointing at the bundle).",
            path=member.path,
            fix="write to a path outside the catalog root, or re-bundle the folder with the "
            "changed files (`archivefs bundle`).",
        )

    async def writable(self, path: str, verb: str) -> str:
        """``path`` stripped, if it is not a bundle member (members are not written in place)."""
        path = self.parts.strip(path)
        member = await self._member_at(path)
        if member is not None:
            raise self._refuse_member_write(member, verb)
        return str(path)

    def open(
        self,
        path: str,
        mode: str,
        block_size: int | None,
        autocommit: bool,
        check: bool,
        **kwargs: Any,
    ) -> Any:
        """The cold store's own writable file at ``path`` (stripped); with ``check``
        (a blocking caller), a bundle member is refused first. ``autocommit=False`` (and
        ``fs.transaction``) defers the write to ``commit()``, as in s3fs."""
        if check:
            sync(self.parts.loop, self.writable, path, "overwritten")
        # the file's close invalidates the target's listings, never ours: forget ours of
        # the path and its folder now, or the next ls of the folder misses the new file
        self.parts.invalidate_cache(path)
        # a blocking target's own file (ocifs's): fsspec's async wrapper has no _open of
        # its own, and the base class's file it would make uploads nothing when closed
        target = unwrapped(self.parts.fs)
        return target.open(path, mode, block_size=block_size, autocommit=autocommit, **kwargs)

    async def pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
        path = await self.writable(path, "overwritten")
        self.parts.invalidate_cache(path)
        await self.parts.fs._pipe_file(path, value, **kwargs)

    async def put_file(
        self, lpath: str, rpath: str, storage_class: str | None = None, **kwargs: Any
    ) -> None:
        """The target's ``put_file``; with ``storage_class`` (a class of the store's
        provider), one upload straight into that class with the provider's own call
        (``stores.upload_in_class``: S3 StorageClass, Azure access tier, GCS storage
        class, Oracle storage tier), never a write then a class change. Its PUT is
        charged to the budget (``max_cost``) first."""
        rpath = await self.writable(rpath, "overwritten")
        self.parts.invalidate_cache(rpath)
        if storage_class is None:
            await self.parts.fs._put_file(lpath, rpath, **kwargs)
            return
        klass = StorageClass.parse(str(storage_class), provider=self.parts.provider.name)
        # the provider's blocking call, on a worker thread: it waits on the loop this
        # coroutine runs on (a blocking target, ocifs, through its own sync face)
        target = unwrapped(self.parts.fs)
        size = os.path.getsize(lpath)
        await asyncio.to_thread(self.approval.charge_upload, klass, size, rpath)
        try:
            await asyncio.to_thread(upload_in_class, target, lpath, rpath, klass, {})
        except ArchiveError:
            raise
        except Exception as error:
            raise_translated(error, rpath, action="upload")
        finally:
            self.parts.invalidate_cache(rpath)

    async def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        path1 = self.parts.strip(path1)
        path2 = await self.writable(path2, "overwritten")
        self.parts.invalidate_cache(path2)
        where = await self.parts.catalogs.locate(path1)
        if where.member is not None:  # the member's bytes, from its bundle
            await self.parts.fs._pipe_file(path2, await self.bundles.read_member(where, None, None))
            return
        await self.policy.guarded(path1, lambda: self.parts.fs._cp_file(path1, path2, **kwargs))

    async def touch(self, path: str, truncate: bool = True, **kwargs: Any) -> Any:
        """The target's touch (s3fs: ``ValueError`` for an existing file kept with
        ``truncate=False``); bundle members are refused."""
        path = await self.writable(path, "touched")
        self.parts.invalidate_cache(path)
        own = getattr(self.parts.fs, "_touch", None)
        if own is not None:
            return await own(path, truncate=truncate, **kwargs)
        # a target without an async _touch (adlfs): its blocking touch (fsspec's, through
        # its own open), on a worker thread: it waits on the loop this coroutine runs on
        return await asyncio.to_thread(self.parts.fs.touch, path, truncate=truncate, **kwargs)

    async def rm_file(self, path: str, **kwargs: Any) -> None:
        path = self.parts.strip(path)
        await self._removable(path)
        self.parts.invalidate_cache(path)
        try:
            await self.parts.fs._rm_file(path, **kwargs)
        except NotImplementedError:  # a target with no one-object delete (ocifs): its rm
            await self.parts.fs._rm(path, **kwargs)

    async def rm(self, path: Any, recursive: bool = False, **kwargs: Any) -> Any:
        """Remove objects; removing a catalog root (or a folder above one) also removes it
        from the bucket's registry in the same call. Paths inside a catalog root are refused."""
        paths: list[str] = []
        for raw in path if isinstance(path, list) else [path]:
            stripped = self.parts.strip(raw)
            paths += await self.lister.glob(stripped) if GLOB_CHARS & set(stripped) else [stripped]
        dropped: dict[str, list[str]] = {}
        for one in paths:
            for root in await self._removable(one):
                dropped.setdefault(split_path(root)[0], []).append(root)
        self.parts.invalidate_cache()
        removed = await self.parts.fs._rm(paths, recursive=recursive, **kwargs)
        for bucket, roots in dropped.items():
            if recursive:
                await self.unregister(bucket, roots)
        return removed  # the target's answer (s3fs: the removed paths)

    async def _removable(self, path: str) -> list[str]:
        """The catalog roots at or below ``path``; refuses paths strictly inside a root."""
        bucket, key = split_path(path)
        below = []
        for root in await self.parts.catalogs.registered(bucket):
            if not key or root == path or root.startswith(path + "/"):
                below.append(root)
            elif path.startswith(root + "/"):
                raise InvalidPathError(
                    f"is inside catalog root {root!r}: bundle members cannot be removed one "
                    "by one (their bytes live in shared bundles).",
                    path=path,
                    fix=f"remove the whole root (fs.rm({root!r}, recursive=True)), or re-bundle "
                    "the folder without these files.",
                )
        return below

    async def unregister_catalog(self, root: str) -> None:
        """Remove the catalog ``root`` from its bucket's registry; touch nothing else."""
        root = self.parts.strip(root)
        await self.unregister(split_path(root)[0], [root])

    async def unregister(self, bucket: str, roots: list[str]) -> None:
        registry = registry_path(bucket)
        try:
            await change_registry(
                self.parts.fs, bucket, lambda now: [r for r in now if r not in roots]
            )
        except ArchiveError:
            raise
        except Exception as error:
            raise_translated(error, registry, action="update")
        self.parts.catalogs.invalidate(bucket)
