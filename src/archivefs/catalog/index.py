"""The catalog: which bundle holds each member, where, and its checksums; kept in the hot tier.

In memory it is a :class:`~archivefs.catalog.table.CatalogTable` (``table.py``). On disk
(format 2): shards of about 4,096 rows (``shards.py``) plus a small JSON pointer
``CURRENT`` naming each with its SHA-256, first and last paths and member
count. Saving
writes only the shards whose content is new, verifies them, then replaces the
pointer, so readers see the old catalog or the new one, never half of one.
Format 1 (one ``.npz`` named by the pointer) is still read. Measured at 10^6
members in docs/bundles.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import re
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from archivefs.catalog import shards
from archivefs.catalog.table import BundleInfo, CatalogTable
from archivefs.entries import MODIFIED_KEYS
from archivefs.errors import CatalogConflictError, CatalogError, ObjectNotFoundError
from archivefs.lazy import lazy_module
from archivefs.model import StorageClass
from archivefs.providers import PROVIDERS
from archivefs.stores import forget_listings, remove_object
from archivefs.stores.conditional import read_versioned, write_versioned
from archivefs.stores.translate import raise_translated

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy as np

    from archivefs.stores.base import ColdStore
else:  # numpy on first use: reading a plain object never needs it
    np = lazy_module("numpy", globals(), "np")


FORMAT_VERSION = 2  # sharded (format 1: one file, still read; see docs/bundles.md)
WRITE_FORMAT = 2
"""What a writer must know to change a catalog (1: before generations and conditional
saves). Readers ignore it; a writer refuses a catalog of a larger write format."""
_LOAD_TRIES = 5  # reads of a pointer that a concurrent save moved on while it was read
POINTER = "CURRENT"
CATALOG_FILE = re.compile(r"catalog-[0-9a-f]{32}\.npz")  # the only names a pointer may give
CATALOG_DATA = re.compile(r"(shard-[0-9a-f]{32}\.bin|catalog-[0-9a-f]{32}\.npz)")
ORPHAN_GRACE = 3600.0
"""Seconds a catalog file no pointer names is left alone before a save deletes it: it
may be a concurrent save's, not yet named by the pointer that save is about to write."""
POINTER_CHECKSUM = "pointer_sha256"  # the pointer's own checksum (pointers since 0.2)
MAX_POINTER_BYTES = 16 << 20
"""The largest catalog pointer read (about 10^8 members at the default shard size: a
shard entry takes about 300 bytes). A larger one is refused before it is parsed."""
MAX_FILE_BYTES = shards.MAX_SHARD_BYTES
"""The largest catalog file (a shard, or a format-1 catalog) read."""


