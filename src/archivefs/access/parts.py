"""What every collaborator of one filesystem is given: its stores, settings and caches.

The face (:class:`archivefs.filesystem.ArchiveFileSystem`) makes one :class:`Parts`
(through :func:`archivefs.access.assembly.assemble`) and hands it to each collaborator
at construction; nothing under ``access/`` imports the face. The restore engine is made
on first use; what the face holds (its event loop, the store scope read hints are kept
per) is reached through callables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from archivefs.access.settings import Setting
from archivefs.hints import note_readable as remember_readable
from archivefs.hooks import Hooks
from archivefs.model import RestoreTier

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable

    from archivefs.access.settings import Settings
    from archivefs.catalog.view import CatalogView
    from archivefs.model import ObjectState
    from archivefs.providers.base import ProviderSpec
    from archivefs.restore.engine import RestoreEngine
    from archivefs.stats import ReadStats
    from archivefs.stores.base import ColdStore

_T = TypeVar("_T")


class Parts:
    """The cold store (``fs``, its adapter ``store``), catalogs, counters and settings."""

    hooks = Setting[Hooks]()
    tier = Setting[RestoreTier]()
    days = Setting[int]()
    on_archived = Setting[str]()
    wait_timeout = Setting[float | None]()
    restore_time_scale = Setting[float]()
    concurrency = Setting[int]()
    batch_size = Setting[int]()

    def __init__(
        self,
        *,
        fs: Any,
        store: ColdStore,
        provider: ProviderSpec,
        catalogs: CatalogView,
        read_stats: ReadStats,
        settings: Settings,
        dircache: Any,
        strip: Callable[[Any], Any],
        parent: Callable[[str], str],
        make_engine: Callable[[], RestoreEngine],
        invalidate_cache: Callable[..., None],
        ls_from_cache: Callable[[str], Any],
        scope: Callable[[], str],
        loop: Callable[[], asyncio.AbstractEventLoop],
    ) -> None:
        self.fs = fs
        self.store = store
        self.provider = provider
        self.catalogs = catalogs
        self.read_stats = read_stats
        self._settings = settings
        self.dircache = dircache
        self.strip = strip
        self.parent = parent
        self.invalidate_cache = invalidate_cache
        self.ls_from_cache = ls_from_cache
        self._make_engine = make_engine
        self._engine: RestoreEngine | None = None
        self._scope = scope
        self._loop = loop

    @property
    def engine(self) -> RestoreEngine:
        """The filesystem's restore engine (made on first use: no session before)."""
        if self._engine is None:
            self._engine = self._make_engine()
        return self._engine

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop()

    @property
    def store_scope(self) -> str:
        """The store read hints are kept per (protocol and endpoint)."""
        return self._scope()

    @property
    def store_protocol(self) -> str:
        return str(self.provider.protocols[0])

    def note_readable(self, state: ObjectState) -> None:
        """Remember (for this process) that an object reads now: reading it whole is one GET."""
        remember_readable(self.store_scope, state)

    async def or_unregistered(self, path: str, act: Callable[[], Awaitable[_T]]) -> _T:
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
