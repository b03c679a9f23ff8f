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

from archivefs.catalog import combined, references
from archivefs.datasets.opening import _split_url
from archivefs.datasets.referenced import (
    check_unchanged,
    collection_location,
    find_references,
    references_location,
)
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


@dataclass(frozen=True)
class CombinedReferences:
    """One combined reference set stored (:func:`combine_references`)."""

    location: str  # bucket/.../.archivefs/references/<folder>/.combined/<digest>.json
    files: list[str]
    concat_dim: str
    written: bool  # False: the stored set already described the same files and objects
    chunks: int  # chunk references pointing into objects


@dataclass
class IndexReport:
    """What :func:`index_files` did, per file (and the combined set, if one was asked)."""

    indexed: list[IndexedFile] = field(default_factory=list)
    failed: dict[str, ArchiveError] = field(default_factory=dict)
    combined: CombinedReferences | None = None
    not_combined: ArchiveError | None = None  # why the asked combination was not made

    @property
    def ok(self) -> bool:
        return not self.failed and self.not_combined is None

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
            "not_combined": None if self.not_combined is None else str(self.not_combined),
            "combined": None
            if self.combined is None
            else {
                "location": self.combined.location,
                "files": self.combined.files,
                "concat_dim": self.combined.concat_dim,
                "written": self.combined.written,
                "chunks": self.combined.chunks,
            },
        }


def index_files(
    urls: str | Sequence[str],
    *,
    fs: ArchiveFileSystem | None = None,
    storage_options: dict[str, Any] | None = None,
    inline_threshold: int = references.INLINE_THRESHOLD,
    concat_dim: str | None = None,
    **archive_options: Any,
) -> IndexReport:
    """Make and store the kerchunk references of the netCDF4/HDF5 files ``urls`` name
    (URLs or globs), reading only their metadata and coordinates; files that do not read
    now are reported in ``failed`` with the restore that would let them be indexed.
    A file whose stored references describe its object as it is now (size, ETag) is
    not read again, archived or not (``written`` False), unless they were made with
    another ``inline_threshold`` and it reads now: then it is described anew. To
    describe it anew otherwise, remove its references first. With ``concat_dim``, the
    files' references are then also combined along it into one set
    (:func:`combine_references`; not when a file failed), in ``combined``.

    Example::

        report = ads.index_files("s3://bucket/run42/*.nc", fs=fs, concat_dim="time")
        report.failed    # {path: error} for archived files: restore them, index again
    """
    fs, _ = _split_url(_first(urls, "index_files"), fs, storage_options, archive_options)
    report = IndexReport()
    paths = _expand(fs, urls, report.failed)
    stored = find_references(fs, paths)
    described: list[tuple[str, dict[str, Any]]] = []  # what each file's references are now
    for path in paths:
        try:
            done, refs = index_file(
                fs, path, inline_threshold=inline_threshold, stored=stored.get(path)
            )
        except ArchiveError as error:
            report.failed[path] = error
            continue
        report.indexed.append(done)
        described.append((path, refs))
    if concat_dim is not None:
        try:
            if report.failed:
                raise ArchiveError(
                    f"not combined along {concat_dim!r}: {len(report.failed)} of "
                    f"{len(report.failed) + len(report.indexed)} files were not indexed.",
                    path=next(iter(report.failed)),
                    fix="index them (restore archived ones first), then run again.",
                )
            # the references just made or found unchanged: not read or checked again
            report.combined = _combine(fs, described, concat_dim)
        except ArchiveError as error:
            report.not_combined = error
    return report