class Catalog(CatalogTable):
    """An immutable index of bundle members (:class:`CatalogTable`) and its saved form:
    shards and a pointer in the hot store, committed over the version read."""

    # -- persistence --------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        blob = "\n".join(self._paths).encode("utf-8")
        keys = "\n".join(self._bundle_keys).encode("utf-8")
        buffer = io.BytesIO()
        np.savez(
            buffer,
            paths=np.frombuffer(blob, dtype=np.uint8),
            bundle_keys=np.frombuffer(keys, dtype=np.uint8),
            bundle=self._bundle,
            offset=self._offset,
            length=self._length,
            crc=self._crc,
            sha=self._sha,
            klass=self._class,
            mtime=self._mtime,
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, bundles: Sequence[BundleInfo], *, source: str) -> Catalog:
        try:
            arrays = np.load(io.BytesIO(data), allow_pickle=False)
            inflated = sum(i.file_size for i in arrays.zip.infolist())
            if inflated > MAX_FILE_BYTES:  # members read stop at their declared sizes
                raise ValueError(f"it declares {inflated:,} bytes, more than {MAX_FILE_BYTES:,}")
            catalog = cls.__new__(cls)
            catalog.plain = {}
            blob = arrays["paths"].tobytes().decode("utf-8")
            catalog._paths = tuple(blob.split("\n")) if blob else ()
            catalog.bundles = {b.key: b for b in bundles}
            catalog._bundle_keys = sorted(catalog.bundles)
            _set_member_columns(catalog, arrays)
            recorded = None  # catalogs written before 0.2 do not record their bundle keys
            if "bundle_keys" in arrays.files:
                keys = arrays["bundle_keys"].tobytes().decode("utf-8")
                recorded = keys.split("\n") if keys else []
        except (ValueError, KeyError, OSError, UnicodeDecodeError) as error:
            raise CatalogError(
                f"the catalog file cannot be read ({error}).",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            ) from error
        if len(catalog._paths) != len(catalog._bundle):
            raise CatalogError(
                "the catalog's paths and records disagree.",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            )
        if recorded is not None and recorded != catalog._bundle_keys:
            raise CatalogError(
                "the catalog pointer's bundle keys differ from those the catalog file records "
                "(a changed pointer would map members to the wrong bundles).",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            )
        return catalog

    def _hashes(self) -> np.ndarray[Any, Any]:
        cached: np.ndarray[Any, Any] | None = getattr(self, "_path_hashes", None)
        if cached is None:
            cached = self._path_hashes = shards.path_hashes(self._paths)
        return cached

    def _shard(self, start: int, end: int) -> dict[str, np.ndarray[Any, Any]]:
        """The arrays of the shard of rows ``[start, end)`` (bundle codes local to it)."""
        used, local = np.unique(self._bundle[start:end], return_inverse=True)
        table = []
        for code in used.tolist():
            b = self.bundles[self._bundle_keys[code]]
            table.append((b.key, b.size, b.storage_class.value, b.members, b.sha256, b.etag or ""))
        columns: dict[str, np.ndarray[Any, Any]] = {
            "bundle": local.astype(np.int32).reshape(-1),
            "offset": self._offset[start:end],
            "length": self._length[start:end],
            "crc": self._crc[start:end],
            "sha": self._sha[start:end],
            "klass": self._class[start:end],
            "mtime": self._mtime[start:end],
        }
        return shards.shard_arrays(self._paths[start:end], columns, table)

    def save(
        self,
        fs: Any,
        directory: str,
        *,
        shard_members: int | None = None,
        orphan_grace: float = ORPHAN_GRACE,
    ) -> str:
        """Write over whatever catalog ``directory`` holds now; return the path of the first
        shard file (for a writer that holds a catalog it read, see :meth:`commit`).

        A damaged pointer is replaced (this is how ``catalog rebuild`` repairs one); a
        pointer another writer saves while this one writes its shards wins, and this
        save raises :class:`CatalogConflictError`.
        """
        current = _read_versioned_pointer(fs, f"{directory.rstrip('/')}/{POINTER}")
        previous = None
        if current is not None:
            with contextlib.suppress(CatalogError):  # damaged: replaced, its files kept
                previous = parse_pointer(current[0], f"{directory}/{POINTER}")
        saved = self._write(
            fs,
            directory,
            previous,
            current[1] if current else None,
            shard_members=shard_members,
            orphan_grace=orphan_grace,
            save_id=uuid.uuid4().hex,
        )
        return saved.first_file

    def commit(
        self,
        fs: Any,
        directory: str,
        *,
        over: CatalogVersion | None,
        save_id: str,
        shard_members: int | None = None,
        orphan_grace: float = ORPHAN_GRACE,
    ) -> CatalogVersion:
        """Save only over the catalog version ``over`` (``None``: only where there is no
        catalog); return the version written.

        Raises :class:`CatalogConflictError`, having named nothing, when another writer
        saved since ``over`` was read: re-read with :meth:`read_for_update`, merge and
        commit again (a pointer whose ``save_id`` is this one's is this save, landed).
        """
        path = f"{directory.rstrip('/')}/{POINTER}"
        current = _read_versioned_pointer(fs, path)
        version = current[1] if current else None
        if version != (over.version if over else None):
            raise _conflict(path)
        previous = parse_pointer(current[0], path) if current else None
        return self._write(
            fs,
            directory,
            previous,
            version,
            shard_members=shard_members,
            orphan_grace=orphan_grace,
            save_id=save_id,
        )

    @classmethod
    def read_for_update(cls, fs: Any, directory: str) -> tuple[Catalog, CatalogVersion | None]:
        """The catalog in ``directory`` and its version, to change and :meth:`commit`.

        No catalog: an empty one and ``None``. A damaged catalog, or one written by a
        newer archivefs than this one, raises :class:`CatalogError` with the fix: a
        writer never starts again from nothing over what it could not read.
        """
        path = f"{directory.rstrip('/')}/{POINTER}"
        for _ in range(_LOAD_TRIES):
            current = _read_versioned_pointer(fs, path)
            if current is None:
                return cls(), None
            raw, version = current
            pointer = parse_pointer(raw, path)
            written = pointer.get("write_format", 1)
            if not isinstance(written, int) or written > WRITE_FORMAT:
                raise CatalogError(
                    f"the catalog was written by a newer archivefs (write format {written}; "
                    f"this release writes {WRITE_FORMAT}), so this release may not change it.",
                    path=path,
                    fix="upgrade archivefs to add to this catalog (reading it still works).",
                )
            try:
                catalog = cls._from_parsed(fs, directory, pointer)
            except _ShardGone as gone:
                again = _read_versioned_pointer(fs, path)
                if again is not None and again[1] == version:
                    raise _damaged(gone.path) from None  # nothing moved: a shard is lost
                continue  # a newer save removed what this pointer named: read again
            generation = _generation(pointer)
            return catalog, CatalogVersion(version, generation, str(pointer.get("save_id", "")))
        raise CatalogError(
            "the catalog kept changing while it was read.",
            path=path,
            fix="try again when the other bundling runs into this root have finished.",
        )

    def _write(
        self,
        fs: Any,
        directory: str,
        previous: dict[str, Any] | None,
        version: str | None,
        *,
        shard_members: int | None,
        orphan_grace: float,
        save_id: str,
    ) -> CatalogVersion:
        """Write new shards, then the pointer only over ``version`` (the store's conditional
        write), then remove what only ``previous`` named.

        Shard files get a new random name each time they are written (their content's
        fingerprint is kept in the entry, so an unchanged shard is reused, not written):
        a name that a pointer stopped naming is never written again, so removing it
        after the pointer moved on cannot remove what a newer pointer names.
        """
        base = directory.rstrip("/")
        known = {_entry_fingerprint(e): e for e in (previous or {}).get("shards", [])}
        if shard_members is None:
            shard_members = _recorded_target(previous)
        if shard_members < 1:
            raise ValueError(f"shard_members must be at least 1, got {shard_members}")
        cuts = shards.cut_points(self._paths, self._hashes(), shard_members)
        entries = []
        fs.makedirs(directory, exist_ok=True)
        for start, end in itertools.pairwise(cuts):
            arrays = self._shard(start, end)
            fingerprint = shards.fingerprint(arrays)[:32]
            if fingerprint in known and known[fingerprint].get("members") == end - start:
                entries.append(known[fingerprint])
                continue
            data = shards.encode_shard(arrays)
            digest = hashlib.sha256(data).hexdigest()
            name = f"shard-{fingerprint[:16]}{uuid.uuid4().hex[:16]}.bin"
            target = f"{base}/{name}"
            fs.pipe_file(target, data)
            if hashlib.sha256(fs.cat_file(target)).hexdigest() != digest:
                raise CatalogError(
                    "the catalog read back differs from what was written.",
                    path=target,
                    fix="check the store, then save again; the previous catalog is still current.",
                )
            entries.append(
                {
                    "file": name,
                    "fingerprint": fingerprint,
                    "sha256": digest,
                    "first": self._paths[start],
                    "last": self._paths[end - 1],
                    "members": end - start,
                }
            )
        used = set(np.unique(self._bundle).tolist())
        generation = _generation(previous) + 1
        pointer = {
            "version": FORMAT_VERSION,
            "write_format": WRITE_FORMAT,
            "generation": generation,
            "save_id": save_id,
            "members": len(self),
            "plain": self.plain,
            "provider": self.provider,
            "shards": entries,
            "shard_members": shard_members,
            # bundles no member refers to (the shards hold the others)
            "bundles": [
                _bundle_record(self.bundles[k])
                for i, k in enumerate(self._bundle_keys)
                if i not in used
            ],
        }
        pointer[POINTER_CHECKSUM] = pointer_digest(pointer)
        path = f"{base}/{POINTER}"
        if not write_versioned(fs, path, json.dumps(pointer).encode(), version):
            raise _conflict(path)  # the new shards stay unnamed: orphans, removed once old
        if previous is not None:
            keep = {e["file"] for e in entries}
            stale = [e["file"] for e in previous.get("shards", [])]
            stale += [previous["file"]] if isinstance(previous.get("file"), str) else []
            for name in stale:
                if name not in keep:
                    with contextlib.suppress(FileNotFoundError):
                        remove_object(fs, f"{base}/{name}")
        _remove_orphans(fs, base, {e["file"] for e in entries}, orphan_grace)
        forget_listings(fs, base)  # that listing must not answer anyone's later reads
        # the version the store gave this pointer; "" (matches nothing, so the next commit
        # re-reads and merges) if another writer's save already followed it
        written = _read_versioned_pointer(fs, path)
        ours = written is not None and _save_id(written[0]) == save_id
        first = f"{base}/{entries[0]['file']}" if entries else path
        return CatalogVersion(written[1] if ours and written else "", generation, save_id, first)

    @classmethod
    def load(cls, fs: Any, directory: str) -> Catalog:
        """Load the current catalog from ``directory``; corrupt or missing -> CatalogError."""
        for _ in range(_LOAD_TRIES):
            pointer = _read_pointer(fs, directory, missing_ok=False)
            assert pointer is not None
            try:
                return cls._from_parsed(fs, directory, pointer)
            except _ShardGone as gone:
                if _read_pointer(fs, directory, missing_ok=True) == pointer:
                    raise _damaged(gone.path) from None
        raise CatalogError(
            "the catalog kept changing while it was read.",
            path=f"{directory.rstrip('/')}/{POINTER}",
            fix="try again when the bundling runs into this root have finished.",
        )

    @classmethod
    def _from_parsed(cls, fs: Any, directory: str, pointer: dict[str, Any]) -> Catalog:
        """The catalog a parsed pointer names; :class:`_ShardGone` if one of its files is gone
        (a newer save may have removed it: the caller reads the pointer again)."""
        base = directory.rstrip("/")
        names = [e["file"] for e in pointer["shards"]] if "shards" in pointer else [pointer["file"]]
        paths = [f"{base}/{name}" for name in names]
        # one call for all of them (object stores fetch them concurrently: s3fs, gcsfs,
        # adlfs), each a ranged read of at most the bound (and so never sized through a
        # listing cache: s3fs sizes a whole-object read from its dircache first)
        found = bounded_reads(fs, paths, MAX_FILE_BYTES)
        datas = []
        for path, data in zip(paths, found, strict=True):
            if isinstance(data, FileNotFoundError):
                raise _ShardGone(path) from None
            if isinstance(data, BaseException):
                raise data
            datas.append(data)
        if "shards" in pointer:
            parts = [cls.from_shard(pointer, i, data, directory) for i, data in enumerate(datas)]
            catalog = cls.join(parts, pointer, directory)
        else:
            catalog = cls.from_pointer(pointer, datas[0], directory)
        return catalog

    @classmethod
    def from_shard(
        cls, pointer: dict[str, Any], index: int, data: bytes, directory: str
    ) -> Catalog:
        """Shard ``index`` of a format-2 pointer, verified against its checksum, first and
        last paths and member count (members only: :meth:`join` adds what the pointer holds)."""
        entry = pointer["shards"][index]
        source = f"{directory.rstrip('/')}/{entry['file']}"
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise CatalogError(
                "the catalog file does not match its checksum (corrupt or half-written).",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            )
        arrays = shards.decode_shard(data, source)
        parse_class = _class_parser(pointer)
        try:
            catalog = cls.__new__(cls)
            catalog.plain = {}
            n = len(arrays["bundle"])
            catalog._paths = tuple(shards.unblob(arrays["paths"], n))
            keys = shards.unblob(arrays["bundle_keys"], len(arrays["bundle_size"]))
            k = len(keys)
            classes = shards.unblob(arrays["bundle_class"], k)
            digests = shards.unblob(arrays["bundle_sha"], k)
            etags = shards.unblob(arrays["bundle_etag"], k)
            sizes = arrays["bundle_size"].tolist()
            counts = arrays["bundle_members"].tolist()
            catalog.bundles = {
                key: BundleInfo(key, size, parse_class(klass), count, digest, etag or None)
                for key, size, klass, count, digest, etag in zip(
                    keys, sizes, classes, counts, digests, etags, strict=True
                )
            }
            catalog._bundle_keys = keys
            _set_member_columns(catalog, arrays)
            columns = (catalog._offset, catalog._length, catalog._crc, catalog._sha, catalog._class)
            consistent = all(len(c) == n for c in (*columns, catalog._mtime))
            consistent = consistent and keys == sorted(keys)
            if n and (int(catalog._bundle.min()) < 0 or int(catalog._bundle.max()) >= k):
                consistent = False
        except (KeyError, ValueError, UnicodeDecodeError) as error:
            raise CatalogError(
                f"the catalog shard cannot be read ({error}).",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            ) from error
        recorded = (entry["first"], entry["last"])
        ends = (catalog._paths[0], catalog._paths[-1]) if n else recorded
        if not consistent or n != entry["members"] or ends != recorded:
            raise CatalogError(
                "the catalog pointer's shard record differs from the shard it names "
                "(a changed pointer would map paths to the wrong members).",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            )
        return catalog

    @classmethod
    def join(cls, parts: Sequence[Catalog], pointer: dict[str, Any], directory: str) -> Catalog:
        """One catalog of consecutive shards of a format-2 pointer (already in path order: no
        sort), with the plain objects, provider and member-less bundles the pointer holds."""
        for earlier, later in itertools.pairwise(parts):
            if earlier._paths and later._paths and earlier._paths[-1] >= later._paths[0]:
                raise CatalogError(
                    "the catalog's shards overlap or are out of order.",
                    path=f"{directory.rstrip('/')}/{POINTER}",
                    fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
                )
        extra = _bundles_of(pointer, directory)
        bundles = {b.key: b for b in extra}
        for part in parts:
            bundles.update(part.bundles)
        keys = sorted(bundles)
        catalog = cls.__new__(cls)
        catalog.bundles = {k: bundles[k] for k in keys}
        catalog._bundle_keys = keys
        if len(parts) == 1 and not extra:
            only = parts[0]
            catalog._bundle = only._bundle
        else:
            table = np.array(keys, dtype=object)
            codes = [
                np.searchsorted(table, np.array(p._bundle_keys, dtype=object)).astype(np.int32)[
                    p._bundle
                ]
                if len(p._bundle)
                else np.zeros(0, np.int32)
                for p in parts
            ]
            catalog._bundle = np.concatenate(codes) if codes else np.zeros(0, np.int32)
        catalog._paths = (
            parts[0]._paths
            if len(parts) == 1
            else tuple(itertools.chain.from_iterable(p._paths for p in parts))
        )

        def column(name: str, dtype: Any) -> np.ndarray[Any, Any]:
            if not parts:
                return np.zeros(0, dtype=dtype)
            if len(parts) == 1:
                return getattr(parts[0], name)  # type: ignore[no-any-return]
            return np.concatenate([getattr(p, name) for p in parts])

        catalog._offset = column("_offset", np.int64)
        catalog._length = column("_length", np.int64)
        catalog._crc = column("_crc", np.uint32)
        catalog._sha = column("_sha", "S32")
        catalog._class = column("_class", np.uint8)
        catalog._mtime = column("_mtime", np.float64)
        _add_pointer_fields(catalog, pointer, directory)
        return catalog

    @classmethod
    def from_pointer(cls, pointer: dict[str, Any], data: bytes, directory: str) -> Catalog:
        """Verify ``data`` against its pointer and build the catalog."""
        source = f"{directory.rstrip('/')}/{pointer.get('file')}"
        if hashlib.sha256(data).hexdigest() != pointer.get("sha256"):
            raise CatalogError(
                "the catalog file does not match its checksum (corrupt or half-written).",
                path=source,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            )
        catalog = cls.from_bytes(data, _bundles_of(pointer, directory), source=source)
        _add_pointer_fields(catalog, pointer, directory)
        return catalog


