"""A catalog's shards: where the sorted member rows are cut, and one shard's bytes.

A sharded catalog (pointer format 2, see docs/bundles.md) keeps its members
in files of a few thousand rows each, every file one contiguous range of the
sorted paths. The cuts are *content-defined*: a row starts a new shard when
the CRC-32 of its path hits a fixed residue (after at least ``target // 4``
rows, at most ``2 * target``), moved to the start of that row's directory
when that is still far enough from the previous cut, else to its end when
that is near enough (a directory of fewer than ``1.75 * target`` rows is
never split). So cuts
depend only on the paths near them: adding members to one part of the tree
changes the shards there and leaves every other shard byte for byte as it
was, and the save that follows writes only the changed shards.

A shard holds the member columns and the bundles its rows refer to (codes
local to the shard), compressed (see :func:`encode_shard`). Its pointer entry
records a fingerprint of its uncompressed content, so an unchanged shard is
recognised without compressing it again; its file (``shard-<32 hex>.bin``) gets
a new random name each time one is written, so a file that a pointer stopped
naming is never written again by a later save (and can be removed safely).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import zlib
from typing import TYPE_CHECKING, Any

from archivefs.errors import CatalogError
from archivefs.lazy import lazy_module

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
else:  # numpy on first use: reading a plain object never needs it
    np = lazy_module("numpy", globals(), "np")

SHARD_MEMBERS = 4096
"""The target rows per shard of a new catalog (shards hold target/4 .. 2*target rows).

Each shard is one GET when a whole catalog is opened, and each GET costs the
client CPU: larger shards open a whole catalog in fewer GETs, while listing one
directory of 1,000 members still reads the pointer and one shard
(``benchmarks/`` measures both).
"""
LEGACY_SHARD_MEMBERS = 2048
"""The target of catalogs whose pointer records none (written before it did):
their saves keep cutting at it, so an append still rewrites only what it changes."""
_TOP = "\U0010ffff"  # sorts after every character
MAGIC = b"AFSHARD1"  # the first bytes of every shard file (format 1 of shards)
_RAW = frozenset({"sha"})  # arrays stored as they are (SHA-256 digests do not compress)
MAX_SHARD_BYTES = 64 << 20
"""The most bytes a shard may take, as stored and once inflated (a default shard of at
most 8,192 rows is well under 2 MiB; 64 MiB leaves room for long paths and for catalogs
saved with a larger ``shard_members``). A larger one is refused, never read whole."""
SHARD_FILE = re.compile(r"shard-[0-9a-f]{32}\.bin")  # the only names a shard entry may give
_REBUILD = "rebuild it from the bundles: `archivefs catalog rebuild`."


def path_hashes(paths: Sequence[str]) -> np.ndarray[Any, np.dtype[np.uint32]]:
    """CRC-32 of each path (UTF-8): what the content-defined cuts look at."""
    return np.fromiter(
        (zlib.crc32(p.encode("utf-8")) for p in paths), dtype=np.uint32, count=len(paths)
    )


def cut_points(
    paths: Sequence[str], hashes: np.ndarray[Any, Any], target: int = SHARD_MEMBERS
) -> list[int]:
    """Row boundaries ``[0, c1, ..., n]`` of the shards of sorted ``paths``."""
    n = len(paths)
    low, high = max(1, target // 4), max(2, 2 * target)
    period = max(1, target - low)
    triggers = np.flatnonzero(hashes % np.uint32(period) == 0)
    cuts = [0]
    last = 0
    while n - last > low:
        i = int(np.searchsorted(triggers, last + low))
        cut = int(triggers[i]) if i < len(triggers) else n
        cut = min(cut, last + high)
        if cut >= n:
            break
        # keep the cut row's directory in one shard: cut before it, or else after it
        directory = paths[cut].rpartition("/")[0] + "/"
        start = bisect.bisect_left(paths, directory, last, cut)
        limit = min(n, last + high)
        end = bisect.bisect_left(paths, directory + _TOP, cut, limit)
        if start >= last + low:
            cut = start
        elif end < limit or limit == n:
            cut = end  # the directory ends within this shard's largest size
        if cut >= n:
            break
        cuts.append(cut)
        last = cut
    cuts.append(n)
    return cuts if n else [0]


def _blob(values: Sequence[str]) -> np.ndarray[Any, np.dtype[np.uint8]]:
    return np.frombuffer("\n".join(values).encode("utf-8"), dtype=np.uint8)


def unblob(array: np.ndarray[Any, Any], count: int) -> list[str]:
    """The ``count`` strings :func:`shard_arrays` joined (ValueError if there are not)."""
    values = array.tobytes().decode("utf-8").split("\n") if count else []
    if len(values) != count:
        raise ValueError(f"{len(values)} names for {count} rows")
    return values


def shard_arrays(
    paths: Sequence[str],
    columns: Mapping[str, np.ndarray[Any, Any]],
    bundles: Sequence[tuple[str, int, str, int, str, str]],
) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of one shard: member columns (``bundle`` codes index ``bundles``) and
    the bundle table (key, size, class value, members, sha256, etag or "")."""
    out = {"paths": _blob(paths)}
    out.update(columns)
    keys, sizes, classes, members, digests, etags = (
        zip(*bundles, strict=True) if bundles else [()] * 6
    )
    out["bundle_keys"] = _blob(keys)
    out["bundle_size"] = np.asarray(sizes, dtype=np.int64)
    out["bundle_class"] = _blob(classes)
    out["bundle_members"] = np.asarray(members, dtype=np.int64)
    out["bundle_sha"] = _blob(digests)
    out["bundle_etag"] = _blob(etags)
    return out


