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

A shard is a compressed ``.npz`` of the member columns and of the bundles its
rows refer to (codes local to the shard), named by a fingerprint of its
uncompressed content (``shard-<32 hex>.npz``), so an unchanged shard is
recognised without compressing it again.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import re
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

from archivefs.errors import CatalogError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

SHARD_MEMBERS = 2048  # the target rows per shard (shards hold target/4 .. 2*target rows)
_TOP = "\U0010ffff"  # sorts after every character
SHARD_FILE = re.compile(r"shard-[0-9a-f]{32}\.npz")  # the only names a shard entry may give
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


def shard_name(arrays: Mapping[str, np.ndarray[Any, Any]]) -> str:
    return f"shard-{fingerprint(arrays)[:32]}.npz"


def encode_shard(arrays: Mapping[str, np.ndarray[Any, Any]]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, **arrays)
    return buffer.getvalue()


def decode_shard(data: bytes, source: str) -> dict[str, np.ndarray[Any, Any]]:
    """A shard's arrays (all read now: the file is small); a damaged file is a CatalogError."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            return {name: arrays[name] for name in arrays.files}
    except (ValueError, KeyError, OSError, zlib.error, EOFError) as error:
        raise CatalogError(
            f"the catalog shard cannot be read ({error}).", path=source, fix=_REBUILD
        ) from error


def check_entries(entries: object, path: str) -> list[dict[str, Any]]:
    """A format-2 pointer's shard list, checked: names in the catalog directory, sorted
    first paths, counts and checksums of the right types."""
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
        first, members, sha = entry.get("first"), entry.get("members"), entry.get("sha256")
        if not (isinstance(first, str) and isinstance(members, int) and isinstance(sha, str)):
            raise CatalogError("the catalog pointer's shard list is malformed.", path=path,
                               fix=_REBUILD)  # fmt: skip
        if previous is not None and first <= previous:
            raise CatalogError("the catalog pointer's shards are out of order.", path=path,
                               fix=_REBUILD)  # fmt: skip
        previous = first
    return entries


def covering(firsts: Sequence[str], start: str, end: str) -> range:
    """The shards (by index) whose rows may lie in ``[start, end]``; shard ``i`` holds the
    paths from ``firsts[i]`` up to (not including) ``firsts[i + 1]``."""
    low = max(0, bisect.bisect_right(firsts, start) - 1)
    high = max(low, bisect.bisect_right(firsts, end) - 1)
    return range(low, min(high + 1, len(firsts)))