@dataclass(frozen=True, slots=True)
class CatalogVersion:
    """Which catalog a writer read or wrote: the store's version of its pointer (ETag,
    generation or digest), the pointer's generation (each save adds one) and save id."""

    version: str
    generation: int
    save_id: str
    first_file: str = ""


class _ShardGone(Exception):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _conflict(path: str) -> CatalogConflictError:
    return CatalogConflictError(
        "another writer saved the catalog after this one read it; nothing was replaced.",
        path=path,
        fix="read the catalog again and merge (archivefs bundle does this by itself).",
    )


def _generation(pointer: dict[str, Any] | None) -> int:
    value = (pointer or {}).get("generation", 0)
    return value if isinstance(value, int) and value >= 0 else 0


def _save_id(raw: bytes) -> str | None:
    with contextlib.suppress(ValueError, UnicodeDecodeError, AttributeError):
        value = json.loads(raw).get("save_id")
        return value if isinstance(value, str) else None
    return None


def _entry_fingerprint(entry: dict[str, Any]) -> str:
    """The content fingerprint of a shard entry (older entries: the hex of their name)."""
    recorded = entry.get("fingerprint")
    return recorded if isinstance(recorded, str) else str(entry["file"])[6:38]


def _set_member_columns(catalog: Catalog, arrays: Mapping[str, Any]) -> None:
    """Give ``catalog`` the member columns read from a catalog file or a shard."""
    catalog._bundle = arrays["bundle"]
    catalog._offset = arrays["offset"]
    catalog._length = arrays["length"]
    catalog._crc = arrays["crc"]
    catalog._sha = arrays["sha"]
    catalog._class = arrays["klass"]
    catalog._mtime = arrays["mtime"]


