"""Archived netCDF4 files, one variable over 1 % of the time steps: restore every file
(today's way) against open, plan and read through kerchunk references (issue #45).

``N`` chunked netCDF4 files (a chunk per time step) are indexed while hot
(``ads.index_files``: its time per file and the references' size per chunk are
reported), then archived (GLACIER, the same bytes: the references stay valid).
Before each sample the restored copies the previous one made are ended
(``expire_restore``, as when their days run out), so every sample starts from every
file archived; then, with the emulator's restore delay:

- ``restore_all``: restore every file (one batch, waited for), open them with
  ``ads.open_mfdataset(..., references=False)``, select, compute (files under
  ``ads.READ_WHOLE_BELOW``, 8 MiB, are fetched whole in one batch, larger ones, as
  at the full size, opened lazily one after another);
- ``references``: ``ads.open_mfdataset`` from the files' references combined into
  one set (``ads.combine_references`` along time, made once after indexing: its time
  is reported), nothing restored; ``ads.prefetch`` of the selection (only the files
  holding its chunks), compute;
- ``per_file``: the same from each file's own references (``combine="nested"``,
  which the combined set does not serve): one GET and one small dataset per file.

Counted at the server: restore requests, bytes of the objects restored, GETs and
bytes sent; bytes needed are the selected chunks' stored bytes (from the
references). Timed: opening, and the whole way to the result, each sample after a full
garbage collection (the previous sample's filesystem closing its connections is not
this sample's cost). Peak Python memory is traced in the warm-up sample alone
(``tracemalloc`` slows Python-heavy work several times over, and parsing a set of
40,000 references is; the zarr open is not), so the timed samples run untraced.

The yardstick for opening is the same data as one zarr v3 store (a chunk per time
step, uncompressed as the files are; metadata and the time coordinate hot, the
chunks GLACIER), opened with ``ads.open_zarr`` through archivefs (``zarr_open``,
sampled beside the other two): opening the archived files from their references
should take at most twice as long (``open_vs_zarr``).

Memory: the files are written once to a temporary folder and uploaded from it a
batch at a time (:data:`BATCH_BYTES`), never all held by this process; only their
sizes are kept. The full size's run (``--full``) is written beside the default
one, as ``netcdf_references.full.json`` (``Result.apart``), and the docs passage
shows both.
"""

from __future__ import annotations

import gc
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, sample, spread, verdict

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

FILES = {"smoke": (20, 10, 32), "default": (100, 10, 128), "full": (1000, 40, 256)}
"""Per size: (files, time steps per file, side): float32 (time, y, x), a chunk per step
(default: 100 files of 650 KiB; full: 1,000 files of 10.0 MiB, on disk here and,
moto keeping objects over 5 MiB in temporary files, in the emulator's; the zarr copy's
40,000 chunks of 256 KiB, 10 GiB, in the emulator's memory)."""
BUCKET = "netcdf-references"
DELAY = 2.0  # seconds the emulator takes to restore (scaled restore times: polls fit it)
RESTORE_TARGET = 0.02  # references restore at most this share of today's objects and bytes
BYTES_TARGET = 1.05  # bytes fetched per byte needed
OPEN_TARGET = 2.0  # opening from references per opening the same data as a zarr store
STORE = "store.zarr"
BATCH_BYTES = 256 * 2**20  # bytes per upload to the emulator


