"""ArchiveFileSystem: the fsspec face of archivefs.

It wraps a cold store (any S3 endpoint, through s3fs) the way fsspec's own
wrapping filesystems do (``target_protocol``/``target_options`` or ``fs=``),
so ``archive::s3://bucket/key`` URLs and xarray's ``storage_options`` work.
Listings and ``info`` carry each object's storage class and restore state;
reads of hot and restored objects are exactly s3fs's reads; reading an
archived object follows the ``on_archived`` policy instead of failing with an
opaque ``PermissionError``. Every forwarding method is written out (as
``fsspec.implementations.dirfs`` does), never routed through attribute magic.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import unicodedata
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import fsspec
from fsspec.asyn import AsyncFileSystem, sync, sync_wrapper
from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper
from fsspec.implementations.chained import ChainedFileSystem
from fsspec.spec import AbstractBufferedFile

from archivefs.catalog.bundle import check_member
from archivefs.catalog.layout import is_reserved
from archivefs.catalog.view import CatalogView
from archivefs.errors import (
    ArchiveError,
    ChecksumMismatchError,
    InvalidPathError,
    InvalidRestoreRequestError,
    ObjectArchivedError,
    ObjectNotFoundError,
    PriceSheetError,
    RestoreInProgressError,
)
from archivefs.hooks import Hooks
from archivefs.keyed_paths import local_target
from archivefs.model import (
    ObjectState,
    Plan,
    RestoreState,
    RestoreTier,
    StorageClass,
    raise_not_archived,
)
from archivefs.restore.journal import Journal
from archivefs.restore.planner import PathInGroup
from archivefs.restore.schedule import PollSchedule
from archivefs.stats import ReadStats
from archivefs.stores.s3 import S3Store, split_path
from archivefs.stores.translate import is_archived_error, translate

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from archivefs.catalog.index import Catalog, MemberInfo
    from archivefs.model import PlannedGroup
    from archivefs.pricing import Estimate, PriceSheet
    from archivefs.restore.engine import RestoreEngine, RestoreProgress, RestoreResult
    from archivefs.restore.notify import NotificationSource
    from archivefs.restore.submitter import SubmitReport

logger = logging.getLogger("archivefs")

OnArchived = Literal["raise", "restore", "wait"]
_POLICIES = ("raise", "restore", "wait")
_GLOB_CHARS = frozenset("*?[")
# archivefs.pricing.DEFAULT_SHEET, written out: pricing (pydantic models) is imported on
# first use, which keeps `archivefs ls` and other small calls from paying for it.
DEFAULT_SHEET = "aws-us-east-1"


class ArchiveFileSystem(AsyncFileSystem, ChainedFileSystem):  # type: ignore[misc]
    """An fsspec filesystem over archival object storage.

    Parameters
    ----------
    target_protocol, target_options:
        The cold store to wrap, e.g. ``"s3"`` and s3fs's options.
    fs:
        An already-made cold-store filesystem instead (not both).
    hot, hot_options:
        An fsspec URL (and its options) of a hot store holding promoted copies;
        reads look there first, at ``<hot>/<bucket>/<key>``.
    on_archived:
        What a read of an archived object does: ``"raise"`` (default) an
        :class:`ObjectArchivedError` that says how to restore it; ``"restore"``
        issue the restore and raise :class:`RestoreInProgressError`; ``"wait"``
        issue it, wait (up to ``wait_timeout`` seconds) and read.
    tier, days:
        Restore tier and restored-copy lifetime used by policies and ``restore()``.
    journal:
        Path of the restore journal (default: the user cache), or ``False`` for none.
    restore_status_in_listings:
        Whether the server reports restore status in listings (see ``S3Store``).
    restore_time_scale:
        Scales the expected restore times the poller plans for (emulators, tests).
    max_cost, on_estimate, price_sheet, egress:
        Budget and estimate hooks, checked before any paid request (docs/cost-model.md).
    notifications:
        A source of "this key is restored" events (S3 event notifications through a
        queue, or a callback) that lets the poller check at once instead of waiting.
    """

    protocol: ClassVar[tuple[str, ...]] = ("archivefs", "archive")
    root_marker = ""
    async_impl = True
    # File reads: cache the first block (headers), then fetch exactly what is
    # asked. For one time step of a chunked netCDF file this fetches ~1.4x the
    # bytes needed, where s3fs's defaults (50 MiB readahead) fetch the whole
    # file (measured: docs/benchmarks.md). Pass block_size/cache_type to open()
    # for s3fs's behaviour.
    read_block_size = 64 * 1024
    read_cache_type = "first"

    def __init__(
        self,
        target_protocol: str | None = None,
        target_options: dict[str, Any] | None = None,
        fs: Any = None,
        *,
        hot: str | None = None,
        hot_options: dict[str, Any] | None = None,
        on_archived: OnArchived = "raise",
        tier: str = "Standard",
        days: int = 1,
        wait_timeout: float | None = None,
        journal: str | Literal[False] | None = None,
        restore_status_in_listings: bool | None = None,
        restore_time_scale: float = 1.0,
        concurrency: int = 64,
        max_cost: float | None = None,
        on_estimate: Callable[[Plan, Estimate], bool | None] | None = None,
        price_sheet: str = DEFAULT_SHEET,
        egress: str = "same_region",
        notifications: NotificationSource | None = None,
        fo: str | None = None,  # fsspec's URL chaining passes the path; unused
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if fs is not None and target_protocol is not None:
            raise ValueError(
                "ArchiveFileSystem: pass either fs= (an instance) or target_protocol= "
                "(+ target_options=), not both."
            )
        if on_archived not in _POLICIES:
            raise ValueError(
                f"ArchiveFileSystem: on_archived={on_archived!r} is not a policy; "
                f"use one of {', '.join(_POLICIES)}."
            )
        self.tier = RestoreTier.parse(tier)
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise ValueError(f"ArchiveFileSystem: days must be a whole number >= 1, got {days!r}.")
        if fs is None:
            options = dict(target_options or {})
            protocol = target_protocol or "s3"
            cls = fsspec.get_filesystem_class(protocol)
            if getattr(cls, "async_impl", False):
                options.setdefault("asynchronous", self.asynchronous)
                options.setdefault("loop", self.loop)
            fs = fsspec.filesystem(protocol, **options)
        if not getattr(fs, "async_impl", False):
            fs = AsyncFileSystemWrapper(fs)
        self.fs = fs
        self.on_archived: OnArchived = on_archived
        self.days = days
        self.wait_timeout = wait_timeout
        self.restore_time_scale = restore_time_scale
        self.concurrency = concurrency
        self._journal_option = journal
        self.hooks = Hooks(
            on_estimate=[on_estimate] if on_estimate is not None else [], max_cost=max_cost
        )
        self.notifications = notifications
        self.price_sheet_name = price_sheet
        self.egress = egress
        self._price_sheet: PriceSheet | None = None
        self._hot_url = hot
        self._hot_options = dict(hot_options or {})
        self._hot: tuple[Any, str] | None = None
        self.store = S3Store(fs, restore_status_in_listings=restore_status_in_listings)
        self.catalogs = CatalogView(self.store.get_bytes)
        self.read_stats = ReadStats()
        self._engine: RestoreEngine | None = None

    # -- plumbing --------------------------------------------------------------------------

    def __repr__(self) -> str:  # never show options: they may hold credentials
        return f"<ArchiveFileSystem on {type(self.fs).__name__}, on_archived={self.on_archived!r}>"

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = fsspec.utils.stringify_path(path)
        for prefix in ("archivefs://", "archive://", "archivefs::", "archive::"):
            if path.startswith(prefix):
                path = path[len(prefix) :]
        if "://" in path:
            path = path.split("://", 1)[1]
        return path.rstrip("/").lstrip("/")

    @property
    def engine(self) -> RestoreEngine:
        """The restore engine (made on first use: no session at construction)."""
        if self._engine is None:
            from archivefs.restore.engine import RestoreEngine  # with tenacity: on first use

            self._engine = RestoreEngine(
                self.store,
                journal=self._make_journal(),
                approve=self._approve,
                notifications=self.notifications,
                time_scale=self.restore_time_scale,
                concurrency=self.concurrency,
            )
        return self._engine

    @property
    def price_sheet(self) -> PriceSheet:
        """The price sheet estimates use (loaded on first use)."""
        if self._price_sheet is None:
            from archivefs.pricing import load_price_sheet

            self._price_sheet = load_price_sheet(self.price_sheet_name)
        return self._price_sheet

    def _approve(self, plan: Plan) -> None:
        """The engine calls this before any paid request: budget and estimate hooks."""
        if self.hooks.wants_estimate and plan.to_restore:
            self.hooks.approve(plan, self.estimate_plan(plan))

    def estimate_plan(self, plan: Plan, **kwargs: Any) -> Estimate:
        """The cost and latency of a plan with this filesystem's price sheet and egress path.

        Unless ``read_amplification`` is given, the amplification this
        filesystem has measured on its own reads so far is used (1.0 before any).
        """
        kwargs.setdefault("egress", self.egress)
        if kwargs.get("read_amplification") is None:
            kwargs["read_amplification"] = self.read_stats.amplification or 1.0
        from archivefs.pricing import estimate

        return estimate(plan, self.price_sheet, **kwargs)

    async def _estimate(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        **kwargs: Any,
    ) -> Estimate:
        """What restoring and reading ``paths`` once would cost. Sends no restore."""
        plan = await self._plan(paths, tier=tier, days=days)
        return self.estimate_plan(plan, **kwargs)

    estimate = sync_wrapper(_estimate)

    def _make_journal(self) -> Journal | None:
        if self._journal_option is False:
            return None
        return Journal(self._journal_option, namespace=self._namespace())

    def _namespace(self) -> str:
        client_kwargs = getattr(self.fs, "client_kwargs", None) or {}
        endpoint = client_kwargs.get("endpoint_url") or getattr(self.fs, "endpoint_url", None)
        return str(endpoint or "s3")

    async def _hot_store(self) -> tuple[Any, str] | None:
        if self._hot_url is None:
            return None
        if self._hot is None:
            hot_fs, root = fsspec.url_to_fs(self._hot_url, **self._hot_options)
            if not getattr(hot_fs, "async_impl", False):
                hot_fs = AsyncFileSystemWrapper(hot_fs)
            self._hot = (hot_fs, root.rstrip("/"))
        return self._hot

    def _hot_path(self, root: str, path: str) -> str:
        return f"{root}/{path}" if root else path

    # -- metadata ------------------------------------------------------------------------

    async def _info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        bucket, key = split_path(path)
        if not key:
            try:
                return dict(await self.fs._info(bucket))
            except Exception as error:
                raise translate(error, bucket, action="inspect") from error
        found = await self.catalogs.root_for(path)
        if found is not None:
            root, catalog = found
            member = catalog.lookup(path)
            if member is not None:
                bundle = await self.store.head(member.bundle)  # the member's state is its bundle's
                return _member_entry(
                    member, bundle.storage_class, bundle.restore, bundle.restore_expiry
                )
            if path not in catalog.plain and (path == root or _catalog_isdir(catalog, path)):
                return {"name": path, "size": 0, "type": "directory"}
        try:
            cached = None if kwargs.get("refresh") else self._ls_from_cache(path)
        except FileNotFoundError:
            cached = None  # not in a cached parent listing: ask the store
        if cached is not None:
            for entry in cached:
                if entry["name"] == path:
                    return dict(entry)
        try:
            return _file_entry(await self.store.head(path))
        except ObjectNotFoundError:
            pass
        page = await self.store._list_page(bucket, Prefix=key + "/", MaxKeys=1)
        if page.get("Contents") or page.get("CommonPrefixes"):
            return {"name": path, "size": 0, "type": "directory"}
        raise ObjectNotFoundError(
            "no such object or directory.",
            path=path,
            fix="check the path; fs.ls() of its parent shows what exists.",
        )

    async def _ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        refresh = kwargs.get("refresh", False)
        entries = None if refresh else self.dircache.get(path)
        found = await self.catalogs.root_for(path) if entries is None else None
        if found is not None:  # inside a catalog root: the catalog answers, the store is not asked
            entries = _catalog_listing(found[1], path)
            if not entries:
                info = await self._info(path)
                entries = [info]
            return list(entries) if detail else sorted(e["name"] for e in entries)
        if entries is None:
            bucket, key = split_path(path)
            listing = await self.store.list(path)
            entries = [_file_entry(s) for s in listing.files if not is_reserved(s.path)]
            entries += [
                {"name": d, "size": 0, "type": "directory"}
                for d in listing.directories
                if not is_reserved(d)
            ]
            if not entries:
                if key:
                    info = await self._info(path)  # a file lists as itself; else not found
                    entries = [info]
                    if info["type"] == "file":
                        return entries if detail else [info["name"]]
                else:
                    await self._info(bucket)  # raises for a missing bucket
            self.dircache[path] = entries
        return list(entries) if detail else sorted(e["name"] for e in entries)

    async def _find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        **kwargs: Any,
    ) -> Any:
        path = self._strip_protocol(path)
        if maxdepth is not None or withdirs:
            return await super()._find(path, maxdepth=maxdepth, withdirs=withdirs, **kwargs)
        detail = kwargs.get("detail", False)
        found = await self.catalogs.root_for(path)
        if found is not None:
            files = {e["name"]: e for e in _catalog_find(found[1], path)}
            names = sorted(files)
            return {n: files[n] for n in names} if detail else names
        listing = await self.store.list(path, recursive=True)
        files = {
            s.path: _file_entry(s)
            for s in listing.files
            if not s.path.endswith("/") and not is_reserved(s.path)
        }
        for root, catalog in await self.catalogs.under(path):
            files.update((e["name"], e) for e in _catalog_find(catalog, root))
        if not files and split_path(path)[1]:
            try:
                info = await self._info(path)
            except FileNotFoundError:
                info = None
            if info is not None and info["type"] == "file":
                files = {info["name"]: info}
        names = sorted(files)
        return {n: files[n] for n in names} if detail else names

    # -- reads -----------------------------------------------------------------------------

    async def _guarded(self, path: str, read: Callable[[], Awaitable[Any]]) -> Any:
        """Run a read; if the object is archived, apply the ``on_archived`` policy."""
        try:
            return await read()
        except Exception as error:
            if not is_archived_error(error):
                raise translate(error, path, action="read") from error
            cause = error
        await self._on_archived(path, cause)
        try:
            return await read()
        except Exception as error:
            raise translate(error, path, action="read") from error

    async def _on_archived(self, path: str, cause: BaseException) -> None:
        """Returns once ``path`` reads (``wait``), or raises the policy's error."""
        state = await self.store.head(path)
        if state.readable:
            return  # restored in between
        if self.on_archived == "raise":
            raise self._archived_error(state) from cause
        plan = self.engine.plan_known({path: state}, tier=self.tier, days=self.days)
        result = await self.engine.restore(plan, wait=False)
        if self.on_archived == "restore":
            ready_at = self._ready_at(state)
            raise RestoreInProgressError(
                f"restore {'requested' if result.requests_sent else 'already in progress'} "
                f"({self.tier.value} tier); expected readable by {ready_at:%Y-%m-%d %H:%M} UTC.",
                path=path,
                fix="read again after that time, or open the filesystem with "
                "on_archived='wait' to block until it is back.",
                ready_at=ready_at,
            ) from cause
        async for _ in self.engine.as_ready(plan, timeout=self.wait_timeout):
            pass

    def _expected_window(self, state: ObjectState) -> tuple[float, float]:
        schedule = PollSchedule.for_restore(
            state.storage_class, self.tier, archive_access=state.archive_access, time_scale=1.0
        )
        return schedule.expected_min_s, schedule.expected_max_s

    def _ready_at(self, state: ObjectState) -> datetime:
        schedule = PollSchedule.for_restore(
            state.storage_class,
            self.tier,
            archive_access=state.archive_access,
            time_scale=self.restore_time_scale,
        )
        return datetime.now(UTC) + timedelta(seconds=schedule.expected_max_s)

    def _archived_error(self, state: ObjectState) -> Exception:
        lo, hi = self._expected_window(state)
        wait = f"up to {_hours(hi)}" if lo <= 0 else f"{_hours(lo)}-{_hours(hi)}"
        klass = state.storage_class.value
        if state.archive_access is not None:
            klass = f"{klass} ({state.archive_access.value})"
        restore_call = f"fs.restore({state.path!r}, tier={self.tier.value!r}, days={self.days})"
        if state.restore is RestoreState.RESTORING:
            return RestoreInProgressError(
                f"object is in {klass} and its restore is in progress; a {self.tier.value} "
                f"restore takes {wait}.",
                path=state.path,
                fix="read again once it is done (fs.info() shows restore='restored'), or open "
                "the filesystem with on_archived='wait' to block until it is back.",
                ready_at=self._ready_at(state),
            )
        return ObjectArchivedError(
            f"object is archived in {klass} (restore state: {state.restore.value}) and must be "
            f"restored before it can be read; a {self.tier.value} restore takes {wait}"
            f"{self._cost_phrase(state)}.",
            path=state.path,
            fix=f"{restore_call} (or `archivefs restore s3://{state.path}`), then read again; "
            "or open the filesystem with on_archived='wait' to restore and wait automatically.",
            storage_class=state.storage_class.value,
        )

    def _cost_phrase(self, state: ObjectState) -> str:
        """', costs about $X (sheet)' for restoring and reading one object, if priceable."""
        try:
            plan = self.engine.plan_known({state.path: state}, tier=self.tier, days=self.days)
            cost = self.estimate_plan(plan)
        except (PriceSheetError, InvalidRestoreRequestError):
            return ""
        return f" and costs about {cost.total:.4f} {cost.currency} ({cost.sheet} prices)"

    async def _cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        data = await self._fetch(path, start, end, **kwargs)
        self.read_stats.delivered(len(data))
        return data

    async def _fetch(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        """One read from the hot store, a bundle, or the cold store (counted as fetched)."""
        data = await self._fetch_uncounted(path, start, end, **kwargs)
        self.read_stats.fetched(len(data))
        return data

    async def _fetch_uncounted(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        path = self._strip_protocol(path)
        hot = await self._hot_store()
        if hot is not None:
            hot_fs, root = hot
            try:
                data: bytes = await hot_fs._cat_file(
                    self._hot_path(root, path), start=start, end=end
                )
                return data
            except FileNotFoundError:
                pass
        member = await self.catalogs.member(path)
        if member is not None:
            return await self._cat_member(member, start, end)
        result: bytes = await self._guarded(
            path, lambda: self.fs._cat_file(path, start=start, end=end, **kwargs)
        )
        return result

    async def _cat_member(self, member: MemberInfo, start: int | None, end: int | None) -> bytes:
        """A bundle member: one ranged read of its bundle, CRC-checked when read whole."""
        lo, hi = _member_range(member.length, start, end)
        first, last = member.offset + lo, member.offset + hi
        if hi <= lo:
            return b""
        hot = await self._hot_store()
        data: bytes | None = None
        if hot is not None:  # a promoted copy of the whole bundle
            hot_fs, root = hot
            try:
                data = await hot_fs._cat_file(
                    self._hot_path(root, member.bundle), start=first, end=last
                )
            except FileNotFoundError:
                data = None
        if data is None:
            try:
                data = await self._guarded(
                    member.bundle, lambda: self.fs._cat_file(member.bundle, start=first, end=last)
                )
            except (ObjectArchivedError, RestoreInProgressError) as error:
                raise error.in_context(f"(reading member {member.path!r})") from error
        assert data is not None
        if len(data) != hi - lo:
            raise ChecksumMismatchError(
                f"member {member.path!r} should have {hi - lo} bytes here, the bundle gave "
                f"{len(data)} (truncated bundle, or a catalog that disagrees with it).",
                path=member.bundle,
                fix="rebuild the catalog from the bundles (`archivefs catalog rebuild`).",
            )
        if lo == 0 and hi == member.length:
            check_member(data, member.crc32, name=member.path, bundle=member.bundle)
        return data

    async def _get_file(self, rpath: str, lpath: str, **kwargs: Any) -> None:
        rpath = self._strip_protocol(rpath)
        hot = await self._hot_store()
        if hot is not None:
            hot_fs, root = hot
            try:
                await hot_fs._get_file(self._hot_path(root, rpath), lpath, **kwargs)
                return
            except FileNotFoundError:
                pass
        await self._guarded(rpath, lambda: self.fs._get_file(rpath, lpath, **kwargs))

    # -- promotion into the hot store ----------------------------------------------------

    async def _promote(self, paths: str | list[str]) -> list[str]:
        """Copy readable (hot or restored) objects into the hot store, verified by size.

        Same S3 service: a server-side copy. Otherwise: streamed through a
        private temporary file (bounded memory). Copies appear atomically.
        Returns the hot-store paths written.
        """
        hot = await self._hot_store()
        if hot is None:
            raise ArchiveError(
                "promotion needs a hot store, and none is configured.",
                fix="open the filesystem with hot='s3://hot-bucket/prefix' or a local directory.",
            )
        hot_fs, root = hot
        states = await self._expand_states(paths)
        if _is_local(hot_fs):  # keys may hold '..' parts: refuse any that leaves the hot store
            for key in states:
                local_target(root, key)
        semaphore = asyncio.Semaphore(min(self.concurrency, 16))

        async def one(state: ObjectState) -> str:
            async with semaphore:
                target = self._hot_path(root, state.path)
                if not state.readable:
                    raise self._archived_error(state)
                if _same_s3_service(self.fs, hot_fs):
                    await self._guarded(state.path, lambda: self.fs._cp_file(state.path, target))
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
            await self._guarded(path, lambda: self.fs._get_file(path, local))
            await hot_fs._makedirs(hot_fs._parent(target), exist_ok=True)
            partial = f"{target}.archivefs-partial-{uuid.uuid4().hex}"
            await hot_fs._put_file(local, partial)
            await hot_fs._mv(partial, target)  # readers never see a half-written copy

    promote = sync_wrapper(_promote)

    async def _promote_in_place(self, paths: str | list[str]) -> list[str]:
        """Make restored objects permanent: copy each onto itself in STANDARD.

        The S3 way to keep a restored object readable after its copy expires
        (it then bills as STANDARD). Bundle members promote their bundle.
        Objects up to 5 GiB (a single CopyObject).
        """
        placements, groups, missing = await self._resolve(paths)
        if missing:
            raise ObjectNotFoundError(
                f"{len(missing)} object(s) to promote do not exist (first: {missing[0]}).",
                path=missing[0],
                fix="check the paths; nothing was promoted.",
            )
        done = []
        for key in sorted({p.group for p in placements}):
            state = groups[key]
            assert state is not None
            if not state.storage_class.needs_restore and state.archive_access is None:
                continue  # already reads at once
            if not state.readable:
                raise self._archived_error(state)
            bucket, name = split_path(key)
            await self.store._call(
                "copy_object",
                key,
                "promote",
                Bucket=bucket,
                Key=name,
                CopySource={"Bucket": bucket, "Key": name},
                StorageClass="STANDARD",
                MetadataDirective="COPY",
            )
            self.invalidate_cache(key)
            done.append(key)
        return done

    promote_in_place = sync_wrapper(_promote_in_place)

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        path = self._strip_protocol(path)
        if "r" not in mode:
            return self.fs.open(path, mode, block_size=block_size, **kwargs)
        kwargs.setdefault("cache_type", self.read_cache_type)
        return ArchiveFile(
            self,
            path,
            mode,
            block_size=block_size or self.read_block_size,
            cache_options=cache_options,
            **kwargs,
        )

    # -- writes (straight to the cold store's own implementation) ------------------------

    async def _pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        self.invalidate_cache(path)
        await self.fs._pipe_file(path, value, **kwargs)

    async def _put_file(self, lpath: str, rpath: str, **kwargs: Any) -> None:
        rpath = self._strip_protocol(rpath)
        self.invalidate_cache(rpath)
        await self.fs._put_file(lpath, rpath, **kwargs)

    async def _cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        path1, path2 = self._strip_protocol(path1), self._strip_protocol(path2)
        self.invalidate_cache(path2)
        await self._guarded(path1, lambda: self.fs._cp_file(path1, path2, **kwargs))

    async def _rm_file(self, path: str, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        self.invalidate_cache(path)
        await self.fs._rm_file(path, **kwargs)

    async def _rm(self, path: Any, recursive: bool = False, **kwargs: Any) -> None:
        self.invalidate_cache()
        await self.fs._rm(self._strip_protocol(path), recursive=recursive, **kwargs)

    async def _mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        self.invalidate_cache()
        await self.fs._mkdir(self._strip_protocol(path), create_parents=create_parents, **kwargs)

    async def _makedirs(self, path: str, exist_ok: bool = False) -> None:
        await self.fs._makedirs(self._strip_protocol(path), exist_ok=exist_ok)

    async def _rmdir(self, path: str) -> None:
        self.invalidate_cache()
        await self.fs._rmdir(self._strip_protocol(path))

    def invalidate_cache(self, path: str | None = None) -> None:
        if path is None:
            self.dircache.clear()
        else:
            path = self._strip_protocol(path)
            self.dircache.pop(path, None)
            self.dircache.pop(self._parent(path), None)
        self.fs.invalidate_cache(path)

    # -- restores --------------------------------------------------------------------------

    async def _expand_states(
        self, paths: str | list[str], *, literal: bool = False
    ) -> dict[str, ObjectState | None]:
        """Object states for paths, globs and directories, from listings where possible.

        A glob that matches directories (``2023/*/mag/``) means the files below them.
        With ``literal``, glob characters are part of the name.
        """
        if isinstance(paths, str):
            paths = [paths]
        states: dict[str, ObjectState | None] = {}
        plain: list[str] = []
        for raw in paths:
            path = self._strip_protocol(raw)
            if not path:
                raise InvalidPathError(
                    "empty path.", path=repr(raw), fix="name a bucket/key, a glob or a directory."
                )
            if _GLOB_CHARS & set(path) and not literal:
                matches = await self._glob(path, detail=True)
                for name, entry in matches.items():
                    if entry.get("type") == "file":
                        states[name] = _state_from_entry(entry)
                    elif entry.get("type") == "directory" and not is_reserved(name):
                        listing = await self.store.list(name, recursive=True)
                        states.update(
                            (f.path, f)
                            for f in listing.files
                            if not f.path.endswith("/") and not is_reserved(f.path)
                        )
            else:
                plain.append(path)
        if plain:
            probed = await self.store.probe(plain)
            for path, state in probed.items():
                if state is not None:
                    states[path] = state
                    continue
                listing = await self.store.list(path, recursive=True)
                if listing.files:
                    states.update((s.path, s) for s in listing.files)
                else:
                    states[path] = None
        return states

    async def _plan(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        needed_until: datetime | None = None,
    ) -> Plan:
        """What restoring ``paths`` involves: groups, states, actions. Sends no restore.

        Bundle members map to their bundle: many members, one group, one request.
        """
        placements, groups, missing = await self._resolve(paths)
        return self.engine.plan_known(
            groups,
            tier=tier or self.tier,
            days=days or self.days,
            needed_until=needed_until,
            placements=placements,
            missing=missing,
        )

    async def _resolve(
        self, paths: str | list[str]
    ) -> tuple[list[PathInGroup], dict[str, ObjectState | None], list[str]]:
        """Where each requested path lives (object or bundle) and the state of each group.

        A path that matches nothing is tried again as a literal name (for names such
        as ``[draft] v2.json``) and in Unicode NFC and NFD forms; what still matches
        nothing is returned in the third item, as the caller wrote it.
        """
        raws = [paths] if isinstance(paths, str) else list(paths)
        members, states, unmatched = await self._resolve_pass(raws, literal=False)
        missing: list[str] = []
        for raw in unmatched:
            for alternative, literal in _alternatives(raw):
                more, found, still = await self._resolve_pass([alternative], literal=literal)
                if not still:
                    members += more
                    states.update(found)
                    break
            else:
                missing.append(raw)
        placements = [PathInGroup(p, p, s.size) for p, s in states.items() if s is not None]
        groups: dict[str, ObjectState | None] = dict(states)
        groups.update((m, None) for m in missing)
        placements += [PathInGroup(m.path, m.bundle, m.length) for m in members]
        bundles = sorted({m.bundle for m in members})
        if bundles:
            groups.update(await self.store.probe(bundles))
        return placements, groups, missing

    async def _resolve_pass(
        self, raws: list[str], *, literal: bool
    ) -> tuple[list[MemberInfo], dict[str, ObjectState], list[str]]:
        """One resolution of ``raws``: members, object states, and the raws matching nothing."""
        members: list[MemberInfo] = []
        matched: set[str] = set()
        plain: dict[str, str] = {}  # plain path -> the raw path it came from
        globs: list[str] = []
        for raw in raws:
            path = self._strip_protocol(raw)
            if not path:
                raise InvalidPathError(
                    "empty path.", path=repr(raw), fix="name a bucket/key, a glob or a directory."
                )
            is_glob = bool(_GLOB_CHARS & set(path)) and not literal
            found = await self.catalogs.root_for(path)
            if found is None:
                if is_glob:
                    globs.append(raw)
                else:
                    plain[path] = raw
                continue
            catalog = found[1]
            names = await self._glob(path) if is_glob else catalog.find(path) or [path]
            for name in names:
                member = catalog.lookup(name)
                if member is not None:
                    members.append(member)
                    matched.add(raw)
                elif is_glob and catalog.isdir(name):
                    inside = [catalog.lookup(n) for n in catalog.find(name)]
                    members += [m for m in inside if m is not None]
                    matched.add(raw)
                    prefix = name + "/"
                    plain.update((p, raw) for p in catalog.plain if p.startswith(prefix))
                else:
                    plain[name] = raw
        states: dict[str, ObjectState] = {}
        for raw in globs:
            found_states = await self._expand_states(raw)
            states.update((p, s) for p, s in found_states.items() if s is not None)
            if any(s is not None for s in found_states.values()):
                matched.add(raw)
        if plain:
            probed = await self._expand_states(list(plain), literal=True)
            for path, state in probed.items():
                if state is not None:
                    states[path] = state
                    matched.add(plain.get(path) or _origin(path, plain))
        return members, states, [raw for raw in dict.fromkeys(raws) if raw not in matched]

    async def _restore(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = False,
        timeout: float | None = None,
        promote: bool = False,
        on_progress: Callable[[RestoreProgress], None] | None = None,
    ) -> RestoreResult:
        """Restore every archived object in ``paths`` (paths, globs, directories) in one batch.

        One request per object that needs it, deduplicated through the journal;
        objects that are hot, restored or already restoring cost nothing. With
        ``wait=True``, returns once all of them read (or raises
        :class:`RestoreTimeoutError` after ``timeout`` seconds). With
        ``promote=True``, waits and then copies everything into the hot store
        so it outlives the restored copies' expiry.
        """
        plan = await self._plan(paths, tier=tier, days=days)
        named_paths = _named_paths(paths, self._strip_protocol)
        for group in plan.groups:
            named = group.key in named_paths
            state = group.state
            if named and not state.storage_class.needs_restore and state.archive_access is None:
                raise_not_archived(state.path, state.storage_class)
        result = await self.engine.restore(
            plan, wait=wait or promote, timeout=timeout, on_progress=on_progress
        )
        for key in result.submitted.sent:
            self.invalidate_cache(key)
        if promote:
            await self._promote([g.key for g in plan.groups])
        return result

    plan = sync_wrapper(_plan)

    def restore(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = False,
        timeout: float | None = None,
        promote: bool = False,
        on_progress: Callable[[RestoreProgress], None] | None = None,
    ) -> RestoreResult:
        """Blocking form of :meth:`_restore` (written out: fsspec's ``sync_wrapper``
        would take ``timeout`` for itself)."""
        result: RestoreResult = sync(
            self.loop, self._restore, paths, tier, days, wait, timeout, promote, on_progress
        )
        return result

    async def _state(self, path: str) -> ObjectState:
        """The storage class and restore state of one object (one HEAD)."""
        return await self.store.head(self._strip_protocol(path))

    state = sync_wrapper(_state)

    async def _probe(self, paths: list[str]) -> dict[str, ObjectState | None]:
        """States of many objects in bulk (listings where possible); ``None``: missing."""
        return await self.store.probe([self._strip_protocol(p) for p in paths])

    probe = sync_wrapper(_probe)

    async def _submit(self, plan: Plan) -> SubmitReport:
        """Approve and send a plan's restore requests (no waiting)."""
        report = await self.engine.submit(plan)
        for key in report.sent:
            self.invalidate_cache(key)
        return report

    submit = sync_wrapper(_submit)

    def as_ready(self, plan: Plan, timeout: float | None = None) -> Iterator[PlannedGroup]:
        """Yield each planned group as soon as it reads (blocking iterator).

        Readable groups come first, at once; the rest as bulk polls find them
        restored. Start reading each one while the others are still restoring.
        """
        stream = self.engine.as_ready(plan, timeout=timeout).__aiter__()
        while True:
            try:
                yield sync(self.loop, stream.__anext__)
            except StopAsyncIteration:
                return


class ArchiveFile(AbstractBufferedFile):  # type: ignore[misc]
    """A read-only file whose ranges come through the filesystem's read policy.

    Counts bytes fetched (per block) and bytes read by the caller separately,
    which is how the filesystem measures read amplification.
    """

    def _fetch_range(self, start: int, end: int) -> bytes:
        data: bytes = sync(self.fs.loop, self.fs._fetch, self.path, start, end)
        return data

    def read(self, length: int = -1) -> bytes:
        data: bytes = super().read(length)
        self.fs.read_stats.delivered(len(data))
        return data


def _is_local(fs: Any) -> bool:
    """A filesystem on this machine's disk (possibly wrapped to look async)."""
    inner = getattr(fs, "sync_fs", fs)
    protocol = inner.protocol if isinstance(inner.protocol, tuple) else (inner.protocol,)
    return "file" in protocol or "local" in protocol


def _same_s3_service(cold: Any, hot: Any) -> bool:
    """Both filesystems are S3 on the same endpoint: a server-side copy works."""
    if type(cold).__name__ != "S3FileSystem" or type(hot).__name__ != "S3FileSystem":
        return False
    cold_kwargs = getattr(cold, "client_kwargs", None) or {}
    hot_kwargs = getattr(hot, "client_kwargs", None) or {}
    return bool(cold_kwargs.get("endpoint_url") == hot_kwargs.get("endpoint_url"))


def _member_entry(
    member: MemberInfo,
    bundle_class: StorageClass,
    restore: RestoreState | None = None,
    expiry: datetime | None = None,
) -> dict[str, Any]:
    """An fsspec info dict for a bundle member (class and state inherited from its bundle).

    Without a probe (listings), the state follows the bundle's class: a listing
    inside a catalog root asks the cold store nothing.
    """
    state = restore or (RestoreState.ARCHIVED if bundle_class.needs_restore else RestoreState.HOT)
    return {
        "name": member.path,
        "size": member.length,
        "type": "file",
        "StorageClass": bundle_class.value,
        "storage_class": bundle_class.value,
        "restore": state.value,
        "restore_expiry": expiry,
        "archive_access": None,
        "bundle": member.bundle,
        "crc32": member.crc32,
        "mtime": member.mtime,
    }


def _catalog_isdir(catalog: Catalog, path: str) -> bool:
    prefix = path.rstrip("/") + "/"
    return catalog.isdir(path) or any(p.startswith(prefix) for p in catalog.plain)


def _catalog_listing(catalog: Catalog, path: str) -> list[dict[str, Any]]:
    """``ls`` inside a catalog root, from the catalog alone (states from the bundles' class)."""
    files, dirs = catalog.ls(path)
    entries = [_member_entry(m, catalog.bundles[m.bundle].storage_class) for m in files]
    names = set(dirs)
    prefix = path.rstrip("/") + "/"
    for plain, size in catalog.plain.items():
        if plain.startswith(prefix):
            rest = plain[len(prefix) :]
            if "/" in rest:
                names.add(prefix + rest.split("/", 1)[0])
            else:
                entries.append(_plain_entry(plain, size))
    entries += [{"name": d, "size": 0, "type": "directory"} for d in sorted(names)]
    return entries


def _catalog_find(catalog: Catalog, path: str) -> list[dict[str, Any]]:
    entries = []
    for name in catalog.find(path):
        member = catalog.lookup(name)
        if member is not None:
            entries.append(_member_entry(member, catalog.bundles[member.bundle].storage_class))
    prefix = path.rstrip("/") + "/"
    entries += [
        _plain_entry(p, size)
        for p, size in catalog.plain.items()
        if p.startswith(prefix) or p == path
    ]
    return entries


def _plain_entry(path: str, size: int) -> dict[str, Any]:
    """A hot object listed by a catalog (e.g. zarr metadata kept out of bundles)."""
    return {
        "name": path,
        "size": size,
        "type": "file",
        "StorageClass": "STANDARD",
        "storage_class": "STANDARD",
        "restore": RestoreState.HOT.value,
        "restore_expiry": None,
        "archive_access": None,
    }


def _member_range(length: int, start: int | None, end: int | None) -> tuple[int, int]:
    """fsspec's start/end semantics (negative from the end), clamped to the member."""
    lo = 0 if start is None else (length + start if start < 0 else start)
    hi = length if end is None else (length + end if end < 0 else end)
    return max(0, min(lo, length)), max(0, min(hi, length))


def _named_paths(paths: str | list[str], strip: Callable[[Any], Any]) -> set[str]:
    """The plain (non-glob) paths a caller named explicitly."""
    names = [paths] if isinstance(paths, str) else paths
    return {strip(p) for p in names if not _GLOB_CHARS & set(p)}


def _alternatives(raw: str) -> list[tuple[str, bool]]:
    """Other readings of a path that matched nothing: the literal name, then NFC and NFD."""
    out: list[tuple[str, bool]] = []
    if _GLOB_CHARS & set(raw):
        out.append((raw, True))
    for form in ("NFC", "NFD"):
        normal = unicodedata.normalize(form, raw)
        if normal != raw:
            out.append((normal, False))
            if _GLOB_CHARS & set(normal):
                out.append((normal, True))
    return out


def _origin(path: str, plain: dict[str, str]) -> str:
    """The raw path a listed file came from (its directory was named)."""
    for name, raw in plain.items():
        if path.startswith(name.rstrip("/") + "/"):
            return raw
    return path


def _hours(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def _file_entry(state: ObjectState) -> dict[str, Any]:
    """An fsspec info dict with the archive fields added."""
    return {
        "name": state.path,
        "size": state.size,
        "type": "file",
        "StorageClass": state.storage_class.value,
        "ETag": state.etag,
        "LastModified": state.last_modified,
        "storage_class": state.storage_class.value,
        "restore": state.restore.value,
        "restore_expiry": state.restore_expiry,
        "archive_access": state.archive_access.value if state.archive_access else None,
    }


def _state_from_entry(entry: dict[str, Any]) -> ObjectState:
    from archivefs.model import ArchiveAccessTier

    access = entry.get("archive_access")
    return ObjectState(
        path=entry["name"],
        size=int(entry.get("size", 0)),
        storage_class=StorageClass.parse(entry.get("storage_class") or entry.get("StorageClass")),
        restore=RestoreState(entry.get("restore", "hot")),
        restore_expiry=entry.get("restore_expiry"),
        etag=entry.get("ETag"),
        last_modified=entry.get("LastModified"),
        archive_access=ArchiveAccessTier(access) if access else None,
    )