def _class_parser(pointer: dict[str, Any]) -> Callable[[str], StorageClass]:
    """Class names as the pointer's provider spells them ("Archive" is Oracle's in an
    Oracle catalog); pointers that record no provider: S3's names first, as before."""
    provider = pointer.get("provider")
    known = provider if isinstance(provider, str) and provider in PROVIDERS else None
    return lambda name: StorageClass.parse(name, provider=known)


def _bundle_record(b: BundleInfo) -> dict[str, Any]:
    return {
        "key": b.key,
        "size": b.size,
        "storage_class": b.storage_class.value,
        "members": b.members,
        "sha256": b.sha256,
        **({"etag": b.etag} if b.etag else {}),
    }


def _bundles_of(pointer: dict[str, Any], directory: str) -> list[BundleInfo]:
    """The bundles a pointer lists itself (format 1: all; format 2: those without members)."""
    try:
        return [
            BundleInfo(
                key=b["key"],
                size=int(b["size"]),
                storage_class=_class_parser(pointer)(b["storage_class"]),
                members=int(b["members"]),
                sha256=str(b["sha256"]),
                etag=str(b["etag"]) if b.get("etag") else None,
            )
            for b in pointer.get("bundles", [])
        ]
    except (KeyError, TypeError, ValueError) as error:
        raise CatalogError(
            f"the catalog pointer is malformed ({error}).",
            path=f"{directory}/{POINTER}",
            fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
        ) from error