def combine_references(
    urls: str | Sequence[str],
    *,
    concat_dim: str,
    fs: ArchiveFileSystem | None = None,
    storage_options: dict[str, Any] | None = None,
    **archive_options: Any,
) -> CombinedReferences:
    """Combine the stored references of the indexed files ``urls`` (URLs or globs) along
    ``concat_dim`` into one set (``catalog.combined``, kerchunk's ``MultiZarrToZarr``),
    kept beside them: ``open_mfdataset`` of exactly these files (``combine="by_coords"``)
    then opens one dataset from one GET, whatever their number. Reads only stored
    references, never a file. Raises :class:`ArchiveError` naming the file when one
    has no references, they changed, or the files cannot be combined.

    Example::

        ads.combine_references("s3://bucket/run42/*.nc", concat_dim="time", fs=fs)
        ds = ads.open_mfdataset("s3://bucket/run42/*.nc", fs=fs)    # one dataset, one GET
    """
    fs, _ = _split_url(_first(urls, "combine_references"), fs, storage_options, archive_options)
    failed: dict[str, ArchiveError] = {}
    paths = _expand(fs, urls, failed)
    if failed:
        raise next(iter(failed.values()))
    found = find_references(fs, paths)
    missing = [p for p, refs in found.items() if refs is None]
    if missing:
        raise ArchiveError(
            f"has no stored references ({len(missing)} of {len(paths)} files have none), "
            "so the files cannot be combined.",
            path=missing[0],
            fix=f"index it first (`archivefs index {fs.store_protocol}://{missing[0]}`).",
        )
    parts = [(p, refs) for p, refs in found.items() if refs is not None]
    check_unchanged(fs, [refs for _, refs in parts])
    return _combine(fs, parts, concat_dim)


def _combine(
    fs: ArchiveFileSystem, parts: list[tuple[str, dict[str, Any]]], concat_dim: str
) -> CombinedReferences:
    """Combine the files' references ``parts`` (``(path, references)``, describing the
    objects as they are now) and store the set beside them."""
    paths = [path for path, _ in parts]
    location = collection_location(fs, paths)
    if location is None:
        raise ArchiveError(
            "the files lie under different catalog roots or buckets: one combined set "
            "describes files of one root.",
            path=paths[0],
            fix="combine the files of each root apart.",
        )
    refs = combined.combine(parts, concat_dim, location)
    written = run_blocking(fs.fs, references.save_references(fs.fs, location, refs))
    chunks = sum(1 for v in refs["refs"].values() if isinstance(v, list))
    return CombinedReferences(location, sorted(paths), concat_dim, bool(written), chunks)


def _first(urls: str | Sequence[str], caller: str) -> str:
    listed = [urls] if isinstance(urls, str) else list(urls)
    if not listed:
        raise ValueError(f"{caller}: no URLs given.")
    return listed[0]


def _expand(
    fs: ArchiveFileSystem, urls: str | Sequence[str], failed: dict[str, ArchiveError]
) -> list[str]:
    """The files ``urls`` name (globs expanded, sorted; each file once); a glob that
    matches nothing goes to ``failed``."""
    out: dict[str, None] = {}
    for url in [urls] if isinstance(urls, str) else urls:
        path = fs._strip_protocol(url)
        matches = sorted(fs.glob(path)) if _is_glob(path) else [path]
        if not matches:
            failed[path] = ArchiveError(
                "the pattern matches no file.",
                path=path,
                fix="check the pattern; `archivefs ls` of its folder shows what exists.",
            )
        out.update(dict.fromkeys(matches))
    return list(out)


def index_file(
    fs: ArchiveFileSystem,
    path: str,
    *,
    inline_threshold: int = references.INLINE_THRESHOLD,
    stored: dict[str, Any] | None = None,
) -> tuple[IndexedFile, dict[str, Any]]:
    """Index one file (see :func:`index_files`): what was done, and its references as they
    are now; raises :class:`ArchiveError` if it cannot. ``stored``: its stored references,
    kept (nothing read) if they describe its object as it is now, made with
    ``inline_threshold``; made with another, the file is described anew if it reads now,
    else they are kept (still valid)."""
    path = fs._strip_protocol(path)
    location = references_location(fs, path)
    kept = None
    entry = None  # the plain object's description, if asked already
    if stored is not None:
        now = _described_now(fs, path)
        if now is not None:
            target, size, entry = now
            if references.targets_of(stored) == [target]:
                done = _indexed(path, location, stored, written=False, bytes_read=0, size=size)
                kept = done, stored
                if references.made_with(stored, inline_threshold):
                    return kept
    try:
        return _index_anew(fs, path, location, inline_threshold, entry)
    except ObjectArchivedError:
        if kept is None:
            raise
        return kept  # another inline threshold, but describing the object: kept until it reads


