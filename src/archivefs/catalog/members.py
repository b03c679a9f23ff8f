"""Operations over many catalog members at array speed: find, walk, ls, du, group by bundle.

A catalog keeps its member paths sorted, so everything below a directory is
one range of rows (two binary searches); depths come from one vectorised pass
over the paths, and sizes, bundles and classes are numpy columns. Python
objects are built only for what a call returns: names-only answers are slices
of the catalog's own path list, and info dicts are made column by column.

The answers are exactly those of the straightforward per-member code they
replace (``tests/test_catalog_members.py`` compares them on generated trees):
fsspec's ``find`` (with ``maxdepth``/``withdirs`` meaning its walk), ``ls``
and ``du`` over a catalog root. Each member's class and restore state are its
bundle's: probed by the caller (``states``, by bundle key) or, where not
given, the ones its class implies; nothing here sends a request.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from archivefs.bulk import gc_paused
from archivefs.entries import bundle_template, directory_entry, plain_entry
from archivefs.lazy import lazy_module

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    import numpy as np

    from archivefs.catalog.index import Catalog
    from archivefs.globbing import GlobWalk
    from archivefs.model import ObjectState

    BundleStates: TypeAlias = Mapping[str, ObjectState] | None
    """Probed states of bundles, by key (None: the states their classes imply)."""
else:  # numpy on first use: reading a plain object never needs it
    np = lazy_module("numpy", globals(), "np")

_TOP = "\U0010ffff"  # sorts after every character: ``p + "/" + _TOP`` ends p's block


def _row_names(catalog: Catalog, rows: slice | np.ndarray[Any, Any]) -> list[str]:
    """The paths of ``rows``, as a new list."""
    paths = catalog.paths
    if not isinstance(rows, slice):
        return [paths[i] for i in rows.tolist()]
    if rows.indices(len(paths)) == (0, len(paths), 1):
        return list(paths)  # all of them: one copy, not a slice and a copy
    return list(paths[rows])


def _entries_by_name(
    catalog: Catalog, rows: slice | np.ndarray[Any, Any], states: BundleStates
) -> dict[str, dict[str, Any]]:
    """:func:`member_entries` keyed by name (in row order)."""
    with gc_paused():
        names = _row_names(catalog, rows)
        return dict(zip(names, _member_entries(catalog, rows, names, states), strict=True))


def member_entries(
    catalog: Catalog, rows: slice | np.ndarray[Any, Any], states: BundleStates = None
) -> list[dict[str, Any]]:
    """fsspec info dicts of the members in ``rows``: class and state from their bundles'
    probed ``states`` where given (by bundle key), else from the bundles' classes."""
    with gc_paused():
        return _member_entries(catalog, rows, _row_names(catalog, rows), states)


def cold_bundles(catalog: Catalog, rows: slice | np.ndarray[Any, Any]) -> list[str]:
    """The bundles that members in ``rows`` lie in and whose class needs a restore, sorted:
    what to probe for the members' restore states (one pass over the rows' codes)."""
    codes = catalog.columns().bundle[rows]
    if not len(codes):
        return []
    used = np.zeros(len(catalog.bundle_keys), dtype=bool)
    used[codes] = True
    keys = catalog.bundle_keys
    return [
        keys[i]
        for i in np.flatnonzero(used).tolist()
        if catalog.bundles[keys[i]].storage_class.needs_restore
    ]


def _member_entries(
    catalog: Catalog, rows: slice | np.ndarray[Any, Any], names: list[str], states: BundleStates
) -> list[dict[str, Any]]:
    if not names:
        return []
    columns = catalog.columns()
    # a member's dict is a copy of its bundle's (class, state, bundle key already set) with
    # its own four values: a third less time than making each one from its twelve values.
    # Templates for the span of bundles the rows use only: ls of one directory makes one
    codes = columns.bundle[rows]
    low, high = int(codes.min()), int(codes.max())
    keys = catalog.bundle_keys
    templates = np.empty(high - low + 1, dtype=object)
    for i in range(low, high + 1):
        state = states.get(keys[i]) if states else None
        templates[i - low] = bundle_template(keys[i], catalog.bundles[keys[i]].storage_class, state)
    theirs = templates[codes - low].tolist()
    sizes = columns.length[rows].tolist()
    crcs = columns.crc32[rows].tolist()
    mtimes = columns.mtime[rows].tolist()
    entries: list[dict[str, Any]] = []
    add = entries.append
    s3fs_keys = "Key" in theirs[0]  # the target's entries say name and size again (s3fs)
    for template, name, size, crc, mtime in zip(theirs, names, sizes, crcs, mtimes, strict=True):
        entry = template.copy()
        entry["name"] = name
        entry["size"] = size
        entry["crc32"] = crc
        entry["mtime"] = mtime
        if s3fs_keys:
            entry["Key"] = name
            entry["Size"] = size
        add(entry)
    return entries