def _add_pointer_fields(catalog: Catalog, pointer: dict[str, Any], directory: str) -> None:
    """The plain objects and the provider a pointer records, onto ``catalog``."""
    catalog.plain = {}
    catalog.plain_provider = None
    plain = pointer.get("plain", {})
    if isinstance(plain, dict):
        catalog.plain = {str(k): int(v) for k, v in plain.items()}
    provider = pointer.get("provider")
    if provider is not None:
        if provider not in PROVIDERS:
            raise CatalogError(
                f"the catalog pointer names an unknown provider {str(provider)[:40]!r}.",
                path=f"{directory}/{POINTER}",
                fix="upgrade archivefs, or rebuild the catalog with `archivefs catalog rebuild`.",
            )
        catalog.plain_provider = str(provider)


def _damaged(path: str) -> CatalogError:
    return CatalogError(
        "the catalog pointer names a file that does not exist, and the pointer did not "
        "change while it was read: the catalog is damaged (no other writer moved it on).",
        path=path,
        fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
    )


def bounded_reads(fs: Any, paths: Sequence[str], limit: int) -> list[bytes | BaseException]:
    """Each of ``paths`` whole, in one ranged read of at most ``limit + 1`` bytes (all at
    once where the store can); a larger object is a :class:`CatalogError` in its place,
    a missing one its ``FileNotFoundError``."""
    if not paths:
        return []
    n = len(paths)
    try:
        found = fs.cat_ranges(list(paths), [0] * n, [limit + 1] * n, on_error="return")
    except FileNotFoundError as error:  # one path: raised, not returned
        found = [error]
    out: list[bytes | BaseException] = []
    for path, data in zip(paths, found, strict=True):
        if isinstance(data, bytes | bytearray) and len(data) > limit:
            data = CatalogError(
                f"the catalog file is larger than {limit:,} bytes, the most archivefs reads "
                "of one; it was not read.",
                path=path,
                fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
            )
        out.append(bytes(data) if isinstance(data, bytes | bytearray) else data)
    return out


