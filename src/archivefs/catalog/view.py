"""The catalogs a filesystem sees, and where each path lives: a plain object or a bundle member.

One GET per bucket (``bucket/.archivefs/catalogs.json``; absent means no
catalogs), one per catalog that a path asked about lies in or above (its
pointer), and one per shard of that catalog the path's subtree meets (a
format-1 catalog: its one file), each loaded once (see ``opened.py``); after
that, listing and planning inside a catalog root ask the cold store nothing. :meth:`CatalogView.
locate` is the one place a path is resolved; every verb of the filesystem acts
on its answer.

A registered catalog that is gone (or damaged) is an error for paths under its
root only; the rest of the bucket works. A registry the caller may not read
(HTTP 403, e.g. an IAM policy scoped to a dataset prefix) is never taken for
"no catalogs": the view then looks for a catalog pointer at each ancestor of
the path asked about (one GET per ancestor not yet seen, shallowest first). A
readable registry can be stale (it does not list a root): :meth:`CatalogView.adopt`
makes the same search for a path the store did not find, and keeps what it finds.

Catalogs change under a long-lived filesystem (another ``bundle`` run adds a root or
rewrites a catalog). What the view read is trusted for ``ttl`` seconds (default
:data:`DEFAULT_CATALOG_TTL`); after that, the next use of a bucket reads its registry
again (one GET) and the next use of a catalog reads its pointer again (one GET): an
unchanged pointer keeps the shards already loaded, a changed one is opened anew.
``ttl=None`` trusts them until :meth:`CatalogView.invalidate`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from archivefs.catalog import layout
from archivefs.catalog.index import MAX_POINTER_BYTES, POINTER, Catalog, parse_pointer
from archivefs.catalog.opened import OpenCatalog
from archivefs.catalog.registry import MAX_REGISTRY_BYTES, parse_registry
from archivefs.errors import ArchiveError, CatalogError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection

    from archivefs.catalog.table import BundleInfo, MemberInfo

DEFAULT_CATALOG_TTL = 60.0
"""Seconds a filesystem trusts the registry and catalog pointers it read (``catalog_ttl``)."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where a path lives. No ``root``: outside every catalog (a plain object or nothing)."""

    path: str
    root: str | None = None
    catalog: Catalog | None = None
    member: MemberInfo | None = None

    @property
    def bundle(self) -> BundleInfo | None:
        """The bundle holding the member, as the catalog recorded it."""
        if self.member is None or self.catalog is None:
            return None
        return self.catalog.bundles[self.member.bundle]

    @property
    def is_catalog_dir(self) -> bool:
        """A directory of the catalog (its root, or a folder of members or listed objects)."""
        if self.catalog is None or self.root is None or self.member is not None:
            return False
        if self.path == self.root:
            return True
        prefix = self.path + "/"
        return self.catalog.isdir(self.path) or any(
            p.startswith(prefix) for p in self.catalog.plain
        )


