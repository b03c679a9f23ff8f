"""Bundle a tree of small files into a destination: bundles in a cold class, catalog hot.

The order of operations is what makes it safe: each bundle is written to a
private temporary file, uploaded, and verified (size, and its central
directory read back) before the catalog records it; the catalog is saved
atomically; sources are deleted (only if asked) after all of that. Bundle
names are a hash of their members, so a killed run, started again, finds the
bundles it already uploaded, checks them, and carries on without duplicates.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from archivefs.catalog import layout
from archivefs.catalog.bundle import Source, read_entries, write_bundle
from archivefs.catalog.grouping import ByPrefix, GroupingPolicy, SourceItem
from archivefs.catalog.index import BundleInfo, Catalog
from archivefs.errors import ArchiveError, BundleError, CatalogError
from archivefs.model import StorageClass
from archivefs.stores.translate import translate

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence


@dataclass
class BundleReport:
    """What a bundling run did."""

    bundles_written: list[str] = field(default_factory=list)
    bundles_reused: list[str] = field(default_factory=list)
    kept_hot: list[str] = field(default_factory=list)
    members: int = 0
    deleted_sources: int = 0


def list_sources(fs: Any, root: str) -> list[SourceItem]:
    """Every file below ``root`` on ``fs``, with paths relative to it."""
    root = root.rstrip("/")
    items = []
    for path, info in sorted(fs.find(root, detail=True).items()):
        relative = path[len(root) + 1 :] if path.startswith(root + "/") else path
        if layout.is_reserved(relative):
            continue
        mtime = info.get("mtime") or info.get("LastModified") or 0.0
        if hasattr(mtime, "timestamp"):
            mtime = mtime.timestamp()
        items.append(SourceItem(relative, int(info["size"]), float(mtime)))
    return items


def bundle_name(group: Sequence[SourceItem]) -> str:
    """A name that depends only on the members (paths, sizes, mtimes): stable across runs."""
    digest = hashlib.sha256()
    for item in group:
        digest.update(f"{item.path}\0{item.size}\0{item.mtime}\n".encode())
    return f"b-{digest.hexdigest()[:24]}"


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
) -> BundleReport:
    """Bundle ``src_root`` (on ``src_fs``) into ``dest_root`` (on ``dest_fs``).

    Members appear at ``dest_root/<path relative to src_root>``; bundles and
    the catalog go under ``dest_root/.archivefs/``. Files the policy keeps hot
    (zarr metadata) are copied as plain STANDARD objects.
    """
    policy = policy or ByPrefix()
    klass = StorageClass.parse(str(storage_class))
    items = list_sources(src_fs, src_root)
    keep_hot = getattr(policy, "keep_hot", None)
    hot = list(keep_hot(items)) if keep_hot is not None else []
    groups = policy.group(items)
    report = BundleReport()
    catalog_dir = layout.catalog_dir(dest_root)
    try:
        catalog = Catalog.load(dest_fs, catalog_dir)
    except CatalogError:
        catalog = Catalog()
    pending = 0
    for group in groups:
        if not group:
            continue
        name = bundle_name(group)
        key = dest_fs._strip_protocol(layout.bundle_path(dest_root, name))
        if key in catalog.bundles:
            report.bundles_reused.append(key)
            continue
        part = _bundle_one(src_fs, src_root, dest_fs, dest_root, group, key, klass)
        catalog = catalog.merge(part)
        report.bundles_written.append(key)
        report.members += len(group)
        pending += 1
        if pending >= save_every:
            with _store_errors(catalog_dir, "save the catalog"):
                catalog.save(dest_fs, catalog_dir)
            pending = 0
    plain: dict[str, int] = {}
    for item in hot:
        target = layout.member_path(dest_root, item.path)
        data = src_fs.cat_file(f"{src_root.rstrip('/')}/{item.path}")
        with _store_errors(target, "upload"):
            dest_fs.pipe_file(target, data)
        report.kept_hot.append(target)
        plain[dest_fs._strip_protocol(target)] = item.size
    if plain:
        catalog = catalog.with_plain(plain)
    with _store_errors(catalog_dir, "save the catalog"):
        catalog.save(dest_fs, catalog_dir)
        _register(dest_fs, dest_root)
    if delete_sources:
        report.deleted_sources = _delete_sources(
            src_fs, src_root, catalog, dest_fs, dest_root, items, hot
        )
    return report


def _bundle_one(
    src_fs: Any,
    src_root: str,
    dest_fs: Any,
    dest_root: str,
    group: Sequence[SourceItem],
    key: str,
    klass: StorageClass,
) -> Catalog:
    root = src_root.rstrip("/")

    def opener(item: SourceItem) -> Any:
        return lambda: src_fs.open(f"{root}/{item.path}", "rb")

    sources = [Source(i.path, i.size, i.mtime, opener(i)) for i in group]
    with tempfile.TemporaryDirectory(prefix="archivefs-bundle-") as tmp:
        os.chmod(tmp, 0o700)
        local = os.path.join(tmp, "bundle.zip")
        with open(local, "wb") as out:
            entries = write_bundle(sources, _as_binary(out), bundle=key)
        size = os.path.getsize(local)
        with open(local, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        with _store_errors(key, "upload"):
            existing = _existing_size(dest_fs, key)
            if existing != size:
                _upload(dest_fs, local, key, klass)
    with _store_errors(key, "inspect"):
        uploaded_info = dest_fs.info(key)
        uploaded = uploaded_info["size"]
    if uploaded != size:
        raise BundleError(
            f"the uploaded bundle has {uploaded} bytes, {size} were written.",
            path=key,
            fix="run the same bundle command again; the catalog was not changed.",
        )
    info = BundleInfo(
        key=key,
        size=size,
        storage_class=klass,
        members=len(entries),
        sha256=digest,
        etag=uploaded_info.get("ETag"),  # member reads must come from this very object
    )
    return Catalog.from_entries(
        info,
        entries,
        dest_fs._strip_protocol(dest_root),
        {i.path: i.storage_class for i in group},
    )


@contextlib.contextmanager
def _store_errors(path: str, action: str) -> Iterator[None]:
    """Errors of the destination store as archivefs errors (throttling: StoreUnavailableError)."""
    try:
        yield
    except ArchiveError:
        raise
    except OSError as error:
        raise translate(error, path, action=action) from error


def _upload(dest_fs: Any, local: str, key: str, klass: StorageClass) -> None:
    if type(dest_fs).__name__ == "S3FileSystem":
        dest_fs.put_file(local, key, StorageClass=klass.value)
    else:
        dest_fs.makedirs(dest_fs._parent(key), exist_ok=True)
        dest_fs.put_file(local, key)


def _existing_size(fs: Any, key: str) -> int | None:
    try:
        return int(fs.info(key)["size"])
    except FileNotFoundError:
        return None


def _as_binary(handle: Any) -> BinaryIO:
    return handle  # type: ignore[no-any-return]


def _register(dest_fs: Any, dest_root: str) -> None:
    """Record ``dest_root`` in its bucket's registry so filesystems find the catalog."""
    root = dest_fs._strip_protocol(dest_root).rstrip("/")
    bucket = root.split("/", 1)[0]
    path = layout.registry_path(bucket)
    try:
        roots = json.loads(dest_fs.cat_file(path)).get("roots", [])
    except FileNotFoundError:
        roots = []
    if root not in roots:
        dest_fs.pipe_file(path, json.dumps({"roots": sorted([*roots, root])}).encode())


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


