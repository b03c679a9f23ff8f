"""References of the netCDF4/HDF5 and netCDF3 members of a bundle, made at bundle time.

``bundle_tree`` calls :func:`reference_members` with the bundle it has just written
(a local file, the very bytes it uploaded) once the store has answered with the
bundle's ETag: each member that is a netCDF/HDF5 file is described by kerchunk's
parsers from that local file, its pointers moved to the member's place in the bundle
(member offset + chunk offset), and the object they point into recorded as the
bundle with its size and ETag (a replaced bundle is refused, never read). Nothing is
read from the source or the cold store: the only requests are the writes of the
references (``catalog.references.save_references``, one conditional create each).

One object per file, as ``archivefs index`` writes them (not one per bundle): the
readers find a file's references in one place whichever way they were made, a
member's references are one small GET when one file is opened, and at 10^4 members
the writes are 10^4 hot-class PUTs (a few cents), sent concurrently.

A netCDF/HDF5 file kept hot as a plain object (:func:`reference_object`) is described
from the bytes that were uploaded, pointing at the object itself.

A member kerchunk cannot describe (an HDF5 filter it does not support, a type zarr
has no name for) is bundled without references and named in the report; the run
goes on.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.catalog import references
from archivefs.catalog.layout import references_path

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from archivefs.catalog.bundle import Entry

HEAD_BYTES = 4096  # enough to find an HDF5 superblock behind a user block of up to 2 KiB
SAVE_CONCURRENCY = 32  # references written at once


@dataclass
class MemberReferences:
    """What :func:`reference_members` made of one bundle's members."""

    made: dict[str, dict[str, Any]] = field(default_factory=dict)  # location -> references
    unreferenced: dict[str, str] = field(default_factory=dict)  # member path -> why not


class _Window(io.RawIOBase):
    """A read-only file of ``size`` bytes at ``offset`` of the open file ``fd`` (a member
    inside its local bundle), read with ``pread``: h5py seeks freely in it."""

    def __init__(self, fd: int, offset: int, size: int) -> None:
        super().__init__()
        self.fd, self.offset, self.size, self.position = fd, offset, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer: Any) -> int:
        wanted = max(0, min(len(buffer), self.size - self.position))
        data = os.pread(self.fd, wanted, self.offset + self.position) if wanted else b""
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


def reference_members(
    local: Path,
    entries: Sequence[Entry],
    base: str,
    bundle_url: str,
    bundle_size: int,
    bundle_etag: str,
) -> MemberReferences:
    """References of each netCDF4/HDF5/netCDF3 member of the bundle written at ``local``.

    ``base`` is the catalog root the members are recorded under (``bucket/prefix``);
    ``bundle_url`` the provider URL of the uploaded bundle, ``bundle_size`` and
    ``bundle_etag`` what the store said of it. Members of other formats are skipped;
    those kerchunk cannot describe are in ``unreferenced`` with the reason.
    """
    out = MemberReferences()
    target = references.Target(bundle_url, bundle_size, bundle_etag)
    with open(local, "rb") as handle:
        fd = handle.fileno()
        for entry in entries:
            window = _Window(fd, entry.data_offset, entry.length)
            kind = references.file_kind(window.read(min(HEAD_BYTES, entry.length)))
            if kind is None:
                continue
            window.seek(0)
            path = f"{base}/{entry.name}"
            netcdf3 = {"member": [local.as_uri(), entry.data_offset, entry.length]}
            try:
                made = _describe(kind, window, entry.name, netcdf3)
            except Exception as error:  # kerchunk's, h5py's or scipy's: this member only
                out.unreferenced[path] = unreferenced_reason(error)
                continue
            moved = references.relocated(made, bundle_url, entry.data_offset, entry.length)
            location = references_path(base, entry.name)
            out.made[location] = references.described(moved, path, [target])
    return out


def unreferenced_reason(error: Exception) -> str:
    """Why a file got no references, in words (a missing parser says how to install it)."""
    if isinstance(error, ImportError):
        return (
            f"{error.name or 'kerchunk'} is not installed: pip install 'archivefs[xarray]' "
            "and bundle again"
        )
    return f"{type(error).__name__}: {error}"


def reference_object(data: bytes, path: str, url: str, etag: str) -> dict[str, Any] | None:
    """References of a netCDF4/HDF5/netCDF3 file kept as a plain object (``data``, its
    bytes as uploaded; ``path`` its key, ``url`` its provider URL, ``etag`` what the store
    said of it); ``None`` for other formats. Raises what kerchunk raises."""
    kind = references.file_kind(data[:HEAD_BYTES])
    if kind is None:
        return None
    inline = "base64:" + base64.b64encode(data).decode()
    made = _describe(kind, io.BytesIO(data), url, {"member": inline})
    return references.described(made, path, [references.Target(url, len(data), etag)])


def _describe(
    kind: str, handle: io.RawIOBase | io.BytesIO, url: str, netcdf3: dict[str, Any]
) -> dict[str, Any]:
    """kerchunk's references of one file open as ``handle``, pointing at ``url`` (offsets
    from the file's first byte). ``netcdf3``: the same bytes as a kerchunk reference named
    ``member`` (kerchunk's netCDF3 parser opens a URL itself: fsspec's reference
    filesystem over those bytes is that URL)."""

    def read(offset: int, length: int) -> bytes:
        handle.seek(offset)
        data: bytes = handle.read(length)
        return data

    if kind == "hdf5":
        fileobj = io.BufferedReader(handle) if isinstance(handle, _Window) else handle
        return references.make_references(fileobj, url)
    options = {
        "fo": {"version": 1, "refs": netcdf3},
        "remote_protocol": "file",
        "skip_instance_cache": True,
    }
    return references.make_netcdf3_references("reference://member", options, url, read)


async def save_member_references(fs: Any, made: dict[str, dict[str, Any]]) -> int:
    """Store each of ``made`` (location -> references) on ``fs`` with the many-writer
    rules of ``catalog.references.save_references``, concurrently; how many were written
    (references already describing the same bundle are left as they are)."""
    gate = asyncio.Semaphore(SAVE_CONCURRENCY)

    async def one(location: str, refs: dict[str, Any]) -> bool:
        async with gate:
            return await references.save_references(fs, location, refs)

    written = await asyncio.gather(*(one(k, v) for k, v in made.items()))
    return sum(written)