# -- find: everything below a path ------------------------------------------------------------


def _find_parts(catalog: Catalog, path: str) -> tuple[slice, list[str], dict[str, int]]:
    """Member rows below ``path`` (plus ``path`` itself if a member), as a slice when they
    are contiguous; the extra member row; and the listed plain objects that match."""
    start, end = catalog.below(path)
    own = catalog.row(path)
    extra = [path] if own is not None else []
    prefix = path.rstrip("/") + "/"
    plain = {p: s for p, s in catalog.plain.items() if p.startswith(prefix) or p == path}
    return slice(start, end), extra, plain


def find_names(catalog: Catalog, path: str) -> list[str]:
    """Sorted paths of every file at or below ``path``: members and listed plain objects."""
    rows, extra, plain = _find_parts(catalog, path)
    names = _row_names(catalog, rows)
    if not extra and not plain:
        return names
    return sorted({*names, *extra, *plain})


def find_member_rows(catalog: Catalog, path: str) -> slice | np.ndarray[Any, Any]:
    """The member rows :func:`find_entries` of ``path`` makes entries for."""
    rows, extra, plain = _find_parts(catalog, path)
    return rows if not extra and not plain else _picked_rows(catalog, rows, extra, plain)


def find_entries(
    catalog: Catalog, path: str, states: BundleStates = None
) -> dict[str, dict[str, Any]]:
    """Info dicts of every file at or below ``path``, by sorted name (plain wins a clash);
    members' states from their bundles' probed ``states`` where given."""
    rows, extra, plain = _find_parts(catalog, path)
    if not extra and not plain:
        return _entries_by_name(catalog, rows, states)
    picked = _picked_rows(catalog, rows, extra, plain)
    out = _entries_by_name(catalog, picked, states)
    out.update((p, plain_entry(p, s, catalog.hot_class)) for p, s in plain.items())
    return {name: out[name] for name in sorted(out)}


def du_total(catalog: Catalog, path: str) -> int:
    """Total bytes of the files :func:`find_entries` lists, with no dict built."""
    rows, extra, plain = _find_parts(catalog, path)
    if extra or plain:  # a few rows more or less: pick them one by one
        picked = _picked_rows(catalog, rows, extra, plain)
        return int(catalog.columns().length[picked].sum()) + sum(plain.values())
    return int(catalog.columns().length[rows].sum())  # a view: nothing copied


# -- walk: find with maxdepth / withdirs (fsspec's walk over ls) --------------------------------


@dataclass(frozen=True, slots=True)
class Walk:
    """What fsspec's walk below a catalog directory finds: file rows and paths, directories."""

    rows: slice | np.ndarray[Any, Any]  # member rows within maxdepth, ascending
    plain: dict[str, int]  # listed plain objects within maxdepth
    directories: list[str]  # every directory the walk lists (within maxdepth), sorted


def walkable(catalog: Catalog, path: str, stem: str = "") -> bool:
    """Whether :func:`walk` answers for ``path``: a directory of the catalog whose names
    hold no empty part (those, a member file at a directory's own path, and an empty
    directory are left to fsspec's generic walk, which has its own ways with them).
    With ``stem`` (a walk of the names starting ``path/stem`` only), only those names
    are looked at for empty parts."""
    if not path or catalog.row(path) is not None or path in catalog.plain:
        return False
    start, end = catalog.below(path)
    prefix = path + "/"
    plain = [p for p in catalog.plain if p.startswith(prefix)]
    if end == start and not plain:
        return False
    if stem:
        start, end = catalog.starting(prefix + stem)
    return not (any(p.endswith("/") or "//" in p for p in plain) or _odd(catalog, start, end))


