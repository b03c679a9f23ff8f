"""Bundles: standard zip files with stored (uncompressed) members and ZIP64 records.

Any member is one ranged read at a known offset once the bundle is restored;
any zip tool (Python's ``zipfile``, ``unzip``, fsspec's ``zip::``) opens a
bundle. The writer streams to any writable binary file without seeking: it
needs each member's size up front (it is in the listing or ``stat``), writes
the CRC-32 in a data descriptor after the data, and always writes ZIP64
fields, so offsets past 4 GiB need no special case. Output is deterministic:
members sorted by normalised name, timestamps from the members' mtimes.

The reader parses the end records and central directory from the tail of a
bundle (one or two ranged reads) and refuses anything that is not a bundle
archivefs can trust: compressed or encrypted members, members outside the
file or overlapping each other, unsafe or duplicate names.
"""

from __future__ import annotations

import functools
import hashlib
import struct
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from archivefs.catalog.names import normalize_member_name
from archivefs.errors import BundleError, ChecksumMismatchError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

BUNDLE_COMMENT = b"archivefs bundle v1"
MAX_MEMBERS = 10_000_000
_CHUNK = 1 << 20
_LOCAL = struct.Struct("<IHHHHHIIIHH")  # 30 bytes
_DESCRIPTOR = struct.Struct("<IIQQ")  # signature, crc, compressed, uncompressed (ZIP64)
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # 46 bytes
_ZIP64_EOCD = struct.Struct("<IQHHIIQQQQ")  # 56 bytes
_ZIP64_LOCATOR = struct.Struct("<IIQI")  # 20 bytes
_EOCD = struct.Struct("<IHHHHIIH")  # 22 bytes
_LOCAL_EXTRA = struct.pack("<HHQQ", 1, 16, 0, 0)  # ZIP64: sizes follow in the descriptor
_FLAGS = 0x0008 | 0x0800  # data descriptor, UTF-8 names
_VERSION = 45  # ZIP64
_MADE_BY = (3 << 8) | _VERSION  # Unix
_EXTERNAL_ATTR = 0o100644 << 16


@dataclass(frozen=True, slots=True)
class Source:
    """A member to write: its name, size, mtime and how to open its bytes."""

    name: str
    size: int
    mtime: float
    open: Callable[[], BinaryIO]


@dataclass(frozen=True, slots=True)
class Entry:
    """A member as written to (or read from) a bundle."""

    name: str
    header_offset: int
    data_offset: int
    length: int
    crc32: int
    sha256: str | None
    mtime: float


