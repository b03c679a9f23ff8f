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
import contextlib
import contextvars
import hashlib
import logging
import os
import queue
import tempfile
import unicodedata
import uuid
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import fsspec
from fsspec.asyn import AsyncFileSystem, _run_coros_in_chunks, sync, sync_wrapper
from fsspec.callbacks import DEFAULT_CALLBACK
from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper
from fsspec.implementations.chained import ChainedFileSystem
from fsspec.spec import AbstractBufferedFile, make_instance

from archivefs.bulk import gc_paused
from archivefs.catalog import members as catalog_members
from archivefs.catalog.bundle import check_member
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir, is_reserved, registry_path
from archivefs.catalog.registry import change_registry
from archivefs.catalog.view import CatalogView, Location
from archivefs.errors import (
    ArchiveError,
    BundleChangedError,
    ChecksumMismatchError,
    InvalidOptionsError,
    InvalidPathError,
    InvalidRestoreRequestError,
    MissingBundleError,
    MissingCredentialsError,
    ObjectArchivedError,
    ObjectNotFoundError,
    PriceSheetError,
    RestoreInProgressError,
)
from archivefs.globbing import glob_walk
from archivefs.hints import forget_readable, readable_state
from archivefs.hints import note_readable as remember_readable
from archivefs.hooks import Hooks
from archivefs.keyed_paths import local_target
from archivefs.member_reads import BLOCK, Block, Part, plan_blocks
from archivefs.member_reads import CONCURRENCY as READ_CONCURRENCY
from archivefs.model import (
    ObjectState,
    Plan,
    RestoreState,
    RestoreTier,
    StorageClass,
    raise_not_archived,
)
from archivefs.readahead import ReadaheadCache
from archivefs.restore.journal import Journal
from archivefs.restore.planner import PathInGroup, PathsInGroup
from archivefs.restore.schedule import PollSchedule
from archivefs.s3compat import (
    TargetCalls,
    TargetFileCalls,
    as_listed,
    call_target,
    described,
    find_as_s3fs,
    refuse_bucket_as_file,
    refuse_whole_store,
    split_version,
    versioned_info,
)
from archivefs.stats import ReadStats
from archivefs.stores import before_connect, make_store, provider_of
from archivefs.stores.credentials import (
    deposit,
    found_by_botocore,
    has_ambient_credentials,
    recover,
    redact_library_logs,
    withhold,
)
from archivefs.stores.s3 import RangeRead, S3Store, restores_not_implemented, split_path
from archivefs.stores.translate import is_archived_error, raise_translated, s3_error_code

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator, Mapping

    import numpy as np
    from fsspec.callbacks import Callback

    from archivefs.catalog.index import Catalog, MemberInfo
    from archivefs.globbing import GlobWalk
    from archivefs.model import PlannedGroup
    from archivefs.pricing import Estimate, PriceSheet
    from archivefs.restore.engine import RestoreEngine, RestoreProgress, RestoreResult
    from archivefs.restore.notify import NotificationSource
    from archivefs.restore.submitter import SubmitReport

logger = logging.getLogger("archivefs")

OnArchived = Literal["raise", "restore", "wait"]
_POLICIES = ("raise", "restore", "wait")
_GLOB_CHARS = frozenset("*?[")
_T = TypeVar("_T")
_TYPES_ONLY = "_archivefs_types_only"  # glob -> _find: names and types will do (no info dicts)


def _omit_missing(error: OSError) -> None:
    """``on_error`` for fsspec's walk: a folder gone since it was listed is left out; any
    other error (credentials, access, throttling) is raised, never taken for no match."""
    if not isinstance(error, FileNotFoundError):
        raise error


def _catalog_glob_names(catalog: Catalog, root: str, walk: GlobWalk, withdirs: bool) -> list[str]:
    """A names glob below a catalog root: CPU only, with the cyclic GC paused."""
    with gc_paused():
        return catalog_members.glob_names(catalog, root, walk, withdirs)


def _catalog_find(
    catalog: Catalog, path: str, detail: bool, states: Mapping[str, ObjectState]
) -> Any:
    """``find(path)`` of the members at or below ``path``: names, or info dicts by name
    (members' states from their bundles' probed ``states``)."""
    if detail:
        return catalog_members.find_entries(catalog, path, states)
    return catalog_members.find_names(catalog, path)


_MEMBER_PIECE = 64 * 2**20  # get() of a member: ranged reads of at most this many bytes
_GET_ROUND = 16 * BLOCK  # get() of many members: fetched and written this many bytes at a time
# get() notes here the members _get_file is asked for, to fetch them coalesced afterwards
_GET_BATCH: contextvars.ContextVar[list[tuple[MemberInfo, Location, str]] | None] = (
    contextvars.ContextVar("archivefs_get_batch", default=None)
)