def _odd(catalog: Catalog, start: int, end: int) -> bool:
    """Whether members in rows ``[start, end)`` have an empty part (``a//b``, ``a/``).

    The rows of the whole catalog are found once and kept; until then, a range is
    checked on its own, at a cost in proportion to it (a glob of 1% looks at 1%).
    """
    odd: np.ndarray[Any, Any] | None = getattr(catalog, "_odd_rows", None)
    if odd is None:
        paths = catalog.paths
        if (start, end) != (0, len(paths)):
            return _any_empty_part(paths[start:end])
        odd = np.zeros(0, np.int64)
        if _any_empty_part(paths):  # rare: find which rows, one by one
            flags = (p.endswith("/") or "//" in p for p in paths)
            odd = np.flatnonzero(np.fromiter(flags, dtype=bool, count=len(paths)))
        catalog._odd_rows = odd  # type: ignore[attr-defined]
    i = int(np.searchsorted(odd, start))
    return i < len(odd) and int(odd[i]) < end


def _any_empty_part(paths: Sequence[str]) -> bool:
    """Whether any of ``paths`` holds ``//`` or ends with ``/``: two substring searches
    over the joined paths, not a step per path (a name holding a newline may answer a
    false yes, which only sends its walk the generic way)."""
    joined = "\n".join(paths) + "\n"
    return "//" in joined or "/\n" in joined


def walk(catalog: Catalog, path: str, maxdepth: int | None, prefix: str = "") -> Walk:
    """Files and directories fsspec's walk (over :func:`listing`) finds below ``path``;
    with ``prefix`` (a name stem, as ``glob`` passes it), only names starting
    ``path/prefix``."""
    stem = path + "/" + prefix
    start, end = catalog.starting(stem)
    base = path.count("/")
    limit = maxdepth if maxdepth is not None else 1 << 30
    relative = catalog.depths(start, end) - base
    deepest = int(relative.max()) if len(relative) else 0
    rows: slice | np.ndarray[Any, Any] = slice(start, end)
    if deepest > limit:
        rows = np.flatnonzero(relative <= limit) + start
    # rows inside a directory of level k (members at relative depth > k), per level
    inside = {
        level: np.flatnonzero(relative > level) + start
        for level in range(1, min(limit, deepest - 1) + 1)
    }
    directories: set[str] = set()
    if inside:
        _subdirectories(catalog.paths, inside, path + "/", start, end, 1, out=directories)
    plain: dict[str, int] = {}
    for name, size in catalog.plain.items():
        if not name.startswith(stem):
            continue
        parts = name[len(path) + 1 :].split("/")
        if len(parts) <= limit:
            plain[name] = size
        for level in range(1, min(len(parts), limit + 1)):
            directories.add(path + "/" + "/".join(parts[:level]))
    return Walk(rows, plain, sorted(directories))


def _subdirectories(
    paths: Sequence[str],
    inside: dict[int, np.ndarray[Any, Any]],
    prefix: str,
    start: int,
    end: int,
    level: int,
    *,
    out: set[str],
) -> None:
    """The directories of level ``level`` and below under ``prefix`` (rows ``[start,
    end)``): one step per directory, jumping over its members by binary search."""
    deep = inside[level]
    i = int(np.searchsorted(deep, start))
    while i < len(deep) and int(deep[i]) < end:
        row = int(deep[i])
        name = prefix + paths[row][len(prefix) :].split("/", 1)[0]
        out.add(name)
        stop = bisect.bisect_left(paths, name + "/" + _TOP, row, end)
        if level + 1 in inside:
            _subdirectories(paths, inside, name + "/", row, stop, level + 1, out=out)
        i = int(np.searchsorted(deep, stop))


def walk_names(
    catalog: Catalog, path: str, maxdepth: int | None, withdirs: bool, prefix: str = ""
) -> list[str]:
    """``find(path, maxdepth, withdirs)`` names (the root itself included with ``withdirs``)."""
    found = walk(catalog, path, maxdepth, prefix)
    names = _row_names(catalog, found.rows)
    extra = set(found.plain)
    if withdirs:
        extra.update(found.directories)
        extra.add(path)
    if not extra:
        return names
    return sorted({*names, *extra})