class CatalogView:
    """Lazy, cached access to the catalogs in the buckets a filesystem touches.

    The registry is read once per bucket and ``ttl``; a catalog is loaded only when a
    path at or below its root (or a listing above it) is asked about, and its pointer
    is read again once per ``ttl`` while it is used. ``on_change(bucket)`` hears that
    a bucket's registry or one of its catalogs changed (listings of it are stale).
    """

    def __init__(
        self,
        fetch: Callable[[str, int], Awaitable[bytes]],
        *,
        ttl: float | None = DEFAULT_CATALOG_TTL,
        on_change: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl is not None and (isinstance(ttl, bool) or not ttl >= 0):
            raise ValueError(
                f"catalog_ttl must be a number of seconds (0 or more) or None, got {ttl!r}."
            )
        self.fetch = fetch  # one GET of a whole object within a bound; FileNotFoundError if absent
        self.ttl = ttl
        self.on_change = on_change
        self.clock = clock
        self._read_at: dict[str, float] = {}  # bucket (registry) or root (pointer) -> when read
        self._pointers: dict[str, bytes] = {}  # root -> the pointer its open catalog came from
        self._registry: dict[str, list[str]] = {}  # bucket -> registered roots, longest first
        self._loaded: dict[str, OpenCatalog | ArchiveError] = {}  # root -> catalog, or why not
        self._denied: dict[str, PermissionError] = {}  # buckets whose registry was refused
        self._searched: dict[str, OpenCatalog | ArchiveError | None] = {}  # found by search
        self._lock = asyncio.Lock()

    def _stale(self, key: str) -> bool:
        """Whether what was read for ``key`` (a bucket's registry, a root's pointer) is
        older than the ttl."""
        at = self._read_at.get(key)
        return self.ttl is not None and at is not None and self.clock() - at >= self.ttl

    async def roots(self, bucket: str) -> list[str]:
        """The catalog roots registered in ``bucket`` (one GET on first use, and again
        once the ttl has passed)."""
        if bucket not in self._registry or self._stale(bucket):
            async with self._lock:
                if bucket not in self._registry:
                    self._read_at[bucket] = self.clock()
                    self._registry[bucket] = await self._read_registry(bucket)
                elif self._stale(bucket):
                    await self._reread_registry(bucket)
        return self._registry[bucket]

    async def _reread_registry(self, bucket: str) -> None:
        """The registry again: roots it no longer lists are dropped, searches are made
        again (an adopted root stays only if the registry lists it now)."""
        before = self._registry[bucket]
        was_denied = self._denied.pop(bucket, None)
        self._read_at[bucket] = self.clock()
        roots = await self._read_registry(bucket)
        for root in set(before) - set(roots):
            self._loaded.pop(root, None)
            self._pointers.pop(root, None)
        searched = [r for r in self._searched if r.split("/", 1)[0] == bucket]
        for root in searched:
            del self._searched[root]
        self._registry[bucket] = roots
        if roots != before or was_denied is not None or searched:
            self._changed(bucket)

    def _changed(self, bucket: str) -> None:
        if self.on_change is not None:
            self.on_change(bucket)

    async def _read_registry(self, bucket: str) -> list[str]:
        path = layout.registry_path(bucket)
        try:
            raw = await self.fetch(path, MAX_REGISTRY_BYTES)
        except FileNotFoundError:
            return []
        except PermissionError as error:
            self._denied[bucket] = error  # search under each path asked about instead
            return []
        return sorted(parse_registry(raw, path), key=len, reverse=True)

    async def _entry(self, root: str) -> OpenCatalog | ArchiveError:
        """A registered root's catalog (opened on first use), or the error that says why not."""
        if root not in self._loaded or self._stale(root):
            async with self._lock:
                if root not in self._loaded or self._stale(root):
                    known = self._loaded.get(root)
                    entry = await self._load_root(root, registered=True, known=known)
                    assert entry is not None  # registered roots get a catalog or an error
                    self._loaded[root] = entry
                    if entry is not known and OpenCatalog in (type(known), type(entry)):
                        self._changed(root.split("/", 1)[0])
        return self._loaded[root]

    async def _opened(self, bucket: str) -> list[tuple[str, OpenCatalog | ArchiveError]]:
        roots = await self.roots(bucket)
        if bucket in self._denied:
            found = [(r, c) for r, c in self._searched.items() if c is not None]
            return [
                (r, c)
                for r, c in sorted(found, key=lambda rc: len(rc[0]), reverse=True)
                if r == bucket or r.startswith(bucket + "/")
            ]
        return [(root, await self._entry(root)) for root in roots]

    async def _entries(self, bucket: str) -> list[tuple[str, Catalog | ArchiveError]]:
        return [(r, await _whole(r, c)) for r, c in await self._opened(bucket)]

    async def catalogs(self, bucket: str) -> list[tuple[str, Catalog]]:
        """``(root, catalog)`` pairs registered in ``bucket`` that load (loaded on first use)."""
        return [(r, c) for r, c in await self._entries(bucket) if isinstance(c, Catalog)]

    async def under(self, path: str) -> list[tuple[str, Catalog | ArchiveError]]:
        """The catalogs whose roots lie below ``path`` (all of the bucket's for a bucket),
        or the error of each that cannot be used; only those are loaded."""
        bucket, _, key = path.strip("/").partition("/")
        prefix = path.strip("/") + "/"
        roots = await self.roots(bucket)
        if bucket in self._denied:
            found = await self._entries(bucket)
            return [(r, c) for r, c in found if not key or r.startswith(prefix)]
        return [
            (root, await _whole(root, await self._entry(root)))
            for root in roots
            if not key or root.startswith(prefix)
        ]

    async def registered(self, bucket: str) -> list[str]:
        """Every catalog root known in ``bucket``, whether its catalog loads or not."""
        if bucket in self._denied or bucket not in self._registry:
            await self.roots(bucket)
        if bucket in self._denied:
            return [r for r, _ in await self._opened(bucket)]
        return list(self._registry[bucket])

    async def broken(self, bucket: str) -> list[tuple[str, ArchiveError]]:
        """Registered roots whose catalog is missing or damaged, with the error for each."""
        return [(r, c) for r, c in await self._entries(bucket) if isinstance(c, ArchiveError)]

    async def _load_root(
        self,
        root: str,
        *,
        registered: bool,
        known: OpenCatalog | ArchiveError | None = None,
    ) -> OpenCatalog | ArchiveError | None:
        """The catalog at ``root``, or the error that says why it cannot be used.

        ``None``: an unregistered ``root`` (a search) has no catalog pointer.
        ``known``: the catalog opened before; kept if the pointer has not changed.
        """
        directory = layout.catalog_dir(root)
        pointer_path = f"{directory}/{POINTER}"
        self._read_at[root] = self.clock()
        try:
            raw = await self.fetch(pointer_path, MAX_POINTER_BYTES)
        except FileNotFoundError as error:
            self._pointers.pop(root, None)
            return self._gone(root, error) if registered else None
        except ArchiveError as error:
            if not registered and isinstance(error, PermissionError):
                raise
            return error.in_context(f"(catalog of {root!r})")
        if isinstance(known, OpenCatalog) and self._pointers.get(root) == raw:
            return known  # unchanged: the shards already loaded stay
        self._pointers[root] = raw
        try:
            pointer = parse_pointer(raw, pointer_path)
            return await OpenCatalog.from_pointer(directory, pointer, self.fetch)
        except FileNotFoundError as error:
            return self._gone(root, error)
        except ArchiveError as error:
            return error.in_context(f"(catalog of {root!r})")

    @staticmethod
    def _gone(root: str, cause: BaseException) -> CatalogError:
        error = CatalogError(
            "a catalog is registered at this root, but it is gone, so the files under it "
            "cannot be located (paths outside this root are not affected).",
            path=root,
            fix=f"if its bundles still exist under {layout.bundle_dir(root)}, rebuild it "
            f"(`archivefs catalog rebuild s3://{root}`); if the data was deleted on purpose, "
            f"remove the root from the registry: fs.unregister_catalog({root!r}).",
        )
        error.__cause__ = cause
        return error

    async def _search(self, path: str, *, itself: bool = True, skip: Collection[str] = ()) -> None:
        """Look for a catalog at ``path``'s ancestors (and at ``path`` itself if ``itself``),
        except at the roots in ``skip``.

        Shallowest first, stopping at a catalog that knows ``path``, so the members
        of one catalog cost one GET per ancestor once, not per member.
        """
        parts = path.split("/")
        for depth in range(1, len(parts) + (1 if itself else 0)):
            root = "/".join(parts[:depth])
            if layout.is_reserved(root):
                break
            if root in skip:
                continue
            if root not in self._searched:
                await self._probe_root(root)
            opened = self._searched[root]
            if not isinstance(opened, OpenCatalog):
                continue
            found = (
                await _whole(root, opened) if path == root else await _covering(root, opened, path)
            )
            if isinstance(found, Catalog) and (
                path == root
                or path in found
                or path in found.plain
                or Location(path, root, found).is_catalog_dir
            ):
                break

    async def _probe_root(self, root: str) -> None:
        try:
            self._searched[root] = await self._load_root(root, registered=False)
        except PermissionError:
            self._searched[root] = None  # a catalog you may not read cannot serve you

    async def adopt(self, path: str) -> bool:
        """For a ``path`` the store did not find: find an unregistered catalog that knows it.

        A registry can be stale (written by an older release, a lost race, a manual
        edit); the members of a root it does not list would then read as absent. So
        each ancestor of ``path`` not looked at yet is asked for a catalog pointer
        (one GET each, shallowest first, stopping at a catalog that knows ``path``),
        and every catalog found is used as if registered, by this view, from now on.
        Each ancestor is asked at most once per view (until :meth:`invalidate`), so
        the misses of one folder cost its ancestors' GETs once. True when a catalog
        now locates ``path`` (a member, a listed object or a folder of one), or cannot
        be read (then :meth:`locate` raises its error instead of reading absent); an
        ancestor whose pointer could not be asked (not a 404) raises that error, and is
        asked again next time.
        """
        bucket = path.split("/", 1)[0]
        await self.roots(bucket)
        if bucket in self._denied or layout.is_reserved(path):
            return False  # with the registry refused, every read searches already
        async with self._lock:  # concurrent misses ask each ancestor once
            registered = self._registry[bucket]
            await self._search(path, itself=False, skip=registered)  # those did not know it
            adopted = [
                (root, found)
                for root, found in self._searched.items()
                if found is not None and root not in registered and path.startswith(root + "/")
            ]
            for root, found in adopted:
                if isinstance(found, ArchiveError) and not isinstance(found, CatalogError):
                    del self._searched[root]  # the pointer could not be asked: ask again
                    raise found  # a member may be there: its read fails, it is not absent
            for root, found in adopted:
                self._loaded[root] = found
            if not adopted:
                return False
            self._registry[bucket] = sorted(
                [*registered, *(r for r, _ in adopted)], key=len, reverse=True
            )
        try:
            where = await self.locate(path)
        except ArchiveError:
            return True  # the catalog that holds path is damaged: its error, not "absent"
        return (
            where.member is not None
            or where.is_catalog_dir
            or (where.catalog is not None and path in where.catalog.plain)
        )

    def invalidate(self, bucket: str | None = None) -> None:
        """Forget what was read (of ``bucket``, or of every bucket): the next use reads
        the registry and the pointers again."""
        if bucket is None:
            self._registry.clear()
            self._loaded.clear()
            self._searched.clear()
            self._denied.clear()
            self._read_at.clear()
            self._pointers.clear()
        else:
            for root in self._registry.pop(bucket, []):
                self._loaded.pop(root, None)
            self._denied.pop(bucket, None)
            for root in [r for r in self._searched if r.split("/", 1)[0] == bucket]:
                del self._searched[root]
            for key in [k for k in self._read_at if k.split("/", 1)[0] == bucket]:
                del self._read_at[key]
                self._pointers.pop(key, None)

    async def root_for(self, path: str) -> tuple[str, Catalog] | None:
        """The catalog whose root contains ``path`` (or is it); loads only that one.

        Raises the catalog's :class:`CatalogError` when that root's catalog is
        missing or damaged: its members are then unreadable, never absent.
        """
        bucket = path.split("/", 1)[0]
        roots = await self.roots(bucket)
        if bucket in self._denied:
            await self._search(path)
            candidates = await self._opened(bucket)
        else:
            # roots are longest first: load only the deepest one that holds ``path``
            deepest = next((r for r in roots if path == r or path.startswith(r + "/")), None)
            candidates = [] if deepest is None else [(deepest, await self._entry(deepest))]
        for root, opened in candidates:
            if path == root or path.startswith(root + "/"):
                # only the shards that ``path``'s subtree meets
                catalog = await _covering(root, opened, path)
                if isinstance(catalog, ArchiveError):
                    raise catalog
                return root, catalog
        return None

    async def locate(self, path: str) -> Location:
        """Where ``path`` lives: a member (with its bundle), a catalog folder, or outside."""
        found = await self.root_for(path)
        if found is None:
            return Location(path)
        root, catalog = found
        return Location(path, root, catalog, catalog.lookup(path))

    async def member(self, path: str) -> MemberInfo | None:
        return (await self.locate(path)).member

    async def discover(self, roots: list[str]) -> None:
        """Roots seen in a listing (their pointers): load them if the registry was refused."""
        for root in roots:
            if root.split("/", 1)[0] in self._denied and root not in self._searched:
                await self._probe_root(root)


async def _whole(root: str, opened: OpenCatalog | ArchiveError) -> Catalog | ArchiveError:
    """The whole catalog of ``root``, or the error that says why it cannot be used."""
    if isinstance(opened, ArchiveError):
        return opened
    try:
        return await opened.whole()
    except ArchiveError as error:
        return error.in_context(f"(catalog of {root!r})")


async def _covering(
    root: str, opened: OpenCatalog | ArchiveError, path: str
) -> Catalog | ArchiveError:
    """What of ``root``'s catalog covers ``path`` and below, or why it cannot be used."""
    if isinstance(opened, ArchiveError):
        return opened
    try:
        return await opened.covering(path)
    except ArchiveError as error:
        return error.in_context(f"(catalog of {root!r})")
