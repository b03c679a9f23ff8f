"""Bundle a tree of small files into a destination: bundles in a cold class, catalog hot.

The order of operations is what makes it safe: each bundle is written to a
private temporary file (in a per-destination work directory that the next
run cleans, see ``workdir.py``), verified member by member, uploaded, and
checked (size) before the catalog records it; the catalog is saved
atomically; sources are deleted (only if asked) after all of that.

Bundle names are the SHA-256 of their bytes, and every upload carries that
hash as metadata, so a killed run started again reuses an uploaded bundle
only when its content is the content it would write now. A group already
recorded in the catalog with the same members, sizes and mtimes is kept as
recorded (catalog and bundle agree with each other) while its bundle is there;
a recorded bundle that is gone is written and uploaded again. Every other
bundle the earlier run uploaded is an *orphan*: it is reported, and deleted
only when asked (deleting an archived bundle inside its class's minimum
storage period is billed as if it were kept).

A run leases each bundle before it checks, reuses or uploads it
(``leases.py``); orphan deletion spares what a live lease or the catalog names,
read right before each delete. After each save a run lists its bundles again
and uploads and saves once more any it reused that vanished meanwhile; only
then does it release its leases.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import unicodedata
import uuid
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from archivefs.catalog import layout
from archivefs.catalog.bundle import Source, read_entries, verify_bundle_bytes, write_bundle
from archivefs.catalog.grouping import ByPrefix, GroupingPolicy, SourceItem
from archivefs.catalog.hot import HotArrays, hot_items
from archivefs.catalog.index import POINTER, Catalog, CatalogVersion, modified_time
from archivefs.catalog.leases import RunLeases, scan_leases
from archivefs.catalog.member_references import (
    HEAD_BYTES,
    MemberReferences,
    reference_members,
    reference_object,
    save_member_references,
    unreferenced_reason,
)
from archivefs.catalog.references import KEY, file_kind
from archivefs.catalog.registry import change_registry, parse_registry
from archivefs.catalog.sources import list_sources
from archivefs.catalog.table import BundleInfo
from archivefs.catalog.workdir import clean_stale, temporary_bundle, work_dir
from archivefs.entries import class_name_of, etag_of
from archivefs.errors import ArchiveError, BundleError, CatalogConflictError, CatalogError
from archivefs.model import StorageClass
from archivefs.pricing import load_price_sheet
from archivefs.providers import PROVIDERS
from archivefs.stores import (
    forget_listings,
    listed_key,
    provider_speaking,
    remove_object,
    upload_in_class,
    user_metadata,
)
from archivefs.stores.conditional import is_local, read_versioned, run_blocking
from archivefs.stores.translate import raise_translated

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from pathlib import Path

    from archivefs.catalog.bundle import Entry

__all__ = ["BundleReport", "Orphan", "bundle_tree", "list_sources", "rebuild_catalog"]

DIGEST_METADATA = "archivefs-sha256"  # S3 user metadata: the SHA-256 of the uploaded bundle
_AZURE_DIGEST = "archivefs_sha256"  # Azure metadata names are C# identifiers: no hyphen
OrphanPolicy = Literal["keep", "delete"]
SAVE_TRIES = 20  # saves lost to other writers in a row before a run gives up (bundles kept)
REUPLOAD_TRIES = 3  # rounds of re-uploading reused bundles that vanished before a run gives up
ORPHAN_AGE = 3600.0
"""Seconds an unrecorded bundle must have existed (by the store's clock) before
``orphans="delete"`` removes it: a younger one may be another run's, not yet saved."""


@dataclass(frozen=True)
class Orphan:
    """An uploaded bundle that no catalog records (left by an earlier, interrupted run)."""

    key: str
    size: int
    storage_class: str
    min_storage_days: int
    deleted: bool

    def describe(self) -> str:
        billed = (
            f"; {self.storage_class} bills {self.min_storage_days} days of storage even if "
            "deleted earlier"
            if self.min_storage_days
            else ""
        )
        return f"{self.key} ({self.size} bytes, {self.storage_class}{billed})"


@dataclass
class BundleReport:
    """What a bundling run did."""

    bundles_written: list[str] = field(default_factory=list)
    bundles_reused: list[str] = field(default_factory=list)
    kept_hot: list[str] = field(default_factory=list)
    members: int = 0
    deleted_sources: int = 0
    skipped_links: list[str] = field(default_factory=list)
    orphans: list[Orphan] = field(default_factory=list)
    cleaned_partials: int = 0
    # kerchunk references of netCDF4/HDF5/netCDF3 members, made from the local bundle
    referenced: list[str] = field(default_factory=list)  # member paths described
    unreferenced: dict[str, str] = field(default_factory=dict)  # member path -> why not


def bundle_tree(
    src_fs: Any,
    src_root: str,
    dest_fs: Any,
    dest_root: str,
    *,
    policy: GroupingPolicy | None = None,
    storage_class: StorageClass | str = StorageClass.DEEP_ARCHIVE,
    delete_sources: bool = False,
    save_every: int = 50,
    follow_symlinks: bool = False,
    hot_arrays: HotArrays = "auto",
    orphans: OrphanPolicy = "keep",
    orphan_age: float = ORPHAN_AGE,
) -> BundleReport:
    """Bundle ``src_root`` (on ``src_fs``) into ``dest_root`` (on ``dest_fs``).

    Members appear at ``dest_root/<path relative to src_root>``; bundles and
    the catalog go under ``dest_root/.archivefs/``. A zarr store keeps its
    metadata, coordinates and small arrays as plain objects in the provider's hot class
    (S3 ``STANDARD``, Azure ``Hot``)
    (``hot_arrays``: ``"auto"``, or the array names to keep hot; a policy's own
    ``hot_arrays``, when it names some, count as the caller's choice). Symbolic
    links that leave ``src_root`` are skipped (``report.skipped_links``)
    unless ``follow_symlinks``. Bundles uploaded by an earlier run that no
    catalog records are reported (``report.orphans``) and kept, or deleted
    with ``orphans="delete"`` once ``orphan_age`` seconds old by the store's clock
    (a younger one may be a concurrent run's, not saved yet).

    Each member that is a netCDF4/HDF5 or netCDF3 file gets kerchunk references
    (``member_references``), made from the local bundle and pointing into the
    uploaded bundle, written beside the catalog before the catalog records the bundle
    (``report.referenced``); such a file kept hot as a plain object gets references
    to the object itself (one ``info`` of it for its ETag). One kerchunk cannot
    describe is stored without them (``report.unreferenced``, with the reason).

    Other runs may bundle into the same ``dest_root`` at once: each save is written
    only over the catalog version this run read, and a save that loses the race
    merges the other run's members and saves again. A catalog that cannot be read
    (damaged, or written by a newer archivefs) stops the run before anything is
    uploaded.
    """
    if orphans not in ("keep", "delete"):
        raise ValueError(f"orphans must be 'keep' or 'delete', got {orphans!r}")
    policy = policy or ByPrefix()
    # in the destination's names: "Archive" is Oracle's class on oci://, Azure's on az://
    klass = StorageClass.parse(str(storage_class), provider=_provider_named_by(dest_fs))
    listing = list_sources(src_fs, src_root, follow_symlinks=follow_symlinks)
    items = listing.items
    _warn_respelt(items)
    root = src_root.rstrip("/")
    named = getattr(policy, "hot_arrays", None)
    if hot_arrays == "auto" and named:  # the policy already names them: the caller chose
        hot_arrays = frozenset(named)
    hot = hot_items(items, lambda p: bytes(src_fs.cat_file(f"{root}/{p}")), hot_arrays)
    keep_hot = getattr(policy, "keep_hot", None)
    if keep_hot is not None:
        known = {i.path for i in hot}
        hot += [i for i in keep_hot(items) if i.path not in known]
    hot_paths = {i.path for i in hot}
    groups = policy.group([i for i in items if i.path not in hot_paths])
    report = BundleReport(skipped_links=listing.skipped_links)
    scratch = work_dir(f"{type(dest_fs).__name__}:{dest_fs.unstrip_protocol(dest_root)}")
    report.cleaned_partials = len(clean_stale(scratch))
    catalog_dir = layout.catalog_dir(dest_root)
    with _store_errors(catalog_dir, "read the catalog"):
        # only a missing catalog starts empty: a damaged or newer one stops the run here
        catalog, version = Catalog.read_for_update(dest_fs, catalog_dir)
        _check_registry(dest_fs, dest_root)
    writer = _CatalogWriter(dest_fs, catalog_dir, catalog, version)
    base = listed_key(dest_fs, dest_root)
    with _store_errors(layout.bundle_dir(dest_root), "list"):
        uploaded = _uploaded_bundles(dest_fs, dest_root)
    bundler = _Bundler(src_fs, root, dest_fs, dest_root, klass, scratch, uploaded)
    parts: list[Catalog] = []  # bundles written since the catalog was last merged and saved
    for group in groups:
        if not group:
            continue
        recorded = _recorded_bundle(writer.catalog, base, group, uploaded)
        if recorded is not None:
            report.bundles_reused.append(recorded)
            continue
        part, sent = bundler.bundle(group)
        key = next(iter(part.bundles))
        if not sent and (key in writer.catalog.bundles or any(key in p.bundles for p in parts)):
            report.bundles_reused.append(key)  # recorded (or twice in this run) and there
            continue
        parts.append(part)
        (report.bundles_written if sent else report.bundles_reused).append(key)
        report.members += len(group)
        if len(parts) >= save_every:
            writer.add(parts)
            bundler.save_checked(writer)
    writer.add(parts)
    plain: dict[str, int] = {}
    plain_refs = MemberReferences()
    for item in hot:
        target = layout.member_path(dest_root, item.path)
        data = src_fs.cat_file(f"{root}/{item.path}")
        with _store_errors(target, "upload"):
            if is_local(dest_fs):
                dest_fs.makedirs(dest_fs._parent(target), exist_ok=True)
            dest_fs.pipe_file(target, data)
        report.kept_hot.append(target)
        plain[dest_fs._strip_protocol(target)] = item.size
        _plain_references(dest_fs, dest_root, item.path, bytes(data), plain_refs)
    if plain_refs.made:
        with _store_errors(layout.references_dir(dest_root), "write references"):
            run_blocking(dest_fs, save_member_references(dest_fs, plain_refs.made))
    bundler.referenced.update(refs[KEY]["path"] for refs in plain_refs.made.values())
    bundler.unreferenced.update(plain_refs.unreferenced)
    writer.add_plain(plain, klass.provider)
    catalog = bundler.save_checked(writer)
    with _store_errors(layout.registry_path(base.split("/", 1)[0]), "update"):
        _register(dest_fs, dest_root)
    report.referenced = sorted(bundler.referenced)
    report.unreferenced = dict(sorted(bundler.unreferenced.items()))
    report.orphans = _account_for_orphans(
        dest_fs, dest_root, uploaded, catalog, orphans, orphan_age
    )
    if delete_sources:
        report.deleted_sources = _delete_sources(
            src_fs, src_root, catalog, dest_fs, dest_root, items, hot
        )
    return report


def _provider_named_by(fs: Any) -> str | None:
    """The provider whose protocol ``fs`` speaks (``None``: a local or other filesystem)."""
    spec = provider_speaking(fs)
    return None if spec is None else spec.name


def _warn_respelt(items: Sequence[SourceItem]) -> None:
    """Warn about source names not in Unicode NFC: members are recorded under their NFC
    spelling, so an NFD and an NFC spelling of one name are one member, and the later
    run's file replaces the earlier one (as a re-bundled file does)."""
    respelt = [i.path for i in items if unicodedata.normalize("NFC", i.path) != i.path]
    if respelt:
        warnings.warn(
            f"{len(respelt)} source name(s) are not in Unicode NFC (e.g. {respelt[0]!r}); "
            "they are recorded under their NFC spelling, and replace any member of the "
            "same NFC name already in the catalog.",
            UserWarning,
            stacklevel=3,
        )


def _recorded_bundle(
    catalog: Catalog,
    base: str,
    group: Sequence[SourceItem],
    uploaded: Mapping[str, tuple[int | None, str]],
) -> str | None:
    """The bundle that the catalog records for exactly this group (same sizes and mtimes),
    if the listing of ``uploaded`` bundles has it (a recorded bundle that is gone is
    written again: that is how a run repairs a catalog naming a missing bundle)."""
    bundle = None
    for item in group:
        member = catalog.lookup(f"{base}/{item.path}")
        if member is None or member.length != item.size or member.mtime != item.mtime:
            return None
        if bundle is None:
            bundle = member.bundle
        elif member.bundle != bundle:
            return None
    if bundle is None or catalog.bundles[bundle].members != len(group):
        return None
    return bundle if bundle in uploaded else None


def _uploaded_bundles(fs: Any, root: str) -> dict[str, tuple[int | None, str]]:
    """Every bundle object under ``root`` (one listing): key -> (size, storage class)."""
    return {
        key: (int(info["size"]), class_name_of(info) or "STANDARD")
        for key, info in _listed_bundles(fs, root).items()
    }


def _listed_bundles(fs: Any, root: str) -> dict[str, dict[str, Any]]:
    """The bundle objects under ``root`` as listed now (never from a listing cache), by
    their keys as the catalog records them."""
    directory = layout.bundle_dir(root)
    forget_listings(fs, directory)
    try:
        found = fs.find(directory, detail=True)
    except FileNotFoundError:
        return {}
    return {listed_key(fs, key): info for key, info in found.items() if key.endswith(".zip")}


def _account_for_orphans(
    fs: Any,
    dest_root: str,
    uploaded: dict[str, tuple[int | None, str]],
    saved: Catalog,
    policy: OrphanPolicy,
    min_age: float,
) -> list[Orphan]:
    """Report (and, if asked, delete) uploaded bundles that no catalog records.

    Deletion spares bundles younger than ``min_age`` seconds by the store's clock (they
    may be another run's, uploaded but not saved yet) and, read right before each delete
    (leases first, then the catalog), every bundle that a live lease of a running run or
    the catalog as it is now names. A lease listing that cannot be read deletes nothing.
    """
    unrecorded = sorted(set(uploaded) - set(saved.bundles))
    deleted: set[str] = set()
    if unrecorded and policy == "delete":
        deleted = _delete_orphans(fs, dest_root, unrecorded, min_age)
    out = []
    sheet = None
    for key in unrecorded:
        size, klass = uploaded[key]
        try:
            provider = _provider_named_by(fs)
            sheet = sheet or load_price_sheet(PROVIDERS[provider or "s3"].price_sheet)
            days = sheet.price(StorageClass.parse(klass, provider=provider)).min_storage_days
        except (ArchiveError, ValueError):
            days = 0
        out.append(Orphan(key, size or 0, klass, days, deleted=key in deleted))
    return out


def _delete_orphans(fs: Any, dest_root: str, candidates: list[str], min_age: float) -> set[str]:
    """Delete those of ``candidates`` that are old enough and that neither a live lease nor
    the current catalog names, each checked right before its delete; return those deleted."""
    directory = layout.catalog_dir(dest_root)
    with _store_errors(directory, "read the catalog"):
        forget_listings(fs, directory)
        now = modified_time(fs.info(f"{directory}/{POINTER}"))  # the store's clock
        listed = _listed_bundles(fs, dest_root)
    if now is None:
        return set()  # no clock: no age is known, so nothing is old enough
    old = [k for k in candidates if k in listed and _age(listed[k], now) >= min_age]
    deleted: set[str] = set()
    named = _NamedByCatalog(fs, directory)
    for key in old:
        with _store_errors(layout.bundle_dir(dest_root), "list"):
            leases = scan_leases(fs, dest_root, now, min_age)
        if leases is None:
            break  # a lease that cannot be read is not a lease that is absent
        if key in leases.protected or key in named.now():
            continue
        with _store_errors(key, "delete"):
            remove_object(fs, key)
        deleted.add(key)
    leases = scan_leases(fs, dest_root, now, min_age)
    for path in leases.stale if leases else ():
        with _store_errors(path, "delete"), contextlib.suppress(FileNotFoundError):
            remove_object(fs, path)  # a killed run's lease: protects nothing any more
    return deleted


def _age(info: Mapping[str, Any], now: float) -> float:
    written = modified_time(dict(info))
    return -1.0 if written is None else now - written


class _NamedByCatalog:
    """The bundles the catalog names now: its pointer read each time, the catalog loaded
    again only when the pointer changed."""

    def __init__(self, fs: Any, directory: str) -> None:
        self.fs, self.directory = fs, directory
        self.version: str | None = None
        self.bundles: frozenset[str] = frozenset()

    def now(self) -> frozenset[str]:
        with _store_errors(self.directory, "read the catalog"):
            current = read_versioned(self.fs, f"{self.directory}/{POINTER}")
            if current is None:
                raise CatalogError(
                    "the catalog disappeared while orphans were deleted; nothing more was deleted.",
                    path=self.directory,
                    fix="rebuild it from the bundles: `archivefs catalog rebuild`.",
                )
            if current[1] != self.version:
                self.bundles = frozenset(Catalog.load(self.fs, self.directory).bundles)
                self.version = current[1]
        return self.bundles


class _Bundler:
    """Writes, leases, checks and uploads this run's bundles; after each save, checks the
    bundles it reused are still there (uploading and saving again any that vanished)."""

    def __init__(
        self,
        src_fs: Any,
        root: str,
        dest_fs: Any,
        dest_root: str,
        klass: StorageClass,
        scratch: Path,
        uploaded: dict[str, tuple[int | None, str]],
    ) -> None:
        self.src_fs, self.root, self.dest_fs, self.dest_root = src_fs, root, dest_fs, dest_root
        self.klass, self.scratch, self.uploaded = klass, scratch, uploaded
        self.leases = RunLeases(dest_fs, dest_root)
        self.reused: dict[str, Sequence[SourceItem]] = {}  # found there, not sent: check
        self.referenced: set[str] = set()  # members whose references are stored
        self.unreferenced: dict[str, str] = {}  # members kerchunk could not describe

    def bundle(self, group: Sequence[SourceItem]) -> tuple[Catalog, bool]:
        """One group's bundle as a catalog part, and whether this run sent it."""
        part, sent, described = _bundle_one(
            self.src_fs, self.root, self.dest_fs, self.dest_root, group, self.klass,
            self.scratch, self.uploaded, self.leases,
        )  # fmt: skip
        self.referenced.update(refs[KEY]["path"] for refs in described.made.values())
        self.unreferenced.update(described.unreferenced)
        key = next(iter(part.bundles))
        self.uploaded[key] = (part.bundles[key].size, self.klass.value)
        if not sent:
            self.reused[key] = group
        return part, sent

    def save_checked(self, writer: _CatalogWriter) -> Catalog:
        """Save, then list the bundles: every bundle this run reused and the catalog names
        must still be there; a vanished one is written, uploaded and saved again. Then
        release this run's leases."""
        for _ in range(REUPLOAD_TRIES):
            catalog = writer.save()
            wanted = {k: g for k, g in self.reused.items() if k in catalog.bundles}
            if not wanted:
                break
            with _store_errors(layout.bundle_dir(self.dest_root), "list"):
                listed = _listed_bundles(self.dest_fs, self.dest_root)
            gone = {k: g for k, g in wanted.items() if k not in listed}
            self.reused = {}
            if not gone:
                break
            for key in gone:
                self.uploaded.pop(key, None)
            writer.add([self.bundle(group)[0] for group in gone.values()])
        else:
            raise BundleError(
                f"bundles this run reused were deleted {REUPLOAD_TRIES} times after its "
                "catalog save (another run deleting orphans?); the catalog names them.",
                path=layout.bundle_dir(self.dest_root),
                fix="stop other runs' `--orphans delete` into this root, then run the same "
                "bundle command again: it uploads the missing bundles.",
            )
        with _store_errors(layout.bundle_dir(self.dest_root), "release leases"):
            self.leases.release()
        return catalog


def _bundle_one(
    src_fs: Any,
    root: str,
    dest_fs: Any,
    dest_root: str,
    group: Sequence[SourceItem],
    klass: StorageClass,
    scratch: Path,
    uploaded: dict[str, tuple[int | None, str]],
    leases: RunLeases,
) -> tuple[Catalog, bool, MemberReferences]:
    """Write, verify and (unless the same bytes are there already) upload one bundle;
    its lease is taken before it is checked or sent. The references of its netCDF/HDF5
    members are made from the local bundle and stored before it is returned (so before
    any catalog records it)."""

    on_disk = is_local(src_fs)

    def opener(item: SourceItem) -> Any:
        if on_disk:  # the listing read this very path: no fsspec file object per member
            return lambda: open(f"{root}/{item.path}", "rb")
        return lambda: src_fs.open(f"{root}/{item.path}", "rb")

    sources = [Source(i.path, i.size, i.mtime, opener(i)) for i in group]
    label = f"the bundle of {root}/{group[0].path} and {len(group) - 1} more"
    sent = False
    with temporary_bundle(scratch) as local:
        with open(local, "wb") as out:
            entries = write_bundle(sources, _as_binary(out), bundle=label)
        with open(local, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
            size = handle.seek(0, 2)
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                verify_bundle_bytes(view, entries, bundle=label)  # type: ignore[arg-type]
        key = listed_key(dest_fs, layout.bundle_path(dest_root, f"b-{digest[:32]}"))
        with _store_errors(key, "upload"):
            leases.take(key)
            if not _same_upload(dest_fs, key, size, digest, uploaded):
                _upload(dest_fs, str(local), key, klass, digest)
                sent = True
        with _store_errors(key, "inspect"):
            remote_info = dest_fs.info(key)
            remote = remote_info["size"]
        if remote != size:
            raise BundleError(
                f"the uploaded bundle has {remote} bytes, {size} were written.",
                path=key,
                fix="run the same bundle command again; the catalog was not changed.",
            )
        described = _member_references(dest_fs, dest_root, local, entries, key, remote_info)
    info = BundleInfo(
        key=key,
        size=size,
        storage_class=klass,
        members=len(entries),
        sha256=digest,
        etag=recorded_etag(remote_info),  # member reads must come from this very object
    )
    part = Catalog.from_entries(
        info,
        entries,
        listed_key(dest_fs, dest_root),
        {i.path: i.storage_class for i in group},
    )
    return part, sent, described


def _plain_references(
    dest_fs: Any, dest_root: str, relative: str, data: bytes, out: MemberReferences
) -> None:
    """Add to ``out`` the references of ``data`` kept as the plain object of source path
    ``relative`` if it is a netCDF/HDF5 file: they point at the object itself, with the
    ETag one ``info`` of it gives (only such files cost that request)."""
    spec = provider_speaking(dest_fs)
    if spec is None or file_kind(data[:HEAD_BYTES]) is None:
        return
    target = layout.member_path(dest_root, relative)
    key = listed_key(dest_fs, target)
    with _store_errors(target, "inspect"):
        etag = recorded_etag(dest_fs.info(target))
    if etag is None:
        return
    try:
        refs = reference_object(data, key, f"{spec.protocols[0]}://{key}", etag)
    except Exception as error:  # kerchunk's, h5py's or scipy's: this file only
        out.unreferenced[key] = unreferenced_reason(error)
        return
    if refs is not None:
        out.made[layout.references_path(listed_key(dest_fs, dest_root), relative)] = refs


def _member_references(
    dest_fs: Any,
    dest_root: str,
    local: Path,
    entries: Sequence[Entry],
    key: str,
    remote_info: Mapping[str, Any],
) -> MemberReferences:
    """Make (from the ``local`` bundle) and store the references of its netCDF/HDF5
    members, pointing into the uploaded bundle ``key`` as the store described it. A
    destination with no provider or no ETag gets none: a change could not be detected."""
    spec = provider_speaking(dest_fs)
    etag = recorded_etag(remote_info)
    if spec is None or etag is None:
        return MemberReferences()
    base = listed_key(dest_fs, dest_root)
    described = reference_members(
        local, entries, base, f"{spec.protocols[0]}://{key}", int(remote_info["size"]), etag
    )
    if described.made:
        with _store_errors(layout.references_dir(dest_root), "write references"):
            run_blocking(dest_fs, save_member_references(dest_fs, described.made))
    return described


class _CatalogWriter:
    """One run's view of a catalog that other runs may save into at the same time.

    It keeps what this run added (bundle parts and plain objects) apart from what it
    read, so that when a save loses the race to another writer's it reads their
    catalog, adds this run's part again (its members replace records of the same
    paths: re-bundled) and saves over theirs: both runs' members are kept.
    """

    def __init__(
        self, fs: Any, directory: str, catalog: Catalog, version: CatalogVersion | None
    ) -> None:
        self.fs, self.directory = fs, directory
        self.base, self.version = catalog, version
        self.catalog = catalog  # base with this run's additions (what was last saved)
        self.parts: list[Catalog] = []
        self.plain: dict[str, int] = {}
        self.provider: str | None = None
        self.save_id = uuid.uuid4().hex

    def add(self, parts: list[Catalog]) -> None:
        """Add (and empty) ``parts``: one merge of all of them, column by column (merging
        bundle by bundle rebuilt the whole catalog per bundle: quadratic in the files)."""
        if parts:
            self.catalog = _merged(self.catalog, parts)
            self.parts.extend(parts)
            parts.clear()

    def add_plain(self, plain: dict[str, int], provider: str) -> None:
        if plain:
            self.plain.update(plain)
            self.provider = provider
            self.catalog = self.catalog.with_plain(plain, provider)

    def save(self) -> Catalog:
        """Save over the version read, merging another writer's save first if one came
        between; return the catalog saved."""
        for _ in range(SAVE_TRIES):
            try:
                with _store_errors(self.directory, "save the catalog"):
                    self.version = self.catalog.commit(
                        self.fs, self.directory, over=self.version, save_id=self.save_id
                    )
                return self.catalog
            except CatalogConflictError:
                self._merge_theirs()
        raise CatalogError(
            f"the catalog changed {SAVE_TRIES} times while this run saved; the bundles are "
            "uploaded and kept.",
            path=self.directory,
            fix="run the same bundle command again: it records the uploaded bundles "
            "without uploading them again.",
        )

    def _merge_theirs(self) -> None:
        with _store_errors(self.directory, "read the catalog"):
            theirs, version = Catalog.read_for_update(self.fs, self.directory)
        if version is not None and version.save_id == self.save_id:
            self.version = version  # this run's own save landed; its answer was lost
            return
        if version is None and self.version is None:
            return  # a catalog came and went between the try and this read: try again
        read = self.version.generation if self.version else 0
        if version is None or version.generation < read:
            raise CatalogError(
                f"the catalog went back while this run saved (generation {read} to "
                f"{version.generation if version else 'none'}): it was restored from an "
                "older copy or removed, and members saved since would read as not found. "
                "Nothing was saved over it.",
                path=self.directory,
                fix="if that was intended, run `archivefs catalog rebuild` (it records every "
                "bundle, this run's included); otherwise put the newer pointer back.",
            )
        self.base, self.version = theirs, version
        self.catalog = _merged(theirs, list(self.parts))
        if self.plain and self.provider is not None:
            self.catalog = self.catalog.with_plain(self.plain, self.provider)


def _merged(catalog: Catalog, parts: list[Catalog]) -> Catalog:
    """``catalog`` with the bundles in ``parts``: members they hold replace earlier records
    of the same paths (re-bundled); emptied bundles drop out."""
    if not parts:
        return catalog
    return Catalog.concat([catalog.without(p for part in parts for p in part.paths), *parts])


def _same_upload(
    fs: Any, key: str, size: int, digest: str, uploaded: dict[str, tuple[int | None, str]]
) -> bool:
    """Whether ``key`` already holds exactly these bytes (by content hash, never by size alone)."""
    if uploaded.get(key, (None,))[0] != size:
        return False
    if is_local(fs):
        with fs.open(key, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest() == digest
    try:
        metadata = user_metadata(fs, key)
    except (AttributeError, NotImplementedError):
        return False  # no metadata on this store: upload again
    recorded = metadata.get(DIGEST_METADATA) or metadata.get(_AZURE_DIGEST)
    return bool(recorded == digest)


@contextlib.contextmanager
def _store_errors(path: str, action: str) -> Iterator[None]:
    """Errors of the destination store as archivefs errors (throttling: StoreUnavailableError)."""
    try:
        yield
    except ArchiveError:
        raise
    except OSError as error:
        raise_translated(error, path, action=action)


def _upload(dest_fs: Any, local: str, key: str, klass: StorageClass, digest: str) -> None:
    name = _AZURE_DIGEST if klass.provider == "azure" else DIGEST_METADATA
    upload_in_class(dest_fs, local, key, klass, {name: digest})


def _as_binary(handle: Any) -> BinaryIO:
    return handle  # type: ignore[no-any-return]


def _check_registry(dest_fs: Any, dest_root: str) -> None:
    """Raise :class:`CatalogError` if the bucket's registry exists but cannot be read (before
    a run uploads anything: its last step would be refused)."""
    if is_local(dest_fs):
        return
    path = layout.registry_path(dest_fs._strip_protocol(dest_root).split("/", 1)[0])
    current = read_versioned(dest_fs, path)
    if current is not None:
        parse_registry(current[0], path)


def _register(dest_fs: Any, dest_root: str, *, replace_damaged: bool = False) -> None:
    """Record ``dest_root`` in its bucket's registry so filesystems find the catalog.

    Only object stores have buckets: a catalog in a local directory is found at
    ``DIR/.archivefs/catalog`` itself, and no registry is written.
    """
    if is_local(dest_fs):
        return
    root = dest_fs._strip_protocol(dest_root).rstrip("/")
    bucket = root.split("/", 1)[0]
    add = change_registry(
        dest_fs, bucket, lambda roots: [*roots, root], replace_damaged=replace_damaged
    )
    run_blocking(dest_fs, add)


def _delete_sources(
    src_fs: Any,
    src_root: str,
    catalog: Catalog,
    dest_fs: Any,
    dest_root: str,
    items: Sequence[SourceItem],
    hot: Sequence[SourceItem],
) -> int:
    """Delete sources only after their bundle is recorded and its directory reads back."""
    root = dest_fs._strip_protocol(dest_root).rstrip("/")
    checked: set[str] = set()
    deleted = 0
    hot_paths = {i.path for i in hot}
    for item in items:
        member = catalog.lookup(f"{root}/{item.path}")
        if member is None:
            if item.path in hot_paths:
                continue
            raise BundleError(
                f"{item.path!r} is not in the catalog; no source was deleted after it.",
                path=src_root,
                fix="run the bundle command again without deleting, then check the catalog.",
            )
        if member.bundle not in checked:
            size = catalog.bundles[member.bundle].size
            entries = read_entries(_ranged(dest_fs, member.bundle), size, bundle=member.bundle)
            if len(entries) != catalog.bundles[member.bundle].members:
                raise BundleError(
                    "the bundle's directory disagrees with the catalog; no source deleted.",
                    path=member.bundle,
                    fix="rebuild the catalog (`archivefs catalog rebuild`) and compare.",
                )
            checked.add(member.bundle)
        src_fs.rm_file(f"{src_root.rstrip('/')}/{item.path}")
        deleted += 1
    return deleted


def _ranged(fs: Any, path: str) -> Callable[[int, int], bytes]:
    def fetch(start: int, end: int) -> bytes:
        data: bytes = fs.cat_file(path, start=start, end=end)
        return data

    return fetch


def recorded_etag(info: Mapping[str, Any]) -> str | None:
    """What a bundle's member reads are pinned to, from the store's ``info()`` of it.

    On GCS its generation (its reads take it as ``ifGenerationMatch``; gcsfs's ``etag``
    is not a precondition); elsewhere its ETag, as s3fs (``ETag``), adlfs and ocifs
    (``etag``) spell it. None if the store gives neither.
    """
    return etag_of(info)


def rebuild_catalog(fs: Any, root: str) -> Catalog:
    """Rebuild a lost or corrupt catalog from the bundles' own central directories.

    Each bundle is read whole and checked member by member (local headers,
    data, CRC-32, layout) before it is recorded, so a bundle whose directory
    hides members or disagrees with its local headers is an error, not a
    shorter catalog. Bundles must be readable (hot or restored). Nothing is
    written outside ``root/.archivefs/catalog`` (and the bucket's registry).
    """
    bundle_dir = layout.bundle_dir(root)
    parts: list[Catalog] = []  # one per bundle, joined once (a merge each was quadratic)
    base = listed_key(fs, root)
    for key, info in sorted(_listed_bundles(fs, root).items()):
        size = int(info["size"])
        try:
            data = fs.cat_file(key)
        except PermissionError as error:  # s3fs's answer for an archived object
            raise CatalogError(
                "the bundle is archived, so its directory cannot be read to rebuild the catalog.",
                path=key,
                fix=f"restore the bundles first (`archivefs restore s3://{bundle_dir}/ --wait`), "
                "then rebuild.",
            ) from error
        entries = read_entries(_sliced(data), len(data), bundle=key)
        entries = verify_bundle_bytes(data, entries, bundle=key)
        klass = StorageClass.parse(class_name_of(info))
        bundle = BundleInfo(
            key=key,
            size=size,
            storage_class=klass,
            members=len(entries),
            sha256=hashlib.sha256(data).hexdigest(),
            etag=recorded_etag(info),
        )
        parts.append(Catalog.from_entries(bundle, entries, base))
    catalog = Catalog.concat(parts) if parts else Catalog()
    if not catalog.bundles:
        raise CatalogError(
            "there are no bundles to rebuild the catalog from; nothing was written.",
            path=bundle_dir,
            fix="check the path: it is the DEST given to `archivefs bundle`.",
        )
    catalog.save(fs, layout.catalog_dir(root))
    _register(fs, root, replace_damaged=True)
    return catalog


def _sliced(data: bytes) -> Callable[[int, int], bytes]:
    return lambda start, end: data[start:end]