def _index_anew(
    fs: ArchiveFileSystem,
    path: str,
    location: str,
    inline_threshold: int,
    entry: dict[str, Any] | None = None,
) -> tuple[IndexedFile, dict[str, Any]]:
    """Read file ``path``'s metadata and store its references at ``location``;
    :class:`ObjectArchivedError` (nothing read) if it does not read now. ``entry``: its
    description (``fs.info``), if the caller has it."""
    entry = entry if entry is not None else fs.info(path)
    if entry.get("type") != "file":
        raise ArchiveError("is not a file.", path=path, fix="name the files, or a glob of them.")
    size = int(entry["size"])
    target, offset = _target_of(fs, path, entry)
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
    before = fs.read_stats.bytes_fetched
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
    refs = references.described(made, path, [target], inline_threshold=inline_threshold)
    written = run_blocking(fs.fs, references.save_references(fs.fs, location, refs))
    fetched = fs.read_stats.bytes_fetched - before
    done = _indexed(path, location, refs, written=bool(written), bytes_read=fetched, size=size)
    return done, refs


def _indexed(
    path: str, location: str, refs: dict[str, Any], *, written: bool, bytes_read: int, size: int
) -> IndexedFile:
    values = refs["refs"].values()
    chunks = sum(1 for v in values if isinstance(v, list))
    inline = sum(1 for v in values if isinstance(v, str) and v.startswith("base64:"))
    return IndexedFile(path, location, written, chunks, inline, bytes_read, size)


def _described_now(
    fs: ArchiveFileSystem, path: str
) -> tuple[references.Target, int, dict[str, Any] | None] | None:
    """The object file ``path``'s references would point into now, the file's size, and
    the description asked for it: a bundle member's from the catalog (no request, no
    description: its bundle's state is not needed), a plain object's from its
    description (``fs.info``). ``None``: not a file, or not describable."""
    member = _member_target(fs, path)
    if member is not None:
        target, _, length = member
        return target, length, None
    entry = fs.info(path)
    if entry.get("type") != "file" or entry.get("bundle") or not etag_of(entry):
        return None
    return _target_of(fs, path, entry)[0], int(entry["size"]), entry


def _member_target(fs: ArchiveFileSystem, path: str) -> tuple[references.Target, int, int] | None:
    """A bundle member's bundle as a reference target, the member's offset in it and its
    length, from the catalog alone; ``None`` when the catalog does not describe them whole
    (offset, size, ETag) or ``path`` is not a member."""
    found = fs.catalog_root_for(path)
    member = found[1].lookup(path) if found is not None else None
    info = found[1].bundles.get(member.bundle) if found is not None and member else None
    if member is None or info is None or info.etag is None:
        return None
    url = f"{fs.store_protocol}://{member.bundle}"
    return references.Target(url, info.size, info.etag), member.offset, member.length


def _target_of(
    fs: ArchiveFileSystem, path: str, entry: dict[str, Any]
) -> tuple[references.Target, int | None]:
    """The object the references point into, and the file's offset in it (a bundle
    member's), from the catalog; else the object itself."""
    if entry.get("bundle"):
        member = _member_target(fs, path)
        if member is None:
            raise ArchiveError(
                "is a bundle member whose bundle the catalog does not describe whole "
                "(offset, size, ETag).",
                path=path,
                fix="run `archivefs catalog rebuild` for its root, then index it again.",
            )
        return member[0], member[1]
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
