"""Assembly: one filesystem's store adapter, caches and collaborators, made from its settings.

The face (:class:`archivefs.filesystem.ArchiveFileSystem`) checks its options, then
calls :func:`assemble` once with its :class:`~archivefs.access.settings.Settings` and
the callables it lends (its path handling, its loop, fsspec's generic walks); nothing
here imports the face, and nothing opens a session (the restore engine is made on
first use).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archivefs.access.approval import Approval
from archivefs.access.bundles import BundleReads
from archivefs.access.caches import Caches
from archivefs.access.copies import LocalCopies
from archivefs.access.hot import HotCopies
from archivefs.access.listing import Lister
from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.access.promote import Promotion
from archivefs.access.reads import Reads
from archivefs.access.resolve import Resolver
from archivefs.access.restoring import Restoring, make_engine
from archivefs.access.transfer import Transfers
from archivefs.access.writes import Writes
from archivefs.catalog.index import read_catalog_object
from archivefs.s3compat import TargetCalls
from archivefs.stats import ReadStats
from archivefs.stores import make_store

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable

    from archivefs.access.settings import Settings
    from archivefs.providers.base import ProviderSpec


@dataclass(frozen=True, slots=True)
class Crew:
    """The collaborators of one filesystem; the face forwards each verb to one of them."""

    parts: Parts
    caches: Caches
    hot: HotCopies
    approval: Approval
    policy: ReadPolicy
    reads: Reads
    lister: Lister
    resolver: Resolver
    writes: Writes
    transfers: Transfers
    copies: LocalCopies
    promotion: Promotion
    restoring: Restoring
    target: TargetCalls


def assemble(
    *,
    fs: Any,
    provider: ProviderSpec,
    settings: Settings,
    verified_etags: dict[str, str],
    dircache: Any,
    strip: Callable[[Any], Any],
    parent: Callable[[str], str],
    invalidate_cache: Callable[..., None],
    ls_from_cache: Callable[[str], Any],
    scope: Callable[[], str],
    loop: Callable[[], asyncio.AbstractEventLoop],
    generic_find: Callable[..., Awaitable[Any]],
    generic_glob: Callable[..., Awaitable[Any]],
    generic_get: Callable[..., Awaitable[Any]],
    generic_cat_ranges: Callable[..., Awaitable[Any]],
    info: Callable[..., Awaitable[dict[str, Any]]],
) -> Crew:
    """The store adapter of ``provider`` over the cold store ``fs`` (with the settings'
    ``store_options``), the caches and every collaborator, wired to each other; the
    restore engine is made from ``settings`` on first use.

    ``generic_*`` are fsspec's own walks and ``info`` the face's, for the collaborators
    that fall back on them; ``scope`` and ``loop`` are read on use.
    """
    store = make_store(
        provider,
        fs,
        restore_status_in_listings=settings.restore_status_in_listings,
        **(settings.store_options or {}),  # the adapter's own, e.g. Azure's rehydrate_to, retry
    )
    caches = Caches(
        fs=fs,
        dircache=dircache,
        get_bytes=functools.partial(read_catalog_object, store),  # within each caller's bound
        ttl=settings.catalog_ttl,
        strip=strip,
        parent=parent,
        scope=scope,
    )
    parts = Parts(
        fs=fs,
        store=store,
        provider=provider,
        catalogs=caches.catalogs,
        read_stats=ReadStats(),
        settings=settings,
        dircache=dircache,
        strip=strip,
        parent=parent,
        make_engine=lambda: make_engine(store, settings, approval.approve),
        invalidate_cache=invalidate_cache,
        ls_from_cache=ls_from_cache,
        scope=scope,
        loop=loop,
    )
    hot_copies = HotCopies(settings.hot, settings.hot_options)
    approval = Approval(parts, settings.price_sheet, settings.egress)
    policy = ReadPolicy(parts, approval)
    bundles = BundleReads(parts, policy, hot_copies, verified_etags)
    reads = Reads(parts, policy, bundles, hot_copies, approval, generic_cat_ranges)
    lister = Lister(parts, generic_find, generic_glob)
    resolver = Resolver(parts, lister)
    transfers = Transfers(
        parts,
        policy,
        reads,
        part_size=settings.part_size,
        part_concurrency=settings.part_concurrency,
    )
    copies = LocalCopies(parts, transfers, hot_copies, generic_get)
    promotion = Promotion(parts, hot_copies, policy, resolver, transfers)
    return Crew(
        parts=parts,
        caches=caches,
        hot=hot_copies,
        approval=approval,
        policy=policy,
        reads=reads,
        lister=lister,
        resolver=resolver,
        writes=Writes(parts, bundles, policy, lister, approval),
        transfers=transfers,
        copies=copies,
        promotion=promotion,
        restoring=Restoring(parts, resolver, approval, promotion, copies),
        target=TargetCalls(parts, info),
    )
