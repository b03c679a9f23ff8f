"""``archivefs mount`` against rclone mount and s3fs-fuse, read by ordinary programs (issue 46).

Each mount runs as its own process, over the same server reached through the WAN-shaped
proxy of the line-rate benchmark (:class:`~benchmarks._shaping_proxy.ShapingProxy`: 10 ms
each way, 40 MB/s per connection; the emulator's own latency off), first on the emulator
(moto), then on radosgw (a local Ceph cluster, :class:`~archivefs.testing.LocalRGW`) at
the default and full sizes where Ceph is installed. The programs are the system's own
(``ls``, ``ncdump``, ``cat``). Per sample, each mount is mounted afresh (an empty cache)
and measured on four workloads, requests and bytes counted at the server:

- ``ls -lR`` of a tree of files in directories: LIST requests against the listing pages
  the tree needs (one per directory and per 1,000 keys), HEADs (target: none), time;
- ``ncdump -v t`` of a netCDF4 file (one variable, a chunk per time step): bytes the
  server sent for GETs against the variable's own bytes (target: at most 1.3x), time;
- sequential ``cat`` of a large file: MB/s, against archivefs's ``fs.get`` of the same
  object into a local file (in this process, through the same proxy; target: at least
  0.9x);
- a reread of the same file: GETs (target: none), every request, time.

The mounts, each as a competent user would start it for reading with a local cache:

- ``archivefs``: ``archivefs mount s3://BUCKET/ DIR --cache CACHE`` (read-only by
  default; credentials in its environment);
- ``rclone``: ``rclone mount remote:BUCKET DIR --read-only --vfs-cache-mode full
  --use-server-modtime --cache-dir CACHE``, the remote given by ``RCLONE_CONFIG_*``
  variables (nothing on the command line, no user config). ``full``: reads go through a
  sparse local copy that holds the ranges read (so a program that reads one variable
  fetches about that, and a reread is served from disk); ``off``/``minimal``/``writes``
  keep no read cache, so every reread would be fetched again. ``--use-server-modtime``:
  a file's time is the listing's, not a HEAD per file for rclone's own mtime metadata
  (what rclone's S3 docs advise to avoid those HEADs);
- ``s3fs_fuse``: ``s3fs BUCKET DIR -o url=...,use_path_request_style,
  passwd_file=...,ro,use_cache=CACHE`` (the key pair in a private 0600 file):
  ``use_cache`` is s3fs-fuse's local disk cache, without which a reread is fetched again.

A peer that is not installed is reported as skipped with the reason (``apt-get install
rclone s3fs``), never measured. Credentials are never printed or logged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, sample, spread, verdict
from benchmarks._shaping_proxy import ShapingProxy

if TYPE_CHECKING:
    from collections.abc import Callable

MiB = 2**20
BUCKET = "mount-bench"
SIZES: dict[str, dict[str, int]] = {
    "smoke": {"files": 200, "dirs": 4, "big_mib": 8, "steps": 24, "side": 64},
    "default": {"files": 1_000, "dirs": 10, "big_mib": 32, "steps": 120, "side": 128},
    "full": {"files": 10_000, "dirs": 100, "big_mib": 650, "steps": 500, "side": 512},
}
TIMEOUT = 900  # seconds any program on a mount may take
LATENCY = 0.010  # seconds the proxy adds each way (the line-rate benchmark's)
RATE = 40e6  # bytes per second per connection and direction (the line-rate benchmark's)
MOUNTS = ("archivefs", "rclone", "s3fs_fuse")
LABELS = {"archivefs": "archivefs mount", "rclone": "rclone mount", "s3fs_fuse": "s3fs-fuse"}
PROGRAMS = {"rclone": ("rclone", "rclone"), "s3fs_fuse": ("s3fs", "s3fs")}
"""Per peer: the program it needs and the Debian package that has it."""
RCLONE_CACHE_MODE = "full"
RCLONE_FLAGS = "--read-only --vfs-cache-mode full --use-server-modtime"
S3FS_OPTIONS = "use_path_request_style,ro,use_cache"
SEQUENTIAL_TARGET = 0.9  # the cat's MB/s, of fs.get's
AMPLIFICATION_TARGET = 1.3  # ncdump's bytes fetched, of the variable's bytes


def skipped_peers() -> dict[str, str]:
    """The peers that cannot run here, with the reason."""
    return {
        name: f"{program} is not installed (apt-get install {package})"
        for name, (program, package) in PROGRAMS.items()
        if shutil.which(program) is None
    }


def _seed(server: Any, p: dict[str, int], tmp: Path) -> dict[str, int]:
    import h5netcdf
    import numpy as np

    server.create_bucket(BUCKET)
    per_dir = p["files"] // p["dirs"]
    server.put_objects(
        BUCKET,
        {f"tree/d{d:03d}/f{i:05d}": b"x" * 100 for d in range(p["dirs"]) for i in range(per_dir)},
    )
    server.put_object(BUCKET, "big.bin", os.urandom(MiB) * p["big_mib"])
    path = tmp / "t.nc"
    steps, side = p["steps"], p["side"]
    with h5netcdf.File(path, "w") as nc:
        nc.dimensions = {"time": steps, "y": side, "x": side}
        var = nc.create_variable("t", ("time", "y", "x"), "f4", chunks=(1, side, side))
        rng = np.random.default_rng(46)
        for step in range(steps):
            var[step] = rng.normal(size=(side, side)).astype("f4")
    server.put_object(BUCKET, "t.nc", path.read_bytes())
    return {"per_dir": per_dir, "nc_bytes": path.stat().st_size, "needed": steps * side * side * 4}


@dataclass
class _Link:
    """What a mount command needs: the proxy's endpoint and the server's key pair."""

    endpoint: str
    key: str
    secret: str
    region: str


def _link(server: Any, proxy: ShapingProxy) -> _Link:
    options = server.storage_options()
    region = options.get("client_kwargs", {}).get("region_name", "us-east-1")
    return _Link(proxy.endpoint_url, options["key"], options["secret"], region)


def _archivefs(link: _Link, root: Path, cache: Path, tmp: Path) -> tuple[list[str], dict[str, str]]:
    env = {"AWS_ACCESS_KEY_ID": link.key, "AWS_SECRET_ACCESS_KEY": link.secret,
           "AWS_DEFAULT_REGION": link.region}  # fmt: skip
    command = [sys.executable, "-m", "archivefs.cli", "mount", f"s3://{BUCKET}/", str(root),
               "--endpoint-url", link.endpoint, "--journal", str(tmp / "j.sqlite"),
               "--cache", str(cache)]  # fmt: skip
    return command, env


def _rclone(link: _Link, root: Path, cache: Path, tmp: Path) -> tuple[list[str], dict[str, str]]:
    config = tmp / "rclone.conf"
    config.touch(mode=0o600)  # no user configuration: the remote is the variables below
    env = {
        "RCLONE_CONFIG": str(config),
        "RCLONE_CONFIG_BENCH_TYPE": "s3",
        "RCLONE_CONFIG_BENCH_PROVIDER": "Other",
        "RCLONE_CONFIG_BENCH_ENV_AUTH": "false",
        "RCLONE_CONFIG_BENCH_ACCESS_KEY_ID": link.key,
        "RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY": link.secret,
        "RCLONE_CONFIG_BENCH_ENDPOINT": link.endpoint,
        "RCLONE_CONFIG_BENCH_REGION": link.region,
        "RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE": "true",
    }
    command = ["rclone", "mount", f"bench:{BUCKET}", str(root), "--read-only",
               "--vfs-cache-mode", RCLONE_CACHE_MODE, "--use-server-modtime",
               "--cache-dir", str(cache)]  # fmt: skip
    return command, env


def _s3fs_fuse(link: _Link, root: Path, cache: Path, tmp: Path) -> tuple[list[str], dict[str, str]]:
    passwd = tmp / "s3fs-passwd"
    fd = os.open(passwd, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # s3fs refuses others
    with os.fdopen(fd, "w") as out:
        out.write(f"{link.key}:{link.secret}\n")
    cache.mkdir(parents=True, exist_ok=True)
    options = (f"url={link.endpoint},use_path_request_style,passwd_file={passwd},ro,"
               f"use_cache={cache},endpoint={link.region}")  # fmt: skip
    return ["s3fs", BUCKET, str(root), "-f", "-o", options], {}


COMMANDS: dict[str, Callable[[_Link, Path, Path, Path], tuple[list[str], dict[str, str]]]] = {
    "archivefs": _archivefs,
    "rclone": _rclone,
    "s3fs_fuse": _s3fs_fuse,
}


def _mount(name: str, link: _Link, root: Path, cache: Path, tmp: Path) -> subprocess.Popen[bytes]:
    """Start mount ``name`` in its own process; return once ``root`` is mounted."""
    command, extra = COMMANDS[name](link, root, cache, tmp)
    log = tmp / f"{name}.log"
    # no inherited AWS_* or RCLONE_* settings (a CA bundle, a profile): only the link's
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RCLONE_"))}
    with open(log, "ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, env={**env, **extra})
    deadline = time.monotonic() + 120
    try:
        while not os.path.ismount(root):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not mount: {log.read_text()[-2000:]}")
            time.sleep(0.05)
    except BaseException:  # failed, or interrupted while it mounted: nothing left behind
        _unmount(root, process)
        raise
    return process


def _unmount(root: Path, process: subprocess.Popen[bytes]) -> None:
    """Unmount ``root`` and end its process; a mount still listed then (busy: a reader
    interrupted inside it, or its process killed) is detached lazily, so an interrupted
    run leaves no mount behind."""
    if os.path.ismount(root):
        subprocess.run(["fusermount3", "-u", str(root)], timeout=60, check=False)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    if _listed(root):  # os.path.ismount says False for a mount whose process is gone
        subprocess.run(["fusermount3", "-uz", str(root)], timeout=60, check=False)


def _listed(root: Path) -> bool:
    """Whether ``root`` is among this process's mounts (``/proc/self/mounts``)."""
    mounts = Path("/proc/self/mounts")
    if not mounts.exists():
        return False
    points = {line.split()[1] for line in mounts.read_text().splitlines() if line.strip()}
    return str(root.resolve()) in points