def walk_entries(
    catalog: Catalog, path: str, found: Walk, withdirs: bool, states: BundleStates = None
) -> dict[str, dict[str, Any]]:
    """``find(path, maxdepth, withdirs, detail=True)`` from its :func:`walk` ``found``:
    plain objects win a clash with a member, directories (``withdirs``) a clash with a
    file, as in fsspec's walk; members' states from their bundles' probed ``states``."""
    out = _entries_by_name(catalog, found.rows, states)
    members = len(out)
    hot = catalog.hot_class
    out.update((p, plain_entry(p, s, hot)) for p, s in found.plain.items())
    if withdirs:
        out.update((d, directory_entry(d)) for d in found.directories)
        out[path] = directory_entry(path)
    if len(out) == members:
        return out  # member rows ascend, so their names are already sorted
    return {name: out[name] for name in sorted(out)}


_FILE_TYPE = {"type": "file"}
_DIRECTORY_TYPE = {"type": "directory"}


def walk_types(
    catalog: Catalog, path: str, maxdepth: int | None, withdirs: bool, prefix: str = ""
) -> dict[str, dict[str, str]]:
    """:func:`walk_entries`' names, each with only its ``type``: all that fsspec's glob
    looks at to match, for a glob that returns names. Every value is one of two shared
    dicts, so a glob of 10^7 members builds no dict per member; never hand them out."""
    found = walk(catalog, path, maxdepth, prefix)
    out = dict.fromkeys(_row_names(catalog, found.rows), _FILE_TYPE)
    out.update(dict.fromkeys(found.plain, _FILE_TYPE))
    if withdirs:
        out.update(dict.fromkeys(found.directories, _DIRECTORY_TYPE))
        out[path] = _DIRECTORY_TYPE
    return out


def glob_names(catalog: Catalog, path: str, glob: GlobWalk, withdirs: bool) -> list[str]:
    """The names fsspec's glob keeps of :func:`walk_types`' answer for ``glob``'s walk below
    ``path``, in its order: the members' names are matched straight from the catalog's
    sorted paths, with no ``(name, info)`` pair, dict or sort for 10^7 of them."""
    found = walk(catalog, path, glob.depth, glob.prefix)
    directories = {*found.directories, path} if withdirs else set()
    plain = [p for p in found.plain if p not in directories]
    paths = catalog.paths
    rows: Iterable[str]
    if isinstance(found.rows, slice):
        rows = itertools.islice(paths, found.rows.start, found.rows.stop)
    else:
        rows = (paths[i] for i in found.rows.tolist())
    names = list(filter(glob.pattern.match, rows))
    # a plain object or a directory at a member's path is listed as that instead
    shadowed = {n for n in itertools.chain(directories, plain) if catalog.row(n) is not None}
    if shadowed:
        names = [n for n in names if n not in shadowed]
    others = [d for d in directories if glob.matches(d, is_directory=True)]
    others += [p for p in plain if glob.matches(p, is_directory=False)]
    if others:
        names += others
        names.sort()  # two sorted runs: one merge
    return names


@dataclass(frozen=True, slots=True)
class GlobRows:
    """What a glob below a catalog directory keeps, as a plan takes it: member rows
    (ascending), plain objects, and matched directories no matched file lies in (a plan
    takes every file below those)."""

    rows: np.ndarray[Any, Any]
    plain: dict[str, int]
    directories: list[str]


def glob_rows(catalog: Catalog, path: str, glob: GlobWalk) -> GlobRows:
    """:func:`glob_names`' answer (with directories) as rows for a plan: the pattern is
    matched straight from the catalog's sorted paths into a boolean column, with no name,
    dict or object per member; a directory's matched files are found by binary search."""
    found = walk(catalog, path, glob.depth, glob.prefix)
    directories = {*found.directories, path}
    plain = {p: s for p, s in found.plain.items() if p not in directories}
    paths = catalog.paths
    if isinstance(found.rows, slice):
        start, stop = found.rows.start, found.rows.stop
        picked = np.arange(start, stop, dtype=np.int64)
        names: Iterable[str] = itertools.islice(paths, start, stop)
    else:
        picked = np.asarray(found.rows, dtype=np.int64)
        names = (paths[i] for i in picked.tolist())
    matched = np.fromiter(map(bool, map(glob.pattern.match, names)), bool, len(picked))
    rows = picked[matched]
    # a plain object or a directory at a member's path is that instead
    shadowed = [
        r for r in (catalog.row(n) for n in itertools.chain(directories, plain)) if r is not None
    ]
    if shadowed:
        rows = np.setdiff1d(rows, shadowed)
    plain = {p: s for p, s in plain.items() if glob.matches(p, is_directory=False)}
    uncovered = []
    for folder in sorted(d for d in directories if glob.matches(d, is_directory=True)):
        start, end = catalog.below(folder)
        i = int(np.searchsorted(rows, start))
        inside = i < len(rows) and int(rows[i]) < end
        if not inside and not any(p.startswith(folder + "/") for p in plain):
            uncovered.append(folder)
    return GlobRows(rows, plain, uncovered)


