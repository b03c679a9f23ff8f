"""Reading every member of several bundles: coalesced ranged reads vs the alternatives.

archivefs's ``fs.cat`` and ``fs.get`` of the members (adjacent members merged
into one ranged GET per 8 MiB, the GETs concurrent) against what a user with
the bundle index would write: s3fs ``cat`` of the bundles whole, members cut
out by offset; and s3fs ``cat_ranges`` with one ranged GET per member (the
one-GET-per-member reading issue #19 measured at 79 s for 3,000 members).
Bytes and GETs are counted at the server; the bundles are in STANDARD (this
measures reading, not restoring).
"""

from __future__ import annotations

import math
import random
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import (
    SAMPLES,
    Result,
    archive_fs,
    bundle_files,
    medians,
    ratio,
    sample,
    spread,
)

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": (2, 30), "default": (10, 300), "full": (10, 3000)}
"""(bundles, members per bundle); members are 1-32 KiB each."""
BUCKET = "members"
ROOT = f"{BUCKET}/packed"


def _seed(archive: EmulatedArchive, bundles: int, per_bundle: int) -> dict[str, bytes]:
    rng = random.Random(0)
    files = {
        f"d{b:02d}/f{i:05d}.dat": rng.randbytes(rng.randint(1024, 32 * 1024))
        for b in range(bundles)
        for i in range(per_bundle)
    }
    archive.create_bucket(BUCKET)
    bundle_files(archive, files, ROOT)
    return {f"{ROOT}/{name}": data for name, data in files.items()}


def run(archive: EmulatedArchive, size: str) -> Result:
    import s3fs

    from archivefs.catalog import Catalog
    from archivefs.catalog.layout import catalog_dir
    from archivefs.member_reads import BLOCK

    bundles, per_bundle = SIZES[size]
    files = _seed(archive, bundles, per_bundle)
    paths = sorted(files)
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    catalog = Catalog.load(raw, catalog_dir(ROOT))
    per_key: dict[str, list[tuple[str, int, int]]] = {}
    for path in paths:
        member = catalog.lookup(path)
        assert member is not None
        per_key.setdefault(member.bundle, []).append((path, member.offset, member.length))
    ours = archive_fs(archive)
    ours.ls(ROOT)  # the one-off catalog load, outside the measurement
    needed = sum(map(len, files.values()))

    def counted(read: Any) -> dict[str, float]:
        archive.requests.clear()
        start = time.perf_counter()
        got = read()
        seconds = time.perf_counter() - start
        if got != files:
            raise AssertionError("a variant returned bytes other than the members'")
        return {
            "seconds": seconds,
            "requests": archive.requests.count("GET"),
            "bytes": archive.requests.bytes_sent("GET"),
        }

    def archivefs_cat(i: int) -> dict[str, float]:
        return counted(lambda: ours.cat(paths))

    def archivefs_get(i: int) -> dict[str, float]:
        with tempfile.TemporaryDirectory() as out:

            def read() -> dict[str, bytes]:
                ours.get(f"{ROOT}/", f"{out}/", recursive=True)
                return {p: Path(out, p[len(ROOT) + 1 :]).read_bytes() for p in paths}

            return counted(read)

    def bundles_whole(i: int) -> dict[str, float]:
        def read() -> dict[str, bytes]:
            blobs = raw.cat(list(per_key))
            return {
                path: blobs[key][offset : offset + length]
                for key, entries in per_key.items()
                for path, offset, length in entries
            }

        return counted(read)

    def ranged_per_member(i: int) -> dict[str, float]:
        def read() -> dict[str, bytes]:
            spans = [(key, o, n) for key, entries in per_key.items() for _, o, n in entries]
            blobs = raw.cat_ranges(
                [k for k, _, _ in spans], [o for _, o, _ in spans], [o + n for _, o, n in spans]
            )
            names = [p for entries in per_key.values() for p, _, _ in entries]
            return dict(zip(names, blobs, strict=True))

        return counted(read)

    variants = {
        "archivefs_cat": archivefs_cat,
        "archivefs_get": archivefs_get,
        "bundles_whole": bundles_whole,
        "ranged_per_member": ranged_per_member,
    }
    runs = sample(variants, SAMPLES[size], warmup=size != "smoke")
    med = {name: medians(runs, name) for name in variants}
    member_bytes = {key: sum(n for _, _, n in entries) for key, entries in per_key.items()}
    bound = sum(math.ceil(b / BLOCK) for b in member_bytes.values())
    cat, whole = med["archivefs_cat"], med["bundles_whole"]
    time_ratio = ratio(runs, "archivefs_cat", "bundles_whole", "seconds")
    met = max(cat["requests"], med["archivefs_get"]["requests"]) <= bound
    headline = (
        f"{len(paths):,} members of {bundles} bundles ({needed / 2**20:.1f} MiB): archivefs "
        f"cat {spread(runs, 'archivefs_cat', 'seconds')} in {cat['requests']:.0f} GETs, get "
        f"{spread(runs, 'archivefs_get', 'seconds')} in "
        f"{med['archivefs_get']['requests']:.0f}; the bundles whole "
        f"{spread(runs, 'bundles_whole', 'seconds')} in {whole['requests']:.0f} GETs; one ranged "
        f"GET per member {spread(runs, 'ranged_per_member', 'seconds')} in "
        f"{med['ranged_per_member']['requests']:.0f}; cat takes {time_ratio:.2f}x the bundles' "
        f"time; the target, <= 1 GET per {BLOCK // 2**20} MiB of adjacent members ({bound} "
        f"here), is {'met' if met else 'missed'} by cat and get"
    )
    return Result(
        name="member_reads",
        question="Reading every member of several bundles",
        parameters={
            "bundles": bundles,
            "members_per_bundle": per_bundle,
            "member_bytes": needed,
            "block_bytes": BLOCK,
            "request_bound": bound,
        },
        archivefs={
            "cat": cat,
            "get": med["archivefs_get"],
            "time_ratio": time_ratio,
            "meets_target": met,
        },
        baseline={"bundles_whole": whole, "ranged_per_member": med["ranged_per_member"]},
        baseline_name=(
            "s3fs cat of the bundles whole, members cut by offset; s3fs cat_ranges, "
            "one ranged GET per member"
        ),
        headline=headline,
        runs=runs,
    )