def _seed(
    archive: EmulatedArchive, files: int, steps: int, side: int, tmp: Path
) -> tuple[dict[str, int], int]:
    """The netCDF files (hot, to be indexed; kept on disk under ``tmp`` for archiving
    them again), and the same data as a zarr store (its chunks archived), both uploaded
    a batch at a time, never all held: ``(the files' sizes by key, store objects)``."""
    import h5netcdf
    import numpy as np
    import zarr

    archive.create_bucket(BUCKET)
    rng = np.random.default_rng(45)
    sizes = {}
    local = tmp / STORE
    root = zarr.open_group(local, mode="w", zarr_format=3)
    total = files * steps
    store_t = root.create_array(
        "t", shape=(total, side, side), chunks=(1, side, side), dtype="f4",
        compressors=None, dimension_names=("time", "y", "x"),
    )  # fmt: skip
    store_time = root.create_array(
        "time", shape=(total,), chunks=(total,), dtype="i8", dimension_names=("time",)
    )
    store_time[:] = np.arange(total)
    for i in range(files):
        key = f"nc/f{i:04d}.nc"
        path = tmp / key
        path.parent.mkdir(exist_ok=True)
        block = rng.normal(size=(steps, side, side)).astype("f4")
        with h5netcdf.File(path, "w") as nc:
            nc.dimensions = {"time": steps, "y": side, "x": side}
            time_ = nc.create_variable("time", ("time",), "i8")
            time_[:] = np.arange(i * steps, (i + 1) * steps)
            var = nc.create_variable("t", ("time", "y", "x"), "f4", chunks=(1, side, side))
            var[:] = block
        sizes[key] = path.stat().st_size
        store_t[i * steps : (i + 1) * steps] = block
    names = sorted(p.relative_to(tmp).as_posix() for p in local.rglob("*") if p.is_file())
    chunks = f"{STORE}/t/c/"
    cold = [n for n in names if n.startswith(chunks)]
    hot = [n for n in names if not n.startswith(chunks)]
    _upload(archive, tmp, hot, "STANDARD")  # metadata and the time coordinate hot
    _upload(archive, tmp, cold, "GLACIER")  # the chunks archived
    shutil.rmtree(local)
    _upload(archive, tmp, sorted(sizes), "STANDARD")
    return sizes, len(names)


def _upload(archive: EmulatedArchive, root: Path, keys: list[str], storage_class: str) -> None:
    """Put the files ``root/key`` as ``keys``, about :data:`BATCH_BYTES` per call (the
    remote emulator takes each call as one message: never the whole set at once)."""
    batch: dict[str, bytes] = {}
    held = 0
    for key in keys:
        batch[key] = (root / key).read_bytes()
        held += len(batch[key])
        if held >= BATCH_BYTES or key == keys[-1]:
            archive.put_objects(BUCKET, batch, storage_class=storage_class)
            batch, held = {}, 0


def run(archive: EmulatedArchive, size: str) -> Result:
    files, steps, side = FILES[size]
    with tempfile.TemporaryDirectory() as tmp:
        return _measure(archive, size, files, steps, side, Path(tmp))