def fingerprint(arrays: Mapping[str, np.ndarray[Any, Any]]) -> str:
    """SHA-256 of a shard's uncompressed content (names, dtypes and bytes of its arrays)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}\n".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def encode_shard(arrays: Mapping[str, np.ndarray[Any, Any]]) -> bytes:
    """A shard's bytes: ``MAGIC``, a 4-byte little-endian header length, a JSON header
    naming each array (name, dtype, bytes), then one zlib stream of every array but
    ``sha`` (paths, offsets... compress well) and the raw ``sha`` bytes (they do not).

    Not ``.npz``: parsing one ``.npy`` header per array cost more CPU than everything
    else in loading a 10^6-member catalog (docs/bundles.md).
    """
    names = sorted(arrays)
    packed = [n for n in names if n not in _RAW]
    header = {
        "arrays": [[n, arrays[n].dtype.str, int(arrays[n].nbytes)] for n in packed],
        "raw": [[n, arrays[n].dtype.str, int(arrays[n].nbytes)] for n in names if n in _RAW],
    }
    head = json.dumps(header, separators=(",", ":")).encode()
    body = zlib.compress(b"".join(np.ascontiguousarray(arrays[n]).tobytes() for n in packed), 6)
    raw = b"".join(np.ascontiguousarray(arrays[n]).tobytes() for n in names if n in _RAW)
    return b"".join((MAGIC, len(head).to_bytes(4, "little"), head, body, raw))


def decode_shard(data: bytes, source: str) -> dict[str, np.ndarray[Any, Any]]:
    """A shard's arrays (read-only views); a damaged file, or one larger than
    :data:`MAX_SHARD_BYTES` stored or inflated, is a CatalogError (inflating stops at
    the bound: a small file that would inflate to gigabytes costs at most the bound)."""
    if len(data) > MAX_SHARD_BYTES:
        raise CatalogError(
            f"the catalog shard is larger than {MAX_SHARD_BYTES >> 20} MiB, the most a shard "
            "may take; it was not read.",
            path=source,
            fix=_REBUILD,
        )
    try:
        if data[: len(MAGIC)] != MAGIC:
            raise ValueError("not a catalog shard")
        at = len(MAGIC) + 4
        size = int.from_bytes(data[len(MAGIC) : at], "little")
        header = json.loads(data[at : at + size])
        raw_bytes = sum(int(n) for _, _, n in header["raw"])
        end = len(data) - raw_bytes
        packed = _inflate(data[at + size : end], sum(int(n) for _, _, n in header["arrays"]))
        out: dict[str, np.ndarray[Any, Any]] = {}
        for sections, buffer in ((header["arrays"], packed), (header["raw"], data[end:])):
            offset = 0
            for name, dtype, nbytes in sections:
                kind = np.dtype(dtype)
                if kind.hasobject or int(nbytes) % max(1, kind.itemsize):
                    raise ValueError(f"array {name!r} has a bad type or size")
                count = int(nbytes) // max(1, kind.itemsize)
                out[str(name)] = np.frombuffer(buffer, dtype=kind, count=count, offset=offset)
                offset += int(nbytes)
            if offset != len(buffer):
                raise ValueError("the arrays do not fill the shard")
        return out
    except (ValueError, KeyError, TypeError, zlib.error) as error:
        raise CatalogError(
            f"the catalog shard cannot be read ({error}).", path=source, fix=_REBUILD
        ) from error


def _inflate(body: bytes, declared: int) -> bytes:
    """``body`` inflated: exactly the ``declared`` bytes of the shard's header, at most
    :data:`MAX_SHARD_BYTES` (ValueError past either)."""
    if not 0 <= declared <= MAX_SHARD_BYTES:
        raise ValueError(
            f"its header declares {declared} bytes of arrays, more than the "
            f"{MAX_SHARD_BYTES >> 20} MiB a shard may take"
        )
    inflater = zlib.decompressobj()
    packed = inflater.decompress(body, declared + 1)  # max_length 0 would mean no bound
    if len(packed) > declared or inflater.unconsumed_tail or not inflater.eof:
        raise ValueError(f"it inflates past the {declared} bytes its header declares")
    return packed


def check_entries(entries: object, path: str) -> list[dict[str, Any]]:
    """A format-2 pointer's shard list, checked: names in the catalog directory, sorted
    disjoint path ranges (first, last), counts and checksums of the right types."""
    if not isinstance(entries, list):
        raise CatalogError("the catalog pointer has no shard list.", path=path, fix=_REBUILD)
    previous: str | None = None
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise CatalogError("the catalog pointer's shard list is malformed.", path=path,
                               fix=_REBUILD)  # fmt: skip
        if not SHARD_FILE.fullmatch(entry["file"]):
            # every path derived from the pointer stays in the catalog directory: a name such
            # as '../../../X' would otherwise be read, and deleted when the catalog is next saved
            raise CatalogError(
                f"the catalog pointer names {str(entry['file'])[:80]!r}, "
                "not a catalog file in its own directory.",
                path=path,
                fix="rebuild the catalog with `archivefs catalog rebuild` (nothing outside the "
                "catalog directory is read or deleted).",
            )
        first, last = entry.get("first"), entry.get("last")
        members, sha = entry.get("members"), entry.get("sha256")
        if not (
            isinstance(first, str)
            and isinstance(last, str)
            and isinstance(members, int)
            and isinstance(sha, str)
        ):
            raise CatalogError("the catalog pointer's shard list is malformed.", path=path,
                               fix=_REBUILD)  # fmt: skip
        if last < first or (previous is not None and first <= previous):
            raise CatalogError("the catalog pointer's shards are out of order.", path=path,
                               fix=_REBUILD)  # fmt: skip
        previous = last
    return entries


def covering(firsts: Sequence[str], lasts: Sequence[str], path: str) -> list[int]:
    """The shards (by index, ascending) that hold ``path`` itself or anything below it
    (``path/...``); shard ``i`` holds the paths from ``firsts[i]`` to ``lasts[i]``."""
    found = []
    i = bisect.bisect_right(firsts, path) - 1  # the one shard that may hold ``path``
    if i >= 0 and lasts[i] >= path:
        found.append(i)
    low, high = path + "/", path + "/" + _TOP
    j = max(0, bisect.bisect_right(firsts, low) - 1)
    if j < len(lasts) and lasts[j] < low:
        j += 1
    while j < len(firsts) and firsts[j] <= high:
        if j not in found:
            found.append(j)
        j += 1
    return found