async def read_catalog_object(store: ColdStore, path: str, limit: int) -> bytes:
    """The catalog object at ``path`` (pointer, shard or registry) whole, in one ranged
    read through the store adapter of at most ``limit`` + 1 bytes: a larger one is a
    :class:`CatalogError` and no more of it is read; a missing one is
    :class:`ObjectNotFoundError`. The caller knows what it reads and gives its bound
    (:data:`MAX_POINTER_BYTES`, :data:`MAX_FILE_BYTES`,
    :data:`~archivefs.catalog.registry.MAX_REGISTRY_BYTES`), never its name."""
    try:
        # one ranged GET on every provider (read_tagged is two on GCS: objects.get, then
        # the bytes; a filesystem's first look for a registry must be one request)
        read = await store.get_range(path, 0, limit + 1)
    except FileNotFoundError as error:
        raise ObjectNotFoundError("does not exist.", path=path, fix="check the path.") from error
    except Exception as error:  # S3's adapter leaves s3fs's errors as they are
        raise_translated(error, path, action="read")
    data, size = read.data, read.total_size
    if len(data) > limit or (size or 0) > limit:
        raise CatalogError(
            f"the catalog file is larger than {limit:,} bytes, the most archivefs reads "
            "of one; it was not read.",
            path=path,
            fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
        )
    return data


