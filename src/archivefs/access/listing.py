"""Listings and metadata: ``info``, ``ls``, ``find``, ``glob``, ``du`` over stores and catalogs.

Inside a catalog root the catalog answers (its arrays, no request per member);
members' restore states come from one bulk probe of their bundles.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from fsspec.asyn import sync

from archivefs.access.bundles import missing_bundle
from archivefs.access.parts import Parts
from archivefs.bulk import gc_paused
from archivefs.catalog import members as catalog_members
from archivefs.catalog.index import POINTER
from archivefs.catalog.layout import catalog_dir, is_reserved
from archivefs.catalog.view import Location
from archivefs.entries import (
    described_entry,
    directory_entry,
    listed_entry,
    listed_file,
    member_entry,
    root_entry,
    state_from_entry,
    with_state,
    without_s3fs_keys,
)
from archivefs.errors import ArchiveError, ObjectNotFoundError
from archivefs.globbing import glob_walk, has_wildcard
from archivefs.model import ObjectState
from archivefs.s3compat import (
    call_target,
    find_as_s3fs,
    refuse_whole_store,
    split_version,
    versioned_info,
)
from archivefs.stores.base import split_path
from archivefs.stores.translate import raise_translated

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    import numpy as np

    from archivefs.catalog.index import Catalog
    from archivefs.globbing import GlobWalk


_ONE_WALK: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("one_walk", default=None)
"""During one of fsspec's walks, the info already asked of each path: fsspec's ``_find``
asks ``_isdir(path)`` and then ``_info(path)`` of the same root, a HEAD and a LIST each."""

_TYPES_ONLY = "_archivefs_types_only"  # glob -> find: names and types will do (no info dicts)

SEEN: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("seen", default=None)
"""During one ``get``: the plain objects' entries its recursive listings returned, by path
(their size and ETag let the download start every part at once, no HEAD)."""


def seen_state(path: str) -> ObjectState | None:
    """The state a recursive listing of the running ``get`` gave ``path``, if any."""
    seen = SEEN.get()
    entry = None if seen is None else seen.get(path)
    return None if entry is None else state_from_entry(entry)


class Lister:
    """fsspec's listing verbs; ``generic_find``/``generic_glob`` are fsspec's own walks."""

    def __init__(
        self,
        parts: Parts,
        generic_find: Callable[..., Awaitable[Any]],
        generic_glob: Callable[..., Awaitable[Any]],
    ) -> None:
        self.parts = parts
        self.generic_find = generic_find
        self.generic_glob = generic_glob

    async def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        if self.parts.strip(path) == "":
            return root_entry()  # the root: every bucket
        path, version = split_version(self.parts.strip(path), kwargs.pop("version_id", None))
        if version is not None:  # one version of an object: the target's to describe
            return await versioned_info(self.parts.fs, path, version)
        if not split_path(path)[1]:
            return await self._info_of(path, **kwargs)
        asked = _ONE_WALK.get()
        if asked is not None and path in asked and not kwargs.get("refresh"):
            return dict(asked[path])
        entry = await self.parts.or_unregistered(path, lambda: self._info_of(path, **kwargs))
        if asked is not None:
            asked[path] = dict(entry)
        return entry

    async def _info_of(self, path: str, **kwargs: Any) -> dict[str, Any]:
        bucket, key = split_path(path)
        if not key:
            bucket_info = getattr(
                self.parts.store, "bucket_info", None
            )  # e.g. Oracle's: ocifs's fails
            try:
                if bucket_info is not None:
                    return dict(await bucket_info(bucket))
                return dict(await self.parts.fs._info(bucket))
            except Exception as error:
                raise_translated(error, bucket, action="inspect")
        where = await self.parts.catalogs.locate(path)
        if where.member is not None:
            bundle = await self._bundle_state(where)  # the member's state is its bundle's
            return member_entry(
                where.member, bundle.storage_class, bundle.restore, bundle.restore_expiry
            )
        if where.is_catalog_dir and where.catalog is not None and path not in where.catalog.plain:
            return self._directory(path)
        try:
            cached = None if kwargs.get("refresh") else self.parts.ls_from_cache(path)
        except FileNotFoundError:
            cached = None  # not in a cached parent listing: ask the store
        if cached is not None:
            for entry in cached:
                if entry["name"] == path and not self._expiry_unlisted(entry):
                    return dict(entry)
        try:
            state = await self.parts.store.head(path)
        except ObjectNotFoundError:
            pass
        else:
            if state.readable:  # a read that follows needs no HEAD of its own (its size, ETag)
                self.parts.note_readable(state)
            return described_entry(state)
        if await self.parts.store.is_directory(path):
            return self._directory(path)
        raise ObjectNotFoundError(
            "no such object or directory.",
            path=path,
            fix="check the path; fs.ls() of its parent shows what exists.",
        )

    def _directory(self, path: str) -> dict[str, Any]:
        """A folder's entry, its size as the target says (s3fs 0, adlfs ``None``)."""
        return directory_entry(path, getattr(self.parts.store, "directory_size", 0))

    def _listed_directory(self, path: str) -> dict[str, Any]:
        """A listed folder's entry: with s3fs's listing keys unless the store makes its
        target's own entries (adlfs's, gcsfs's, ocifs's)."""
        entry = self._directory(path)
        own = getattr(self.parts.store, "makes_own_entries", False)
        return entry if own else listed_entry(entry)

    def _expiry_unlisted(self, entry: dict[str, Any]) -> bool:
        """A listed restored object whose expiry the store's listings do not carry (Oracle):
        ``info`` asks the store for it (one HEAD) rather than say ``None``."""
        return (
            entry.get("restore") == "restored"
            and entry.get("restore_expiry") is None
            and not getattr(self.parts.store, "lists_restore_expiry", True)
        )

    async def _bundle_state(self, where: Location) -> ObjectState:
        """The state of a member's bundle (one HEAD); a missing bundle is damage."""
        assert where.member is not None
        try:
            return await self.parts.store.head(where.member.bundle)
        except ObjectNotFoundError as error:
            raise missing_bundle(where.member, where.root) from error

    async def ls(self, path: str, detail: bool = False, **kwargs: Any) -> list[Any]:
        path = self.parts.strip(path)
        if path in self.parts.provider.root_aliases:
            path = ""  # adlfs's ls(".") and ls("*"): the containers
        versioned = kwargs.get("version_id") is not None or kwargs.get("versions")
        if versioned and not getattr(self.parts.fs, "version_aware", False):  # adlfs's rule
            raise ValueError(
                f"ls({path!r}): version_id/versions cannot be specified if the filesystem "
                "is not version aware; make the target with version_aware=True."
            )
        if versioned or path == "":
            # versions, one version, buckets: the target's listing
            names = ("refresh", "versions", "version_id")
            own = {k: kwargs[k] for k in names if k in kwargs}  # not ours
            return list(await call_target(self.parts.fs, "ls", path, detail=detail, **own))
        refresh = kwargs.get("refresh", False)
        entries = None if refresh else self.parts.dircache.get(path)
        found = await self.parts.catalogs.root_for(path) if entries is None else None
        if found is not None:  # inside a catalog root: the catalog answers, the store is not asked
            entries = catalog_members.listing(found[1], path)
            if not entries:
                info = await self.info(path)
                entries = [info]
            elif detail and kwargs.get("probe_bundles", True):
                await self._add_bundle_states(found, entries)
            return list(entries) if detail else sorted(e["name"] for e in entries)
        if entries is None:
            bucket, key = split_path(path)
            listing = await self.parts.store.list(path)
            entries = [listed_file(s) for s in listing.files if not is_reserved(s.path)]
            entries += [
                listing.directory_entries.get(d) or self._listed_directory(d)
                for d in listing.directories
                if not is_reserved(d)
            ]
            if not entries:
                if key:
                    info = await self.info(path)  # a file lists as itself; else not found
                    s3_shaped = info["type"] == "file" and "Key" in info  # s3fs's HEAD keys
                    entries = [listed_entry(info) if s3_shaped else info]
                    if info["type"] == "file":
                        return entries if detail else [info["name"]]
                else:
                    await self.info(bucket)  # raises for a missing bucket
            self.parts.dircache[path] = entries
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
        states = await self.probe_bundles(found, cold)
        for entry in entries:
            state = states.get(entry.get("bundle", ""))
            if state is None:
                continue
            with_state(entry, state)

    async def probe_bundles(
        self, found: tuple[str, Catalog], keys: list[str]
    ) -> dict[str, ObjectState]:
        """The states of bundles ``keys`` of catalog ``found`` (root, catalog), from one bulk
        probe; a bundle the store does not have is damage (:class:`MissingBundleError`)."""
        if not keys:
            return {}
        root, catalog = found
        states = await self.parts.store.probe(keys)
        gone = [key for key in keys if key in states and states[key] is None]
        if gone:
            raise missing_bundle(catalog.members_of(gone[0])[0], root)
        return {key: state for key, state in states.items() if state is not None}

    async def member_states(
        self, found: tuple[str, Catalog], rows: slice | np.ndarray[Any, Any]
    ) -> dict[str, ObjectState]:
        """Probed states of the cold bundles that members in ``rows`` lie in."""
        return await self.probe_bundles(found, catalog_members.cold_bundles(found[1], rows))

    async def find_states(self, found: tuple[str, Catalog], path: str) -> dict[str, ObjectState]:
        """Probed states of the cold bundles of the members ``find(path)`` lists."""
        rows = catalog_members.find_member_rows(found[1], path)
        return await self.member_states(found, rows)

    async def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        **kwargs: Any,
    ) -> Any:
        path = self.parts.strip(path)
        refuse_whole_store(path)
        found = await self._find_unshaped(path, maxdepth, withdirs, **kwargs)
        lists_folder = self.parts.provider.find_lists_folder
        return find_as_s3fs(found, path, kwargs.get("prefix"), withdirs, maxdepth, lists_folder)

    async def _find_unshaped(
        self, path: str, maxdepth: int | None, withdirs: bool, **kwargs: Any
    ) -> Any:
        detail = kwargs.get("detail", False)
        # members' states: their bundles probed, unless the caller probes them itself
        probe = detail and kwargs.get("probe_bundles", True)
        found = await self.parts.catalogs.root_for(path)
        if found is None and withdirs and maxdepth is None and not kwargs.get("prefix"):
            # the whole depth with its folders: one recursive listing, the folders from the
            # names (fsspec's walk: a HEAD and a LIST of the root, then a LIST per folder)
            below = await self._below_with_directories(path)
            if below is not None:
                return below if detail else list(below)
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
                    states = await self.member_states(found, walked.rows) if probe else {}
                    return catalog_members.walk_entries(found[1], path, walked, withdirs, states)
                return catalog_members.walk_names(found[1], path, maxdepth, withdirs, stem)
            kwargs.pop(_TYPES_ONLY, None)
            kwargs.setdefault("probe_bundles", False)
            # fsspec's walk leaves out a folder whose listing fails, whatever the error: a
            # glob without credentials (or refused, or throttled past its retries) answered
            # [] as if nothing matched. Only a folder that is gone is left out here
            kwargs.setdefault("on_error", _omit_missing)
            walk = _ONE_WALK.set({})
            try:
                walked = await self.generic_find(
                    path, maxdepth=maxdepth, withdirs=withdirs, **kwargs
                )
            finally:
                _ONE_WALK.reset(walk)
            if detail and len(walked) == 1 and {} in walked.values():
                # fsspec's walk answers a file with nothing found below it within the depth
                # as {path: {}}, no info at all, and its glob then fails on info["type"]:
                # on S3 a key can also be a folder ("a" and "a/b/c/d")
                (name,) = walked
                return {name: await self.info(name)}
            return walked
        if found is not None:
            states = await self.find_states(found, path) if probe else {}
            return _catalog_find(found[1], path, detail, states)
        try:
            files = await self.files_below(path)
        except ObjectNotFoundError:
            if not self.parts.provider.find_missing_bucket_empty:
                raise
            return {} if detail else []  # adlfs's find of a missing container
        key = split_path(path)[1]
        if not files and key:
            try:
                info = await self.info(path)
            except FileNotFoundError:
                info = None
            if info is not None and info["type"] == "file":
                files = {info["name"]: info}
        names = sorted(files)
        return {n: files[n] for n in names} if detail else names

    def find_blocking(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        """The blocking ``find``: below a catalog root (no depth, no directories) answered
        on the calling thread from the catalog opened on the I/O loop, so the CPU of many
        names never holds up the loop; elsewhere :meth:`find` on the loop."""
        here = self._find_here(path, maxdepth, withdirs, detail, kwargs, timeout)
        if here is not None:
            return here
        return sync(
            self.parts.loop,
            self.find,
            path,
            maxdepth=maxdepth,
            withdirs=withdirs,
            detail=detail,
            timeout=timeout,
            **kwargs,
        )

    def glob_blocking(
        self, path: str, maxdepth: int | None = None, timeout: float | None = None, **kwargs: Any
    ) -> Any:
        """The blocking ``glob``: names below a catalog root matched on the calling thread
        (the catalog opened on the I/O loop), as :meth:`find_blocking`; elsewhere
        :meth:`glob` on the loop."""
        here = self._glob_here(path, maxdepth, kwargs, timeout)
        if here is not None:
            return here
        return sync(self.parts.loop, self.glob, path, maxdepth=maxdepth, timeout=timeout, **kwargs)

    def entries(self, url: str, recursive: bool = False) -> list[dict[str, Any]]:
        """``ArchiveFileSystem.list_entries`` (blocking): ``ls`` of ``url`` (``find`` with
        ``recursive``), or of the folders holding a glob's matches, one listing each,
        without s3fs's keys; sorted by name for a glob, ``[]`` when it matches nothing."""
        loop = self.parts.loop
        if not has_wildcard(url) or sync(loop, self._exists, url):  # a name holding [ is itself
            listed = (
                self.find_blocking(url, detail=True).values()
                if recursive
                else sync(loop, self.ls, url, detail=True)
            )
            return [without_s3fs_keys(e) for e in listed]
        wanted: dict[str, set[str]] = {}
        for name in self.glob_blocking(url):
            wanted.setdefault(self.parts.parent(name), set()).add(name)
        entries: list[dict[str, Any]] = []
        for folder, names in wanted.items():
            for entry in sync(loop, self.ls, folder, detail=True):
                if entry["name"] not in names:
                    continue
                if recursive and entry["type"] == "directory":
                    entries += self.find_blocking(entry["name"], detail=True).values()
                else:
                    entries.append(entry)
        return sorted((without_s3fs_keys(e) for e in entries), key=lambda e: str(e["name"]))

    async def _exists(self, path: str) -> bool:
        """fsspec's ``exists``: ``info`` answers (absent: False; any other error raised)."""
        try:
            await self.info(path)
        except FileNotFoundError:
            return False
        return True

    def _find_here(
        self,
        path: str,
        maxdepth: int | None,
        withdirs: bool,
        detail: bool,
        kwargs: dict[str, Any],
        timeout: float | None,
    ) -> Any:
        """``find`` below a catalog root, on the calling thread; None elsewhere."""
        if maxdepth is not None or withdirs:
            return None
        stripped = self.parts.strip(path)
        loop = self.parts.loop
        found = sync(loop, self.parts.catalogs.root_for, stripped, timeout=timeout)
        if found is None:
            return None
        states = {}
        if detail and kwargs.get("probe_bundles", True):  # one bulk probe, as ls
            states = sync(loop, self.find_states, found, stripped, timeout=timeout)
        names = _catalog_find(found[1], stripped, detail, states)
        lists_folder = self.parts.provider.find_lists_folder
        return find_as_s3fs(names, stripped, kwargs.get("prefix"), withdirs, maxdepth, lists_folder)

    def _glob_here(
        self, path: str, maxdepth: int | None, kwargs: dict[str, Any], timeout: float | None
    ) -> list[str] | None:
        """A names ``glob`` below a catalog root, on the calling thread; None elsewhere."""
        if kwargs.get("detail"):
            return None
        withdirs = kwargs.get("withdirs", True)
        below = sync(
            self.parts.loop, self.glob_below_catalog, path, maxdepth, withdirs, timeout=timeout
        )
        if below is None:
            return None
        catalog, root, walk = below
        return _catalog_glob_names(catalog, root, walk, withdirs)

    async def glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        """fsspec's glob. Returning names below a catalog root, the pattern is matched
        against the catalog's sorted paths (:func:`catalog_members.glob_names`): no
        ``(name, info)`` pair, dict or sort per member, where fsspec's glob makes one of
        each per member. Elsewhere fsspec's glob; returning names it walks for the
        names and their types only, building no info dict per member.

        Below a catalog root the rest of fsspec's glob is CPU only, run with the cyclic
        GC paused: fsspec sorts and filters a (name, info) tuple per match, and the
        collections those fell due for made a detail glob of 10^6 members twice as slow."""
        if not has_wildcard(path) and str(path).endswith("/") and not kwargs.get("detail"):
            # a folder named with its slash: as the target's glob names it (adlfs keeps
            # the slash, s3fs does not)
            found = await self.generic_glob(path, maxdepth=maxdepth, **kwargs)
            keeps = str(self.parts.fs._strip_protocol("a/b/")).endswith("/")
            return [f"{name}/" for name in found] if keeps else found
        if not kwargs.get("detail"):
            withdirs = kwargs.get("withdirs", True)
            below = await self.glob_below_catalog(path, maxdepth, withdirs)
            if below is not None:
                catalog, root, walk = below
                return _catalog_glob_names(catalog, root, walk, withdirs)
            kwargs[_TYPES_ONLY] = True
        pattern = glob_walk(path, self.parts.strip(path), maxdepth)
        folder = self.parts.strip(pattern.root) if pattern is not None else ""
        if folder and await self.parts.catalogs.root_for(folder) is not None:
            with gc_paused():
                return await self.generic_glob(path, maxdepth=maxdepth, **kwargs)
        return await self.generic_glob(path, maxdepth=maxdepth, **kwargs)

    async def glob_below_catalog(
        self, path: str, maxdepth: int | None, withdirs: bool
    ) -> tuple[Catalog, str, GlobWalk] | None:
        """The catalog, folder and walk that answer a names glob of ``path`` from the catalog
        alone, as ``find`` would walk it (the catalog loaded); None where they do not."""
        walk = glob_walk(path, self.parts.strip(path), maxdepth)
        if walk is None or (walk.depth is None and not withdirs):
            return None  # no wildcard (fsspec asks whether it exists), or not a walk
        root = self.parts.strip(walk.root)
        found = await self.parts.catalogs.root_for(root) if root else None
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
        roots = await self.parts.catalogs.registered(split_path(path)[0])
        if any(r.startswith(path + "/") for r in roots):
            return False
        return catalog_members.walkable(catalog, path, stem)

    async def du(
        self, path: str, total: bool = True, maxdepth: int | None = None, **kwargs: Any
    ) -> Any:
        """Sizes of the files below ``path`` (fsspec's ``du``) from one ``find``: inside a
        catalog root from the catalog's arrays, never a request per member."""
        path = self.parts.strip(path)
        if total and maxdepth is None and not kwargs.get("withdirs"):
            found = await self.parts.catalogs.root_for(path)
            if found is not None:
                return catalog_members.du_total(found[1], path)
        kwargs["detail"] = True
        files = await self.find(path, maxdepth=maxdepth, **kwargs)
        sizes = {name: info["size"] for name, info in files.items()}
        return sum(sizes.values()) if total else sizes

    async def _below_with_directories(self, path: str) -> dict[str, dict[str, Any]] | None:
        """``find(path, withdirs=True)`` outside any catalog root from one recursive
        listing: the files, the folders its store saw (folder markers: GCS and Oracle
        ``dir/`` placeholders, Azure's), every folder between ``path`` and them, and
        ``path`` itself, sorted by name; None when nothing lies below or the listing
        holds S3 folder markers (keys ending in ``/``: fsspec's walk shows them as s3fs
        shows them)."""
        markers: list[str] = []
        folders: dict[str, dict[str, Any]] = {}
        files = await self.files_below(path, markers=markers, folders=folders)
        if not (files or folders) or markers:
            return None
        found: dict[str, dict[str, Any]] = {path: directory_entry(path), **folders}
        for name in [*files, *folders]:
            at = name.rfind("/")
            while at > len(path):  # its folders below ``path``, the deepest first
                folder = name[:at]
                if folder in found:
                    break  # its parents were added with it
                found[folder] = directory_entry(folder)
                at = name.rfind("/", 0, at)
        found.update(files)
        return {name: found[name] for name in sorted(found)}

    async def files_below(
        self,
        path: str,
        *,
        markers: list[str] | None = None,
        folders: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Every file below a folder outside any catalog root: one recursive listing, plus
        the members of the catalog roots it holds. ``markers`` gets the folder markers
        (keys ending in ``/``) the listing held as files (S3), ``folders`` the entries of
        those its store listed as folders (GCS, Azure, Oracle)."""
        listing = await self.parts.store.list(path, recursive=True)
        if folders is not None:
            folders.update(
                (name, listing.directory_entries.get(name) or directory_entry(name))
                for name in listing.directories
                if not is_reserved(name)
            )
        own = is_reserved(path)  # asked for archivefs's bookkeeping itself (e.g. the bundles)
        files = {
            s.path: listed_file(s)
            for s in listing.files
            if not s.path.endswith("/") and (own or not is_reserved(s.path))
        }
        if markers is not None:
            markers += [s.path for s in listing.files if s.path.endswith("/")]
        seen = SEEN.get()
        if seen is not None:
            seen.update(files)
        pointer = f"/{catalog_dir('')}/{POINTER}".replace("//", "/")
        await self.parts.catalogs.discover(
            [s.path[: -len(pointer)] for s in listing.files if s.path.endswith(pointer)]
        )
        listed = {s.path: s for s in listing.files}  # the bundles' states are in it too
        for root, catalog in await self.parts.catalogs.under(path):  # loads only those below
            if isinstance(catalog, ArchiveError):
                raise catalog
            files.update(catalog_members.find_entries(catalog, root, listed))
        return files


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