def _quiet(*argv: str | Path) -> float:
    start = time.perf_counter()
    subprocess.run([str(a) for a in argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=TIMEOUT, check=True)  # fmt: skip
    return time.perf_counter() - start


def _through(
    name: str, server: Any, link: _Link, tmp: Path, seeded: dict[str, int], big: int
) -> Callable[[int], dict[str, Any]]:
    """One sample of mount ``name``: mounted afresh (an empty cache), the four workloads."""
    requests = server.requests

    def measure(i: int) -> dict[str, Any]:
        root, cache = tmp / f"mnt-{name}", tmp / f"cache-{name}"
        shutil.rmtree(cache, ignore_errors=True)
        root.mkdir(exist_ok=True)
        process = _mount(name, link, root, cache, tmp)
        try:
            requests.clear()
            ls_s = _quiet("ls", "-lR", root / "tree")
            lists, heads = requests.count("LIST"), requests.count("HEAD")
            requests.clear()
            nc_s = _quiet("ncdump", "-v", "t", root / "t.nc")
            nc_fetched = requests.bytes_sent("GET")
            requests.clear()
            cat_s = _quiet("cat", root / "big.bin")
            cat_gets = requests.count("GET")
            requests.clear()
            reread_s = _quiet("cat", root / "big.bin")
            reread_gets, reread_all = requests.count("GET"), requests.count()
        finally:
            _unmount(root, process)
        return {
            "ls_lR_s": ls_s, "ls_lR_LIST": lists, "ls_lR_HEAD": heads,
            "ncdump_s": nc_s, "ncdump_fetched_bytes": nc_fetched,
            "ncdump_amplification": nc_fetched / seeded["needed"],
            "cat_s": cat_s, "cat_MBps": big / cat_s / 1e6, "cat_GET": cat_gets,
            "reread_s": reread_s, "reread_GET": reread_gets, "reread_requests": reread_all,
        }  # fmt: skip

    return measure


def _sample_on(server: Any, size: str, samples: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Seed ``server``, then sample every mount that can run and ``fs.get`` through the
    proxy; the parameters and the samples."""
    from archivefs.filesystem import ArchiveFileSystem

    p = SIZES[size]
    tmp = Path(tempfile.mkdtemp(prefix="archivefs-mount-bench-"))  # 0700: the passwd file
    try:
        seeded = _seed(server, p, tmp)
        big = p["big_mib"] * MiB
        with ShapingProxy(server.endpoint_url, latency=LATENCY, rate=RATE) as proxy:
            link = _link(server, proxy)
            options = server.storage_options()
            options["client_kwargs"] = {**options["client_kwargs"], "endpoint_url": link.endpoint}
            fs = ArchiveFileSystem(target_options=options, journal=False, skip_instance_cache=True)

            def get(i: int) -> dict[str, Any]:
                local = tmp / "got.bin"
                start = time.perf_counter()
                fs.get(f"{BUCKET}/big.bin", str(local))
                elapsed = time.perf_counter() - start
                if local.stat().st_size != big:
                    raise AssertionError(f"fs.get wrote {local.stat().st_size} bytes of {big}")
                local.unlink()
                return {"get_s": elapsed, "get_MBps": big / elapsed / 1e6}

            skipped = skipped_peers()
            variants = {
                name: _through(name, server, link, tmp, seeded, big)
                for name in MOUNTS
                if name not in skipped
            }
            runs = sample({**variants, "get": get}, samples)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pages = p["dirs"] * -(-seeded["per_dir"] // 1000) + 2  # + the root and tree/
    parameters = {
        **p,
        "listing_pages": pages,
        "netcdf_bytes": seeded["nc_bytes"],
        "variable_bytes": seeded["needed"],
    }
    return parameters, runs


def run(archive: Any, size: str, *, radosgw: bool | None = None) -> Result:
    """Every mount on the emulator (its latency off: the proxy shapes the link), then on
    radosgw if ``radosgw`` (default: at the default and full sizes, where Ceph is installed)."""
    from archivefs.mount.runner import fuse_problem
    from archivefs.testing._rgw import missing_binaries

    problem = fuse_problem()
    if problem or shutil.which("ncdump") is None:
        raise RuntimeError(f"cannot run the mount benchmark here: {problem or 'no ncdump'}")
    latency = archive.latency
    archive.set_latency(0.0)
    try:
        parameters, moto = _sample_on(archive, size, SAMPLES[size])
    finally:
        archive.set_latency(latency)
    runs = {f"moto:{name}": cells for name, cells in moto.items()}
    servers = {"moto": "the emulator (moto) in its own process"}
    missing = missing_binaries()
    if radosgw is None:
        radosgw = size != "smoke" and not missing
    if radosgw:
        from archivefs.testing import LocalRGW

        with LocalRGW(capacity=_capacity(size)) as rgw:
            parameters["radosgw"], on_rgw = _sample_on(rgw, size, SAMPLES[size])
        runs.update({f"radosgw:{name}": cells for name, cells in on_rgw.items()})
        servers["radosgw"] = "a local one-node Ceph cluster (archivefs.testing.LocalRGW)"
    else:
        reason = "smoke size" if not missing else f"{', '.join(missing)} not installed"
        parameters["radosgw_skipped"] = reason
    skipped = skipped_peers()
    parameters.update(
        samples=SAMPLES[size],
        proxy=f"{LATENCY * 1000:g} ms each way, {RATE / 1e6:g} MB/s per connection",
        rclone_flags=RCLONE_FLAGS,
        s3fs_options=S3FS_OPTIONS,
        skipped=skipped,
    )
    ours = {server: _cells(runs, server) for server in servers}
    headline = "; ".join(
        f"on {server}: {_headline(runs, server, parameters, skipped)}" for server in servers
    )
    return Result(
        name="mount",
        question="POSIX programs through `archivefs mount`",
        parameters=parameters,
        archivefs=ours,
        baseline={
            server: {
                "get_MBps": spread(runs, f"{server}:get", "get_MBps", unit=" MB/s"),
                **{
                    peer: _cells(runs, server, peer)
                    for peer in MOUNTS[1:]
                    if f"{server}:{peer}" in runs
                },
            }
            for server in servers
        },
        baseline_name="rclone mount, s3fs-fuse; fs.get of the same object",
        headline=headline,
        runs=runs,
        server={
            "process": "own process",
            "latency_s": 0.0,
            "proxy": parameters["proxy"],
            **servers,
        },
    )


def _column(summary: dict[str, Any], key: str, get: float) -> list[str]:
    """One mount's cells of the docs table: ls -lR, ncdump, cat, the reread."""
    cells = summary[key]

    def cell(metric: str, fmt: str = ".2f") -> str:
        c = cells[metric]
        return f"{c['median']:{fmt}} ({c['min']:{fmt}}-{c['max']:{fmt}})"

    def median(metric: str) -> float:
        return float(cells[metric]["median"])

    return [
        f"{median('ls_lR_LIST'):.0f} LISTs, {median('ls_lR_HEAD'):.0f} HEADs, {cell('ls_lR_s')} s",
        f"{median('ncdump_amplification'):.2f}x the bytes needed, {cell('ncdump_s')} s",
        f"{cell('cat_MBps', '.1f')} MB/s, {median('cat_MBps') / get:.2f}x `fs.get`",
        f"{median('reread_GET'):.0f} GETs ({median('reread_requests'):.0f} requests)"
        f"{_worst(cells['reread_GET'], 'GETs')}, {cell('reread_s')} s",
    ]


def _worst(counts: dict[str, float], unit: str) -> str:
    """A count's worst sample when it differs from the median (counts are exact: one
    sample that sent requests is a finding, not noise)."""
    if counts["max"] == counts["median"]:
        return ""
    return f", {counts['max']:.0f} {unit} in the worst sample"


def _capacity(size: str) -> int:
    """Room on radosgw's in-memory OSD: the large file and the netCDF file (twice: the
    OSD's writes are not freed at once), and a GiB for Ceph's pools and the tree."""
    from archivefs.testing._rgw import DEFAULT_CAPACITY

    p = SIZES[size]
    return DEFAULT_CAPACITY + 2 * (p["big_mib"] * MiB + p["steps"] * p["side"] ** 2 * 4)


def _cells(runs: dict[str, Any], server: str, name: str = "archivefs") -> dict[str, Any]:
    key = f"{server}:{name}"
    cells = {
        "ls_lR": spread(runs, key, "ls_lR_s"),
        "ncdump": spread(runs, key, "ncdump_s"),
        "cat_MBps": spread(runs, key, "cat_MBps", unit=" MB/s"),
        "reread": spread(runs, key, "reread_s"),
    }
    m = medians(runs, key)
    cells["sequential_vs_get"] = m["cat_MBps"] / medians(runs, f"{server}:get")["get_MBps"]
    return cells


def _headline(runs: dict[str, Any], server: str, p: dict[str, Any], skipped: dict[str, str]) -> str:
    shape = p if server == "moto" else p["radosgw"]
    get = medians(runs, f"{server}:get")["get_MBps"]
    parts = []
    for name in MOUNTS:
        if name in skipped:
            parts.append(f"{LABELS[name]} skipped ({skipped[name]})")
            continue
        key = f"{server}:{name}"
        m = medians(runs, key)
        rereads = {"median": m["reread_GET"], "max": max(s["reread_GET"] for s in runs[key])}
        parts.append(
            f"{LABELS[name]}: ls -lR of {shape['files']} files {m['ls_lR_LIST']:.0f} LISTs "
            f"(pages {shape['listing_pages']}) + {m['ls_lR_HEAD']:.0f} HEADs, ncdump -v "
            f"{m['ncdump_amplification']:.2f}x the bytes needed, cat of {shape['big_mib']} MiB "
            f"{m['cat_MBps'] / get:.2f}x fs.get's MB/s, reread {m['reread_GET']:.0f} GETs"
            + _worst(rereads, "GETs")
        )
    return "; ".join(parts)


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's mount passage, from the result file: per server, each mount on
    the four workloads and the targets."""
    p, summary = data["parameters"], data["summary"]
    skipped: dict[str, str] = p.get("skipped", {})
    load = data["machine"]["load_average"][0]
    lines = [
        f"Each mount as its own process, through the WAN-shaped proxy ({p['proxy']}), "
        f"{data['size']} size, {data['sample_counts'].get('moto:archivefs', '?')} samples of "
        "each mount (mounted afresh, an empty cache) alternating with `fs.get`, medians "
        "(min-max); requests and bytes counted at the server; archivefs with `--cache`, "
        f"rclone with `{p['rclone_flags']}`, s3fs-fuse with `-o {p['s3fs_options']}`; "
        f"1-minute load average when the run ended: {load:.1f}.",
    ]
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"{LABELS[n]}: {why}" for n, why in skipped.items())]
    servers = [("moto", "the emulator (moto)", p)]
    if "radosgw" in p:
        servers.append(("radosgw", "radosgw", p["radosgw"]))
    else:
        lines += ["", f"radosgw: not run ({p.get('radosgw_skipped', 'not asked')})."]
    for server, label, shape in servers:
        names = [n for n in MOUNTS if f"{server}:{n}" in summary]
        get = summary[f"{server}:get"]["get_MBps"]["median"]
        columns = [_column(summary, f"{server}:{n}", get) for n in names]
        rows = [
            f"`ls -lR` of {shape['files']} files in {shape['dirs']} directories "
            f"({shape['listing_pages']} listing pages)",
            f"`ncdump -v` of a {shape['netcdf_bytes'] / 1e6:.1f} MB netCDF4 file "
            f"({shape['variable_bytes'] / 1e6:.1f} MB needed)",
            f"`cat` of {shape['big_mib']} MiB (`fs.get`: {get:.1f} MB/s)",
            "`cat` again",
        ]
        lines += [
            "",
            f"On {label}:",
            "",
            "| program | " + " | ".join(LABELS[n] for n in names) + " |",
            "|---|" + "---|" * len(names),
        ]
        lines += [
            f"| {row} | " + " | ".join(column[i] for column in columns) + " |"
            for i, row in enumerate(rows)
        ]
        ours = summary[f"{server}:archivefs"]
        seq = ours["cat_MBps"]["median"] / get
        amp = ours["ncdump_amplification"]["median"]
        lists, heads = ours["ls_lR_LIST"]["median"], ours["ls_lR_HEAD"]["median"]
        rereads = ours["reread_GET"]["max"]  # every sample: a count, not a timing

        lines += [
            "",
            f"Targets (archivefs mount on {label}): `ls -lR` no more requests than listing "
            f"pages: {verdict(lists + heads <= shape['listing_pages'])}; `ncdump` at most "
            f"{AMPLIFICATION_TARGET}x the bytes needed: "
            f"{verdict(amp <= AMPLIFICATION_TARGET)}; `cat` at least {SEQUENTIAL_TARGET}x "
            f"`fs.get`'s MB/s: {seq:.2f}x, {verdict(seq >= SEQUENTIAL_TARGET)}; the cached "
            f"reread sends no GET in any sample: {verdict(rereads == 0)}.",
        ]
    if data["size"] != "full":
        lines += [
            "",
            "Owed: the issue's full run (`python -m benchmarks --full --only mount`: 10^4 "
            "files, a netCDF file of about 500 MB, 650 MiB).",
        ]
    return {"mount": "\n".join(lines)}