# -- ls: one directory -------------------------------------------------------------------------


def listing(catalog: Catalog, path: str) -> list[dict[str, Any]]:
    """``ls`` of a directory inside a catalog root: its members and listed plain objects,
    then its subdirectories (sorted); empty if it holds nothing."""
    start, end = catalog.below(path)
    prefix = path.rstrip("/") + "/"
    paths = catalog.paths
    rows: list[int] = []
    names: set[str] = set()
    i = start
    while i < end:
        rest = paths[i][len(prefix) :]
        if "/" in rest:
            sub = prefix + rest.split("/", 1)[0]
            names.add(sub)
            i = bisect.bisect_left(paths, sub + "/" + _TOP, i, end)
        else:
            rows.append(i)
            i += 1
    entries = member_entries(catalog, np.asarray(rows, dtype=np.int64))
    for plain, size in catalog.plain.items():
        if plain.startswith(prefix):
            rest = plain[len(prefix) :]
            if "/" in rest:
                names.add(prefix + rest.split("/", 1)[0])
            else:
                entries.append(plain_entry(plain, size, catalog.hot_class))
    entries += [directory_entry(d) for d in sorted(names)]
    return entries


# -- planning: members grouped by bundle ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BundleSelection:
    """Selected members of one bundle: their paths (in selection order) and total bytes."""

    bundle: str
    paths: list[str]
    read_bytes: int


def by_bundle(catalog: Catalog, rows: np.ndarray[Any, Any]) -> list[BundleSelection]:
    """Members ``rows`` grouped by bundle, bundles in order of first appearance in ``rows``
    and members in ``rows`` order within each (as a per-member dictionary pass would)."""
    if not len(rows):
        return []
    with gc_paused():
        return _by_bundle(catalog, rows)


def _by_bundle(catalog: Catalog, rows: np.ndarray[Any, Any]) -> list[BundleSelection]:
    columns = catalog.columns()
    codes = columns.bundle[rows]
    if (
        rows[-1] - rows[0] == len(rows) - 1
        and bool(np.all(np.diff(rows) == 1))
        and bool(np.all(codes[1:] >= codes[:-1]))
    ):  # a stretch of catalog rows whose bundles never go back (a find of a prefix)
        return _runs_by_bundle(catalog, int(rows[0]), codes)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    cuts = np.flatnonzero(np.diff(sorted_codes)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [len(order)]))
    first = order[starts]  # position in ``rows`` of each bundle's first member
    sizes = np.add.reduceat(columns.length[rows][order], starts)
    paths = catalog.paths
    ordered = rows[order]
    # a bundle whose rows run on without a gap (the usual case: a bundle holds a stretch
    # of sorted paths) takes a slice of the catalog's paths; any other, one row at a time
    gaps = np.concatenate(([0], np.cumsum(np.diff(ordered) != 1)))
    whole = (gaps[ends - 1] == gaps[starts]).tolist()
    first_rows = ordered[starts].tolist()
    ordered_rows = [] if all(whole) else ordered.tolist()  # a Python int per row: only if needed
    keys = catalog.bundle_keys
    groups = [
        BundleSelection(
            keys[int(sorted_codes[s])],
            _row_names(catalog, slice(r, r + e - s))
            if run
            else [paths[i] for i in ordered_rows[s:e]],
            int(size),
        )
        for s, e, size, r, run in zip(
            starts.tolist(), ends.tolist(), sizes.tolist(), first_rows, whole, strict=True
        )
    ]
    return [groups[i] for i in np.argsort(first, kind="stable").tolist()]


