"""Member operations at scale: one catalog of N bundled members, through the filesystem.

Members ``scale/root/pNN/dNNNN/fNNNNNNN.dat`` (100 parts of 1% each, 1,000
members per directory, 4 KiB each)
in 4 MiB DEEP_ARCHIVE bundles (1,024 members each), one catalog, measured
at 10^4, 10^5 and 10^6 members: catalog build (arrays to the saved file),
catalog open, ``ls`` of one directory, ``find`` of 1% and 100%, ``du``,
``plan`` + ``estimate`` of 1% and 100%, and the peak memory of opening the
catalog and finding everything. The scaling exponent is the slope of
log(time) against log(members) between the two largest sizes.
"""

from __future__ import annotations

import gc
import json
import math
import time
import tracemalloc
from typing import TYPE_CHECKING, Any

import numpy as np
from fsspec.asyn import sync

from benchmarks._common import Result, archive_fs

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {
    "smoke": (1_000, 10_000),
    "default": (10_000, 100_000, 1_000_000),
    "full": (10_000, 100_000, 1_000_000),
}
PER_DIR = 1000
PER_BUNDLE = 1024
MEMBER = 4096
BUCKET = "scale"


def member(root: str, i: int, n: int) -> str:
    """Member ``i`` of ``n``: part ``pNN`` holds 1% of them, directories 1,000 each."""
    return f"{root}/p{i * 100 // n:02d}/d{i // PER_DIR:04d}/f{i:07d}.dat"


def build(archive: EmulatedArchive, n: int) -> float:
    """Put a catalog of ``n`` members (and its bundle objects) into the archive; seconds."""
    import s3fs

    from archivefs.catalog import BundleInfo, Catalog
    from archivefs.catalog.layout import catalog_dir, registry_path
    from archivefs.catalog.registry import dump_registry
    from archivefs.model import StorageClass

    archive.create_bucket(BUCKET)
    root = f"{BUCKET}/root"
    n_bundles = -(-n // PER_BUNDLE)
    keys = [f"{root}/.archivefs/bundles/b{j:06d}.zip" for j in range(n_bundles)]
    archive.put_objects(
        BUCKET, {k.split("/", 1)[1]: b"x" for k in keys}, storage_class="DEEP_ARCHIVE"
    )
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    start = time.perf_counter()
    index = np.arange(n)
    paths = [member(root, i, n) for i in range(n)]
    bundles = [
        BundleInfo(k, PER_BUNDLE * (MEMBER + 80), StorageClass.DEEP_ARCHIVE, PER_BUNDLE, "00" * 32)
        for k in keys
    ]
    catalog = Catalog.from_arrays(
        paths,
        bundles,
        bundle=(index // PER_BUNDLE).astype(np.int32),
        offset=((index % PER_BUNDLE) * (MEMBER + 80) + 64).astype(np.int64),
        length=np.full(n, MEMBER, dtype=np.int64),
        crc32=(index % 2**32).astype(np.uint32),
        sha256=np.full(n, b"\x11" * 32, dtype="S32"),
        storage_class=np.zeros(n, dtype=np.uint8),
        mtime=np.full(n, 1.7e9),
    )
    catalog.save(raw, catalog_dir(root))
    seconds = time.perf_counter() - start
    raw.pipe_file(registry_path(BUCKET), dump_registry([root]))
    return seconds


def measure(archive: EmulatedArchive, n: int) -> dict[str, Any]:
    """Every operation once on a fresh filesystem (a cold catalog), in seconds."""
    root = f"{BUCKET}/root"
    one_dir = f"{root}/p00/d0000"
    part = f"{root}/p00"  # 1%
    out: dict[str, Any] = {"members": n}
    fs = archive_fs(archive)
    gc.collect()
    t = time.perf_counter()
    sync(fs.loop, fs.catalogs.root_for, root)  # registry, pointer and catalog file
    out["open_s"] = time.perf_counter() - t

    def run(name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        value = fn(*args, **kwargs)
        out[name] = time.perf_counter() - start
        return value

    listed = run("ls_dir_s", fs.ls, one_dir, detail=True)
    assert len(listed) == min(PER_DIR, n // 100)
    names = run("find_all_s", fs.find, root)
    assert len(names) == n
    del names
    detail = run("find_all_detail_s", fs.find, root, detail=True)
    assert len(detail) == n
    del detail
    small = run("find_1pct_s", fs.find, part, detail=True)
    assert len(small) == n // 100
    del small
    run("glob_1pct_s", fs.glob, f"{root}/p00*/*/*.dat")
    total = run("du_s", fs.du, root)
    assert total == n * MEMBER, total
    run("glob_all_s", fs.glob, f"{root}/*/*/*.dat")
    start = time.perf_counter()
    plan = fs.plan(part)
    fs.estimate_plan(plan)
    assert len(plan.paths) == n // 100
    out["plan_estimate_1pct_s"] = time.perf_counter() - start
    start = time.perf_counter()
    plan = fs.plan(root)
    estimate = fs.estimate_plan(plan)
    out["plan_estimate_all_s"] = time.perf_counter() - start
    assert len(plan.paths) == n
    assert len(plan) == -(-n // PER_BUNDLE)
    del plan, estimate
    return out


def peak(archive: EmulatedArchive, n: int) -> float:
    """Peak traced memory (MiB) of opening the catalog, finding all and planning all."""
    root = f"{BUCKET}/root"
    fs = archive_fs(archive)
    gc.collect()
    tracemalloc.start()
    names = fs.find(root)
    plan = fs.plan(root)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(names) == len(plan.paths) == n
    return top / 2**20


def exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Slope of log(seconds) over log(members) between the two largest sizes."""
    if len(sizes) < 2 or min(seconds[-2:]) <= 0:
        return None
    return math.log(seconds[-1] / seconds[-2]) / math.log(sizes[-1] / sizes[-2])


def run(archive: EmulatedArchive, size: str) -> Result:
    rows = []
    for n in SIZES[size]:
        archive.reset()
        built = build(archive, n)
        row = measure(archive, n)
        row["build_s"] = built
        row["peak_MiB"] = peak(archive, n)
        rows.append(row)
        print(json.dumps(row))
    sizes = [r["members"] for r in rows]
    keys = [k for k in rows[-1] if k.endswith("_s")]
    exponents = {k: exponent(sizes, [r[k] for r in rows]) for k in keys}
    big = rows[-1]
    headline = (
        f"{big['members']:,} bundled members: open {big['open_s']:.2f}s, ls of 1,000 "
        f"{big['ls_dir_s']:.3f}s, find {big['find_all_s']:.2f}s (detail "
        f"{big['find_all_detail_s']:.2f}s), plan+estimate all {big['plan_estimate_all_s']:.2f}s, "
        f"peak {big['peak_MiB']:.0f} MiB; exponent of find "
        f"{exponents['find_all_s'] or float('nan'):.2f}"
    )
    return Result(
        name="scale",
        question="Member operations at scale (one catalog, 4 MiB bundles)",
        parameters={"sizes": sizes, "per_dir": PER_DIR, "per_bundle": PER_BUNDLE},
        archivefs={"rows": rows, "exponents": exponents},
        baseline={},
        baseline_name="(absolute; targets at 10^6: find 3 s, detail 5 s, plan 5 s, open 1.5 s)",
        headline=headline,
        samples={k: [r[k] for r in rows] for k in keys},
    )
