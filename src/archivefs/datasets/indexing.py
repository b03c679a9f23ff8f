"""Index files already in a bucket: kerchunk references of the ones that read now.

:func:`index_files` (what ``archivefs index URL...`` runs) reads each netCDF4/HDF5
file's metadata through the filesystem's own read path (``fs.open``: ranged reads,
counted) and stores its references beside the catalog (``catalog.references``). A
file that does not read now (archived, restoring) is never read: it fails with the
restore that would let it be indexed, and the run goes on with the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.catalog import references
from archivefs.datasets.opening import _split_url
from archivefs.datasets.referenced import references_location
from archivefs.entries import etag_of
from archivefs.errors import ArchiveError, ObjectArchivedError
from archivefs.model import RestoreState
from archivefs.stores.conditional import run_blocking

if TYPE_CHECKING:
    from collections.abc import Sequence

    from archivefs.filesystem import ArchiveFileSystem

HEAD_BYTES = 4096  # enough to find an HDF5 superblock behind a user block of up to 2 KiB


@dataclass(frozen=True)
class IndexedFile:
    """One file indexed: where its references went and what reading its metadata cost."""

    path: str
    references: str  # where they are stored (bucket/.../.archivefs/references/....json)
    written: bool  # False: the stored references already described the same object
    chunks: int  # chunk references pointing into the object (inline ones not counted)
    inline: int  # chunks kept inline
    bytes_read: int  # bytes fetched from the store to make them
    size: int  # the file's size


@dataclass
class IndexReport:
    """What :func:`index_files` did, per file."""

    indexed: list[IndexedFile] = field(default_factory=list)
    failed: dict[str, ArchiveError] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_json(self) -> dict[str, Any]:
        return {
            "indexed": [
                {
                    "path": f.path,
                    "references": f.references,
                    "written": f.written,
                    "chunks": f.chunks,
                    "inline": f.inline,
                    "bytes_read": f.bytes_read,
                    "size": f.size,
                }
                for f in self.indexed
            ],
            "failed": {path: str(error) for path, error in self.failed.items()},
        }


def index_files(
    urls: str | Sequence[str],
    *,
    fs: ArchiveFileSystem | None = None,
    storage_options: dict[str, Any] | None = None,
    inline_threshold: int = references.INLINE_THRESHOLD,
    **archive_options: Any,
) -> IndexReport:
    """Make and store the kerchunk references of the netCDF4/HDF5 files ``urls`` name
    (URLs or globs), reading only their metadata and coordinates; files that do not read
    now are reported in ``failed`` with the restore that would let them be indexed.

    Example::

        report = ads.index_files("s3://bucket/run42/*.nc", fs=fs)
        report.failed    # {path: error} for archived files: restore them, index again
    """
    listed = [urls] if isinstance(urls, str) else list(urls)
    if not listed:
        raise ValueError("index_files: no URLs given.")
    fs, _ = _split_url(listed[0], fs, storage_options, archive_options)
    report = IndexReport()
    for url in listed:
        path = fs._strip_protocol(url)
        matches = sorted(fs.glob(path)) if _is_glob(path) else [path]
        if not matches:
            report.failed[path] = ArchiveError(
                "the pattern matches no file.",
                path=path,
                fix="check the pattern; `archivefs ls` of its folder shows what exists.",
            )
        for match in matches:
            try:
                report.indexed.append(index_file(fs, match, inline_threshold=inline_threshold))
            except ArchiveError as error:
                report.failed[match] = error
    return report


def index_file(
    fs: ArchiveFileSystem, path: str, *, inline_threshold: int = references.INLINE_THRESHOLD
) -> IndexedFile:
    """Index one file (see :func:`index_files`); raises :class:`ArchiveError` if it cannot."""
    path = fs._strip_protocol(path)
    entry = fs.info(path)
    if entry.get("type") != "file":
        raise ArchiveError("is not a file.", path=path, fix="name the files, or a glob of them.")
    if entry.get("restore") not in (RestoreState.HOT.value, RestoreState.RESTORED.value):
        url = f"{fs.store_protocol}://{path}"
        raise ObjectArchivedError(
            f"is {entry.get('restore')} ({entry.get('storage_class')}): its metadata cannot be "
            "read to index it, and nothing was read.",
            path=path,
            fix=f"restore it first (`archivefs restore {url} --wait`), then run "
            f"`archivefs index {url}` again.",
            storage_class=entry.get("storage_class"),
        )
    size = int(entry["size"])
    before = fs.read_stats.bytes_fetched
    target, offset = _target_of(fs, path, entry)
    own_url = f"{fs.store_protocol}://{path}"
    with fs.open(path, "rb", size=size) as handle:
        kind = references.file_kind(handle.read(min(HEAD_BYTES, size)))
        handle.seek(0)
        if kind is None:
            raise ArchiveError(
                "is not a netCDF4/HDF5 or netCDF3 file: archivefs has no references for it.",
                path=path,
                fix="index netCDF/HDF5 files only; others open and plan per file as before.",
            )
        try:
            if kind == "hdf5":
                made = references.make_references(
                    handle, own_url, inline_threshold=inline_threshold
                )
            else:  # kerchunk's netCDF3 parser opens the file itself: through this filesystem
                made = references.make_netcdf3_references(
                    f"{fs.protocol[0]}://{path}",
                    dict(fs.storage_options),
                    own_url,
                    lambda offset, length: _read_at(handle, offset, length),
                    inline_threshold=inline_threshold,
                )
        except ArchiveError:
            raise
        except Exception as error:  # kerchunk's, h5py's or scipy's: this file, not the run
            raise ArchiveError(
                f"kerchunk could not describe its chunks ({type(error).__name__}: {error}).",
                path=path,
                fix="it still opens and plans as a whole file (restore it whole to read it); "
                "check that it is a valid netCDF file.",
            ) from error
    if offset is not None:
        made = references.relocated(made, target.url, offset, size)
    refs = references.described(made, path, [target])
    location = references_location(fs, path)
    written = run_blocking(fs.fs, references.save_references(fs.fs, location, refs))
    values = refs["refs"].values()
    chunks = sum(1 for v in values if isinstance(v, list))
    inline = sum(1 for v in values if isinstance(v, str) and v.startswith("base64:"))
    fetched = fs.read_stats.bytes_fetched - before
    return IndexedFile(path, location, bool(written), chunks, inline, fetched, size)


def _target_of(
    fs: ArchiveFileSystem, path: str, entry: dict[str, Any]
) -> tuple[references.Target, int | None]:
    """The object the references point into, and the file's offset in it (a bundle
    member's), from the catalog; else the object itself."""
    bundle = entry.get("bundle")
    if bundle:
        found = fs.catalog_root_for(path)
        member = found[1].lookup(path) if found is not None else None
        info = found[1].bundles.get(bundle) if found is not None else None
        if member is None or info is None or info.etag is None:
            raise ArchiveError(
                "is a bundle member whose bundle the catalog does not describe whole "
                "(offset, size, ETag).",
                path=path,
                fix="run `archivefs catalog rebuild` for its root, then index it again.",
            )
        url = f"{fs.store_protocol}://{bundle}"
        return references.Target(url, info.size, info.etag), member.offset
    etag = etag_of(entry)
    if not etag:
        raise ArchiveError(
            "has no ETag in its description, so a later change could not be detected.",
            path=path,
            fix="index it through a store that reports ETags (S3, Azure, GCS, Oracle).",
        )
    url = f"{fs.store_protocol}://{path}"
    return references.Target(url, int(entry["size"]), str(etag)), None


def _read_at(handle: Any, offset: int, length: int) -> bytes:
    handle.seek(offset)
    data: bytes = handle.read(length)
    return data


def _is_glob(path: str) -> bool:
    return any(c in path for c in "*?[")
