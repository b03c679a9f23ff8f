"""A catalog in memory: member paths sorted (binary search for lookup, prefix ranges for
``ls``/``find``) and numpy arrays for the numbers; the records of bundles and members."""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from archivefs.errors import CatalogError
from archivefs.lazy import lazy_module
from archivefs.model import Member, StorageClass

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    import numpy as np

    from archivefs.catalog.bundle import Entry
else:  # numpy on first use: reading a plain object never needs it
    np = lazy_module("numpy", globals(), "np")

CLASSES = StorageClass.every()  # S3 first, in the enum order older catalogs used
"""Storage classes as a catalog stores them: by index in this list (append-only)."""


@dataclass(frozen=True, slots=True)
class BundleInfo:
    """One bundle object: where it is, how big, its class, members and checksum."""

    key: str
    size: int
    storage_class: StorageClass
    members: int
    sha256: str
    etag: str | None = None  # the store's ETag when recorded: member reads must match it


@dataclass(frozen=True, slots=True)
class MemberInfo:
    """Everything the catalog knows about one member."""

    path: str
    bundle: str
    offset: int
    length: int
    crc32: int
    sha256: str
    storage_class: StorageClass
    mtime: float

    def as_member(self) -> Member:
        return Member(self.path, self.bundle, self.offset, self.length, self.crc32, self.sha256)


@dataclass(frozen=True, slots=True)
class MemberColumns:
    """A catalog's member records as arrays (read-only views, one row per member)."""

    bundle: np.ndarray[Any, np.dtype[np.int32]]  # index into Catalog.bundle_keys
    offset: np.ndarray[Any, np.dtype[np.int64]]
    length: np.ndarray[Any, np.dtype[np.int64]]
    crc32: np.ndarray[Any, np.dtype[np.uint32]]
    sha256: np.ndarray[Any, Any]  # S32
    storage_class: np.ndarray[Any, np.dtype[np.uint8]]  # index into list(StorageClass)
    mtime: np.ndarray[Any, np.dtype[np.float64]]