def rebuild_catalog(fs: Any, root: str) -> Catalog:
    """Rebuild a lost or corrupt catalog from the bundles' own central directories."""
    bundle_dir = layout.bundle_dir(root)
    catalog = Catalog()
    base = fs._strip_protocol(root).rstrip("/")
    for key, info in sorted(fs.find(bundle_dir, detail=True).items()):
        if not key.endswith(".zip"):
            continue
        size = int(info["size"])
        try:
            entries = read_entries(_ranged(fs, key), size, bundle=key)
        except PermissionError as error:  # s3fs's answer for an archived object
            raise CatalogError(
                "the bundle is archived, so its directory cannot be read to rebuild the catalog.",
                path=key,
                fix=f"restore the bundles first (`archivefs restore s3://{bundle_dir}/ --wait`), "
                "then rebuild.",
            ) from error
        klass = StorageClass.parse(info.get("StorageClass") or info.get("storage_class"))
        digest = (
            hashlib.sha256(fs.cat_file(key)).hexdigest()
            if klass.needs_restore is False
            else ("0" * 64)
        )
        bundle = BundleInfo(
            key=key,
            size=size,
            storage_class=klass,
            members=len(entries),
            sha256=digest,
            etag=info.get("ETag"),
        )
        catalog = catalog.merge(Catalog.from_entries(bundle, entries, base))
    catalog.save(fs, layout.catalog_dir(root))
    _register(fs, root)
    return catalog
