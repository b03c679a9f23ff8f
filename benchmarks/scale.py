"""Member operations at scale: one catalog of N bundled members, through the filesystem.

Members ``scale/root/pNN/dNNNN/fNNNNNNN.dat`` (100 parts of 1% each, 1,000
members per directory, 4 KiB each)
in 4 MiB DEEP_ARCHIVE bundles (1,024 members each), one catalog, measured
at 10^4, 10^5 and 10^6 members: catalog build (arrays to the saved file),
catalog open, ``ls`` of one directory, ``find`` of 1% and 100%, ``du``,
``plan`` + ``estimate`` of 1% and 100%, and the peak memory of opening the
catalog and finding everything; and ``bundle_tree`` of 10^4 and 10^5 tiny
files (100 directories). The scaling exponent is the slope of log(time)
against log(members) between the two largest sizes. Times are wall-clock
seconds on whatever else the machine is doing (``*_cpu_s``: CPU seconds of
this process, the emulated server's threads included); each operation starts
after an untimed ``gc.collect()``, so none pays for the garbage of another.
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from fsspec.asyn import sync

from benchmarks._common import Result, archive_fs

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {
    "smoke": (1_000, 10_000),
    "default": (10_000, 100_000, 1_000_000),
    "full": (10_000, 100_000, 1_000_000, 10_000_000),  # issue #18: 10^7 (about 4 GiB at peak)
}
PER_DIR = 1000
PER_BUNDLE = 1024
MEMBER = 4096
BUCKET = "scale"
SAMPLES = 3  # per operation and size; the median is reported


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
        # random digests: a real catalog's bytes (a constant would compress to nothing)
        sha256=np.frombuffer(np.random.default_rng(0).bytes(32 * n), dtype="S32"),
        storage_class=np.zeros(n, dtype=np.uint8),
        mtime=np.full(n, 1.7e9),
    )
    catalog.save(raw, catalog_dir(root))
    seconds = time.perf_counter() - start
    raw.pipe_file(registry_path(BUCKET), dump_registry([root]))
    return seconds


def measure(archive: EmulatedArchive, n: int) -> dict[str, Any]:
    """Every operation :data:`SAMPLES` times (the median, in seconds), in turn; the
    catalog is opened each time on a new filesystem, then kept."""
    root = f"{BUCKET}/root"
    one_dir = f"{root}/p00/d0000"
    part = f"{root}/p00"  # 1%
    out: dict[str, Any] = {"members": n}
    opens = []
    fs = None
    for _ in range(SAMPLES):  # each on a new filesystem: a cold catalog
        fs = None  # the one before (and its catalog) is dropped first
        gc.collect()
        fs = archive_fs(archive)
        fs.fs.info(f"{BUCKET}/root/.archivefs/catalog/CURRENT")  # the HTTP session, not timed
        gc.collect()
        t = time.perf_counter()
        sync(fs.loop, fs.catalogs.root_for, root)  # registry, pointer and catalog file
        opens.append(time.perf_counter() - t)
    out["open_s"] = statistics.median(opens)
    out["open_s_samples"] = opens

    def run(name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        # the median of SAMPLES (one wall-clock sample of an operation under a second
        # swung 2-3x between runs at 10^7). The garbage of the sample before is collected
        # first, untimed, so that no collection falls due inside the next one: a glob of
        # 1% at 10^7 took 0.83 s right after find(detail=True) had dropped 10^7 dicts,
        # 0.08 s after a collection
        walls, cpus = [], []
        value = None
        for _ in range(SAMPLES):
            value = None  # the sample before's answer is dropped before the next is made
            gc.collect()
            start, cpu = time.perf_counter(), time.process_time()
            value = fn(*args, **kwargs)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        out[name] = statistics.median(walls)
        out[name.replace("_s", "_cpu_s")] = statistics.median(cpus)
        out[f"{name}_samples"] = walls  # in order: the first is the coldest
        return value

    listed = run("ls_dir_s", fs.ls, one_dir, detail=True)
    assert len(listed) == min(PER_DIR, n // 100)
    names = run("find_all_s", fs.find, root)
    assert len(names) == n
    del names
    detail = run("find_all_detail_s", fs.find, root, detail=True)
    assert len(detail) == n
    del detail
    # what the members' states cost: one bulk probe of the bundles (counted, not timed)
    archive.requests.clear()
    fs.find(root, detail=True)
    out["find_all_detail_requests"] = archive.requests.counts()
    out["bundles"] = -(-n // PER_BUNDLE)
    small = run("find_1pct_s", fs.find, part, detail=True)
    assert len(small) == n // 100
    del small
    run("glob_1pct_s", fs.glob, f"{root}/p00*/*/*.dat")
    total = run("du_s", fs.du, root)
    assert total == n * MEMBER, total
    run("glob_all_s", fs.glob, f"{root}/*/*/*.dat")
    plan = run("plan_estimate_1pct_s", lambda: fs.estimate_plan(fs.plan(part)))
    plan = run("plan_estimate_all_s", lambda: (p := fs.plan(root), fs.estimate_plan(p))[0])
    assert len(plan.paths) == n
    assert len(plan) == -(-n // PER_BUNDLE)
    del plan
    # floors: what any fsspec filesystem pays on this machine to return n names (a copy of
    # a list of them: find and glob names) and a dict keyed by them (find(detail=True))
    catalog = sync(fs.loop, fs.catalogs.root_for, root)[1]
    gc.collect()
    run("floor_names_s", list, catalog.paths)
    run("floor_dict_s", dict.fromkeys, catalog.paths)
    return out


def _traced_mib(fn: Any) -> tuple[Any, float]:
    """``fn()`` and the peak memory (MiB) tracemalloc saw while it ran."""
    gc.collect()
    tracemalloc.start()
    try:
        value = fn()
        _, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, top / 2**20


def peak(archive: EmulatedArchive, n: int) -> float:
    """Peak traced memory (MiB) of opening the catalog, finding all and planning all."""
    root = f"{BUCKET}/root"
    fs = archive_fs(archive)
    (names, plan), mib = _traced_mib(lambda: (fs.find(root), fs.plan(root)))
    assert len(names) == len(plan.paths) == n
    return mib


def detail_peak(archive: EmulatedArchive, n: int) -> float:
    """Peak traced memory (MiB) of ``find(detail=True)`` over a loaded catalog: one fsspec
    info dict per member, the API's shape, on top of the catalog itself."""
    root = f"{BUCKET}/root"
    fs = archive_fs(archive)
    fs.find(root)  # the catalog, loaded outside the measurement
    detail, mib = _traced_mib(lambda: fs.find(root, detail=True))
    assert len(detail) == n
    del detail
    gc.collect()
    return mib


