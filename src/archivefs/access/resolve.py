"""Path resolution: paths, globs and directories -> plain objects and bundle members.

:meth:`Resolver.resolve` is the expansion of a selection for ``plan`` (and so
``restore``, ``prefetch``, ``estimate``): each file resolves to itself or to its
bundle (:meth:`CatalogView.locate`), and every group's state is probed in bulk.
:meth:`Resolver.expand` is ``promote``'s: the listed objects themselves, from
listings, with no catalog consulted (promoting bundle members by their bundle
through ``resolve`` is a behaviour change left to its own commit).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archivefs.access.listing import Lister
from archivefs.access.parts import Parts
from archivefs.catalog import members as catalog_members
from archivefs.catalog.layout import is_reserved
from archivefs.entries import plain_entry, state_from_entry
from archivefs.errors import InvalidPathError
from archivefs.model import ObjectState
from archivefs.restore.planner import PathInGroup, PathsInGroup
from archivefs.stores.base import split_path

if TYPE_CHECKING:
    from archivefs.catalog.index import Catalog


GLOB_CHARS = frozenset("*?[")


class Resolver:
    """Where each requested path lives, and the state of each group it needs."""

    def __init__(self, parts: Parts, lister: Lister) -> None:
        self.parts = parts
        self.lister = lister

    async def expand(
        self, paths: str | list[str], *, literal: bool = False
    ) -> dict[str, ObjectState | None]:
        """Object states for paths, globs and directories, from listings where possible
        (``promote``: the objects themselves, no catalog consulted).

        A glob that matches directories (``2023/*/mag/``) means the files below them.
        With ``literal``, glob characters are part of the name.
        """
        if isinstance(paths, str):
            paths = [paths]
        states: dict[str, ObjectState | None] = {}
        plain: dict[str, str] = {}  # plain path -> the raw path it came from
        for raw in paths:
            path = self.parts.strip(raw)
            if not path:
                raise InvalidPathError(
                    "empty path.", path=repr(raw), fix="name a bucket/key, a glob or a directory."
                )
            if GLOB_CHARS & set(path) and not literal:
                matches = await self.lister.glob(path, detail=True)
                for name, entry in matches.items():
                    if entry.get("type") == "file":
                        states[name] = state_from_entry(entry)
                    elif entry.get("type") == "directory" and not is_reserved(name):
                        listing = await self.parts.store.list(name, recursive=True)
                        states.update(
                            (f.path, f)
                            for f in listing.files
                            if not f.path.endswith("/") and not is_reserved(f.path)
                        )
            else:
                plain[path] = raw
        if plain:
            probed = await self._probe_named(plain)
            for path in plain:
                state = probed.get(path)
                if state is not None:
                    states[path] = state
                    continue
                listing = await self.parts.store.list(path, recursive=True)
                if listing.files:
                    states.update((s.path, s) for s in listing.files)
                else:
                    states[path] = None
        return states

    async def _probe_named(self, plain: dict[str, str]) -> dict[str, ObjectState | None]:
        """The states of the plain paths (path -> the raw path it came from) that may name
        an object: one written with a trailing ``/`` names a folder, listed, never probed."""
        named = [path for path, raw in plain.items() if not str(raw).endswith("/")]
        return await self.parts.store.probe(named) if named else {}

    async def resolve(self, paths: str | list[str]) -> Resolved:
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
            groups.update(await self.parts.store.probe(bundles))
        return Resolved(states, selected, groups, missing)

    async def _resolve_pass(
        self, raws: list[str], *, literal: bool
    ) -> tuple[catalog_members.Picks, dict[str, ObjectState], list[str]]:
        """One resolution of ``raws``: members, object states, and the raws matching nothing."""
        members = catalog_members.Picks()
        states: dict[str, ObjectState] = {}
        matched: set[str] = set()
        plain: dict[str, str] = {}  # plain path -> the raw path it came from
        for raw in raws:
            path = self.parts.strip(raw)
            if not path:
                raise InvalidPathError(
                    "empty path.", path=repr(raw), fix="name a bucket/key, a glob or a directory."
                )
            if GLOB_CHARS & set(path) and not literal:
                if await self._sort_glob(path, members, states):
                    matched.add(raw)
                continue
            where = await self.parts.catalogs.locate(path)
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
            probed = await self._probe_named(plain)
            for path in plain:
                state = probed.get(path)
                if state is not None:
                    states[path] = state
                    matched.add(plain[path])
                elif await self._sort_files(await self.lister.files_below(path), members, states):
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
        roots = await self.parts.catalogs.registered(split_path(path)[0])
        if any(r.startswith(path + "/") for r in roots):  # nested catalogs: file by file
            found = await self.lister.find(path, detail=True, probe_bundles=False)
            return await self._sort_files(found, members, states)
        rows, plain = catalog_members.find_rows(catalog, path)
        members.add_rows(catalog, rows)
        for name in sorted(plain):  # in find's order
            states[name] = state_from_entry(plain_entry(name, plain[name], catalog.hot_class))
        return len(rows) + len(plain)

    async def _sort_glob(
        self, path: str, members: catalog_members.Picks, states: dict[str, ObjectState]
    ) -> int:
        """A glob's files, and the files below the directories it matches (``2023/*/mag/``)
        unless the glob already matched files inside them (``**``). The members' states are
        not asked here: the plan probes their bundles."""
        below = await self.lister.glob_below_catalog(path, None, True)
        if below is not None:  # below a catalog root: from its arrays, no dict per member
            catalog, root, walk = below
            globbed = catalog_members.glob_rows(catalog, root, walk)
            members.add_rows(catalog, globbed.rows)
            for name in sorted(globbed.plain):
                size = globbed.plain[name]
                states[name] = state_from_entry(plain_entry(name, size, catalog.hot_class))
            count = len(globbed.rows) + len(globbed.plain)
            for folder in globbed.directories:
                if not is_reserved(folder):
                    count += await self._pick_below(catalog, folder, members, states)
            return count
        matches = await self.lister.glob(path, detail=True, probe_bundles=False)
        count = await self._sort_files(matches, members, states)
        covered: set[str] = set()
        for name, entry in matches.items():
            if entry.get("type") == "file":
                parts = name.split("/")
                covered.update("/".join(parts[:i]) for i in range(1, len(parts)))
        for name, entry in matches.items():
            if entry.get("type") == "directory" and name not in covered and not is_reserved(name):
                count += await self._sort_files(
                    await self.lister.find(name, detail=True, probe_bundles=False), members, states
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
            where = await self.parts.catalogs.locate(name) if "bundle" in entry else None
            if where is not None and where.member is not None and where.catalog is not None:
                row = where.catalog.row(name)
                assert row is not None
                members.add(where.catalog, row)
            else:
                states[name] = state_from_entry(entry)
        return count


@dataclass(frozen=True)
class Resolved:
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
    if GLOB_CHARS & set(raw):
        out.append((raw, True))
    for form in ("NFC", "NFD"):
        normal = unicodedata.normalize(form, raw)
        if normal != raw:
            out.append((normal, False))
            if GLOB_CHARS & set(normal):
                out.append((normal, True))
    return out