@functools.lru_cache(maxsize=1 << 14)  # each member's is needed twice (header, directory)
def _dos_time(mtime: float) -> tuple[int, int]:
    t = time.gmtime(max(mtime, 315532800))  # DOS time starts in 1980
    year = min(max(t.tm_year, 1980), 2107)
    date = ((year - 1980) << 9) | (t.tm_mon << 5) | t.tm_mday
    clock = (t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec // 2)
    return clock, date


def _from_dos(clock: int, date: int) -> float:
    try:
        return float(
            time.mktime(
                (
                    ((date >> 9) & 0x7F) + 1980,
                    (date >> 5) & 0x0F,
                    date & 0x1F,
                    (clock >> 11) & 0x1F,
                    (clock >> 5) & 0x3F,
                    (clock & 0x1F) * 2,
                    0,
                    0,
                    0,
                )
            )
            - time.timezone
        )
    except (OverflowError, ValueError):
        return 0.0


class _Counter:
    """Wraps a writable stream to know the offset without seeking."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.offset = 0

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.offset += len(data)


def write_bundle(
    sources: Iterable[Source], out: BinaryIO, *, bundle: str = "bundle"
) -> list[Entry]:
    """Stream ``sources`` into ``out`` as a bundle; return each member's entry."""
    keyed = sorted(
        ((normalize_member_name(s.name, bundle=bundle), s) for s in sources),
        key=lambda pair: pair[0],
    )
    if not keyed:
        raise BundleError(
            "a bundle needs at least one member.", path=bundle, fix="leave empty groups out."
        )
    names = [name for name, _ in keyed]
    members = [source for _, source in keyed]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise BundleError(
            f"two members are both named {duplicate!r} (after Unicode normalisation).",
            path=bundle,
            fix="rename one of them.",
        )
    stream = _Counter(out)
    entries: list[Entry] = []
    for source, name in zip(members, names, strict=True):
        entries.append(_write_member(stream, source, name, bundle))
    _write_central_directory(stream, entries)
    return entries


def _write_member(stream: _Counter, source: Source, name: str, bundle: str) -> Entry:
    encoded = name.encode("utf-8")
    clock, date = _dos_time(source.mtime)
    header_offset = stream.offset
    stream.write(
        _LOCAL.pack(
            0x04034B50,
            _VERSION,
            _FLAGS,
            0,
            clock,
            date,
            0,
            0xFFFFFFFF,
            0xFFFFFFFF,
            len(encoded),
            len(_LOCAL_EXTRA),
        )
        + encoded
        + _LOCAL_EXTRA
    )
    data_offset = stream.offset
    crc, digest, written = 0, hashlib.sha256(), 0
    with source.open() as handle:
        # ask for what is expected plus one byte: a small file costs one small read, and a
        # short read is the end (a stream that reads short early fails the size check below)
        while True:
            want = min(_CHUNK, max(source.size - written, 0) + 1)
            chunk = handle.read(want)
            crc = zlib.crc32(chunk, crc)
            digest.update(chunk)
            written += len(chunk)
            stream.write(chunk)
            if len(chunk) < want:
                break
    if written != source.size:
        raise BundleError(
            f"member {name!r} had {written} bytes, {source.size} were expected "
            "(it changed while being bundled).",
            path=bundle,
            fix="bundle again once the source is stable; the partial bundle must be discarded.",
        )
    stream.write(_DESCRIPTOR.pack(0x08074B50, crc, written, written))
    return Entry(name, header_offset, data_offset, written, crc, digest.hexdigest(), source.mtime)


def _write_central_directory(stream: _Counter, entries: Sequence[Entry]) -> None:
    start = stream.offset
    for entry in entries:
        encoded = entry.name.encode("utf-8")
        extra = struct.pack("<HHQQQ", 1, 24, entry.length, entry.length, entry.header_offset)
        clock, date = _dos_time(entry.mtime)
        stream.write(
            _CENTRAL.pack(
                0x02014B50,
                _MADE_BY,
                _VERSION,
                _FLAGS,
                0,
                clock,
                date,
                entry.crc32,
                0xFFFFFFFF,
                0xFFFFFFFF,
                len(encoded),
                len(extra),
                0,
                0,
                0,
                _EXTERNAL_ATTR,
                0xFFFFFFFF,
            )
            + encoded
            + extra
        )
    size = stream.offset - start
    zip64_offset = stream.offset
    count = len(entries)
    stream.write(
        _ZIP64_EOCD.pack(0x06064B50, 44, _MADE_BY, _VERSION, 0, 0, count, count, size, start)
    )
    stream.write(_ZIP64_LOCATOR.pack(0x07064B50, 0, zip64_offset, 1))
    stream.write(
        _EOCD.pack(
            0x06054B50, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, len(BUNDLE_COMMENT)
        )
        + BUNDLE_COMMENT
    )


# -- reading ---------------------------------------------------------------------------------


def read_entries(
    fetch: Callable[[int, int], bytes], size: int, *, bundle: str = "bundle"
) -> list[Entry]:
    """Parse a bundle's central directory through ``fetch(start, end)`` (end exclusive).

    Costs one ranged read of the tail (plus one more for a large central
    directory); data offsets come from the ZIP64 layout archivefs writes and are
    checked against each member's local header when ``verify_local`` is used.
    """

    def bad(problem: str) -> BundleError:
        return BundleError(
            f"not a bundle archivefs can read: {problem}.",
            path=bundle,
            fix="re-create it with `archivefs bundle`, or check that the object is complete.",
        )

    if size < _EOCD.size:
        raise bad(f"{size} bytes is too small for a zip file")
    tail_start = max(0, size - (_EOCD.size + 0xFFFF + _ZIP64_LOCATOR.size + _ZIP64_EOCD.size))
    tail = fetch(tail_start, size)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        raise bad("no end-of-central-directory record (truncated, or not a zip)")
    (_, _, _, n16, total16, cd_size32, cd_start32, _) = _EOCD.unpack_from(tail, at)
    count, cd_size, cd_start = total16, cd_size32, cd_start32
    locator_at = at - _ZIP64_LOCATOR.size
    if locator_at >= 0 and tail[locator_at : locator_at + 4] == b"PK\x06\x07":
        _, _, zip64_offset, _ = _ZIP64_LOCATOR.unpack_from(tail, locator_at)
        if not 0 <= zip64_offset <= size - _ZIP64_EOCD.size:
            raise bad("the ZIP64 locator points outside the file")
        record = (
            tail[zip64_offset - tail_start : zip64_offset - tail_start + _ZIP64_EOCD.size]
            if zip64_offset >= tail_start
            else fetch(zip64_offset, zip64_offset + _ZIP64_EOCD.size)
        )
        fields = _ZIP64_EOCD.unpack(record)
        if fields[0] != 0x06064B50:
            raise bad("the ZIP64 end record is damaged")
        count, cd_size, cd_start = fields[7], fields[8], fields[9]
        if fields[6] != count or cd_start + cd_size != zip64_offset:
            raise bad("the ZIP64 end record disagrees with itself or with the directory's place")
    elif 0xFFFF in (n16, total16) or 0xFFFFFFFF in (cd_size32, cd_start32):
        raise bad("ZIP64 values without a ZIP64 end record")
    if count > MAX_MEMBERS:
        raise bad(f"it claims {count} members")
    if cd_start + cd_size > size or cd_start < 0:
        raise bad("the central directory lies outside the file")
    directory = (
        tail[cd_start - tail_start : cd_start - tail_start + cd_size]
        if cd_start >= tail_start
        else fetch(cd_start, cd_start + cd_size)
    )
    entries = _parse_central(directory, count, bad, bundle)
    _check_layout(entries, cd_start, bad)
    return entries


def _parse_central(
    directory: bytes, count: int, bad: Callable[[str], BundleError], bundle: str
) -> list[Entry]:
    entries: list[Entry] = []
    seen: set[str] = set()
    pos = 0
    for _ in range(count):
        if pos + _CENTRAL.size > len(directory):
            raise bad("the central directory is truncated")
        fields = _CENTRAL.unpack_from(directory, pos)
        (
            sig,
            _,
            _,
            flags,
            method,
            clock,
            date,
            crc,
            csize,
            usize,
            name_len,
            extra_len,
            comment_len,
            _,
            _,
            _,
            offset,
        ) = fields
        if sig != 0x02014B50:
            raise bad("a central directory entry is damaged")
        raw_name = directory[pos + _CENTRAL.size : pos + _CENTRAL.size + name_len]
        extra = directory[
            pos + _CENTRAL.size + name_len : pos + _CENTRAL.size + name_len + extra_len
        ]
        pos += _CENTRAL.size + name_len + extra_len + comment_len
        try:
            name = raw_name.decode("utf-8")
        except UnicodeDecodeError:
            raise bad(f"member name {raw_name!r} is not UTF-8") from None
        if flags & 0x0001:
            raise bad(f"member {name!r} is encrypted")
        if method != 0:
            raise bad(f"member {name!r} is compressed (archivefs bundles store members)")
        usize, csize, offset = _zip64_fields(extra, usize, csize, offset)
        if usize != csize:
            raise bad(f"member {name!r} has different stored and original sizes")
        normal = normalize_member_name(name, bundle=bundle)
        if normal in seen:
            raise bad(f"two members are both named {normal!r}")
        seen.add(normal)
        local_extra = len(_LOCAL_EXTRA)
        data_offset = offset + _LOCAL.size + len(raw_name) + local_extra
        entries.append(Entry(normal, offset, data_offset, usize, crc, None, _from_dos(clock, date)))
    if pos != len(directory):
        raise bad(
            f"the end record counts {count} members but the central directory holds more "
            "(a lowered member count)"
        )
    return entries


def _zip64_fields(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + length]
        if tag == 1:
            values = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
            if usize == 0xFFFFFFFF and values:
                usize = values.pop(0)
            if csize == 0xFFFFFFFF and values:
                csize = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
        pos += 4 + length
    return usize, csize, offset


def _check_layout(entries: list[Entry], cd_start: int, bad: Callable[[str], BundleError]) -> None:
    """Members tile the file: no overlap, and no gap where a member left out could hide."""
    ordered = sorted(entries, key=lambda e: e.header_offset)
    expected = 0
    for current in ordered:
        if current.header_offset != expected:
            raise bad(
                f"member {current.name!r} overlaps the member before it or follows bytes the "
                f"directory does not list (it starts at {current.header_offset}, not {expected})"
            )
        expected = current.data_offset + current.length + _DESCRIPTOR.size
    if expected != cd_start:
        raise bad(
            f"the members end at {expected} but the central directory starts at {cd_start} "
            "(the directory lists fewer members than the bundle holds)"
        )


def verify_local_header(header: bytes, entry: Entry, *, bundle: str = "bundle") -> None:
    """Check that a member's local header agrees with its central entry (name, layout)."""
    if len(header) < _LOCAL.size or header[:4] != b"PK\x03\x04":
        raise BundleError(
            f"member {entry.name!r} has no local header at its offset.",
            path=bundle,
            fix="the bundle is damaged; rebuild it from its sources.",
        )
    fields = _LOCAL.unpack_from(header)
    name_len, extra_len = fields[9], fields[10]
    if _LOCAL.size + name_len + extra_len != entry.data_offset - entry.header_offset:
        raise BundleError(
            f"member {entry.name!r}: local header layout differs from the central directory.",
            path=bundle,
            fix="the bundle is damaged; rebuild it from its sources.",
        )


def verify_bundle_bytes(data: bytes, entries: Sequence[Entry], *, bundle: str) -> list[Entry]:
    """Check every member's local header, data and descriptor against the central directory.

    ``data`` is the whole bundle (bytes or an mmap). Python's ``zipfile`` finds a
    member's data through its local header; archivefs through the directory: they
    must agree on name, layout, sizes and CRC, or the bundle is refused. Returns
    the entries with their SHA-256 filled in.
    """

    def bad(entry: Entry, problem: str) -> BundleError:
        return BundleError(
            f"member {entry.name!r}: {problem}; the bundle disagrees with itself.",
            path=bundle,
            fix="do not use this bundle; re-create it from its sources with `archivefs bundle`.",
        )

    checked = []
    for entry in entries:
        header = bytes(data[entry.header_offset : entry.header_offset + _LOCAL.size])
        verify_local_header(header, entry, bundle=bundle)
        fields = _LOCAL.unpack(header)
        flags, method, crc, csize, usize, name_len = (
            fields[2],
            fields[3],
            fields[6],
            fields[7],
            fields[8],
            fields[9],
        )
        raw_name = bytes(
            data[entry.header_offset + _LOCAL.size : entry.header_offset + _LOCAL.size + name_len]
        )
        try:
            name = normalize_member_name(raw_name.decode("utf-8"), bundle=bundle)
        except UnicodeDecodeError:
            raise bad(entry, "its local header's name is not UTF-8") from None
        if name != entry.name:
            raise bad(entry, f"its local header names {name!r}")
        if method != 0 or flags & 0x0001:
            raise bad(entry, "its local header says compressed or encrypted")
        end = entry.data_offset + entry.length
        member = data[entry.data_offset : end]
        actual = zlib.crc32(member)
        if actual != entry.crc32:
            raise bad(entry, "its data does not match the directory's CRC-32")
        if flags & 0x0008:
            descriptor = bytes(data[end : end + _DESCRIPTOR.size])
            if len(descriptor) < _DESCRIPTOR.size:
                raise bad(entry, "its data descriptor is missing")
            sig, d_crc, d_csize, d_usize = _DESCRIPTOR.unpack(descriptor)
            if (
                sig != 0x08074B50
                or (d_crc, d_csize, d_usize) != (entry.crc32,) + (entry.length,) * 2
            ):
                raise bad(entry, "its data descriptor gives other sizes or CRC")
        elif crc != entry.crc32 or not (
            csize == usize == entry.length or csize == usize == 0xFFFFFFFF
        ):
            raise bad(entry, "its local header gives other sizes or CRC")
        checked.append(
            Entry(
                entry.name,
                entry.header_offset,
                entry.data_offset,
                entry.length,
                entry.crc32,
                hashlib.sha256(member).hexdigest(),
                entry.mtime,
            )
        )
    return checked


def check_member(
    data: bytes, crc32: int, *, name: str, bundle: str, sha256: str | None = None
) -> bytes:
    """Return ``data`` if it matches its recorded CRC-32 (and SHA-256 if given)."""
    if zlib.crc32(data) != crc32 or (
        sha256 is not None and hashlib.sha256(data).hexdigest() != sha256
    ):
        raise ChecksumMismatchError(
            f"member {name!r} does not match its recorded checksum "
            f"({len(data)} bytes read); the bundle or the catalog is damaged.",
            path=bundle,
            fix="restore or re-fetch the bundle; if it persists, rebuild the catalog with "
            "`archivefs catalog rebuild` and compare with the sources.",
        )
    return data