def _runs_by_bundle(
    catalog: Catalog, first_row: int, codes: np.ndarray[Any, Any]
) -> list[BundleSelection]:
    """:func:`by_bundle` of the rows from ``first_row`` on, in bundles ``codes`` (never
    decreasing): each bundle is one run of rows, so one slice of paths, nothing sorted."""
    cuts = (np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist()
    starts, ends = [0, *cuts], [*cuts, len(codes)]
    stretch = slice(first_row, first_row + len(codes))
    sizes = np.add.reduceat(catalog.columns().length[stretch], starts).tolist()
    keys = catalog.bundle_keys
    return [
        BundleSelection(
            keys[code], _row_names(catalog, slice(first_row + s, first_row + e)), int(size)
        )
        for code, s, e, size in zip(codes[starts].tolist(), starts, ends, sizes, strict=True)
    ]


def find_rows(catalog: Catalog, path: str) -> tuple[np.ndarray[Any, Any], dict[str, int]]:
    """What :func:`find_entries` lists, as member rows (ascending) and plain objects."""
    rows, extra, plain = _find_parts(catalog, path)
    return _picked_rows(catalog, rows, extra, plain), plain


def _picked_rows(
    catalog: Catalog, rows: slice, extra: list[str], plain: dict[str, int]
) -> np.ndarray[Any, Any]:
    """The member rows of :func:`_find_parts`' answer: the range, the extra member, less
    the members a plain object at the same path replaces (ascending)."""
    picked = np.arange(rows.start, rows.stop, dtype=np.int64)
    for name in extra:
        row = catalog.row(name)
        assert row is not None
        picked = np.union1d(picked, [row])
    if plain:  # a plain object at a member's path replaces it
        shadowed = [r for r in (catalog.row(p) for p in plain) if r is not None]
        picked = np.setdiff1d(picked, shadowed)
    return picked


class Picks:
    """Members chosen for a plan, catalog by catalog, each once, in the order chosen."""

    def __init__(self) -> None:
        self._chunks: list[tuple[Catalog, list[int] | np.ndarray[Any, Any]]] = []

    def __len__(self) -> int:
        return sum(len(rows) for _, rows in self._chunks)

    def add(self, catalog: Catalog, row: int) -> None:
        if self._chunks and self._chunks[-1][0] is catalog:
            last = self._chunks[-1][1]
            if isinstance(last, list):
                last.append(row)
                return
        self._chunks.append((catalog, [row]))

    def add_rows(self, catalog: Catalog, rows: np.ndarray[Any, Any]) -> None:
        if len(rows):
            self._chunks.append((catalog, rows))

    def update(self, other: Picks) -> None:
        self._chunks += other._chunks

    def groups(self) -> list[BundleSelection]:
        """The picked members by bundle (duplicates dropped, first choice kept)."""
        catalogs: dict[int, tuple[Catalog, list[np.ndarray[Any, Any]]]] = {}
        single: set[int] = set()  # catalogs with rows chosen one by one (may repeat)
        for catalog, rows in self._chunks:
            entry = catalogs.setdefault(id(catalog), (catalog, []))
            entry[1].append(np.asarray(rows, dtype=np.int64))
            if isinstance(rows, list):
                single.add(id(catalog))
        out: list[BundleSelection] = []
        chosen: set[str] = set()  # paths picked through an earlier catalog object
        for key, (catalog, chunks) in catalogs.items():
            rows = np.concatenate(chunks)
            if len(chunks) > 1 or key in single:
                _, first = np.unique(rows, return_index=True)
                rows = rows[np.sort(first)]
            if len(catalogs) > 1:  # parts of one sharded catalog may overlap
                paths = catalog.paths
                fresh = [r for r in rows.tolist() if paths[r] not in chosen]
                chosen.update(paths[r] for r in fresh)
                rows = np.asarray(fresh, dtype=np.int64)
            out += by_bundle(catalog, rows)
        if len(catalogs) > 1:  # ... and each hold some of one bundle's members
            out = _merge_same_bundle(out)
        return out


def _merge_same_bundle(groups: list[BundleSelection]) -> list[BundleSelection]:
    """One selection per bundle (in order of first appearance); the groups hold disjoint
    paths, so their bytes add."""
    merged: dict[str, BundleSelection] = {}
    for group in groups:
        seen = merged.get(group.bundle)
        merged[group.bundle] = (
            group
            if seen is None
            else BundleSelection(
                group.bundle, seen.paths + group.paths, seen.read_bytes + group.read_bytes
            )
        )
    return list(merged.values())