def _read_versioned_pointer(fs: Any, path: str) -> tuple[bytes, str] | None:
    """The pointer's bytes and version, read within :data:`MAX_POINTER_BYTES`."""
    return read_versioned(fs, path, limit=MAX_POINTER_BYTES, too_large=CatalogError)


def _read_pointer(fs: Any, directory: str, *, missing_ok: bool) -> dict[str, Any] | None:
    path = f"{directory.rstrip('/')}/{POINTER}"
    try:
        [raw] = bounded_reads(fs, [path], MAX_POINTER_BYTES)
        if isinstance(raw, BaseException):
            raise raw
    except FileNotFoundError:
        if missing_ok:
            return None
        raise CatalogError(
            "there is no catalog here.",
            path=path,
            fix="bundle data with `archivefs bundle`, or rebuild with `archivefs catalog rebuild`.",
        ) from None
    return parse_pointer(raw, path)


def parse_pointer(raw: bytes, path: str) -> dict[str, Any]:
    """The catalog pointer's JSON, checked for size (:data:`MAX_POINTER_BYTES`) and format."""
    if len(raw) > MAX_POINTER_BYTES:
        raise CatalogError(
            f"the catalog pointer is larger than {MAX_POINTER_BYTES:,} bytes, the most "
            "archivefs reads of one; it was not parsed.",
            path=path,
            fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
        )
    try:
        pointer = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise CatalogError(
            f"the catalog pointer is not valid JSON ({error}).",
            path=path,
            fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
        ) from error
    if not isinstance(pointer, dict) or pointer.get("version") not in (1, FORMAT_VERSION):
        raise CatalogError(
            "the catalog pointer has an unknown format.",
            path=path,
            fix="upgrade archivefs, or rebuild the catalog with `archivefs catalog rebuild`.",
        )
    if pointer["version"] == FORMAT_VERSION:
        shards.check_entries(pointer.get("shards"), path)
    elif not isinstance(pointer.get("file"), str) or not CATALOG_FILE.fullmatch(pointer["file"]):
        # every path derived from the pointer stays in the catalog directory: a name such as
        # '../../../X' would otherwise be read, and deleted when the catalog is next saved
        raise CatalogError(
            f"the catalog pointer names {str(pointer.get('file'))[:80]!r}, "
            "not a catalog file in its own directory.",
            path=path,
            fix="rebuild the catalog with `archivefs catalog rebuild` (nothing outside the "
            "catalog directory is read or deleted).",
        )
    recorded = pointer.get(POINTER_CHECKSUM)
    if recorded is not None and recorded != pointer_digest(pointer):
        raise CatalogError(
            "the catalog pointer does not match its own checksum (changed or damaged).",
            path=path,
            fix="rebuild the catalog from the bundles: `archivefs catalog rebuild`.",
        )
    return pointer