APPEND_BUNDLES = 1000
APPEND_PER_BUNDLE = 10


def catalog_format(archive: EmulatedArchive, n: int) -> dict[str, Any]:
    """The sharded catalog's bytes: per member, read by ``ls`` of one directory, CPU to load
    it all once transferred, and written by appending 1,000 bundles (counted by the server)."""
    import s3fs

    from archivefs.catalog import BundleInfo, Catalog
    from archivefs.catalog.index import POINTER, parse_pointer
    from archivefs.catalog.layout import catalog_dir
    from archivefs.model import StorageClass

    root = f"{BUCKET}/root"
    directory = catalog_dir(root)
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    files = {k.rsplit("/", 1)[1]: int(v) for k, v in raw.du(directory, total=False).items()}
    total = sum(files.values())
    out: dict[str, Any] = {
        "catalog_bytes": total,
        "catalog_bytes_per_member": total / n,
        "catalog_shards": len(files) - 1,
        "pointer_bytes": files[POINTER],
    }
    fs = archive_fs(archive)
    archive.requests.clear()
    cpu = time.process_time()
    listed = fs.ls(f"{root}/p00/d0000", detail=False)
    out["ls_dir_cold_cpu_s"] = time.process_time() - cpu
    assert len(listed) == min(PER_DIR, n // 100)
    out["ls_dir_GETs"] = archive.requests.count("GET")
    out["ls_dir_bytes_read"] = archive.requests.bytes_sent("GET")
    out["ls_dir_read_fraction"] = out["ls_dir_bytes_read"] / total
    # a directory of fewer than 1.75 x the shard target lies in one shard: listing any of
    # them reads the pointer and at most the largest shard
    largest = max((v for k, v in files.items() if k != POINTER), default=0)
    out["ls_any_dir_max_fraction"] = (files[POINTER] + largest) / total

    raw_pointer = raw.cat_file(f"{directory}/{POINTER}")  # the transfer, not timed
    pointer = parse_pointer(raw_pointer, POINTER)
    shards = raw.cat([f"{directory}/{e['file']}" for e in pointer["shards"]])
    datas = [shards[f"{directory}/{e['file']}"] for e in pointer["shards"]]
    gc.collect()
    cpu = time.process_time()
    pointer = parse_pointer(raw_pointer, POINTER)
    parts = [Catalog.from_shard(pointer, i, d, directory) for i, d in enumerate(datas)]
    whole = Catalog.join(parts, pointer, directory)
    out["load_after_transfer_cpu_s"] = time.process_time() - cpu
    assert len(whole) == n
    del parts, datas, shards

    # 1,000 bundles of 10 members in 100 new directories in the middle of the tree
    m = APPEND_BUNDLES * APPEND_PER_BUNDLE
    new = [f"{root}/p50/new/d{i // 100:03d}/f{i:07d}.dat" for i in range(m)]
    bundles = [
        BundleInfo(
            f"{root}/.archivefs/bundles/n{j:06d}.zip",
            APPEND_PER_BUNDLE * (MEMBER + 80),
            StorageClass.DEEP_ARCHIVE,
            APPEND_PER_BUNDLE,
            "00" * 32,
        )
        for j in range(APPEND_BUNDLES)
    ]
    index = np.arange(m)
    added = Catalog.from_arrays(
        new,
        bundles,
        bundle=(index // APPEND_PER_BUNDLE).astype(np.int32),
        offset=((index % APPEND_PER_BUNDLE) * (MEMBER + 80) + 64).astype(np.int64),
        length=np.full(m, MEMBER, dtype=np.int64),
        crc32=index.astype(np.uint32),
        sha256=np.frombuffer(np.random.default_rng(1).bytes(32 * m), dtype="S32"),
        storage_class=np.zeros(m, dtype=np.uint8),
        mtime=np.full(m, 1.7e9),
    )
    merged = whole.merge(added)
    del whole
    archive.requests.clear()
    cpu = time.process_time()
    merged.save(raw, directory)
    out["append_save_cpu_s"] = time.process_time() - cpu
    out["append_members"] = m
    out["append_PUTs"] = archive.requests.count("PUT")
    out["append_bytes_written"] = archive.requests.bytes_received("PUT")
    after = sum(int(v) for v in raw.du(directory, total=False).values())
    out["append_written_fraction"] = out["append_bytes_written"] / after
    # what the new members alone take at the catalog's bytes per member
    out["append_written_per_new_member"] = out["append_bytes_written"] / m
    return out


def bundling(archive: EmulatedArchive, n: int) -> float:
    """Seconds for ``bundle_tree`` of ``n`` tiny files in 100 directories, into S3."""
    import fsspec
    import s3fs

    from archivefs.catalog.writer import bundle_tree

    archive.create_bucket("bundling")
    s3 = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            folder = Path(tmp) / f"dir{i * 100 // n:03d}"
            folder.mkdir(exist_ok=True)
            (folder / f"f{i:07d}.dat").write_bytes(b"x" * (i % 100 + 1))
        start = time.perf_counter()
        report = bundle_tree(fsspec.filesystem("file"), tmp, s3, "bundling/archive")
        seconds = time.perf_counter() - start
    assert report.members == n
    return seconds


def exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Slope of log(seconds) over log(members) between the two largest sizes."""
    if len(sizes) < 2 or min(seconds[-2:]) <= 0:
        return None
    return math.log(seconds[-1] / seconds[-2]) / math.log(sizes[-1] / sizes[-2])


WARM_BYTES_PER_MEMBER = 300
"""Memory touched before measuring a size: about its peak (2.9 GiB at 10^7)."""


def warm_memory(gib: int) -> dict[str, float]:
    """Touch ``gib`` GiB twice; seconds per GiB the first time and the second.

    A virtual machine may back its memory lazily: here the first write to each
    GiB of the process's life cost ~10x the second. Without this, the first
    operation that grows the process (``find(detail=True)`` at 10^7) pays for
    the machine, not for archivefs, and later ones do not.
    """
    if gib <= 0:
        return {}
    out = {}
    for name in ("first_touch_s_per_GiB", "second_touch_s_per_GiB"):
        start = time.perf_counter()
        block = np.ones(gib * 2**27, dtype=np.int64)  # gib GiB of 8-byte ones
        out[name] = (time.perf_counter() - start) / gib
        del block
    return out


def run(archive: EmulatedArchive, size: str) -> Result:
    rows = []
    for n in SIZES[size]:
        archive.reset()
        built = build(archive, n)
        warmed = warm_memory(0 if size == "smoke" else math.ceil(n * WARM_BYTES_PER_MEMBER / 2**30))
        row = measure(archive, n)
        row.update(warmed)
        row["build_s"] = built
        row["peak_MiB"] = peak(archive, n)
        row["find_detail_peak_MiB"] = detail_peak(archive, n)
        row.update(catalog_format(archive, n))
        if 10_000 <= n <= 100_000:  # 10^6 files on disk would take longer than all the rest
            archive.reset()
            row["bundle_tree_files_s"] = bundling(archive, n)
        rows.append(row)
        print(json.dumps(row))
    sizes = [r["members"] for r in rows]
    keys = [k for k in rows[-1] if k.endswith("_s") and k != "bundle_tree_files_s"]
    keys = [k for k in keys if not k.startswith("append_")]  # a fixed-size append
    exponents = {k: exponent(sizes, [r[k] for r in rows]) for k in keys}
    files = [(r["members"], r["bundle_tree_files_s"]) for r in rows if "bundle_tree_files_s" in r]
    files = files or [(0, float("nan"))]
    exponents["bundle_tree_files_s"] = exponent([f for f, _ in files], [s for _, s in files])
    big = rows[-1]
    headline = (
        f"{big['members']:,} bundled members: open {big['open_s']:.2f}s, ls of 1,000 "
        f"{big['ls_dir_s']:.3f}s, find {big['find_all_s']:.2f}s (detail "
        f"{big['find_all_detail_s']:.2f}s), plan+estimate all {big['plan_estimate_all_s']:.2f}s, "
        f"peak {big['peak_MiB']:.0f} MiB; exponent of find detail "
        f"{exponents['find_all_detail_s'] or float('nan'):.2f}, of plan "
        f"{exponents['plan_estimate_all_s'] or float('nan'):.2f}; bundle_tree of "
        f"{files[-1][0]:,} tiny files {files[-1][1]:.1f}s; catalog "
        f"{big['catalog_bytes_per_member']:.0f} B/member in {big['catalog_shards']} shards, ls of "
        f"one directory reads {big['ls_dir_read_fraction']:.2%} of it, load after transfer "
        f"{big['load_after_transfer_cpu_s']:.2f} CPU s, appending {APPEND_BUNDLES:,} bundles "
        f"writes {big['append_written_fraction']:.2%} of it"
    )
    return Result(
        name="scale",
        question="Member operations at scale (one catalog, 4 MiB bundles)",
        parameters={
            "sizes": sizes,
            "per_dir": PER_DIR,
            "per_bundle": PER_BUNDLE,
            "samples": SAMPLES,
        },
        archivefs={"rows": rows, "exponents": exponents},
        baseline={},
        baseline_name="(absolute; targets at 10^6: find 3 s, detail 5 s, plan 5 s, open 1.5 s)",
        headline=headline,
        runs={f"members_{r['members']}": [r] for r in rows},  # medians; samples in each row
        size=size,
    )


def _warm_note(row: dict[str, Any]) -> str:
    if "first_touch_s_per_GiB" not in row:
        return ""
    return (
        "; before each size the process touched about its peak memory once, since this "
        f"virtual machine took {row['first_touch_s_per_GiB']:.2f} s per GiB the first time "
        f"and {row['second_touch_s_per_GiB']:.2f} s the second"
    )


OPERATIONS = {
    "open_s": "catalog open",
    "ls_dir_s": "`ls` of one directory (1,000 members)",
    "find_all_s": "`find` of all (names)",
    "find_all_detail_s": "`find(detail=True)` of all",
    "find_1pct_s": "`find(detail=True)` of 1%",
    "glob_1pct_s": "`glob` of 1% (names)",
    "glob_all_s": "`glob` of all (names)",
    "du_s": "`du` of all",
    "plan_estimate_1pct_s": "plan + estimate of 1%",
    "plan_estimate_all_s": "plan + estimate of all",
    "floor_names_s": "floor: a copy of the list of all names",
    "floor_dict_s": "floor: a dict keyed by all names",
}
"""The rows of the docs' table, in order: the issue's operations, then the two floors."""

FLOORS = {
    "find_all_s": "floor_names_s",
    "plan_estimate_all_s": "floor_names_s",  # the plan copies every path into one column
    "glob_all_s": "floor_names_s",  # a names glob returns a list, matched name by name
    "find_all_detail_s": "floor_dict_s",
}
"""Whole-catalog operations and the floor each cannot go below: a copy of the names, or a
dict keyed by them."""


def over_floor(exponents: dict[str, Any], key: str) -> float | None:
    """How much faster than its floor operation ``key`` grows: the slope of log(time /
    floor time) over log(members); 0 when it grows as the floor does."""
    floor = FLOORS.get(key)
    if floor is None or exponents.get(key) is None or exponents.get(floor) is None:
        return None
    return float(exponents[key] - exponents[floor])


def _power(n: int) -> str:
    exp = round(math.log10(n))
    return f"10^{exp}" if 10**exp == n else f"{n:,}"


def _operations_table(rows: list[dict[str, Any]], exponents: dict[str, Any]) -> list[str]:
    sizes = [r["members"] for r in rows]
    lines = [
        "| operation (wall s) | "
        + " | ".join(_power(n) for n in sizes)
        + " | exponent | slope over its floor |",
        "|---|" + "---|" * (len(sizes) + 2),
    ]

    def figure(value: float | None, sign: str = "") -> str:
        return "—" if value is None else f"{value:{sign}.2f}"

    for key, label in OPERATIONS.items():
        if key not in rows[-1]:
            continue
        cells = " | ".join(f"{r[key]:.3g}" if key in r else "—" for r in rows)
        slopes = f"{figure(exponents.get(key))} | {figure(over_floor(exponents, key), '+')}"
        lines.append(f"| {label} | {cells} | {slopes} |")
    for key, label in (
        ("peak_MiB", "peak of `find` names + plan of all (MiB)"),
        ("find_detail_peak_MiB", "peak of `find(detail=True)` (MiB)"),
    ):
        cells = " | ".join(f"{r[key]:.0f}" for r in rows)
        lines.append(
            f"| {label} | {cells} | {figure(exponent(sizes, [r[key] for r in rows]))} | — |"
        )
    return lines


def _scale_operations(data: dict[str, Any]) -> str:
    """docs/benchmarks.md's table of every operation at every size, with exponents."""
    rows, exponents = data["archivefs"]["rows"], data["archivefs"]["exponents"]
    big = rows[-1]
    lines = [
        f"Measured by `python -m benchmarks --only scale` ({data['size']} size, the median of "
        f"{data['parameters'].get('samples', 1)} samples of each operation at each size, "
        f"{data['machine']['cpus']} CPUs; the exponent is the slope of log(time) over "
        "log(members) between the two largest sizes; the slope over its floor is that "
        "exponent less the floor's, for the operations that return every member: 0 when the "
        "operation grows as the bare list or dict of the names does):",
        "",
        *_operations_table(rows, exponents),
    ]
    over = [
        OPERATIONS[k]
        for k in OPERATIONS
        if not k.startswith("floor_") and (exponents.get(k) or 0) > 1.1
    ]
    if "floor_dict_s" in big:
        lines += [
            "",
            "The two floors are what returning that many Python objects costs at all here: "
            f"copying a list of {big['members']:,} names took {big['floor_names_s']:.3g} s "
            f"(exponent {exponents['floor_names_s']:.2f}) and a dict keyed by them "
            f"{big['floor_dict_s']:.3g} s (exponent {exponents['floor_dict_s']:.2f}): once the "
            "objects outgrow the processor's caches, every pass over them costs more per "
            "object, so an exponent above 1 at the largest size is partly the machine's. "
            f"`find` names took {big['find_all_s'] / big['floor_names_s']:.1f}x the list's "
            f"floor and `glob` of all {big['glob_all_s'] / big['floor_names_s']:.1f}x (a "
            "pattern matched per name); `find(detail=True)` "
            f"{big['find_all_detail_s'] / big['floor_dict_s']:.1f}x the dict's floor.",
        ]
    if "find_all_detail_requests" in big:
        asked = big["find_all_detail_requests"]
        lines += [
            "",
            f"`find(detail=True)` of all {big['members']:,} members gives each its bundle's "
            f"probed restore state: it asked the store about the {big['bundles']:,} bundles "
            "in "
            + (", ".join(f"{v} {k}" for k, v in sorted(asked.items())) or "no request")
            + ", and nothing per member.",
        ]
    lines += [
        "",
        "Exponents above the issue's 1.1: " + (", ".join(over) if over else "none") + ".",
    ]
    return "\n".join(lines)


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/bundles.md's figures for the sharded catalog and docs/benchmarks.md's table of
    every operation, from the result file."""
    out = {"scale-operations": _scale_operations(data)}
    out.update(_catalog_shards(data))
    return out


def _catalog_shards(data: dict[str, Any]) -> dict[str, str]:
    rows = [r for r in data["archivefs"]["rows"] if "catalog_bytes" in r]
    if not rows:
        return {}
    lines = [
        f"Measured by `python -m benchmarks --only scale` ({data['size']} size, one sample per "
        f"size, {data['machine']['cpus']} CPUs; bytes counted by the emulated S3 server"
        f"{_warm_note(rows[-1])}):",
        "",
        "| members | catalog | shards | `ls` of one directory reads | load after transfer | "
        f"appending {APPEND_BUNDLES:,} bundles ({APPEND_BUNDLES * APPEND_PER_BUNDLE:,} members) "
        "writes |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['members']:,} | {r['catalog_bytes'] / 2**20:.1f} MiB "
            f"({r['catalog_bytes_per_member']:.0f} B/member) | {r['catalog_shards']:,} | "
            f"{r['ls_dir_bytes_read'] / 1024:.0f} KiB in {r['ls_dir_GETs']} GETs "
            f"({r['ls_dir_read_fraction']:.2%}) | {r['load_after_transfer_cpu_s']:.2f} CPU s | "
            f"{r['append_bytes_written'] / 1024:.0f} KiB in {r['append_PUTs']} PUTs "
            f"({r['append_written_fraction']:.2%}, {r['append_written_per_new_member']:.0f} B "
            "per new member) |"
        )
    big = rows[-1]
    # the targets are set at 10^6 members (issues #18 and #19); the largest size scales them
    at = next((r for r in rows if r["members"] == 1_000_000), big)

    def verdict(ok: bool) -> str:
        return "met" if ok else "**not met**"

    lines += [
        "",
        f"At {at['members']:,} members: `ls` of one directory reads "
        f"{at['ls_dir_read_fraction']:.2%} of the catalog's bytes, and of any directory at "
        f"most {at['ls_any_dir_max_fraction']:.2%} (the pointer and the largest shard; "
        f"target 1 %: {verdict(at['ls_any_dir_max_fraction'] <= 0.01)}); the catalog takes "
        f"{at['catalog_bytes_per_member']:.0f} B per member (target 60: "
        f"{verdict(at['catalog_bytes_per_member'] <= 60)}); loading all of it once "
        f"transferred takes {at['load_after_transfer_cpu_s']:.2f} CPU s (target 0.5: "
        f"{verdict(at['load_after_transfer_cpu_s'] <= 0.5)}); opening all of it through a "
        f"filesystem ({at['catalog_shards']} shard GETs, 32 at a time) took "
        f"{at['open_s']:.2f} s on the emulator, the median of {SAMPLES} (target 1.5 s: "
        f"{verdict(at['open_s'] <= 1.5)}); an append writes "
        f"{at['append_written_per_new_member']:.0f} B per new member, "
        f"{at['append_written_fraction']:.2%} of the catalog.",
        "",
        f"`find(detail=True)` returns one fsspec info dict per member: "
        f"{at['find_detail_peak_MiB'] * 2**20 / at['members']:.0f} B per member at peak "
        f"beyond the loaded catalog ({at['find_detail_peak_MiB']:.0f} MiB at "
        f"{at['members']:,}, {big['find_detail_peak_MiB'] / 1024:.1f} GiB at "
        f"{big['members']:,}); names, `du`, `glob` and plans stay in arrays "
        f"(peak of `find` names + plan of all: {big['peak_MiB']:.0f} MiB at "
        f"{big['members']:,}).",
    ]
    if big is not at:
        lines += [
            "",
            f"At {big['members']:,} members: one directory {big['ls_dir_read_fraction']:.2%}, "
            f"any at most {big['ls_any_dir_max_fraction']:.2%}; "
            f"{big['catalog_bytes_per_member']:.0f} B per member; load after transfer "
            f"{big['load_after_transfer_cpu_s']:.2f} CPU s; open {big['open_s']:.2f} s "
            f"({big['catalog_shards']} shard GETs); an append writes "
            f"{big['append_written_per_new_member']:.0f} B per new member.",
        ]
    return {"catalog-shards": "\n".join(lines)}
