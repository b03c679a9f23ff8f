"""ArchiveFileSystem: the fsspec face of archivefs.

It wraps a cold store (any S3 endpoint, through s3fs) the way fsspec's own
wrapping filesystems do (``target_protocol``/``target_options`` or ``fs=``),
so ``archive::s3://bucket/key`` URLs and xarray's ``storage_options`` work.
Listings and ``info`` carry each object's storage class and restore state;
reads of hot and restored objects are exactly s3fs's reads; reading an
archived object follows the ``on_archived`` policy instead of failing with an
opaque ``PermissionError``. Every forwarding method is written out (as
``fsspec.implementations.dirfs`` does), never routed through attribute magic:
here, or for the target's own calls in ``archivefs.s3compat.TargetMethods``.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import fsspec
from fsspec.asyn import AsyncFileSystem, sync, sync_wrapper
from fsspec.callbacks import DEFAULT_CALLBACK
from fsspec.implementations.chained import ChainedFileSystem
from fsspec.spec import make_instance

from archivefs.access.assembly import assemble
from archivefs.access.blocking import sync_method
from archivefs.access.cold import (
    ColdOptions,
    async_of,
    json_form,
    open_cold,
    recovered,
    store_scope_of,
    travelling_options,
)
from archivefs.access.files import ArchiveFile as ArchiveFile  # still importable from here
from archivefs.access.settings import Setting, Settings
from archivefs.access.transfer import PART_CONCURRENCY, PART_SIZE
from archivefs.catalog.view import DEFAULT_CATALOG_TTL
from archivefs.hooks import Hooks
from archivefs.model import ObjectState, RestoreTier
from archivefs.plans import Plan
from archivefs.readahead import ReadaheadCache
from archivefs.s3compat import TargetAttributes, TargetMethods, refuse_bucket_as_file
from archivefs.stores import provider_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from fsspec.callbacks import Callback

    from archivefs.access.assembly import Crew
    from archivefs.catalog.index import Catalog
    from archivefs.model import PlannedGroup
    from archivefs.pricing import Estimate, PriceSheet
    from archivefs.restore.claims import ClaimSummary
    from archivefs.restore.engine import RestoreEngine, RestoreProgress, RestoreResult
    from archivefs.restore.notify import NotificationSource
    from archivefs.restore.submitter import SubmitReport

OnArchived = Literal["raise", "restore", "wait"]


class ArchiveFileSystem(
    TargetMethods,
    TargetAttributes,
    AsyncFileSystem,  # type: ignore[misc]
    ChainedFileSystem,  # type: ignore[misc]
):
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
    budget_ledger, budget_seed:
        Where ``max_cost``'s running total is shared on a ``distributed`` cluster (a
        name; default: a new one per filesystem) and what it starts from: set when the
        filesystem travels to a worker, so the client and every worker count against
        one budget (docs/clusters.md). Give several filesystems one ``budget_ledger``
        to bound them together on a cluster.
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
    catalog_ttl:
        Seconds the catalog registry and pointers read are trusted (default 60): after
        that, the next use of a bucket reads its registry again (one GET) and the next
        use of a catalog its pointer (one GET), so catalogs bundled or rewritten by
        others are seen. ``math.inf``: until :meth:`invalidate_cache`.
    part_size, part_concurrency:
        Downloads to local files (``get``, ``prefetch(to=...)``, promotion into a
        non-S3 hot store) read objects and large members in ranged parts of
        ``part_size`` bytes (default 8 MiB), ``part_concurrency`` at a time across
        the filesystem's downloads (default 10), each written at its offset as it
        arrives (``archivefs.access.transfer``).
    """

    protocol: ClassVar[tuple[str, ...]] = ("archivefs", "archive")
    root_marker = ""
    async_impl = True
    # File reads: small files whole; else cache the first block (headers), fetch
    # random reads exactly, and read ahead (growing along the run, up to 64 MiB,
    # large readaheads in parts at once) while reads run forward
    # (archivefs.readahead; read amplification: docs/benchmarks.md).
    # Pass block_size/cache_type to open() for s3fs's behaviour.
    read_block_size = 16 * 1024
    read_cache_type = ReadaheadCache.name
    _crew: Crew  # the collaborators every verb forwards to (access/assembly.py)
    _settings: Settings  # what the constructor was given, checked; read-only views of it:
    tier = Setting[RestoreTier]()
    days = Setting[int]()
    on_archived = Setting[OnArchived]()
    wait_timeout = Setting[float | None]()
    restore_time_scale = Setting[float]()
    concurrency = Setting[int]()
    hooks = Setting[Hooks]()
    notifications = Setting["NotificationSource | None"]()
    bucket_claims = Setting[bool]()
    claim_lease = Setting[float | None]()
    price_sheet_name = Setting[str]("price_sheet")
    egress = Setting[str]()
    part_size = Setting[int]()
    part_concurrency = Setting[int]()

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
        budget_ledger: str | None = None,
        budget_seed: Sequence[float] | None = None,
        on_estimate: Callable[[Plan, Estimate], bool | None] | None = None,
        price_sheet: str | None = None,
        egress: str = "same_region",
        notifications: NotificationSource | None = None,
        bucket_claims: bool = False,
        claim_lease: float | None = None,
        pickle_credentials: bool = False,
        credentials: str | None = None,
        store_options: dict[str, Any] | None = None,
        catalog_ttl: float | None = DEFAULT_CATALOG_TTL,
        part_size: int = PART_SIZE,
        part_concurrency: int = PART_CONCURRENCY,
        fo: str | None = None,  # fsspec's URL chaining passes the path; unused
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # rebuilt from a pickle or to_json() (see __reduce__): secrets recovered if held here
        cold = recovered(credentials, ColdOptions(target_protocol, target_options, fs, hot_options))
        self.pickle_credentials = pickle_credentials
        self._credentials_ref = credentials
        if cold.fs is not None and cold.target_protocol is not None:
            raise ValueError(
                "ArchiveFileSystem: pass either fs= (an instance) or target_protocol= "
                "(+ target_options=), not both."
            )
        fs = open_cold(cold, asynchronous=self.asynchronous, loop=self.loop)
        self.provider = provider = provider_of(fs)  # S3 unless the target is another's class
        self.store_protocol = provider.protocols[0]
        self.target_class = type(fs)  # whose path forms (adlfs's account URLs) it parses
        self.fs = async_of(fs)
        # on an instance, paths are parsed by the target's own _strip_protocol first
        # (fsspec calls self._strip_protocol); on the class, the generic form below
        self.__dict__["_strip_protocol"] = self._target_strip_protocol
        self._settings = settings = Settings.checked(
            provider,
            tier=tier,
            days=days,
            on_archived=on_archived,
            price_sheet=price_sheet,
            max_cost=max_cost,
            budget_ledger=budget_ledger,
            budget_seed=budget_seed,
            on_estimate=on_estimate,
            wait_timeout=wait_timeout,
            restore_time_scale=restore_time_scale,
            concurrency=concurrency,
            batch_size=self.batch_size,
            journal=journal,
            notifications=notifications,
            bucket_claims=bucket_claims,
            claim_lease=claim_lease,
            egress=egress,
            hot=hot,
            hot_options=dict(cold.hot_options or {}),
            store_options=store_options,
            restore_status_in_listings=restore_status_in_listings,
            catalog_ttl=catalog_ttl,
            part_size=part_size,
            part_concurrency=part_concurrency,
        )
        self._verified_etags: dict[str, str] = {}  # bundle key -> ETag proven by content hash
        # the work is done by small collaborators, each given its parts (access/)
        self._crew = assemble(
            fs=self.fs,
            provider=provider,
            settings=settings,
            verified_etags=self._verified_etags,
            dircache=self.dircache,
            strip=self._strip_protocol,
            parent=self._parent,
            invalidate_cache=self.invalidate_cache,
            ls_from_cache=self._ls_from_cache,
            scope=lambda: self.store_scope,
            loop=lambda: self.loop,
            generic_find=super()._find,
            generic_glob=super()._glob,
            generic_get=super()._get,
            generic_cat_ranges=super()._cat_ranges,
            info=self._info,
        )
        self.store = self._crew.parts.store
        self.catalogs = self._crew.caches.catalogs
        self.read_stats = self._crew.parts.read_stats

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (Dask, zarr) without explicit keys unless ``pickle_credentials=True``."""
        return make_instance, (type(self), self.storage_args, self._portable_options())

    def to_dict(self, *, include_password: bool = True) -> dict[str, Any]:
        """fsspec's JSON form (``to_json``), without explicit keys unless asked to keep them.
        A function in the options (an ``on_estimate`` hook) has none: a clear error."""
        return json_form(self, self._portable_options(), include_password)

    def _portable_options(self) -> dict[str, Any]:
        """``storage_options`` for another process: secrets replaced by a reference valid in
        this process only, no notification source (:func:`travelling_options`)."""
        options, self._credentials_ref = travelling_options(
            self.storage_options, self.pickle_credentials, self._credentials_ref, self.store
        )
        options.update(self.hooks.travelling())  # one budget for the copies and this one
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

    def _target_strip_protocol(self, path: Any) -> Any:
        """``path`` without archivefs's prefixes, as the target parses it (its own
        ``_strip_protocol``: adlfs reads ``abfs://container@account.dfs.core.windows.net/``
        and ``account.dfs.core.windows.net/container``), then without slashes around it."""
        if isinstance(path, list):
            return [self._target_strip_protocol(p) for p in path]
        path = fsspec.utils.stringify_path(path)
        for prefix in ("archivefs::", "archive::", "archivefs://", "archive://"):
            if path.startswith(prefix):
                path = path[len(prefix) :]
        return type(self)._strip_protocol(self.target_class._strip_protocol(path))

    @property
    def engine(self) -> RestoreEngine:
        """The restore engine (made on first use: no session at construction)."""
        return self._crew.parts.engine

    @property
    def price_sheet(self) -> PriceSheet:
        """The price sheet estimates use (loaded on first use)."""
        return self._crew.approval.price_sheet

    def approve_reads(self, plan: Plan) -> None:
        """Show the fee-charging reads of ``plan`` to the budget and estimate hooks.

        Raises :class:`BudgetExceededError` if ``max_cost`` or an ``on_estimate``
        hook refuses them; does nothing without fee-charging reads or without hooks.
        Bulk reads (``cat``/``get`` of many paths), ``plan_dataset`` and ``prefetch``
        call it before the first byte; restores are approved when they are sent.
        What was approved before (by any call on this filesystem) is not counted
        again: ``max_cost`` bounds the running total (docs/cost-model.md).
        """
        self._crew.approval.approve_reads(plan)

    def estimate_plan(self, plan: Plan, **kwargs: Any) -> Estimate:
        """The cost and latency of a plan with this filesystem's price sheet and egress path.

        Unless ``read_amplification`` is given, the amplification this
        filesystem has measured on its own reads so far is used (1.0 before any).
        """
        return self._crew.approval.estimate_plan(plan, **kwargs)

    async def _estimate(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        **kwargs: Any,
    ) -> Estimate:
        """What restoring and reading ``paths`` once would cost. Sends no restore."""
        return await self._crew.restoring.estimate(paths, tier=tier, days=days, **kwargs)

    estimate = sync_wrapper(_estimate)

    # -- metadata (access/listing.py) ------------------------------------------------------

    async def _info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        return await self._crew.lister.info(path, **kwargs)

    async def _ls(self, path: str, detail: bool = False, **kwargs: Any) -> list[Any]:
        return await self._crew.lister.ls(path, detail=detail, **kwargs)

    async def _find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        **kwargs: Any,
    ) -> Any:
        return await self._crew.lister.find(path, maxdepth=maxdepth, withdirs=withdirs, **kwargs)

    def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``find``. Below a catalog root, the catalog is opened on the I/O loop and
        the answer is made from its arrays on the calling thread: the CPU of 10^7 names never
        holds up the loop that every other read shares."""
        return self._crew.lister.find_blocking(path, maxdepth, withdirs, detail, **kwargs)

    def glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        """fsspec's ``glob``. Returning names below a catalog root, the catalog is opened on
        the I/O loop and the names are matched on the calling thread, as ``find`` does."""
        return self._crew.lister.glob_blocking(path, maxdepth, **kwargs)

    async def _glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        """fsspec's glob; names below a catalog root are matched against the catalog's
        sorted paths, with no info dict per member (:meth:`Lister.glob`)."""
        return await self._crew.lister.glob(path, maxdepth=maxdepth, **kwargs)

    async def _du(
        self, path: str, total: bool = True, maxdepth: int | None = None, **kwargs: Any
    ) -> Any:
        """Sizes of the files below ``path`` (fsspec's ``du``) from one ``find``: inside a
        catalog root from the catalog's arrays, never a request per member."""
        return await self._crew.lister.du(path, total=total, maxdepth=maxdepth, **kwargs)

    # -- reads (access/reads.py, copies.py) ------------------------------------------------

    async def _cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        return await self._crew.reads.cat_file(path, start, end, **kwargs)

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
        """fsspec's ``cat_ranges``; ranges of bundle members are coalesced per bundle
        (:meth:`Reads.cat_ranges`). With ``max_gap`` or a hot store, fsspec's own (every
        range on its own: a promoted copy may answer any of them)."""
        return await self._crew.reads.cat_ranges(
            paths, starts, ends, max_gap, batch_size=batch_size, on_error=on_error, **kwargs
        )

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
        await self._crew.restoring.approve_bulk_read(paths)  # what it will pay for, budget first
        return await self._crew.reads.cat(path, paths, on_error, batch_size, **kwargs)

    async def _get_file(
        self, rpath: str, lpath: str, callback: Callback = DEFAULT_CALLBACK, **kwargs: Any
    ) -> None:
        await self._crew.copies.get_file(rpath, lpath, callback=callback, **kwargs)

    async def _get(
        self,
        rpath: Any,
        lpath: Any,
        recursive: bool = False,
        callback: Callback = DEFAULT_CALLBACK,
        maxdepth: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``get``; bundle members (up to 8 MiB each) are fetched coalesced per bundle
        (one ranged GET per block of adjacent members), checked and written."""
        await self._crew.restoring.approve_bulk_read(rpath)  # what it will pay for, budget first
        return await self._crew.copies.get(
            rpath, lpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
        )

    # -- promotion into the hot store (access/promote.py) ----------------------------------

    async def _promote(self, paths: str | list[str]) -> list[str]:
        """Copy readable (hot or restored) objects into the hot store, verified by size.

        Same S3 service: a server-side copy. Otherwise: streamed through a
        private temporary file (bounded memory). Copies appear atomically.
        Returns the hot-store paths written.
        """
        return await self._crew.promotion.promote(paths)

    promote = sync_wrapper(_promote)

    async def _promote_in_place(self, paths: str | list[str]) -> list[str]:
        """Make restored objects permanent: copy each onto itself in STANDARD.

        The S3 way to keep a restored object readable after its copy expires
        (it then bills as STANDARD). Bundle members promote their bundle.
        Objects up to 5 GiB (a single CopyObject).
        """
        return await self._crew.promotion.promote_in_place(paths)

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
            check = not self.asynchronous
            return self._crew.writes.open(path, mode, block_size, autocommit, check, **kwargs)
        kwargs.setdefault("cache_type", self.read_cache_type)
        return ArchiveFile(
            self,
            path,
            mode,
            block_size=block_size or self.read_block_size,
            cache_options=cache_options,
            **kwargs,
        )

    def invalidate_cache(self, path: str | None = None) -> None:
        """Forget cached listings (of ``path`` and its parent, or all); with no ``path``
        or a bucket's, the catalog registry and catalogs read too (read again on use)."""
        self._crew.caches.invalidate(path)

    # -- writes (access/writes.py) ---------------------------------------------------------

    async def _pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
        await self._crew.writes.pipe_file(path, value, **kwargs)

    async def _put_file(self, lpath: str, rpath: str, **kwargs: Any) -> None:
        """Upload the local file ``lpath`` to ``rpath``. ``storage_class=`` (a class of
        the store's provider: ``"GLACIER"``, ``"Archive"``, ``"COLDLINE"``...) puts it
        straight into that class with one upload, on every provider."""
        await self._crew.writes.put_file(lpath, rpath, **kwargs)

    async def _cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        await self._crew.writes.cp_file(path1, path2, **kwargs)

    async def _rm_file(self, path: str, **kwargs: Any) -> None:
        await self._crew.writes.rm_file(path, **kwargs)

    async def _rm(self, path: Any, recursive: bool = False, **kwargs: Any) -> Any:
        """Remove objects; removing a catalog root (or a folder above one) also removes it
        from the bucket's registry in the same call. Paths inside a catalog root are refused.
        Returns the target's answer (s3fs: the removed paths)."""
        return await self._crew.writes.rm(path, recursive=recursive, **kwargs)

    async def _touch(self, path: str, truncate: bool = True, **kwargs: Any) -> Any:
        return await self._crew.writes.touch(path, truncate=truncate, **kwargs)

    touch = sync_wrapper(_touch)  # fsspec mirrors no _touch

    async def _unregister_catalog(self, root: str) -> None:
        """Forget a catalog root whose data is gone: remove it from its bucket's registry.

        Touches nothing else; use after bundles and catalog were deleted outside archivefs.
        """
        await self._crew.writes.unregister_catalog(root)

    unregister_catalog = sync_wrapper(_unregister_catalog)

    # -- restores (access/restoring.py, resolve.py) ----------------------------------------

    async def _plan(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        needed_until: datetime | None = None,
        upgrade: bool = False,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> Plan:
        """What restoring ``paths`` involves: groups, states, actions. Sends no restore.

        Bundle members map to their bundle: many members, one group, one request.
        ``upgrade=True`` plans a request at ``tier`` for groups already restoring.
        ``read_whole`` (variable -> files, from a dataset selection: what
        ``archivefs.datasets`` passes) names the files read whole rather than chunk by
        chunk; the plan carries it to the estimate hooks and the displays.
        """
        return await self._crew.restoring.plan(
            paths,
            tier=tier,
            days=days,
            needed_until=needed_until,
            upgrade=upgrade,
            read_whole=read_whole,
        )

    plan = sync_wrapper(_plan)

    async def _expand_states(self, paths: str | list[str]) -> dict[str, ObjectState | None]:
        """Object states of ``paths`` (objects, globs, directories) from listings."""
        return await self._crew.resolver.expand(paths)

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
        return await self._crew.restoring.restore(
            paths, tier, days, wait, timeout, promote, on_progress, upgrade, on_missing
        )

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
        force: bool = False,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> RestoreResult:
        """Get ``paths`` ready to read: one batch of restores (if any), budget checked once.

        Restores, like :meth:`restore`, whatever needs it and waits (``wait``); objects
        that read at once (free, or for a retrieval fee on S3 IA/GLACIER_IR and GCS
        Nearline/Coldline/Archive) need nothing, but their retrieval fees count against
        ``max_cost`` and are shown to ``on_estimate`` with the restores, before anything.

        ``to``: a local directory; once everything reads, each requested file is
        written to ``to/<bucket>/<key>`` (bundle members as their own bytes, never the
        whole bundle), and ``result.copied`` says what was written
        (``archivefs.access.copies.CopyReport``). Keys that would land outside it are
        refused before anything is requested; the budget refuses before anything is
        requested or written. ``on_missing`` is :meth:`restore`'s. Run again with the
        same ``to``, it leaves out the files an earlier run wrote there when neither
        the file nor its object changed since (``result.copied.skipped``; as ``aws s3
        sync`` skips them), before anything is priced or requested; ``force=True``
        fetches them all again. ``read_whole`` is :meth:`plan`'s: the hooks see it.
        """
        return await self._crew.restoring.prefetch(
            paths, tier, days, wait, timeout, on_progress, to, on_missing, force, read_whole
        )

    restore = sync_method(_restore)
    prefetch = sync_method(_prefetch)

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
        return await self._crew.restoring.submit(plan)

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
        return self._crew.restoring.as_ready(plan, timeout, on_round=on_round, started=started)

    def note_readable(self, state: ObjectState) -> None:
        """Remember (for this process) that an object reads now: reading it whole is one GET."""
        self._crew.parts.note_readable(state)

    @property
    def store_scope(self) -> str:
        """The store this filesystem reads (protocol and endpoint): what read hints are per."""
        return store_scope_of(self.storage_options)

    # ---- What the `archivefs` command shows, one public call each ----------------------
    # The command line (archivefs.cli) calls only public operations; these are the ones
    # it needs beyond fsspec's verbs and the archive verbs above. Each forwards to the
    # filesystem's parts; keep new ones in this block.

    def list_entries(self, url: str, recursive: bool = False) -> list[dict[str, Any]]:
        """``ls`` of ``url`` (``find`` with ``recursive``), or of what it matches if a glob:
        what ``archivefs ls`` prints (archivefs's keys: not s3fs's Key, Size, ContentType,
        VersionId). A glob that matches nothing gives ``[]``.

        A glob's matches take their entries from ``ls`` of their folders, one listing per
        folder, so they carry the same probed restore states as ``ls`` of the folder."""
        return self._crew.lister.entries(url, recursive)

    def catalog_root_for(self, path: str) -> tuple[str, Catalog] | None:
        """The catalog root holding ``path`` and its loaded catalog; None outside any."""
        found: tuple[str, Catalog] | None = sync(self.loop, self.catalogs.root_for, path)
        return found

    def restore_eta(self, plan: Plan) -> datetime | None:
        """When the plan's restores in flight are expected to be done, from the journal
        (None without a journal, with nothing restoring, or with no expected time)."""
        return self._crew.restoring.eta(plan)

    def restore_claims(self, plan: Plan) -> tuple[list[ClaimSummary], list[str]]:
        """The bucket's claims (``bucket_claims=True``) on the plan's restoring groups:
        grouped by requester and tier, oldest first, and the groups no claim names.
        One GET per restoring group."""
        return self._crew.restoring.claims(plan)

    def prefetch_to_hot_store(
        self,
        paths: str | list[str],
        tier: str | None = None,
        days: int | None = None,
        timeout: float | None = None,
        on_progress: Callable[[RestoreProgress], None] | None = None,
        on_missing: Callable[[Plan], None] | None = None,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> RestoreResult:
        """:meth:`prefetch` (restores and retrieval fees approved together, once, before
        anything), then copy every object it made ready into the hot store (``hot=``),
        as :meth:`promote` does: what ``archivefs prefetch --to s3://HOT`` runs."""
        args = (paths, tier, days, timeout, on_progress, on_missing, read_whole)
        result: RestoreResult = sync(self.loop, self._crew.restoring.prefetch_to_hot_store, *args)
        return result