class ArchiveFileSystem(TargetCalls, AsyncFileSystem, ChainedFileSystem):  # type: ignore[misc]
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
        ``price_sheet`` defaults to the provider's shipped sheet (``aws-us-east-1``,
        ``azure-eastus``, ``gcs-us-central1``, ``oci-us-ashburn-1``).
    notifications:
        A source of "this key is restored" events (S3 event notifications through a
        queue, or a callback) that lets the poller check at once instead of waiting.
    store_options:
        Options of the provider's store adapter. Azure (``AzureStore``):
        ``rehydrate_to`` (Hot, Cool or Cold), ``retry`` (``{"attempts": 6,
        "backoff": 0.1, "max_backoff": 5.0}``: retries of throttled tier changes and
        listings) and ``batch_size`` (Set Blob Tier per Blob Batch, up to 256).
        S3 (``S3Store``): ``list_fanout`` (pieces of a large ``find`` listed at once,
        default 8) and ``list_page`` (keys per listing request, up to 1,000).
    """

    protocol: ClassVar[tuple[str, ...]] = ("archivefs", "archive")
    root_marker = ""
    async_impl = True
    # File reads: cache the first block (headers), fetch random reads exactly,
    # and read ahead (growing 4x per request, up to 64 MiB) while reads run
    # forward (archivefs.readahead). One time step of a chunked netCDF file then
    # fetches ~1.3x the bytes needed, where s3fs's defaults (50 MiB readahead)
    # fetch the whole file; a whole variable or a point series takes a handful
    # of GETs, not one per chunk (measured: docs/benchmarks.md). Pass
    # block_size/cache_type to open() for s3fs's behaviour.
    read_block_size = 64 * 1024
    read_cache_type = ReadaheadCache.name

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
        price_sheet: str | None = None,
        egress: str = "same_region",
        notifications: NotificationSource | None = None,
        bucket_claims: bool = False,
        claim_lease: float | None = None,
        pickle_credentials: bool = False,
        credentials: str | None = None,
        store_options: dict[str, Any] | None = None,
        fo: str | None = None,  # fsspec's URL chaining passes the path; unused
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        keys_withheld = False  # rebuilt in another process, from options without the keys
        if credentials is not None:  # rebuilt from a pickle or to_json(): see __reduce__
            original = recover(credentials)
            keys_withheld = original is None
            if original is not None:
                if "fs" in original:
                    fs, target_protocol, target_options = original["fs"], None, None
                else:
                    target_options = original.get("target_options", target_options)
                hot_options = original.get("hot_options", hot_options)
            elif found_by_botocore(target_protocol):  # other libraries find theirs, or say why
                missing = _missing_worker_credentials(target_options, fs)
                if missing is not None:  # raised at the first request, never while unpickling
                    target_options = {**(target_options or {}), "session": _Refusing(missing)}
        self.pickle_credentials = pickle_credentials
        self._credentials_ref = credentials
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
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise ValueError(f"ArchiveFileSystem: days must be a whole number >= 1, got {days!r}.")
        if fs is None:
            # nested dicts copied too: ocifs writes its retry strategy into the
            # config_kwargs it is given, which would make storage_options unserialisable
            options = {
                k: dict(v) if isinstance(v, dict) else v for k, v in (target_options or {}).items()
            }
            protocol = target_protocol or "s3"
            before_connect(protocol, options)  # before the library is imported
            cls = fsspec.get_filesystem_class(protocol)
            if getattr(cls, "async_impl", False):
                options.setdefault("asynchronous", self.asynchronous)
                options.setdefault("loop", self.loop)
            redact_library_logs()  # ocifs logs its config, private key included, at DEBUG
            try:
                fs = fsspec.filesystem(protocol, **options)
            except Exception as error:
                if keys_withheld:  # adlfs and ocifs refuse to start without a credential
                    raise MissingCredentialsError(
                        "this filesystem was pickled without its credentials (archivefs "
                        "keeps every provider's secret options out of pickles and "
                        f"to_json()), and {protocol!r} found none of its own in this "
                        f"process: {type(error).__name__}: {error}",
                        path=f"{protocol}://",
                        fix="give this process the store's credentials (the environment "
                        "variables or config file its client library reads, a managed "
                        "identity or instance principal), or construct the filesystem with "
                        "pickle_credentials=True to send them in clear inside the pickle.",
                    ) from error
                if isinstance(error, (ValueError, TypeError)):
                    raise  # wrong options: the target's own message says which
                raise_translated(error, f"{protocol}://", action="connect to")  # e.g. ocifs
        provider = provider_of(fs)  # S3 unless the target is another provider's fsspec class
        # a provider without restores (GCS) keeps S3's tier names as a placeholder
        # (RestoreTier.parse): its plans never restore, and restore() refuses every object
        self.tier = RestoreTier.parse(
            tier, provider=None if provider.name == "s3" else provider.name
        )
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
        self.bucket_claims = bucket_claims
        self._fee_checked: set[str] = set()  # plain objects whose reads the budget has seen
        if claim_lease is not None and not (
            isinstance(claim_lease, int | float) and 0 < claim_lease < float("inf")
        ):
            raise InvalidOptionsError(
                f"claim_lease must be a number of seconds above 0, got {claim_lease!r}.",
                path="claim_lease",
                fix="leave it out (15 minutes), or give the longest a host may take between "
                "claiming a group and sending its restore.",
            )
        self.claim_lease = claim_lease
        # not given: the provider's own shipped sheet (an Azure budget in Azure prices)
        self.price_sheet_name = price_sheet or provider.price_sheet
        self.egress = egress
        self._price_sheet: PriceSheet | None = None
        self._hot_url = hot
        self._hot_options = dict(hot_options or {})
        self._hot: tuple[Any, str] | None = None
        self.store = make_store(
            provider,
            fs,
            restore_status_in_listings=restore_status_in_listings,
            **(store_options or {}),  # the adapter's own, e.g. Azure's rehydrate_to, retry
        )
        self.store_protocol = provider.protocols[0]
        self.provider = provider
        self.catalogs = CatalogView(self.store.get_bytes)
        self.read_stats = ReadStats()
        self._engine: RestoreEngine | None = None
        self._verified_etags: dict[str, str] = {}  # bundle key -> ETag proven by content hash

    # -- plumbing --------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (Dask, zarr) without explicit keys unless ``pickle_credentials=True``."""
        return make_instance, (type(self), self.storage_args, self._portable_options())

    def to_dict(self, *, include_password: bool = True) -> dict[str, Any]:
        """fsspec's JSON form (``to_json``), without explicit keys unless asked to keep them."""
        from fsspec.json import FilesystemJSONEncoder

        encoder = FilesystemJSONEncoder()
        options = self._portable_options()
        if not include_password:
            options.pop("password", None)
        return dict(
            cls=f"{type(self).__module__}:{type(self).__name__}",
            protocol=self.protocol[0],
            args=encoder.make_serializable(self.storage_args),
            **encoder.make_serializable(options),
        )

    def _portable_options(self) -> dict[str, Any]:
        """``storage_options`` for another process: no secrets, no notification source.

        A notification source lives in the process that made it (a pickled queue would
        be a dead copy); on a cluster, the coordinator is handed its own.
        """
        options = self._options_without_secrets()
        options.pop("notifications", None)
        return options

    def _options_without_secrets(self) -> dict[str, Any]:
        """``storage_options`` with secrets replaced by a reference valid in this process only."""
        options = dict(self.storage_options)
        if self.pickle_credentials or options.get("credentials"):
            return options
        original = dict(options)
        cold = options.pop("fs", None)
        if cold is not None:
            protocol = cold.protocol[0] if isinstance(cold.protocol, tuple) else cold.protocol
            options["target_protocol"] = protocol
            options["target_options"] = dict(getattr(cold, "storage_options", {}))
            for local in ("asynchronous", "loop"):
                options["target_options"].pop(local, None)
        removed: list[str] = []
        for name in ("target_options", "hot_options"):
            if options.get(name):
                options[name], found = withhold(options[name])
                removed += found
        if not removed:
            return dict(self.storage_options)
        if self._credentials_ref is None:
            self._credentials_ref = deposit(original)
        options["credentials"] = self._credentials_ref
        return options

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
            from archivefs.restore.claims import DEFAULT_LEASE_S, BucketClaims
            from archivefs.restore.engine import RestoreEngine  # on first use: keeps `ls` light

            claims = None
            if self.bucket_claims:
                claims = BucketClaims(self.store, lease_seconds=self.claim_lease or DEFAULT_LEASE_S)
            self._engine = RestoreEngine(
                self.store,
                journal=self._make_journal(),
                approve=self._approve,
                notifications=self.notifications,
                time_scale=self.restore_time_scale,
                concurrency=self.concurrency,
                claims=claims,
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
        """The engine calls this before any paid request: budget and estimate hooks.

        The estimate of a plan with restores covers the whole job: its restores and
        the reads of every group, fee-charging ones included.
        """
        if self.hooks.wants_estimate and plan.to_restore:
            self.hooks.approve(plan, self.estimate_plan)

    def approve_reads(self, plan: Plan) -> None:
        """Show the fee-charging reads of ``plan`` to the budget and estimate hooks.

        Raises :class:`BudgetExceededError` if ``max_cost`` or an ``on_estimate``
        hook refuses them; does nothing without fee-charging reads or without hooks.
        Bulk reads (``cat``/``get`` of many paths), ``plan_dataset`` and ``prefetch``
        call it before the first byte; restores are approved when they are sent.
        What was approved before (by any call on this filesystem) is not counted
        again: ``max_cost`` bounds the running total (docs/cost-model.md).
        """
        if self.hooks.wants_estimate and plan.fee_reads:
            self.hooks.approve(plan.only(plan.fee_reads), self.estimate_plan)

    async def _approve_bulk_read(self, paths: Any) -> None:
        """Plan a bulk read (states from listings) and approve what it will pay for.

        Its fee-charging reads; and, when the read policy restores (``"wait"``,
        ``"restore"``), the restores the read will send, as one job, so a read of
        many archived objects is refused as a whole, as ``restore`` of them is.
        Only with a budget or an estimate hook: otherwise a bulk read sends no
        request beyond its reads.
        """
        if not self.hooks.wants_estimate:
            return
        plan = await self._plan(paths)
        if self.on_archived != "raise" and plan.to_restore:
            self.hooks.approve(plan.replace(missing=()), self.estimate_plan)
        else:
            self.approve_reads(plan)

    def _approve_read(self, state: ObjectState) -> None:
        """Approve the read of one object whose state is known (a retrieval fee, if any)."""
        if self.hooks.wants_estimate and state.readable and state.storage_class.has_retrieval_fee:
            plan = self.engine.plan_known({state.path: state}, tier=self.tier, days=self.days)
            self.approve_reads(plan)

    def estimate_plan(self, plan: Plan, **kwargs: Any) -> Estimate:
        """The cost and latency of a plan with this filesystem's price sheet and egress path.

        Unless ``read_amplification`` is given, the amplification this
        filesystem has measured on its own reads so far is used (1.0 before any).
        """
        kwargs.setdefault("egress", self.egress)
        if getattr(self.store, "copies", False):  # Azure, rehydrate="copy"
            kwargs.setdefault("rehydrate_by_copy", True)
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
        return self.store.namespace  # the store adapter names its store (providers/)

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

    # -- where a path lives ------------------------------------------------------------

    async def _member_at(self, path: str) -> MemberInfo | None:
        """The bundle member at ``path`` (``None``: a plain object or nothing).

        The one resolution every verb uses: a member is read from its bundle,
        never asked of the cold store at its logical path.
        """
        return (await self.catalogs.locate(path)).member

    async def _or_unregistered(self, path: str, act: Callable[[], Awaitable[_T]]) -> _T:
        """Run ``act`` on ``path``; if the store has no such object, look for a catalog the
        bucket's registry does not list that holds ``path`` (:meth:`CatalogView.adopt`),
        and if one does, run ``act`` again: it then reads the member. A member never reads
        as absent because the registry is stale."""
        try:
            return await act()
        except FileNotFoundError:
            if not await self.catalogs.adopt(path):
                raise
        return await act()

    async def _bundle_state(self, where: Location) -> ObjectState:
        """The state of a member's bundle (one HEAD); a missing bundle is damage."""
        assert where.member is not None
        try:
            return await self.store.head(where.member.bundle)
        except ObjectNotFoundError as error:
            raise _missing_bundle(where.member, where.root) from error

    def _refuse_member_write(self, member: MemberInfo, verb: str) -> ArchiveError:
        return InvalidPathError(
            f"is a member of bundle {member.bundle!r}; a bundle member cannot be {verb} "
            "in place (the catalog would keep pointing at the bundle).",
            path=member.path,
            fix="write to a path outside the catalog root, or re-bundle the folder with the "
            "changed files (`archivefs bundle`).",
        )

    # -- metadata ------------------------------------------------------------------------

    async def _info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        if self._strip_protocol(path) == "":
            return {"name": "", "size": 0, "type": "directory"}  # the root: every bucket
        path, version = split_version(self._strip_protocol(path), kwargs.pop("version_id", None))
        if version is not None:  # one version of an object: the target's to describe
            return await versioned_info(self.fs, path, version)
        if not split_path(path)[1]:
            return await self._info_of(path, **kwargs)
        return await self._or_unregistered(path, lambda: self._info_of(path, **kwargs))

    async def _info_of(self, path: str, **kwargs: Any) -> dict[str, Any]:
        bucket, key = split_path(path)
        if not key:
            bucket_info = getattr(self.store, "bucket_info", None)  # e.g. Oracle's: ocifs's fails
            try:
                if bucket_info is not None:
                    return dict(await bucket_info(bucket))
                return dict(await self.fs._info(bucket))
            except Exception as error:
                raise_translated(error, bucket, action="inspect")
        where = await self.catalogs.locate(path)
        if where.member is not None:
            bundle = await self._bundle_state(where)  # the member's state is its bundle's
            return _member_entry(
                where.member, bundle.storage_class, bundle.restore, bundle.restore_expiry
            )
        if where.is_catalog_dir and where.catalog is not None and path not in where.catalog.plain:
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
            return described(_file_entry, await self.store.head(path))
        except ObjectNotFoundError:
            pass
        if await self.store.is_directory(path):
            return {"name": path, "size": 0, "type": "directory"}
        raise ObjectNotFoundError(
            "no such object or directory.",
            path=path,
            fix="check the path; fs.ls() of its parent shows what exists.",
        )

    async def _ls(self, path: str, detail: bool = False, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        if kwargs.get("versions") or path == "":  # versions, buckets: the target's listing
            own = {k: kwargs[k] for k in ("refresh", "versions") if k in kwargs}  # not ours
            return list(await call_target(self.fs, "ls", path, detail=detail, **own))
        refresh = kwargs.get("refresh", False)
        entries = None if refresh else self.dircache.get(path)
        found = await self.catalogs.root_for(path) if entries is None else None
        if found is not None:  # inside a catalog root: the catalog answers, the store is not asked
            entries = catalog_members.listing(found[1], path)
            if not entries:
                info = await self._info(path)
                entries = [info]
            elif detail and kwargs.get("probe_bundles", True):
                await self._add_bundle_states(found, entries)
            return list(entries) if detail else sorted(e["name"] for e in entries)
        if entries is None:
            bucket, key = split_path(path)
            listing = await self.store.list(path)
            entries = [as_listed(_file_entry(s)) for s in listing.files if not is_reserved(s.path)]
            entries += [
                as_listed({"name": d, "size": 0, "type": "directory"})
                for d in listing.directories
                if not is_reserved(d)
            ]
            if not entries:
                if key:
                    info = await self._info(path)  # a file lists as itself; else not found
                    entries = [as_listed(info) if info["type"] == "file" else info]
                    if info["type"] == "file":
                        return entries if detail else [info["name"]]
                else:
                    await self._info(bucket)  # raises for a missing bucket
            self.dircache[path] = entries
        return list(entries) if detail else sorted(e["name"] for e in entries)

    async def _add_bundle_states(
        self, found: tuple[str, Catalog], entries: list[dict[str, Any]]
    ) -> None:
        """Members' restore states from their bundles: one bulk probe, at most a request per
        bundle (a LIST answers up to 1,000), none for bundles in classes that read at once."""
        catalog = found[1]
        cold = sorted(
            {
                e["bundle"]
                for e in entries
                if "bundle" in e and catalog.bundles[e["bundle"]].storage_class.needs_restore
            }
        )
        states = await self._probe_bundles(found, cold)
        for entry in entries:
            state = states.get(entry.get("bundle", ""))
            if state is None:
                continue
            entry["restore"] = state.restore.value
            entry["restore_expiry"] = state.restore_expiry
            entry["storage_class"] = entry["StorageClass"] = state.storage_class.value
            entry["access"] = state.access.value

    async def _probe_bundles(
        self, found: tuple[str, Catalog], keys: list[str]
    ) -> dict[str, ObjectState]:
        """The states of bundles ``keys`` of catalog ``found`` (root, catalog), from one bulk
        probe; a bundle the store does not have is damage (:class:`MissingBundleError`)."""
        if not keys:
            return {}
        root, catalog = found
        states = await self.store.probe(keys)
        gone = [key for key in keys if key in states and states[key] is None]
        if gone:
            raise _missing_bundle(catalog.members_of(gone[0])[0], root)
        return {key: state for key, state in states.items() if state is not None}

    async def _member_states(
        self, found: tuple[str, Catalog], rows: slice | np.ndarray[Any, Any]
    ) -> dict[str, ObjectState]:
        """Probed states of the cold bundles that members in ``rows`` lie in."""
        return await self._probe_bundles(found, catalog_members.cold_bundles(found[1], rows))

    async def _find_states(self, found: tuple[str, Catalog], path: str) -> dict[str, ObjectState]:
        """Probed states of the cold bundles of the members ``find(path)`` lists."""
        rows = catalog_members.find_member_rows(found[1], path)
        return await self._member_states(found, rows)

    async def _find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        **kwargs: Any,
    ) -> Any:
        path = self._strip_protocol(path)
        refuse_whole_store(path)
        found = await self._find_unshaped(path, maxdepth, withdirs, **kwargs)
        return find_as_s3fs(found, path, kwargs.get("prefix"), withdirs, maxdepth)

    async def _find_unshaped(
        self, path: str, maxdepth: int | None, withdirs: bool, **kwargs: Any
    ) -> Any:
        detail = kwargs.get("detail", False)
        # members' states: their bundles probed, unless the caller probes them itself
        probe = detail and kwargs.get("probe_bundles", True)
        found = await self.catalogs.root_for(path)
        if maxdepth is not None or withdirs:
            # a walk (find with depth, glob): from the catalog, with one bulk probe of the
            # members' bundles for detail, never a probe per folder
            # ``prefix`` (a name stem, from glob): only names that start path/prefix,
            # as s3fs and gcsfs read it; glob's pattern keeps no other name anyway
            stem = str(kwargs.get("prefix") or "")
            if "/" in stem:
                stem = ""
            if found is not None and await self._walkable(found[1], path, maxdepth, stem):
                if kwargs.get(_TYPES_ONLY):
                    return catalog_members.walk_types(found[1], path, maxdepth, withdirs, stem)
                if detail:
                    walked = catalog_members.walk(found[1], path, maxdepth, stem)
                    states = await self._member_states(found, walked.rows) if probe else {}
                    return catalog_members.walk_entries(found[1], path, walked, withdirs, states)
                return catalog_members.walk_names(found[1], path, maxdepth, withdirs, stem)
            kwargs.pop(_TYPES_ONLY, None)
            kwargs.setdefault("probe_bundles", False)
            # fsspec's walk leaves out a folder whose listing fails, whatever the error: a
            # glob without credentials (or refused, or throttled past its retries) answered
            # [] as if nothing matched. Only a folder that is gone is left out here
            kwargs.setdefault("on_error", _omit_missing)
            return await super()._find(path, maxdepth=maxdepth, withdirs=withdirs, **kwargs)
        if found is not None:
            states = await self._find_states(found, path) if probe else {}
            return _catalog_find(found[1], path, detail, states)
        files = await self._files_below(path)
        key = split_path(path)[1]
        if not files and key:
            try:
                info = await self._info(path)
            except FileNotFoundError:
                info = None
            if info is not None and info["type"] == "file":
                files = {info["name"]: info}
        names = sorted(files)
        return {n: files[n] for n in names} if detail else names

    def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``find``. Below a catalog root, the catalog is opened on the I/O loop and
        the answer is made from its arrays on the calling thread: the CPU of 10^7 names (10-14 s
        with ``detail``) never holds up the loop that every other read shares."""
        timeout = kwargs.pop("timeout", None)
        if maxdepth is None and not withdirs:
            stripped = self._strip_protocol(path)
            found = sync(self.loop, self.catalogs.root_for, stripped, timeout=timeout)
            if found is not None:
                states = {}
                if detail and kwargs.get("probe_bundles", True):  # one bulk probe, as ls
                    states = sync(self.loop, self._find_states, found, stripped, timeout=timeout)
                names = _catalog_find(found[1], stripped, detail, states)
                return find_as_s3fs(names, stripped, kwargs.get("prefix"), withdirs, maxdepth)
        return sync(
            self.loop,
            self._find,
            path,
            maxdepth=maxdepth,
            withdirs=withdirs,
            detail=detail,
            timeout=timeout,
            **kwargs,
        )

    def glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        """fsspec's ``glob``. Returning names below a catalog root, the catalog is opened on
        the I/O loop and the names are matched on the calling thread, as ``find`` does."""
        timeout = kwargs.pop("timeout", None)
        if not kwargs.get("detail"):
            withdirs = kwargs.get("withdirs", True)
            below = sync(
                self.loop, self._glob_below_catalog, path, maxdepth, withdirs, timeout=timeout
            )
            if below is not None:
                catalog, root, walk = below
                return _catalog_glob_names(catalog, root, walk, withdirs)
        return sync(self.loop, self._glob, path, maxdepth=maxdepth, timeout=timeout, **kwargs)

    async def _glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        """fsspec's glob. Returning names below a catalog root, the pattern is matched
        against the catalog's sorted paths (:func:`catalog_members.glob_names`): no
        ``(name, info)`` pair, dict or sort per member, where fsspec's glob of 10^7 members
        made 10^7 of each (12 s). Elsewhere fsspec's glob; returning names it walks for the
        names and their types only, building no info dict per member.

        Below a catalog root the rest of fsspec's glob is CPU only, run with the cyclic
        GC paused: fsspec sorts and filters a (name, info) tuple per match, and the
        collections those fell due for made a detail glob of 10^6 members twice as slow."""
        if not kwargs.get("detail"):
            withdirs = kwargs.get("withdirs", True)
            below = await self._glob_below_catalog(path, maxdepth, withdirs)
            if below is not None:
                catalog, root, walk = below
                return _catalog_glob_names(catalog, root, walk, withdirs)
            kwargs[_TYPES_ONLY] = True
        pattern = glob_walk(path, self._strip_protocol(path), maxdepth)
        folder = self._strip_protocol(pattern.root) if pattern is not None else ""
        if folder and await self.catalogs.root_for(folder) is not None:
            with gc_paused():
                return await super()._glob(path, maxdepth=maxdepth, **kwargs)
        return await super()._glob(path, maxdepth=maxdepth, **kwargs)

    async def _glob_below_catalog(
        self, path: str, maxdepth: int | None, withdirs: bool
    ) -> tuple[Catalog, str, GlobWalk] | None:
        """The catalog, folder and walk that answer a names glob of ``path`` from the catalog
        alone, as ``_find`` would walk it (the catalog loaded); None where they do not."""
        walk = glob_walk(path, self._strip_protocol(path), maxdepth)
        if walk is None or (walk.depth is None and not withdirs):
            return None  # no wildcard (fsspec asks whether it exists), or not a walk
        root = self._strip_protocol(walk.root)
        found = await self.catalogs.root_for(root) if root else None
        if found is None or not await self._walkable(found[1], root, walk.depth, walk.prefix):
            return None
        return found[1], root, walk

    async def _walkable(
        self, catalog: Catalog, path: str, maxdepth: int | None, stem: str = ""
    ) -> bool:
        """Whether the catalog alone answers a walk below ``path`` (no catalog root nested
        below it, and a directory of members as :func:`catalog_members.walkable` says)."""
        if maxdepth is not None and maxdepth < 1:
            return False  # fsspec's walk raises its ValueError
        roots = await self.catalogs.registered(split_path(path)[0])
        if any(r.startswith(path + "/") for r in roots):
            return False
        return catalog_members.walkable(catalog, path, stem)

    async def _du(
        self, path: str, total: bool = True, maxdepth: int | None = None, **kwargs: Any
    ) -> Any:
        """Sizes of the files below ``path`` (fsspec's ``du``) from one ``find``: inside a
        catalog root from the catalog's arrays, never a request per member."""
        path = self._strip_protocol(path)
        if total and maxdepth is None and not kwargs.get("withdirs"):
            found = await self.catalogs.root_for(path)
            if found is not None:
                return catalog_members.du_total(found[1], path)
        kwargs["detail"] = True
        files = await self._find(path, maxdepth=maxdepth, **kwargs)
        sizes = {name: info["size"] for name, info in files.items()}
        return sum(sizes.values()) if total else sizes

    async def _files_below(self, path: str) -> dict[str, dict[str, Any]]:
        """Every file below a folder outside any catalog root: one recursive listing, plus
        the members of the catalog roots it holds."""
        listing = await self.store.list(path, recursive=True)
        own = is_reserved(path)  # asked for archivefs's bookkeeping itself (e.g. the bundles)
        files = {
            s.path: as_listed(_file_entry(s))
            for s in listing.files
            if not s.path.endswith("/") and (own or not is_reserved(s.path))
        }
        pointer = f"/{catalog_dir('')}/{POINTER}".replace("//", "/")
        await self.catalogs.discover(
            [s.path[: -len(pointer)] for s in listing.files if s.path.endswith(pointer)]
        )
        listed = {s.path: s for s in listing.files}  # the bundles' states are in it too
        for root, catalog in await self.catalogs.under(path):  # loads only those below
            if isinstance(catalog, ArchiveError):
                raise catalog
            files.update(catalog_members.find_entries(catalog, root, listed))
        return files

    # -- reads -----------------------------------------------------------------------------

    async def _guarded(self, path: str, read: Callable[[], Awaitable[Any]]) -> Any:
        """Run a read; if the object is archived, apply the ``on_archived`` policy."""
        try:
            return await read()
        except Exception as error:
            if not is_archived_error(error):
                raise_translated(error, path, action="read")
            cause = error
        await self._on_archived(path, cause)
        try:
            return await read()
        except Exception as error:
            raise_translated(error, path, action="read")

    async def _on_archived(
        self, path: str, cause: BaseException | None, state: ObjectState | None = None
    ) -> None:
        """Returns once ``path`` reads (``wait``), or raises the policy's error.

        ``state``: the object's state from a HEAD just sent (else one is sent).
        """
        if state is None:
            state = await self.store.head(path)
        if state.readable:  # restored in between, or a server that reads it at once (RGW)
            self.invalidate_cache(path)  # the listing that said otherwise is stale
            self.note_readable(state)
            return
        if self.on_archived == "raise":
            raise self._archived_error(state) from cause
        plan = self.engine.plan_known({path: state}, tier=self.tier, days=self.days)
        result = await self.engine.restore(  # with "wait", returns once it reads
            plan, wait=self.on_archived == "wait", timeout=self.wait_timeout
        )
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
                fix=f"read again once it is done ({self._done_shows()}), or open "
                "the filesystem with on_archived='wait' to block until it is back.",
                ready_at=self._ready_at(state),
            )
        return ObjectArchivedError(
            f"object is archived in {klass} (restore state: {state.restore.value}) and must be "
            f"restored before it can be read; a {self.tier.value} restore takes {wait}"
            f"{self._cost_phrase(state)}.",
            path=state.path,
            fix=_archived_fix(state.path, restore_call, self.store_protocol),
            storage_class=state.storage_class.value,
        )

    def _done_shows(self) -> str:
        """How ``info()`` shows a finished restore, in this provider's terms."""
        if self.provider.targets:  # Azure: the blob moves to an online tier for good
            target = getattr(self.store, "rehydrate_to", None) or self.provider.default_target
            return f"fs.info() shows storage_class={target!r} and restore='hot'"
        return "fs.info() shows restore='restored'"

    def _cost_phrase(self, state: ObjectState) -> str:
        """', costs about X USD (sheet)' for restoring and reading one object, if priceable."""
        from archivefs.pricing.amounts import format_amount

        try:
            plan = self.engine.plan_known({state.path: state}, tier=self.tier, days=self.days)
            cost = self.estimate_plan(plan)
        except (PriceSheetError, InvalidRestoreRequestError):
            return ""
        amount = format_amount(cost.total, cost.currency)
        return f" and costs about {amount} ({cost.sheet} prices)"

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
        path, version = split_version(self._strip_protocol(path), kwargs.pop("version_id", None))
        if _empty_range(start, end):
            return b""  # e.g. readline() at the end of a file: no backwards range is sent
        if version is not None:  # that version, from the store (hot copies are current ones)
            versioned: bytes = await self._guarded(
                path, lambda: self.fs._cat_file(path, start=start, end=end, version_id=version)
            )
            return versioned
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

        async def read() -> bytes:
            where = await self.catalogs.locate(path)
            if where.member is not None:
                return await self._cat_member(where, start, end)
            return await self._read_object(path, start, end, where, **kwargs)

        return await self._or_unregistered(path, read)

    async def _read_object(
        self, path: str, start: int | None, end: int | None, where: Location, **kwargs: Any
    ) -> bytes:
        """A plain object from the cold store, through the read policy.

        s3fs sends a HEAD before every whole-object read, for the size (it fetches
        objects above one block in parallel parts), unless its own listing cache
        knows it, which archivefs's listings do not fill. So: a whole read of an
        object whose size and state are known (a listing, the catalog, a restore
        seen finished) is one GET; otherwise archivefs sends that HEAD itself and
        keeps the state, so an archived object costs the one HEAD that says so,
        not a HEAD, a refused GET and another HEAD.
        """
        sizes = start is None and end is None and _sizes_whole_reads(self.fs, kwargs)
        # with a budget or hook, the first read of an object on any store (whole or ranged)
        # learns its state once, so a retrieval fee is approved before it is paid
        guard = self.hooks.wants_estimate and path not in self._fee_checked
        if sizes or guard:
            state = self._known_state(path, where)
            fresh = None
            if state is None:
                with contextlib.suppress(ObjectNotFoundError):
                    state = fresh = await self.store.head(path)
            if state is not None and not state.readable:
                await self._on_archived(path, None, fresh)  # raises, or returns once it reads
            elif state is not None:
                self._approve_read(state)  # its retrieval fee, if any, through the budget
                self._fee_checked.add(path)
            if sizes and (state is None or state.size <= self.fs.default_block_size):
                # one GET, no HEAD (larger objects: s3fs's parallel parts); for an object the
                # HEAD did not find, the GET's error says whether the key or the bucket is missing
                kwargs["max_concurrency"] = 1
        result: bytes = await self._guarded(
            path,
            lambda: self.fs._cat_file(self._read_path(path), start=start, end=end, **kwargs),
        )
        return result

    def _read_path(self, path: str) -> str:
        """Where the store reads ``path`` from: on Azure with ``rehydrate="copy"``, its
        rehydrated copy once the store has seen it online; else ``path`` itself. Called
        at each try, so a read retried after the read policy finds the copy."""
        read_path = getattr(self.store, "read_path", None)
        return path if read_path is None else str(read_path(path))

    def _known_state(self, path: str, where: Location) -> ObjectState | None:
        """What this filesystem already knows of a plain object, without asking the store.

        Possibly stale, which costs nothing wrong: an object that turns out
        archived is refused and then goes through the read policy, and one
        believed archived is checked with a HEAD before the policy acts.
        """
        if where.catalog is not None and path in where.catalog.plain:
            catalog = where.catalog  # listed hot objects, in the provider's own hot class
            return ObjectState(path=path, size=catalog.plain[path], storage_class=catalog.hot_class)
        ready = readable_state(self.store_scope, path)
        if ready is not None:
            return ready
        try:
            cached = self._ls_from_cache(path)
        except FileNotFoundError:
            return None
        for entry in cached or []:
            if entry["name"] == path and entry.get("type") == "file" and "restore" in entry:
                return _state_from_entry(entry)
        return None

    async def _cat_member(self, where: Location, start: int | None, end: int | None) -> bytes:
        """A bundle member: one ranged read of its bundle, CRC-checked when read whole.

        Every read checks that the object answering at the bundle's key is the
        bundle the catalog recorded (its size, and its ETag where recorded), so
        a changed bundle or a damaged catalog never serves another member's bytes.
        """
        member, bundle = where.member, where.bundle
        assert member is not None
        assert bundle is not None
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
            data = await self._read_bundle(where, first, last)
        return _checked_member(member, lo, hi, data)

    async def _read_bundle(
        self, where: Location, first: int, last: int, *, others: int = 0
    ) -> bytes:
        """Bytes ``[first, last)`` of a member's bundle, from the bundle the catalog recorded.

        Identity: the answering object's size must be the recorded size, and its
        ETag the recorded ETag (sent as ``If-Match``). A different ETag with the
        same content (e.g. after a copy onto itself, which re-computes a multipart
        ETag) is accepted once the whole object's SHA-256 matches the catalog's.
        ``others``: how many more members this read serves (coalesced reads), named
        in the errors so that each of them says what was being read.
        """
        member, bundle = where.member, where.bundle
        assert member is not None
        assert bundle is not None
        etag = self._verified_etags.get(bundle.key, bundle.etag)
        try:
            got: RangeRead = await self._guarded(
                bundle.key, lambda: self.store.get_range(bundle.key, first, last, if_match=etag)
            )
        except (ObjectArchivedError, RestoreInProgressError) as error:
            raise error.in_context(f"(reading {_members(member, others)})") from error
        except ObjectNotFoundError as error:
            raise _missing_bundle(member, where.root, others) from error
        except ArchiveError as error:
            if s3_error_code(error) != "PreconditionFailed" or etag is None:
                raise
            if not await self._same_content(where):
                raise _changed_bundle(
                    member, "its ETag differs from the one recorded", others
                ) from error
            return await self._read_bundle(where, first, last, others=others)
        if got.total_size is not None and got.total_size != bundle.size:
            raise _changed_bundle(
                member, f"it has {got.total_size} bytes, the catalog recorded {bundle.size}", others
            )
        return got.data

    async def _cat_members(
        self, wanted: list[tuple[int, Location, int | None, int | None]]
    ) -> dict[int, bytes | BaseException]:
        """Ranges of bundle members, coalesced: one ranged GET per block of adjacent members.

        ``wanted``: ``(index, location, start, end)`` with fsspec's start/end
        semantics inside each member. Returns index -> bytes, or the error for
        that member (the same errors, after the same checks, as single-member
        reads: the bundle's size and ETag, each member's length, and the CRC-32
        of each member read whole).
        """
        out: dict[int, bytes | BaseException] = {}
        where_of: dict[int, Location] = {}
        parts: list[tuple[str, Part]] = []
        for index, where, start, end in wanted:
            member = where.member
            assert member is not None
            lo, hi = _member_range(member.length, start, end)
            where_of[index] = where
            if hi <= lo:
                out[index] = b""
            else:
                parts.append((member.bundle, Part(index, member.offset + lo, member.offset + hi)))
        semaphore = asyncio.Semaphore(min(self.concurrency, READ_CONCURRENCY))

        async def fetch(block: Block) -> None:
            first = where_of[block.parts[0].index]
            try:
                async with semaphore:
                    data = await self._read_bundle(
                        first, block.start, block.end, others=len(block.parts) - 1
                    )
            except Exception as error:
                out.update((part.index, error) for part in block.parts)
                return
            self.read_stats.fetched(len(data))
            for part in block.parts:
                member = where_of[part.index].member
                assert member is not None
                lo, hi = part.first - member.offset, part.last - member.offset
                try:
                    out[part.index] = _checked_member(member, lo, hi, block.piece(part, data))
                except ArchiveError as error:
                    out[part.index] = error

        await asyncio.gather(*(fetch(b) for b in plan_blocks(parts)))
        return out

    async def _cat_ranges(
        self,
        paths: list[str],
        starts: Any,
        ends: Any,
        max_gap: int | None = None,
        batch_size: int | None = None,
        on_error: str = "return",
        **kwargs: Any,
    ) -> list[Any]:
        """fsspec's ``cat_ranges``; ranges of bundle members are coalesced per bundle.

        Members of the same bundle that lie next to each other are fetched
        together, one ranged GET per up to 8 MiB (``archivefs.member_reads``),
        concurrently; everything else is read range by range as fsspec does.
        With a hot store, every range is read on its own (a promoted copy may
        answer any of them).
        """
        if max_gap is not None or await self._hot_store() is not None:
            out: list[Any] = await super()._cat_ranges(
                paths, starts, ends, max_gap=max_gap, batch_size=batch_size, on_error=on_error
            )
            return out
        if not isinstance(paths, list):
            raise TypeError("cat_ranges: paths must be a list.")
        starts = list(starts) if isinstance(starts, (list, tuple)) else [starts] * len(paths)
        ends = list(ends) if isinstance(ends, (list, tuple)) else [ends] * len(paths)
        if len(starts) != len(paths) or len(ends) != len(paths):
            raise ValueError("cat_ranges: paths, starts and ends must have the same length.")
        results: list[Any] = [None] * len(paths)
        members: list[tuple[int, Location, int | None, int | None]] = []
        plain: list[int] = []
        for index, raw in enumerate(paths):
            path = self._strip_protocol(raw)
            try:
                where = await self.catalogs.locate(path)
            except Exception as error:
                results[index] = error
                continue
            if where.member is not None:
                members.append((index, where, starts[index], ends[index]))
            else:
                plain.append(index)
        coros = [self._cat_file(paths[i], start=starts[i], end=ends[i], **kwargs) for i in plain]
        read = await _run_coros_in_chunks(
            coros, batch_size=batch_size or self.batch_size, nofiles=True, return_exceptions=True
        )
        for index, value in zip(plain, read, strict=True):
            results[index] = value  # counted by _cat_file
        for index, value in (await self._cat_members(members)).items():
            results[index] = value
            if isinstance(value, bytes):
                self.read_stats.delivered(len(value))
        if on_error != "return":
            failed = next((r for r in results if isinstance(r, BaseException)), None)
            if failed is not None:
                raise failed
        return results

    async def _cat(
        self,
        path: Any,
        recursive: bool = False,
        on_error: str = "raise",
        batch_size: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``cat``: many paths read together, bundle members coalesced per bundle."""
        paths = await self._expand_path(path, recursive=recursive)
        await self._approve_bulk_read(paths)  # what it will pay for, through the budget first
        out = await self._cat_ranges(
            paths, None, None, batch_size=batch_size, on_error="return", **kwargs
        )
        if on_error == "raise":
            failed = next((r for r in out if isinstance(r, BaseException)), None)
            if failed is not None:
                raise failed
        if len(paths) > 1 or isinstance(path, list) or paths[0] != self._strip_protocol(path):
            return {
                k: v
                for k, v in zip(paths, out, strict=True)
                if on_error != "omit" or not isinstance(v, BaseException)
            }
        return out[0]

    async def _same_content(self, where: Location) -> bool:
        """Whether the object now at the bundle's key has the recorded SHA-256 (read whole,
        once per new ETag); if so, its ETag is accepted for later reads."""
        bundle = where.bundle
        assert bundle is not None
        if set(bundle.sha256) == {"0"}:
            return False  # no content hash recorded (a catalog rebuilt from archived bundles)
        state = await self.store.head(bundle.key)
        if state.size != bundle.size or state.etag is None:
            return False
        digest = hashlib.sha256()
        for lo in range(0, bundle.size, _MEMBER_PIECE):
            hi = min(lo + _MEMBER_PIECE, bundle.size)
            piece = await self.store.get_range(bundle.key, lo, hi, if_match=state.etag)
            digest.update(piece.data)
        if digest.hexdigest() != bundle.sha256:
            return False
        self._verified_etags[bundle.key] = state.etag
        return True

    async def _get_file(
        self, rpath: str, lpath: str, callback: Callback = DEFAULT_CALLBACK, **kwargs: Any
    ) -> None:
        rpath = self._strip_protocol(rpath)
        if os.path.isdir(lpath):
            return  # a directory entry of a recursive get (as s3fs does)
        hot = await self._hot_store()
        if hot is not None:
            hot_fs, root = hot
            try:
                await hot_fs._get_file(
                    self._hot_path(root, rpath), lpath, callback=callback, **kwargs
                )
                return
            except FileNotFoundError:
                pass

        async def get() -> None:
            where = await self.catalogs.locate(rpath)
            if where.member is not None:
                batch = _GET_BATCH.get()
                if batch is not None and where.member.length <= BLOCK:
                    batch.append((where.member, where, lpath))  # fetched with its neighbours
                    return
                await self._get_member(where, lpath, callback)
                return
            await self._guarded(
                rpath,
                lambda: self.fs._get_file(
                    self._read_path(rpath), lpath, callback=callback, **kwargs
                ),
            )

        await self._or_unregistered(rpath, get)

    async def _get(
        self,
        rpath: Any,
        lpath: Any,
        recursive: bool = False,
        callback: Callback = DEFAULT_CALLBACK,
        maxdepth: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``get``; bundle members (up to 8 MiB each) are fetched coalesced per bundle.

        fsspec expands the paths and calls ``_get_file`` per file as usual; members
        are only noted there, then fetched together (one ranged GET per block of
        adjacent members, ``archivefs.member_reads``), checked and written. Larger
        members stream as before. With a hot store, every file is fetched on its own.
        """
        await self._approve_bulk_read(rpath)  # what it will pay for, through the budget first
        if await self._hot_store() is not None:
            return await super()._get(
                rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
            )
        batch: list[tuple[MemberInfo, Location, str]] = []
        token = _GET_BATCH.set(batch)
        try:
            out = await super()._get(
                rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
            )
        finally:
            _GET_BATCH.reset(token)
        await self._write_members(batch)
        return out

    async def _write_members(self, batch: list[tuple[MemberInfo, Location, str]]) -> None:
        """Fetch members coalesced (in rounds of bounded memory), write each checked one;
        raise the first error once every other member is written."""
        batch = sorted(batch, key=lambda m: (m[0].bundle, m[0].offset))
        failed: BaseException | None = None
        start = 0
        while start < len(batch):
            size, stop = 0, start
            while stop < len(batch) and (stop == start or size < _GET_ROUND):
                size += batch[stop][0].length
                stop += 1
            round_ = batch[start:stop]
            got = await self._cat_members(
                [(i, where, None, None) for i, (_, where, _) in enumerate(round_)]
            )
            for i, (_, _, lpath) in enumerate(round_):
                data = got[i]
                if isinstance(data, BaseException):
                    failed = failed or data
                    continue
                try:
                    with open(lpath, "wb") as out:
                        out.write(data)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.remove(lpath)  # never leave a partial copy behind
                    raise
            start = stop
        if failed is not None:
            raise failed

    async def _get_member(self, where: Location, lpath: str, callback: Callback) -> None:
        """Write a member to a local file: ranged reads of its bundle, CRC-checked whole."""
        member = where.member
        assert member is not None
        callback.set_size(member.length)
        crc = 0
        try:
            with open(lpath, "wb") as out:
                for lo in range(0, member.length, _MEMBER_PIECE):
                    hi = min(lo + _MEMBER_PIECE, member.length)
                    piece = await self._cat_member(where, lo, hi)
                    crc = zlib.crc32(piece, crc)
                    out.write(piece)
                    callback.relative_update(len(piece))
            if crc != member.crc32:
                raise ChecksumMismatchError(
                    f"member {member.path!r} does not match its recorded checksum "
                    f"({member.length} bytes read); the bundle or the catalog is damaged.",
                    path=member.bundle,
                    fix="restore or re-fetch the bundle; if it persists, rebuild the catalog "
                    "with `archivefs catalog rebuild` and compare with the sources.",
                )
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(lpath)  # never leave a partial or unchecked copy behind
            raise

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
            await self._guarded(path, lambda: self.fs._get_file(self._read_path(path), local))
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
        resolved = await self._resolve(paths)
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
                raise self._archived_error(state)
            if not isinstance(self.store, S3Store):
                raise ArchiveError(
                    "promotion in place is implemented for S3 only.",
                    path=key,
                    fix="promote into a hot store instead (hot=...), or copy the blob yourself.",
                )
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
        refuse_bucket_as_file(path)
        if "r" not in mode:
            if not self.asynchronous:
                sync(self.loop, self._writable, path, "overwritten")
            # autocommit=False (and fs.transaction) defers the write to commit(), as in s3fs
            return self.fs.open(path, mode, block_size=block_size, autocommit=autocommit, **kwargs)
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

    async def _writable(self, path: str, verb: str) -> str:
        """``path`` stripped, if it is not a bundle member (members are not written in place)."""
        path = self._strip_protocol(path)
        member = await self._member_at(path)
        if member is not None:
            raise self._refuse_member_write(member, verb)
        return str(path)

    async def _touch(self, path: str, truncate: bool = True, **kwargs: Any) -> Any:
        path = await self._writable(path, "touched")
        self.invalidate_cache(path)
        return await self.fs._touch(path, truncate=truncate, **kwargs)  # s3fs: ValueError if kept

    touch = sync_wrapper(_touch)  # fsspec mirrors no _touch

    async def _pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
        path = await self._writable(path, "overwritten")
        self.invalidate_cache(path)
        await self.fs._pipe_file(path, value, **kwargs)

    async def _put_file(self, lpath: str, rpath: str, **kwargs: Any) -> None:
        rpath = await self._writable(rpath, "overwritten")
        self.invalidate_cache(rpath)
        await self.fs._put_file(lpath, rpath, **kwargs)

    async def _cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        path1 = self._strip_protocol(path1)
        path2 = await self._writable(path2, "overwritten")
        self.invalidate_cache(path2)
        where = await self.catalogs.locate(path1)
        if where.member is not None:  # the member's bytes, from its bundle
            await self.fs._pipe_file(path2, await self._cat_member(where, None, None))
            return
        await self._guarded(path1, lambda: self.fs._cp_file(path1, path2, **kwargs))

    async def _rm_file(self, path: str, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        await self._removable(path)
        self.invalidate_cache(path)
        await self.fs._rm_file(path, **kwargs)

    async def _rm(self, path: Any, recursive: bool = False, **kwargs: Any) -> Any:
        """Remove objects; removing a catalog root (or a folder above one) also removes it
        from the bucket's registry in the same call. Paths inside a catalog root are refused."""
        paths: list[str] = []
        for raw in path if isinstance(path, list) else [path]:
            stripped = self._strip_protocol(raw)
            paths += await self._glob(stripped) if _GLOB_CHARS & set(stripped) else [stripped]
        dropped: dict[str, list[str]] = {}
        for one in paths:
            for root in await self._removable(one):
                dropped.setdefault(split_path(root)[0], []).append(root)
        self.invalidate_cache()
        removed = await self.fs._rm(paths, recursive=recursive, **kwargs)
        for bucket, roots in dropped.items():
            if recursive:
                await self._unregister(bucket, roots)
        return removed  # the target's answer (s3fs: the removed paths)

    async def _removable(self, path: str) -> list[str]:
        """The catalog roots at or below ``path``; refuses paths strictly inside a root."""
        bucket, key = split_path(path)
        below = []
        for root in await self.catalogs.registered(bucket):
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

    async def _unregister(self, bucket: str, roots: list[str]) -> None:
        registry = registry_path(bucket)
        try:
            await change_registry(self.fs, bucket, lambda now: [r for r in now if r not in roots])
        except ArchiveError:
            raise
        except Exception as error:
            raise_translated(error, registry, action="update")
        self.catalogs.invalidate(bucket)

    async def _unregister_catalog(self, root: str) -> None:
        """Forget a catalog root whose data is gone: remove it from its bucket's registry.

        Touches nothing else; use after bundles and catalog were deleted outside archivefs.
        """
        root = self._strip_protocol(root)
        await self._unregister(split_path(root)[0], [root])

    unregister_catalog = sync_wrapper(_unregister_catalog)

    async def _mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        self.invalidate_cache()
        await self.fs._mkdir(self._strip_protocol(path), create_parents=create_parents, **kwargs)

    async def _makedirs(self, path: str, exist_ok: bool = False) -> None:
        await self.fs._makedirs(self._strip_protocol(path), exist_ok=exist_ok)

    async def _rmdir(self, path: str) -> None:
        self.invalidate_cache()
        await self.fs._rmdir(self._strip_protocol(path))

    rmdir = sync_wrapper(_rmdir)  # fsspec mirrors no _rmdir: its rmdir was a silent no-op

    def invalidate_cache(self, path: str | None = None) -> None:
        if path is None:
            self.dircache.clear()
            forget_readable(self.store_scope)
        else:
            path = self._strip_protocol(path)
            self.dircache.pop(path, None)
            self.dircache.pop(self._parent(path), None)
            forget_readable(self.store_scope, path)
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
        upgrade: bool = False,
    ) -> Plan:
        """What restoring ``paths`` involves: groups, states, actions. Sends no restore.

        Bundle members map to their bundle: many members, one group, one request.
        ``upgrade=True`` plans a request at ``tier`` for groups already restoring.
        """
        resolved = await self._resolve(paths)
        return self.engine.plan_known(
            resolved.groups,
            tier=tier or self.tier,
            days=days or self.days,
            needed_until=needed_until,
            # plain objects only: each is its own group, planned straight into columns
            placements=resolved.placements() if resolved.members else None,
            missing=resolved.missing,
            upgrade=upgrade,
        )

    async def _resolve(self, paths: str | list[str]) -> _Resolved:
        """Where each requested path lives (object or bundle) and the state of each group.

        Globs and directories expand to the files they hold (as ``find`` lists
        them); each file resolves to itself or to its bundle. A path that matches
        nothing is tried again as a literal name (for names such as
        ``[draft] v2.json``) and in Unicode NFC and NFD forms; what still matches
        nothing is returned in the third item, as the caller wrote it.
        """
        raws = [paths] if isinstance(paths, str) else list(paths)
        members, states, unmatched = await self._resolve_pass(raws, literal=False)
        missing: list[str] = []
        for raw in unmatched:
            for alternative, literal in _alternatives(raw):
                more, found, still = await self._resolve_pass([alternative], literal=literal)
                if not still:
                    members.update(more)
                    states.update(found)
                    break
            else:
                missing.append(raw)
        groups: dict[str, ObjectState | None] = dict(states)
        groups.update((m, None) for m in missing)
        selected = [
            PathsInGroup(g.paths, g.bundle, g.read_bytes, len(g.paths)) for g in members.groups()
        ]
        bundles = sorted({g.group for g in selected})
        if bundles:
            groups.update(await self.store.probe(bundles))
        return _Resolved(states, selected, groups, missing)

    async def _resolve_pass(
        self, raws: list[str], *, literal: bool
    ) -> tuple[catalog_members.Picks, dict[str, ObjectState], list[str]]:
        """One resolution of ``raws``: members, object states, and the raws matching nothing."""
        members = catalog_members.Picks()
        states: dict[str, ObjectState] = {}
        matched: set[str] = set()
        plain: dict[str, str] = {}  # plain path -> the raw path it came from
        for raw in raws:
            path = self._strip_protocol(raw)
            if not path:
                raise InvalidPathError(
                    "empty path.", path=repr(raw), fix="name a bucket/key, a glob or a directory."
                )
            if _GLOB_CHARS & set(path) and not literal:
                if await self._sort_glob(path, members, states):
                    matched.add(raw)
                continue
            where = await self.catalogs.locate(path)
            if where.member is not None and where.catalog is not None:
                row = where.catalog.row(path)
                assert row is not None
                members.add(where.catalog, row)
                matched.add(raw)
            elif where.is_catalog_dir and where.catalog is not None:
                if await self._pick_below(where.catalog, path, members, states):
                    matched.add(raw)
            else:
                plain[path] = raw
        if plain:
            for path, state in (await self.store.probe(list(plain))).items():
                if state is not None:
                    states[path] = state
                    matched.add(plain[path])
                elif await self._sort_files(await self._files_below(path), members, states):
                    matched.add(plain[path])
        return members, states, [raw for raw in dict.fromkeys(raws) if raw not in matched]

    async def _pick_below(
        self,
        catalog: Catalog,
        path: str,
        members: catalog_members.Picks,
        states: dict[str, ObjectState],
    ) -> int:
        """The files below a catalog directory, picked from the catalog's arrays (what
        ``find`` lists, without a dict per member); returns how many there were."""
        roots = await self.catalogs.registered(split_path(path)[0])
        if any(r.startswith(path + "/") for r in roots):  # nested catalogs: file by file
            found = await self._find(path, detail=True, probe_bundles=False)
            return await self._sort_files(found, members, states)
        rows, plain = catalog_members.find_rows(catalog, path)
        members.add_rows(catalog, rows)
        for name in sorted(plain):  # in find's order
            states[name] = _state_from_entry(
                catalog_members.plain_entry(name, plain[name], catalog.hot_class)
            )
        return len(rows) + len(plain)

    async def _sort_glob(
        self, path: str, members: catalog_members.Picks, states: dict[str, ObjectState]
    ) -> int:
        """A glob's files, and the files below the directories it matches (``2023/*/mag/``)
        unless the glob already matched files inside them (``**``). The members' states are
        not asked here: the plan probes their bundles."""
        matches = await self._glob(path, detail=True, probe_bundles=False)
        count = await self._sort_files(matches, members, states)
        covered: set[str] = set()
        for name, entry in matches.items():
            if entry.get("type") == "file":
                parts = name.split("/")
                covered.update("/".join(parts[:i]) for i in range(1, len(parts)))
        for name, entry in matches.items():
            if entry.get("type") == "directory" and name not in covered and not is_reserved(name):
                count += await self._sort_files(
                    await self._find(name, detail=True, probe_bundles=False), members, states
                )
        return count

    async def _sort_files(
        self,
        files: dict[str, dict[str, Any]],
        members: catalog_members.Picks,
        states: dict[str, ObjectState],
    ) -> int:
        """File entries (from a glob or ``find``) into bundle members and plain objects;
        returns how many files there were."""
        count = 0
        for name, entry in files.items():
            if entry.get("type") != "file":
                continue
            count += 1
            where = await self.catalogs.locate(name) if "bundle" in entry else None
            if where is not None and where.member is not None and where.catalog is not None:
                row = where.catalog.row(name)
                assert row is not None
                members.add(where.catalog, row)
            else:
                states[name] = _state_from_entry(entry)
        return count

    async def _restore(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = False,
        timeout: float | None = None,
        promote: bool = False,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        upgrade: bool = False,
        on_missing: Callable[[Plan], None] | None = None,
    ) -> RestoreResult:
        """Restore every archived object in ``paths`` (paths, globs, directories) in one batch.

        One request per object that needs it, deduplicated through the journal;
        objects that are hot, restored or already restoring cost nothing. With
        ``wait=True``, returns once all of them read (or raises
        :class:`RestoreTimeoutError` after ``timeout`` seconds). With
        ``promote=True``, waits and then copies everything into the hot store
        so it outlives the restored copies' expiry. Paths that match nothing make it
        refuse before anything is sent, unless ``on_missing`` is given: it is called
        with the plan (``plan.missing`` names them) and the rest is restored.
        """
        plan = _leave_out_missing(
            await self._plan(paths, tier=tier, days=days, upgrade=upgrade), on_missing
        )
        if getattr(self.store, "implements_restores", None) is False:
            for g in plan.groups:  # Ceph RGW: GLACIER is a placement that reads at once
                if g.state.storage_class.needs_restore:
                    raise restores_not_implemented(g.state)
        named_paths = _named_paths(paths, self._strip_protocol)
        online = [
            g.state
            for g in plan.groups
            if g.key in named_paths
            and not g.state.storage_class.needs_restore
            and g.state.archive_access is None
        ]
        if online and self.provider.targets and self.engine.journal is not None:
            # Azure: a finished rehydration leaves the blob Hot, like one never archived;
            # the journal tells them apart, so running the same restore again is no error
            done = {r.key for r in self.engine.journal.records([s.path for s in online])}
            online = [s for s in online if s.path not in done]
        for state in online:
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

    async def _prefetch(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        to: str | os.PathLike[str] | None = None,
        on_missing: Callable[[Plan], None] | None = None,
    ) -> RestoreResult:
        """Make everything ``paths`` read ready: restore what must be, approve the rest;
        with ``to``, wait and write each requested file below that directory.

        Unlike ``restore``, objects that already read at once are no error: they are
        part of the job. Restores and fee-charging reads are shown to the budget and
        estimate hooks together, once, before any request (docs/cost-model.md).
        """
        from archivefs.localcopy import copy_to_directory

        plan = _leave_out_missing(await self._plan(paths, tier=tier, days=days), on_missing)
        directory = None if to is None else os.fspath(to).removeprefix("file://")
        if directory is not None:
            for path in plan.paths:  # hostile keys: refused before anything is paid or written
                local_target(directory, path)
        if not plan.to_restore:  # with restores, the engine approves the whole job at once
            self.approve_reads(plan)
        result = await self.engine.restore(
            plan, wait=wait or directory is not None, timeout=timeout, on_progress=on_progress
        )
        for key in result.submitted.sent:
            self.invalidate_cache(key)
        if directory is not None:
            result.copied = await copy_to_directory(self, plan.paths, directory)
        return result

    def prefetch(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        to: str | os.PathLike[str] | None = None,
        on_missing: Callable[[Plan], None] | None = None,
    ) -> RestoreResult:
        """Get ``paths`` ready to read: one batch of restores (if any), budget checked once.

        Restores, like :meth:`restore`, whatever needs it and waits (``wait``); objects
        that read at once (free, or for a retrieval fee on S3 IA/GLACIER_IR and GCS
        Nearline/Coldline/Archive) need nothing, but their retrieval fees count against
        ``max_cost`` and are shown to ``on_estimate`` with the restores, before anything.

        ``to``: a local directory; once everything reads, each requested file is
        written to ``to/<bucket>/<key>`` (bundle members as their own bytes, never the
        whole bundle), and ``result.copied`` says what was written
        (``archivefs.localcopy.CopyReport``). Keys that would land outside it are
        refused before anything is requested; the budget refuses before anything is
        requested or written. ``on_missing`` is :meth:`restore`'s.
        """
        result: RestoreResult = sync(
            self.loop,
            self._prefetch,
            paths,
            tier,
            days,
            wait,
            timeout,
            on_progress,
            to,
            on_missing,
        )
        return result

    def restore(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        wait: bool = False,
        timeout: float | None = None,
        promote: bool = False,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        upgrade: bool = False,
        on_missing: Callable[[Plan], None] | None = None,
    ) -> RestoreResult:
        """Restore every archived object in ``paths`` in one batch; optionally wait for it.

        ``paths`` are paths, globs or directories (``"bucket/run42/*.nc"``);
        bundle members restore their bundle, once. Objects that are hot,
        restored or already restoring cost nothing, and a request already sent
        (by this or another process, per the journal) is never sent again.

        Parameters
        ----------
        tier, days:
            ``"Expedited"``, ``"Standard"`` or ``"Bulk"``, and how many days the
            restored copy stays readable (default: the filesystem's).
        wait, timeout:
            Return once everything reads (or raise ``RestoreTimeoutError``
            after ``timeout`` seconds, saying which restores were sent and which
            were not; the ones sent keep running).
        promote:
            Wait, then copy everything into the hot store so it outlives the
            restored copies.
        on_progress:
            Called with a ``RestoreProgress`` whenever something changes (the
            CLI's progress bar uses it).
        upgrade:
            With a faster ``tier``, speed up restores already in flight (e.g.
            Bulk → Expedited for GLACIER): one request per group, billed at the
            new tier and shown in the estimate before anything is sent.
        on_missing:
            Paths that match nothing make the restore refuse, before anything is sent
            (``ObjectNotFoundError``). With ``on_missing``, it is called with the plan
            (``plan.missing`` names them) and they are left out: the rest is restored.
            When nothing at all matched, the restore still refuses (after the call).

        Examples
        --------
        ```python
        result = fs.restore("bucket/run42/*.nc", tier="Bulk", days=3)
        result.requests_sent                     # paid requests sent now
        fs.restore("bucket/run42/*.nc", wait=True, timeout=48 * 3600)
        fs.restore("bucket/run42/*.nc", tier="Expedited", upgrade=True)  # sooner
        ```
        """
        # written out: fsspec's sync_wrapper would take ``timeout`` for itself
        result: RestoreResult = sync(
            self.loop,
            self._restore,
            paths,
            tier,
            days,
            wait,
            timeout,
            promote,
            on_progress,
            upgrade,
            on_missing,
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

    def as_ready(
        self,
        plan: Plan,
        timeout: float | None = None,
        *,
        on_round: Callable[[dict[str, ObjectState]], None] | None = None,
        started: float | None = None,
    ) -> Iterator[PlannedGroup]:
        """Yield each planned group as soon as it reads (blocking iterator).

        Readable groups come first, at once; the rest as bulk polls find them
        restored. Start reading each one while the others are still restoring:
        polling goes on in the background while the caller reads, so a group
        that comes back meanwhile is handed over at the next ``next()``.
        ``on_round`` hears the states each bulk poll found; ``started`` is when
        the restores were sent (``time.monotonic()``; default: now), which the
        poll schedule counts from.
        """
        ready: queue.Queue[PlannedGroup | BaseException | None] = queue.Queue()

        async def pump() -> None:
            try:
                polled = self.engine.as_ready(
                    plan, timeout=timeout, on_round=on_round, started=started
                )
                async for group in polled:
                    self.note_readable(group.state)
                    ready.put(group)
            except Exception as error:  # handed to the caller, raised there
                ready.put(error)
            ready.put(None)

        polling = asyncio.run_coroutine_threadsafe(pump(), self.loop)
        try:
            while (item := ready.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            polling.cancel()  # the caller stopped early: stop polling

    def note_readable(self, state: ObjectState) -> None:
        """Remember (for this process) that an object reads now: reading it whole is one GET."""
        remember_readable(self.store_scope, state)

    @property
    def store_scope(self) -> str:
        """The store this filesystem reads (protocol and endpoint): what read hints are per."""
        protocol = self.storage_options.get("target_protocol") or "s3"
        options = self.storage_options.get("target_options") or {}
        endpoint = (options.get("client_kwargs") or {}).get("endpoint_url") or options.get(
            "endpoint_url", ""
        )
        return f"{protocol}|{endpoint or options.get('account_name', '')}"


class ArchiveFile(TargetFileCalls, AbstractBufferedFile):  # type: ignore[misc]
    """A read-only file whose ranges come through the filesystem's read policy.

    Counts bytes fetched (per block) and bytes read by the caller separately,
    which is how the filesystem measures read amplification.
    """

    def __init__(self, fs: ArchiveFileSystem, path: str, mode: str = "rb", **kwargs: Any) -> None:
        path, self.version_id = split_version(path, kwargs.pop("version_id", None))
        details = None
        if self.version_id is None and getattr(fs.fs, "version_aware", False):
            # as s3fs: a version-aware read is pinned to the version current at open
            details = sync(fs.loop, call_target, fs.fs, "info", path)
            self.version_id = details.get("VersionId")
        elif self.version_id is not None:
            details = fs.info(path, version_id=self.version_id)
        if details is not None:
            kwargs.setdefault("size", details["size"])
        super().__init__(fs, path, mode, **kwargs)
        if details is not None:
            self.details = details

    def _fetch_range(self, start: int, end: int) -> bytes:
        version = {} if self.version_id is None else {"version_id": self.version_id}
        data: bytes = sync(self.fs.loop, self.fs._fetch, self.path, start, end, **version)
        return data

    def read(self, length: int = -1) -> bytes:
        data: bytes = super().read(length)
        self.fs.read_stats.delivered(len(data))
        return data


class _Refusing:
    """A botocore session stand-in that refuses to make a client: the first request of a
    filesystem that has no credentials raises the error that says why, and sends nothing.

    Raising while a pickle is loaded instead would kill a Dask worker (its task message
    cannot be deserialised) and hang the computation rather than report the error.
    """

    def __init__(self, error: MissingCredentialsError) -> None:
        self.error = error

    def create_client(self, *args: Any, **kwargs: Any) -> Any:
        # a fresh error each time: re-raising one instance can chain it to itself
        raise MissingCredentialsError(self.error.problem, path=self.error.path, fix=self.error.fix)

    def __repr__(self) -> str:
        return "<no credentials>"


def _missing_worker_credentials(
    target_options: dict[str, Any] | None, fs: Any
) -> MissingCredentialsError | None:
    """On a process that got a pickle without keys and has no other credential source: why."""
    options = target_options or {}
    if fs is not None or options.get("anon"):
        return None
    if has_ambient_credentials(options.get("profile")):
        return None
    return MissingCredentialsError(
        "this filesystem was pickled without its explicit keys (archivefs keeps key, "
        "secret and token out of pickles and to_json()), and this process has no "
        "credentials of its own.",
        path=str(options.get("client_kwargs", {}).get("endpoint_url") or "s3"),
        fix="give workers credentials (AWS_* environment variables, a profile, a "
        "credentials file, an instance role), or construct the filesystem with "
        "pickle_credentials=True to send the keys in clear inside the pickle.",
    )


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
        "provider": bundle_class.provider,
        "access": bundle_class.access.value,
        "restore": state.value,
        "restore_expiry": expiry,
        "archive_access": None,
        "bundle": member.bundle,
        "crc32": member.crc32,
        "mtime": member.mtime,
    }


def _empty_range(start: int | None, end: int | None) -> bool:
    """A range that holds no byte whatever the object's size (both ends known, end <= start)."""
    return start is not None and end is not None and 0 <= end <= start


def _members(member: MemberInfo, others: int) -> str:
    """'member 'a'' or, for a coalesced read, 'member 'a' and N others read with it'."""
    more = f" and {others} other member{'s' if others > 1 else ''} read with it" if others else ""
    return f"member {member.path!r}{more}"


def _checked_member(member: MemberInfo, lo: int, hi: int, data: bytes) -> bytes:
    """``data`` as bytes ``[lo, hi)`` of ``member``: its length, and its CRC-32 when whole."""
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


def _changed_bundle(member: MemberInfo, why: str, others: int = 0) -> BundleChangedError:
    return BundleChangedError(
        f"the object at this key is not the bundle the catalog recorded ({why}); "
        f"{_members(member, others)} was not read from it.",
        path=member.bundle,
        fix="put the recorded bundle back, or rebuild the catalog from the bundles as they "
        "are now (`archivefs catalog rebuild`) if the change was intended.",
    )


def _leave_out_missing(plan: Plan, on_missing: Callable[[Plan], None] | None) -> Plan:
    """``plan`` without its paths that match nothing, once ``on_missing`` has been told of
    them; as it is without ``on_missing``, or when nothing matched (the engine refuses)."""
    if not plan.missing or on_missing is None:
        return plan
    on_missing(plan)
    return plan.replace(missing=()) if len(plan) else plan


def _missing_bundle(member: MemberInfo, root: str | None, others: int = 0) -> MissingBundleError:
    return MissingBundleError(
        f"the catalog{f' of {root!r}' if root else ''} lists {_members(member, others)} in this "
        "bundle, but the bundle object does not exist: its members cannot be read "
        "(this is damage, not an absent file).",
        path=member.bundle,
        fix="put the bundle back (from a backup or an earlier object version); if it is gone "
        "for good, rebuild the catalog from the remaining bundles (`archivefs catalog rebuild"
        f" s3://{root}`), which drops its members."
        if root
        else "put the bundle back (from a backup or an earlier object version).",
    )


def _sizes_whole_reads(fs: Any, kwargs: dict[str, Any]) -> bool:
    """The cold store asks an object's size before reading it whole (s3fs, to split
    large objects into parallel parts), and the caller did not choose how to read it."""
    return hasattr(fs, "_cat_file_concurrent") and "max_concurrency" not in kwargs


def _member_range(length: int, start: int | None, end: int | None) -> tuple[int, int]:
    """fsspec's start/end semantics (negative from the end), clamped to the member."""
    lo = 0 if start is None else (length + start if start < 0 else start)
    hi = length if end is None else (length + end if end < 0 else end)
    return max(0, min(lo, length)), max(0, min(hi, length))


def _named_paths(paths: str | list[str], strip: Callable[[Any], Any]) -> set[str]:
    """The plain (non-glob) paths a caller named explicitly."""
    names = [paths] if isinstance(paths, str) else paths
    return {strip(p) for p in names if not _GLOB_CHARS & set(p)}


def _archived_fix(path: str, restore_call: str, protocol: str = "s3") -> str:
    """How to restore: a bundle is restored through what is read from it, never by name."""
    prefetch = (
        "for a lazy xarray/Dask selection, `archivefs.datasets.prefetch(selection)` restores "
        "everything it reads in one batch"
    )
    wait = "or open the filesystem with on_archived='wait' to restore and wait automatically."
    if is_reserved(path):  # a bundle: the caller read one of its members
        return (
            f"{prefetch}; for files, `fs.restore([their paths])` or `archivefs restore "
            f"s3://<their folder>/` restores their bundles once; then read again; {wait}"
        )
    shell = f"`archivefs restore {protocol}://{path}`"
    return f"{restore_call} (or {shell}), then read again; {prefetch}; {wait}"


@dataclass(frozen=True)
class _Resolved:
    """What a selection resolved to: plain objects, bundle members, and every group's state."""

    plain: dict[str, ObjectState]  # requested objects that are their own group
    members: list[PathsInGroup]  # bundle members, by bundle
    groups: dict[str, ObjectState | None]  # every group's state (None: missing)
    missing: list[str]  # requested paths that match nothing, as the caller wrote them

    def placements(self) -> list[PathInGroup | PathsInGroup]:
        """Every requested path with its group (one object per plain object: build only
        when members are mixed in; plain objects alone plan in columns)."""
        placed: list[PathInGroup | PathsInGroup] = [
            PathInGroup(p, p, s.size) for p, s in self.plain.items()
        ]
        return placed + list(self.members)


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
        "provider": state.storage_class.provider,  # whose spelling (Oracle's "Archive"...)
        "access": state.access.value,  # provider-neutral: immediate | retrieval_fee | restore
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
        storage_class=StorageClass.parse(
            entry.get("storage_class") or entry.get("StorageClass"), entry.get("provider")
        ),
        restore=RestoreState(entry.get("restore", "hot")),
        restore_expiry=entry.get("restore_expiry"),
        etag=entry.get("ETag"),
        last_modified=entry.get("LastModified"),
        archive_access=ArchiveAccessTier(access) if access else None,
    )