def _recorded_target(pointer: dict[str, Any] | None) -> int:
    """The shard target a save keeps: the pointer's, 2,048 for a sharded pointer from
    before the field, the current default for a new or single-file catalog."""
    if pointer is None or "shards" not in pointer:
        return shards.SHARD_MEMBERS
    recorded = pointer.get("shard_members", shards.LEGACY_SHARD_MEMBERS)
    return recorded if isinstance(recorded, int) and recorded >= 1 else shards.SHARD_MEMBERS


def pointer_digest(pointer: dict[str, Any]) -> str:
    """SHA-256 of the pointer's content (canonical JSON, without the checksum itself)."""
    body = {k: v for k, v in pointer.items() if k != POINTER_CHECKSUM}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _remove_orphans(fs: Any, base: str, keep: set[str], grace: float) -> None:
    """Delete the catalog files under ``base`` that ``keep`` does not name and that are
    older than ``grace`` seconds (one listing; a file of unknown age is kept)."""
    listed = fs.ls(base, detail=True, refresh=True)
    # "now" is the store's clock: the newest write it reports (the pointer just written)
    now = max((t for t in map(modified_time, listed) if t is not None), default=time.time())
    for entry in listed:
        name = str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]
        if name in keep or not CATALOG_DATA.fullmatch(name):
            continue
        written = modified_time(entry)
        if written is not None and now - written >= grace:
            with contextlib.suppress(FileNotFoundError):
                remove_object(fs, f"{base}/{name}")


def modified_time(entry: dict[str, Any]) -> float | None:
    """When a listed file was last written (epoch seconds), from any fsspec backend's keys."""
    for key in MODIFIED_KEYS:
        value = entry.get(key)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
            with contextlib.suppress(TypeError, ValueError):
                return parsedate_to_datetime(value).timestamp()
    return None
