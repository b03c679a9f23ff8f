"""``archivefs mount`` read by ordinary programs (issue 46): requests and bytes at the server.

The mount runs as its own process (``python -m archivefs.cli mount``, as users start it)
over the emulated archive; the programs are the system's own (``ls``, ``ncdump``, ``cat``).
Measured per sample, counted at the server:

- ``ls -lR`` of a tree of files in directories: LIST requests against the listing pages
  the tree needs (one per directory and per 1,000 keys), HEADs (target: none), time;
- ``ncdump -v t`` of a netCDF4 file (one variable, a chunk per time step): bytes fetched
  against the variable's own bytes;
- sequential ``cat`` of a large file against ``fs.get`` of the same object (archivefs's
  download into a local file, in-process): MB/s of each;
- a reread of the same large file with ``--cache``: GETs (target: none) and time.

Owed (the issue's full run): the 10^4-file tree, a 500 MB netCDF file and 650 MiB file,
against rclone mount and s3fs-fuse on the same server, moto and radosgw through the
WAN-shaped proxy; rclone and s3fs-fuse are not installed on the machines this ran on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

MiB = 2**20
BUCKET = "mount-bench"
SIZES: dict[str, dict[str, int]] = {
    "smoke": {"files": 200, "dirs": 4, "big_mib": 8, "steps": 24, "side": 64},
    "default": {"files": 1_000, "dirs": 10, "big_mib": 32, "steps": 120, "side": 128},
    "full": {"files": 10_000, "dirs": 100, "big_mib": 650, "steps": 500, "side": 512},
}
TIMEOUT = 900  # seconds any program on the mount may take


def _seed(archive: EmulatedArchive, p: dict[str, int], tmp: Path) -> dict[str, int]:
    import h5netcdf
    import numpy as np

    archive.create_bucket(BUCKET)
    per_dir = p["files"] // p["dirs"]
    archive.put_objects(
        BUCKET,
        {f"tree/d{d:03d}/f{i:05d}": b"x" * 100 for d in range(p["dirs"]) for i in range(per_dir)},
    )
    archive.put_objects(BUCKET, {"big.bin": os.urandom(MiB) * p["big_mib"]})
    path = tmp / "t.nc"
    steps, side = p["steps"], p["side"]
    with h5netcdf.File(path, "w") as nc:
        nc.dimensions = {"time": steps, "y": side, "x": side}
        var = nc.create_variable("t", ("time", "y", "x"), "f4", chunks=(1, side, side))
        rng = np.random.default_rng(46)
        for step in range(steps):
            var[step] = rng.normal(size=(side, side)).astype("f4")
    archive.put_object(BUCKET, "t.nc", path.read_bytes())
    return {"per_dir": per_dir, "nc_bytes": path.stat().st_size, "needed": steps * side * side * 4}


def _mount(archive: EmulatedArchive, root: Path, cache: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    with open(log, "ab") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "archivefs.cli", "mount", f"s3://{BUCKET}/", str(root),
             "--endpoint-url", archive.endpoint_url, "--journal", str(root.parent / "j.sqlite"),
             "--cache", str(cache)],
            stdout=sink, stderr=sink, env=env,
        )  # fmt: skip
    deadline = time.monotonic() + 120
    while not os.path.ismount(root):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the mount did not start: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    return process


def _quiet(*argv: str | Path) -> float:
    start = time.perf_counter()
    subprocess.run([str(a) for a in argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=TIMEOUT, check=True)  # fmt: skip
    return time.perf_counter() - start


def run(archive: EmulatedArchive, size: str) -> Result:
    from archivefs.mount.runner import fuse_problem

    problem = fuse_problem()
    if problem or shutil.which("ncdump") is None:
        raise RuntimeError(f"cannot run the mount benchmark here: {problem or 'no ncdump'}")
    from benchmarks._common import archive_fs

    p = SIZES[size]
    tmp = Path(tempfile.mkdtemp(prefix="archivefs-mount-bench-"))
    seeded = _seed(archive, p, tmp)
    pages = p["dirs"] * -(-seeded["per_dir"] // 1000) + 2  # + the root and tree/
    big = p["big_mib"] * MiB
    root, log = tmp / "mnt", tmp / "mount.log"
    root.mkdir()
    fs = archive_fs(archive)
    try:

        def through_mount(i: int) -> dict[str, Any]:
            cache = tmp / f"cache{i}"
            shutil.rmtree(cache, ignore_errors=True)
            process = _mount(archive, root, cache, log)
            try:
                archive.requests.clear()
                ls_s = _quiet("ls", "-lR", root / "tree")
                lists, heads = archive.requests.count("LIST"), archive.requests.count("HEAD")
                archive.requests.clear()
                nc_s = _quiet("ncdump", "-v", "t", root / "t.nc")
                nc_fetched = archive.requests.bytes_sent("GET")
                archive.requests.clear()
                cat_s = _quiet("cat", root / "big.bin")
                archive.requests.clear()
                reread_s = _quiet("cat", root / "big.bin")
                reread_gets = archive.requests.count("GET")
            finally:
                subprocess.run(["fusermount3", "-u", str(root)], timeout=60, check=False)
                process.wait(60)
            return {
                "ls_lR_s": ls_s, "ls_lR_LIST": lists, "ls_lR_HEAD": heads,
                "ncdump_s": nc_s, "ncdump_fetched_bytes": nc_fetched,
                "ncdump_amplification": nc_fetched / seeded["needed"],
                "cat_s": cat_s, "cat_MBps": big / cat_s / 1e6,
                "reread_s": reread_s, "reread_GET": reread_gets,
            }  # fmt: skip

        def get(i: int) -> dict[str, Any]:
            local = tmp / "got.bin"
            start = time.perf_counter()
            fs.get(f"{BUCKET}/big.bin", str(local))
            elapsed = time.perf_counter() - start
            local.unlink()
            return {"get_s": elapsed, "get_MBps": big / elapsed / 1e6}

        runs = sample({"mount": through_mount, "get": get}, SAMPLES[size])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ours, theirs = medians(runs, "mount"), medians(runs, "get")
    seq = ours["cat_MBps"] / theirs["get_MBps"]
    headline = (
        f"ls -lR of {p['files']} files: {ours['ls_lR_LIST']:.0f} LISTs for {pages} listing "
        f"pages, {ours['ls_lR_HEAD']:.0f} HEADs; ncdump -v: {ours['ncdump_amplification']:.2f}x "
        f"the bytes needed; cat of {p['big_mib']} MiB {seq:.2f}x fs.get's MB/s; cached reread "
        f"{ours['reread_GET']:.0f} GETs (rclone mount and s3fs-fuse: owed)"
    )
    return Result(
        name="mount",
        question="POSIX programs through `archivefs mount`",
        parameters={
            **p,
            "listing_pages": pages,
            "netcdf_bytes": seeded["nc_bytes"],
            "variable_bytes": seeded["needed"],
        },
        archivefs={
            "ls_lR": spread(runs, "mount", "ls_lR_s"),
            "ncdump": spread(runs, "mount", "ncdump_s"),
            "cat_MBps": spread(runs, "mount", "cat_MBps", unit=" MB/s"),
            "reread": spread(runs, "mount", "reread_s"),
            "sequential_vs_get": seq,
        },
        baseline={"get_MBps": spread(runs, "get", "get_MBps", unit=" MB/s")},
        baseline_name="fs.get of the same object (rclone mount, s3fs-fuse: owed)",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's mount passage, from the result file."""
    p, m = data["parameters"], data["summary"]["mount"]
    get = data["summary"]["get"]
    load = data["machine"]["load_average"][0]
    return {
        "mount": (
            f"`archivefs mount` as its own process on the emulator, {data['size']} size, "
            f"{data['sample_counts']['mount']} samples, medians (min-max); requests and bytes "
            f"counted at the server; 1-minute load average {load:.1f}.\n\n"
            "| program | measured | target |\n|---|---|---|\n"
            f"| `ls -lR` of {p['files']} files in {p['dirs']} directories | "
            f"{m['ls_lR_LIST']['median']:.0f} LISTs for {p['listing_pages']} listing pages, "
            f"{m['ls_lR_HEAD']['median']:.0f} HEADs, {m['ls_lR_s']['median']:.2f} s | "
            "no more requests than listing pages |\n"
            f"| `ncdump -v` of a {p['netcdf_bytes'] / 1e6:.1f} MB netCDF4 file | "
            f"{m['ncdump_amplification']['median']:.2f}x the variable's bytes, "
            f"{m['ncdump_s']['median']:.2f} s | at most 1.3x |\n"
            f"| `cat` of {p['big_mib']} MiB | {m['cat_MBps']['median']:.1f} MB/s "
            f"({m['cat_MBps']['min']:.1f}-{m['cat_MBps']['max']:.1f}) against `fs.get`'s "
            f"{get['get_MBps']['median']:.1f} MB/s: "
            f"{m['cat_MBps']['median'] / get['get_MBps']['median']:.2f}x | at least 0.9x |\n"
            f"| `cat` again, `--cache` | {m['reread_GET']['median']:.0f} GETs, "
            f"{m['reread_s']['median']:.2f} s | no GET |\n\n"
            "Owed: the issue's full run (10^4 files, a 500 MB netCDF file, 650 MiB, radosgw "
            "through the WAN-shaped proxy) against rclone mount and s3fs-fuse."
        )
    }