def _measure(
    archive: EmulatedArchive, size: str, files: int, steps: int, side: int, tmp: Path
) -> Result:
    import archivefs.datasets as ads
    from archivefs.filesystem import ArchiveFileSystem

    sizes, store_objects = _seed(archive, files, steps, side, tmp)
    urls = [f"s3://{BUCKET}/{key}" for key in sorted(sizes)]
    options = {
        "target_options": archive.storage_options(),
        "journal": False,
        "skip_instance_cache": True,
        "restore_status_in_listings": True,
        "restore_time_scale": DELAY / (3 * 3600),
    }
    archive.requests.clear()
    start = time.perf_counter()
    report = ads.index_files(urls, fs=ArchiveFileSystem(**options), inline_threshold=0)
    index_seconds = time.perf_counter() - start
    assert report.ok, report.failed
    chunks = sum(f.chunks for f in report.indexed)
    refs_bytes = archive.requests.bytes_received("PUT")
    start = time.perf_counter()
    ads.combine_references(urls, concat_dim="time", fs=ArchiveFileSystem(**options))
    combine_seconds = time.perf_counter() - start
    total_steps = files * steps
    chosen = max(1, total_steps // 100)
    first = total_steps // 2
    window = slice(first, first + chosen)
    _upload(archive, tmp, sorted(sizes), "GLACIER")  # the same bytes: references stay valid
    archive.set_restore_delay(DELAY)
    restored_copies: set[str] = set()  # files a sample restored, archived again before the next

    def archived() -> None:
        for key in sorted(restored_copies):
            archive.expire_restore(BUCKET, key)  # as when a restored copy's days run out
        restored_copies.clear()
        archive.requests.clear()

    peaks: dict[str, int] = {}  # per way: bytes tracemalloc saw at most, in the warm-up

    def measure(way: str) -> Any:
        def one(i: int) -> dict[str, float]:
            if way == "zarr_open":  # its chunks stay archived: nothing to archive again
                archive.requests.clear()
            else:
                archived()
            fs = ArchiveFileSystem(**options)
            traced = i < 0 or SAMPLES[size] == 1  # the warm-up (smoke: its one sample)
            gc.collect()  # the last sample's garbage (its connections closing) is not this one's
            if traced:
                tracemalloc.start()
            began = time.perf_counter()
            if way == "zarr_open":  # the yardstick: open only, nothing to restore
                ds = ads.open_zarr(f"s3://{BUCKET}/{STORE}", fs=fs)
                open_s = time.perf_counter() - began
                selection = None
            elif way == "restore_all":
                fs.restore(urls, wait=True, timeout=600)
                opened = time.perf_counter()
                ds = ads.open_mfdataset(urls, fs=fs, references=False)
                open_s = time.perf_counter() - opened
                selection = ds["t"].isel(time=window)
            else:  # the combined set serves by_coords (the default), not nested
                nested = {"combine": "nested", "concat_dim": "time"} if way == "per_file" else {}
                ds = ads.open_mfdataset(urls, fs=fs, **nested)
                open_s = time.perf_counter() - began
                selection = ds["t"].isel(time=window)
                ads.prefetch(selection, wait=True, timeout=600)
            if selection is not None:
                selection.values  # noqa: B018 - the computation measured
            seconds = time.perf_counter() - began
            if traced:
                peaks[way] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            records = archive.requests.records
            records = records() if callable(records) else records
            restored = [r.key for r in records if r.op == "RestoreObject"]
            restored_copies.update(k for k in restored if k in sizes)
            gets = [r for r in records if r.op == "GET"]
            prefix = f"{STORE}/t/c/" if way == "zarr_open" else "nc/"
            nc_gets = [r for r in gets if (r.key or "").startswith(prefix)]
            return {
                "seconds": seconds,
                "open_seconds": open_s,
                "restore_requests": len(restored),
                "bytes_restored": sum(sizes[k] for k in restored),
                "GET": len(gets),
                "file_GET": len(nc_gets),
                "bytes_fetched": sum(r.bytes_sent for r in nc_gets),
                "peak_python_MiB": peaks[way] / 2**20,
            }

        return one

    ways = ("restore_all", "references", "per_file", "zarr_open")
    runs = sample({w: measure(w) for w in ways}, SAMPLES[size])
    needed = chosen * side * side * 4  # stored chunks: uncompressed float32
    measured = (index_seconds, combine_seconds, chunks, refs_bytes, store_objects)
    return _result(files, steps, side, chosen, sizes, runs, needed, measured, size=size)


def _result(
    files: int,
    steps: int,
    side: int,
    chosen: int,
    sizes: dict[str, int],
    runs: dict[str, list[dict[str, Any]]],
    needed: int,
    measured: tuple[float, float, int, int, int],
    *,
    size: str,
) -> Result:
    index_seconds, combine_seconds, chunks, refs_bytes, store_objects = measured
    med = {name: medians(runs, name) for name in runs}
    today, refs, zarr = med["restore_all"], med["references"], med["zarr_open"]
    per_file = med["per_file"]
    open_ratio = refs["open_seconds"] / zarr["open_seconds"]
    per_file_ratio = per_file["open_seconds"] / zarr["open_seconds"]
    share = refs["restore_requests"] / today["restore_requests"]
    byte_share = refs["bytes_restored"] / today["bytes_restored"]
    amplification = refs["bytes_fetched"] / needed
    met = "met" if share <= RESTORE_TARGET and byte_share <= RESTORE_TARGET else "missed"
    headline = (
        f"{files} archived netCDF4 files, {chosen} of {files * steps} time steps of one "
        f"variable: references restore {refs['restore_requests']:.0f} objects "
        f"({byte_share:.1%} of the bytes) against {today['restore_requests']:.0f} "
        f"({met} <= {RESTORE_TARGET:.0%}); open {spread(runs, 'references', 'open_seconds')} "
        f"from references vs {spread(runs, 'restore_all', 'open_seconds')} restored and "
        f"{spread(runs, 'zarr_open', 'open_seconds')} as a zarr store ({open_ratio:.2f}x, "
        f"{'met' if open_ratio <= OPEN_TARGET else 'missed'} <= {OPEN_TARGET:g}x; per file "
        f"{spread(runs, 'per_file', 'open_seconds')}, {per_file_ratio:.2f}x); result "
        f"in {spread(runs, 'references', 'seconds')} vs {spread(runs, 'restore_all', 'seconds')}; "
        f"{amplification:.2f}x the bytes needed"
    )
    return Result(
        name="netcdf_references",
        question="one variable over 1 % of the time of archived netCDF files",
        parameters={
            "files": files,
            "steps_per_file": steps,
            "side": side,
            "file_bytes": sum(sizes.values()) // files,
            "selected_steps": chosen,
            "restore_delay_s": DELAY,
            "bytes_needed": needed,
            "index_seconds_per_file": index_seconds / files,
            "combine_seconds": combine_seconds,
            "reference_bytes_per_chunk": refs_bytes / chunks,
            "zarr_store_objects": store_objects,
        },
        archivefs={
            **refs,
            "restore_share": share,
            "bytes_restored_share": byte_share,
            "amplification": amplification,
            "zarr_open_seconds": zarr["open_seconds"],
            "zarr_open_GET": zarr["GET"],
            "zarr_open_chunk_GET": zarr["file_GET"],
            "open_vs_zarr": open_ratio,
            "per_file_open_seconds": per_file["open_seconds"],
            "per_file_GET": per_file["GET"],
            "per_file_open_vs_zarr": per_file_ratio,
        },
        baseline=today,
        baseline_name="restore every file, then open (references=False)",
        headline=headline,
        runs=runs,
        apart=size == "full",  # netcdf_references.full.json, beside the default size's
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/datasets.md's passage on what opening archived files costs, from the result;
    with the full size's result kept beside it (``netcdf_references.full.json``), a
    second paragraph from that one."""
    kept = [data["sizes"][size] for size in sorted(data.get("sizes", {}))]
    passages = [_passage(data, "What opening costs")]
    passages += [_passage(one, f"The same at the {one['size']} size") for one in kept]
    return {"netcdf-open": "\n".join(passages)}


def _passage(data: dict[str, Any], title: str) -> str:
    params, ours, today = data["parameters"], data["archivefs"], data["baseline"]
    opened = data["summary"]

    def seconds(way: str) -> str:
        s = opened[way]["open_seconds"]
        return f"{s['median']:.2f} s ({s['min']:.2f}-{s['max']:.2f})"

    load = data["machine"]["load_average"][0]
    combined_ok = ours["open_vs_zarr"] <= OPEN_TARGET
    return (
        f"- **{title}** (`benchmarks/netcdf_references.py`, "
        f"{data['size']} size: {params['files']:,} archived files of "
        f"{_kib(params['file_bytes'])}, {data['sample_counts']['references']} "
        f"samples, 1-minute load {load:.1f} on a 2-core machine). From the combined set: "
        f"{seconds('references')}, against {seconds('zarr_open')} for the same data as "
        f"one zarr store through archivefs: {ours['open_vs_zarr']:.2f}x "
        f"({verdict(combined_ok)} the {OPEN_TARGET:g}x target). File by file (one GET "
        f"and one small dataset each, combined by xarray): {seconds('per_file')}, "
        f"{ours['per_file_open_vs_zarr']:.1f}x. Restoring every file first, today's "
        f"way, then opening: {seconds('restore_all')} to open. Making the combined "
        f"set took {params['combine_seconds']:.1f} s once; indexing "
        f"{params['index_seconds_per_file'] * 1000:.0f} ms per file. The selection "
        f"(1 % of the time steps) restored {ours['restore_requests']:,.0f} of "
        f"{today['restore_requests']:,.0f} objects and fetched "
        f"{ours['amplification']:.2f}x the bytes it needs."
    )


def _kib(size: float) -> str:
    """653 KiB; from 10 MiB on, 10.0 MiB."""
    return f"{size / 2**10:.0f} KiB" if size < 10 * 2**20 else f"{size / 2**20:.1f} MiB"