class CatalogTable:
    """The in-memory index of bundle members: sorted paths, numpy columns, queries and
    merges (immutable; build new ones with :meth:`merge`). :class:`~archivefs.catalog.index.Catalog`
    adds its saved form."""

    plain_provider: str | None = None  # recorded provider of the plain objects (see provider)
    # member paths, sorted. A tuple, not a list: a tuple of strings drops out of the cyclic
    # GC's view, while every full collection in the process walks every item of a list
    _paths: tuple[str, ...]

    def __init__(
        self,
        members: Iterable[MemberInfo] = (),
        bundles: Iterable[BundleInfo] = (),
        plain: dict[str, int] | None = None,
        provider: str | None = None,
    ):
        rows = sorted(members, key=lambda m: m.path)
        self.plain: dict[str, int] = dict(plain or {})  # ordinary objects kept hot: path -> size
        self.plain_provider = provider
        self.bundles: dict[str, BundleInfo] = {b.key: b for b in bundles}
        keys = sorted(self.bundles)
        index = {k: i for i, k in enumerate(keys)}
        self._bundle_keys = keys
        self._paths = tuple(m.path for m in rows)
        for earlier, later in itertools.pairwise(self._paths):
            if earlier == later:
                raise CatalogError(
                    f"two members are both at {earlier!r}.",
                    path=earlier,
                    fix="bundle each path once; remove one copy before merging catalogs.",
                )
        missing = {m.bundle for m in rows} - set(index)
        if missing:
            raise CatalogError(
                f"members refer to bundles the catalog does not list: {sorted(missing)[:3]}.",
                fix="add the bundles' BundleInfo, or rebuild the catalog from the bundles.",
            )
        self._bundle = np.array([index[m.bundle] for m in rows], dtype=np.int32)
        self._offset = np.array([m.offset for m in rows], dtype=np.int64)
        self._length = np.array([m.length for m in rows], dtype=np.int64)
        self._crc = np.array([m.crc32 for m in rows], dtype=np.uint32)
        self._sha = np.array([bytes.fromhex(m.sha256) for m in rows], dtype="S32")
        self._class = np.array([CLASSES.index(m.storage_class) for m in rows], dtype=np.uint8)
        self._mtime = np.array([m.mtime for m in rows], dtype=np.float64)

    @classmethod
    def from_arrays(
        cls,
        paths: Sequence[str],
        bundles: Sequence[BundleInfo],
        *,
        bundle: np.ndarray[Any, Any],
        offset: np.ndarray[Any, Any],
        length: np.ndarray[Any, Any],
        crc32: np.ndarray[Any, Any],
        sha256: np.ndarray[Any, Any],
        storage_class: np.ndarray[Any, Any],
        mtime: np.ndarray[Any, Any],
    ) -> Self:
        """A catalog straight from columns (row ``i`` is member ``paths[i]``).

        ``bundle`` holds indices into ``bundles`` sorted by key; ``sha256`` raw
        32-byte digests; ``storage_class`` indices into :class:`StorageClass`.
        Builds no per-member object: how large catalogs are made and merged.
        """
        n = len(paths)
        columns = (bundle, offset, length, crc32, sha256, storage_class, mtime)
        if any(len(c) != n for c in columns):
            raise CatalogError(
                "the catalog's paths and records disagree.",
                fix="give one value per member in every column.",
            )
        order = sorted(range(n), key=paths.__getitem__)
        catalog = cls.__new__(cls)
        catalog.plain = {}
        catalog.bundles = {b.key: b for b in bundles}
        catalog._bundle_keys = sorted(catalog.bundles)
        catalog._paths = tuple([paths[i] for i in order])
        take = np.asarray(order, dtype=np.int64)
        catalog._bundle = np.asarray(bundle, dtype=np.int32)[take]
        catalog._offset = np.asarray(offset, dtype=np.int64)[take]
        catalog._length = np.asarray(length, dtype=np.int64)[take]
        catalog._crc = np.asarray(crc32, dtype=np.uint32)[take]
        catalog._sha = np.asarray(sha256, dtype="S32")[take]
        catalog._class = np.asarray(storage_class, dtype=np.uint8)[take]
        catalog._mtime = np.asarray(mtime, dtype=np.float64)[take]
        for earlier, later in itertools.pairwise(catalog._paths):
            if earlier == later:
                raise CatalogError(
                    f"two members are both at {earlier!r}.",
                    path=earlier,
                    fix="bundle each path once; remove one copy before merging catalogs.",
                )
        if n and (catalog._bundle.min() < 0 or catalog._bundle.max() >= len(bundles)):
            raise CatalogError(
                "members refer to bundles the catalog does not list.",
                fix="add the bundles' BundleInfo, or rebuild the catalog from the bundles.",
            )
        return catalog

    # -- queries ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._find(path) is not None

    def _find(self, path: str) -> int | None:
        i = bisect.bisect_left(self._paths, path)
        return i if i < len(self._paths) and self._paths[i] == path else None

    def _row(self, i: int) -> MemberInfo:
        return MemberInfo(
            path=self._paths[i],
            bundle=self._bundle_keys[int(self._bundle[i])],
            offset=int(self._offset[i]),
            length=int(self._length[i]),
            crc32=int(self._crc[i]),
            sha256=bytes(self._sha[i]).hex(),
            storage_class=CLASSES[int(self._class[i])],
            mtime=float(self._mtime[i]),
        )

    def lookup(self, path: str) -> MemberInfo | None:
        """The member at ``path``, or ``None``."""
        i = self._find(path)
        return None if i is None else self._row(i)

    def members(self) -> Iterator[MemberInfo]:
        return (self._row(i) for i in range(len(self._paths)))

    def members_of(self, bundle: str) -> list[MemberInfo]:
        if bundle not in self.bundles:
            return []
        code = self._bundle_keys.index(bundle)
        return [self._row(int(i)) for i in np.flatnonzero(self._bundle == code)]

    def _range(self, prefix: str) -> tuple[int, int]:
        start = bisect.bisect_left(self._paths, prefix)
        end = bisect.bisect_left(self._paths, prefix + "\U0010ffff")
        return start, end

    def find(self, prefix: str) -> list[str]:
        """Every member path below ``prefix`` (a directory) or equal to it."""
        prefix = prefix.rstrip("/")
        start, end = self._range(prefix + "/")
        out = list(self._paths[start:end])
        return [prefix, *out] if prefix in self else out

    def isdir(self, path: str) -> bool:
        start, end = self._range(path.rstrip("/") + "/")
        return end > start

    def ls(self, path: str) -> tuple[list[MemberInfo], list[str]]:
        """Members directly in directory ``path``, and its subdirectories."""
        prefix = path.rstrip("/") + "/"
        start, end = self._range(prefix)
        files: list[MemberInfo] = []
        dirs: list[str] = []
        i = start
        while i < end:
            rest = self._paths[i][len(prefix) :]
            if "/" in rest:
                sub = prefix + rest.split("/", 1)[0]
                dirs.append(sub)
                i = bisect.bisect_left(self._paths, sub + "/\U0010ffff", i, end)
            else:
                files.append(self._row(i))
                i += 1
        return files, dirs

    # -- columns (for catalog.members: operations over many members at array speed) -----------

    @property
    def paths(self) -> Sequence[str]:
        """Every member path, sorted (a tuple: the catalog's own, shared)."""
        return self._paths

    def below(self, path: str) -> tuple[int, int]:
        """The rows of the members strictly below directory ``path``: ``[start, end)``."""
        return self._range(path.rstrip("/") + "/")

    def starting(self, stem: str) -> tuple[int, int]:
        """The rows of the members whose path starts with ``stem``: ``[start, end)``."""
        return self._range(stem)

    def row(self, path: str) -> int | None:
        """The row of the member at ``path``, or ``None``."""
        return self._find(path)

    def depths(self, start: int = 0, end: int | None = None) -> np.ndarray[Any, np.dtype[np.int32]]:
        """How many ``/`` each member path of rows ``[start, end)`` holds (vectorised).

        Only those rows are looked at, so a walk under a small prefix of a large
        catalog (a glob of 1%) costs what its answer costs; all rows at once are kept.
        """
        end = len(self._paths) if end is None else end
        cached: np.ndarray[Any, np.dtype[np.int32]] | None = getattr(self, "_depths", None)
        if cached is not None:
            return cached[start:end]
        rows = self._paths[start:end]
        if not rows:
            return np.zeros(0, np.int32)
        blob = np.frombuffer("\n".join(rows).encode("utf-8"), dtype=np.uint8)
        ends = np.flatnonzero(blob == ord("\n"))  # one per row but the last
        slashes = np.flatnonzero(blob == ord("/"))
        bounds = np.searchsorted(slashes, ends)  # slashes before each row's end
        depths = np.diff(np.concatenate(([0], bounds, [len(slashes)]))).astype(np.int32)
        if start == 0 and end == len(self._paths):
            self._depths = depths
        return depths

    def columns(self) -> MemberColumns:
        """The member records as arrays, row for row with :attr:`paths`."""
        return MemberColumns(
            self._bundle,
            self._offset,
            self._length,
            self._crc,
            self._sha,
            self._class,
            self._mtime,
        )

    @property
    def bundle_keys(self) -> Sequence[str]:
        """Bundle keys in the order the ``bundle`` column indexes them."""
        return self._bundle_keys

    @property
    def provider(self) -> str:
        """The provider whose store holds this catalog: recorded when it was saved (since
        0.3), else its bundles' provider (older catalogs), else S3."""
        if self.plain_provider is not None:
            return self.plain_provider
        providers = {b.storage_class.provider for b in self.bundles.values()}
        return providers.pop() if len(providers) == 1 else "s3"

    @property
    def hot_class(self) -> StorageClass:
        """The class of the plain (hot) objects this catalog lists: its provider's default
        class, the one a plain upload lands in (S3 ``STANDARD``, Azure ``Hot``)."""
        return StorageClass.parse(None, provider=self.provider)

    def merge(self, other: Self) -> Self:
        """A catalog with both sets of bundles; paths may not repeat."""
        return type(self).concat([self, other])

    @classmethod
    def concat(cls, catalogs: Sequence[Self]) -> Self:
        """One catalog of all of these (column by column); paths may not repeat."""
        bundles = {k: b for c in catalogs for k, b in c.bundles.items()}
        keys = sorted(bundles)
        table = np.array(keys, dtype=object)  # once, not per part (a rebuild joins 10^4)
        paths: list[str] = []
        codes = []
        for c in catalogs:
            paths += c._paths
            remap = np.searchsorted(table, np.array(c._bundle_keys, dtype=object))
            codes.append(remap.astype(np.int32)[c._bundle] if len(c._bundle) else c._bundle)

        def column(name: str) -> np.ndarray[Any, Any]:
            return np.concatenate([getattr(c, name) for c in catalogs])

        catalog = cls.from_arrays(
            paths,
            [bundles[k] for k in keys],
            bundle=np.concatenate(codes) if codes else np.zeros(0, np.int32),
            offset=column("_offset"),
            length=column("_length"),
            crc32=column("_crc"),
            sha256=column("_sha"),
            storage_class=column("_class"),
            mtime=column("_mtime"),
        )
        catalog.plain = {k: v for c in catalogs for k, v in c.plain.items()}
        catalog.plain_provider = next(
            (c.plain_provider for c in catalogs if c.plain_provider is not None), None
        )
        return catalog

    def without(self, paths: Iterable[str]) -> Self:
        """This catalog without the members at ``paths``; bundles left empty drop out."""
        drop = sorted({i for i in (self._find(p) for p in paths) if i is not None})
        if not drop:
            return self
        keep = np.ones(len(self._paths), dtype=bool)
        keep[drop] = False
        rows = np.flatnonzero(keep)
        used = np.unique(self._bundle[rows])
        remap = np.full(len(self._bundle_keys), -1, dtype=np.int32)
        remap[used] = np.arange(len(used), dtype=np.int32)
        catalog = type(self).from_arrays(
            [self._paths[i] for i in rows.tolist()],
            [self.bundles[self._bundle_keys[int(u)]] for u in used],
            bundle=remap[self._bundle[rows]],
            offset=self._offset[rows],
            length=self._length[rows],
            crc32=self._crc[rows],
            sha256=self._sha[rows],
            storage_class=self._class[rows],
            mtime=self._mtime[rows],
        )
        catalog.plain = dict(self.plain)
        catalog.plain_provider = self.plain_provider
        return catalog

    def with_plain(self, plain: dict[str, int], provider: str | None = None) -> Self:
        """The same catalog, also listing these ordinary (hot) objects, stored at
        ``provider`` (``"s3"``, ``"azure"``: what their class is, see :attr:`hot_class`)."""
        return self.merge(type(self)(plain=plain, provider=provider))

    @classmethod
    def from_entries(
        cls,
        bundle: BundleInfo,
        entries: Sequence[Entry],
        root: str,
        storage_classes: dict[str, StorageClass] | None = None,
    ) -> Self:
        """A catalog of one bundle whose member names are relative to ``root``."""
        classes = storage_classes or {}
        default = StorageClass.parse(None, provider=bundle.storage_class.provider)
        members = [
            MemberInfo(
                path=f"{root.rstrip('/')}/{e.name}",
                bundle=bundle.key,
                offset=e.data_offset,
                length=e.length,
                crc32=e.crc32,
                sha256=e.sha256 or "0" * 64,
                storage_class=classes.get(e.name, default),
                mtime=e.mtime,
            )
            for e in entries
        ]
        return cls(members, [bundle])
