"""Downloads through a WAN-shaped link: archivefs against the AWS CLI and boto3 (issue #35).

The S3 endpoint is reached through :class:`~benchmarks._shaping_proxy.ShapingProxy`
(10 ms added each way, each connection capped at 40 MB/s: single S3 streams
over a wide-area link), with the emulator's own per-request latency off. Each
variant is a command in its own process, timed from start to exit (interpreter
start-up included, as a user pays it: the headline), its CPU seconds (user and
system) and peak memory read by GNU time, the time from its start to its first
connection at the proxy (its start-up, reported apart) and its requests counted
at the server. The children use Python's bytecode caches as an installed package
does (``PYTHONDONTWRITEBYTECODE`` is dropped, the caches kept under the run's
own ``PYTHONPYCACHEPREFIX``): a harness that forbids them compiles archivefs's
sixty-odd modules from source in every process.

- ``archivefs_get``: ``ArchiveFileSystem.get(prefix, dir, recursive=True)``;
- ``archivefs_prefetch``: the console command ``archivefs prefetch URL --to DIR``;
- ``aws_cli``: ``aws s3 cp --recursive`` (its defaults: 10 requests at a time, 8 MiB parts;
  Debian's awscli, ``/usr/bin/aws``, where installed);
- ``boto3_transfer``: boto3's TransferManager, 10 threads, 8 MiB parts.

Workloads: one large object; several large objects; many small files, read by
archivefs from a bundled folder (coalesced member reads) and from plain
objects, by the AWS CLI and boto3 from the plain objects. The objects are in
STANDARD: this measures the download, not the restore.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivefs.access.synced import MANIFEST
from benchmarks import _line_rate_children as children
from benchmarks._common import (
    ROOT,
    SAMPLES,
    Result,
    bundle_files,
    medians,
    ratio,
    sample,
    spread,
    verdict,
)
from benchmarks._shaping_proxy import ShapingProxy

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

MiB = 2**20
SIZES: dict[str, dict[str, Any]] = {
    "smoke": {"one": 16 * MiB, "several": (2, 8 * MiB), "small": (100, 64 * 1024, 50)},
    "default": {"one": 64 * MiB, "several": (4, 64 * MiB), "small": (2000, 64 * 1024, 500)},
    "full": {"one": 300 * MiB, "several": (4, 650 * MiB), "small": (10000, 64 * 1024, 1000)},
}
"""Per size: one object's bytes; (count, mean bytes) of the several (each within +-5 %
of the mean); (files, bytes each, files per bundled folder) of the small ones."""
SEVERAL_SPREAD = 0.05  # each of the several large objects is within this share of their mean
LATENCY = 0.010  # seconds added each way by the proxy
RATE = 40e6  # bytes per second per connection and direction
THREADS = children.THREADS
PART = children.PART
CATALOG_GETS = 20
"""GETs allowed beyond one per 8 MiB of each bundled folder's members: issue #35's bound
for ``prefetch --to`` of 10,000 files of 64 KiB bundled (100 GETs) less its 80 blocks."""
BUCKET = "line-rate"
WORKLOADS = ("one_large", "several_large", "small_files")
STARTUP = "startup"
"""The workload of one 1 KiB object: each command's own start-up and exit (not at smoke size)."""
TIME = "/usr/bin/time"
PYCACHE = os.path.join(tempfile.gettempdir(), "archivefs-line-rate-pycache")
"""The children's bytecode caches, kept across samples and runs."""
AWS = shutil.which("aws", path="/usr/bin") or "aws"
"""The AWS CLI: Debian's awscli package where installed (``apt-get install awscli``)."""


def _payload(rng: random.Random, nbytes: int) -> bytes:
    """``nbytes`` random bytes, made a MiB at a time (``randbytes`` of 256 MiB or more
    overflows)."""
    return b"".join(rng.randbytes(min(MiB, nbytes - at)) for at in range(0, nbytes, MiB))


def _seed(archive: EmulatedArchive, size: str) -> dict[str, dict[str, Any]]:
    """Write the workloads' objects; per workload, its prefixes and expected file count/bytes."""
    rng = random.Random(35)
    spec = SIZES[size]
    archive.create_bucket(BUCKET)
    archive.put_object(BUCKET, "one/object-0", _payload(rng, spec["one"]))
    count, mean = spec["several"]
    several = [
        int(mean * rng.uniform(1 - SEVERAL_SPREAD, 1 + SEVERAL_SPREAD)) for _ in range(count)
    ]
    for i, nbytes in enumerate(several):
        archive.put_object(BUCKET, f"several/object-{i}", _payload(rng, nbytes))
    files, each, per_folder = spec["small"]
    small = {f"d{i // per_folder:03d}/f{i:05d}.dat": rng.randbytes(each) for i in range(files)}
    archive.put_objects(BUCKET, {f"plain/{name}": data for name, data in small.items()})
    bundle_files(archive, small, f"{BUCKET}/packed")
    archive.put_object(BUCKET, f"{STARTUP}/object-0", rng.randbytes(1024))
    return {
        STARTUP: {"files": 1, "bytes": 1024},
        "one_large": {"files": 1, "bytes": spec["one"]},
        "several_large": {"files": count, "bytes": sum(several)},
        "small_files": {"files": files, "bytes": files * each},
    }


# -- the variants, each a command in its own process ------------------------------------


def _commands(variant: str, prefix: str, dest: str, endpoint: str, tmp: str) -> list[str]:
    """The command line of one variant downloading ``BUCKET/prefix/`` into ``dest``."""
    url = f"s3://{BUCKET}/{prefix}/"
    python = [sys.executable, str(Path(children.__file__))]
    if variant == "archivefs_get":
        return [*python, "archivefs-get", endpoint, f"{BUCKET}/{prefix}/", dest]
    if variant == "s3fs_get":
        return [*python, "s3fs-get", endpoint, f"{BUCKET}/{prefix}/", dest]
    if variant == "archivefs_prefetch":
        archivefs = str(Path(sys.executable).with_name("archivefs"))
        return [
            archivefs,
            "prefetch",
            url,
            "--to",
            dest,
            "--endpoint-url",
            endpoint,
            "--journal",
            f"{tmp}/journal.sqlite",
        ]
    if variant == "aws_cli":
        return [AWS, "s3", "cp", "--recursive", "--only-show-errors", url, dest,
                "--endpoint-url", endpoint]  # fmt: skip
    if variant == "boto3_transfer":
        return [*python, "boto3-transfer", endpoint, BUCKET, prefix, dest]
    raise ValueError(f"unknown variant {variant!r}")


def _environment(archive: EmulatedArchive, tmp: str) -> dict[str, str]:
    """The children's environment: the emulator's credentials, no user AWS configuration."""
    options = archive.storage_options()
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **inherited,
        "PYTHONPYCACHEPREFIX": PYCACHE,  # compiled once (the warm-up), as installed
        "PYTHONPATH": path,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "AWS_ACCESS_KEY_ID": options["key"],
        "AWS_SECRET_ACCESS_KEY": options["secret"],
        "AWS_DEFAULT_REGION": options["client_kwargs"]["region_name"],
        "AWS_CONFIG_FILE": f"{tmp}/no-aws-config",
        "AWS_SHARED_CREDENTIALS_FILE": f"{tmp}/no-aws-credentials",
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def _run_command(
    command: list[str], env: dict[str, str], tmp: str
) -> tuple[float, int, float, float]:
    """Run ``command``; its wall seconds, peak resident memory in bytes, CPU seconds (user
    and system) and the ``time.time()`` it was started at.

    The peak is GNU time's ``%M``: the maximum RSS of the command's own process
    (``wait4`` of it here would report at least this process's RSS: a child
    forked from it counts the parent's pages until it execs).
    """
    if not Path(TIME).exists():
        raise RuntimeError(f"{TIME} (GNU time) is needed to read each variant's peak memory")
    started = time.time()
    start = time.perf_counter()
    completed = subprocess.run(
        [TIME, "-f", "%M %U %S", "-o", f"{tmp}/rss", *command],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        text = completed.stderr.decode(errors="replace")[-3000:]
        raise RuntimeError(f"{command[:4]} exited {completed.returncode}:\n{text}")
    kib, user, system = Path(f"{tmp}/rss").read_text().split()[-3:]
    return seconds, int(kib) * 1024, float(user) + float(system), started


def _downloaded(dest: str) -> tuple[int, int]:
    """Files and bytes under ``dest``, but for the manifest ``prefetch --to`` keeps there
    (what it wrote, so that a second run skips unchanged files): bookkeeping, not data."""
    manifest = Path(dest) / MANIFEST
    files = [p for p in Path(dest).rglob("*") if p.is_file() and p != manifest]
    return len(files), sum(p.stat().st_size for p in files)


def _measure(
    archive: EmulatedArchive,
    proxy: ShapingProxy,
    variant: str,
    prefix: str,
    expected: dict[str, Any],
) -> dict[str, Any]:
    """One sample of one variant: time, MB/s, requests at the server, peak memory."""
    with tempfile.TemporaryDirectory() as tmp:
        dest = f"{tmp}/out"
        os.mkdir(dest)
        command = _commands(variant, prefix, dest, proxy.endpoint_url, tmp)
        env = _environment(archive, tmp)
        archive.requests.clear()
        proxy.reset()
        seconds, peak, cpu, started = _run_command(command, env, tmp)
        counts = proxy.reset()
        files, nbytes = _downloaded(dest)
    if (files, nbytes) != (expected["files"], expected["bytes"]):
        raise AssertionError(
            f"{variant} of {prefix}/ wrote {files} files of {nbytes} bytes, expected "
            f"{expected['files']} of {expected['bytes']}"
        )
    per_op = archive.requests.counts()
    return {
        "seconds": seconds,
        "MB_per_s": nbytes / seconds / 1e6,
        "GET": per_op.get("GET", 0),
        "HEAD": per_op.get("HEAD", 0),
        "LIST": per_op.get("LIST", 0),
        "requests": sum(per_op.values()),
        "connections": counts.connections,
        "bytes_down": counts.bytes_down,
        "peak_rss_MiB": peak / MiB,
        "cpu_s": cpu,
        # from the command's start to its first connection: its start-up before any request
        "first_request_s": (counts.first_connection or started + seconds) - started,
    }


# -- the benchmark ---------------------------------------------------------------------

VARIANTS = {
    # workload -> variant name -> (command, prefix it reads)
    STARTUP: {
        name: (name, STARTUP)
        # s3fs_get: s3fs alone, the floor of any command built on it (start-up only)
        for name in ("archivefs_get", "archivefs_prefetch", "aws_cli", "boto3_transfer", "s3fs_get")
    },
    "one_large": {
        "archivefs_get": ("archivefs_get", "one"),
        "archivefs_prefetch": ("archivefs_prefetch", "one"),
        "aws_cli": ("aws_cli", "one"),
        "boto3_transfer": ("boto3_transfer", "one"),
    },
    "several_large": {
        "archivefs_get": ("archivefs_get", "several"),
        "archivefs_prefetch": ("archivefs_prefetch", "several"),
        "aws_cli": ("aws_cli", "several"),
        "boto3_transfer": ("boto3_transfer", "several"),
    },
    "small_files": {
        "archivefs_get_bundled": ("archivefs_get", "packed"),
        "archivefs_prefetch_bundled": ("archivefs_prefetch", "packed"),
        "archivefs_get_plain": ("archivefs_get", "plain"),
        "aws_cli_plain": ("aws_cli", "plain"),
        "boto3_transfer_plain": ("boto3_transfer", "plain"),
    },
}


EMULATOR_SHAPE = {"smoke": "smoke", "default": "default", "full": "default"}
"""The workload sizes the emulator runs at each size. At ``full`` it keeps the default
sizes: moto builds every ranged GET's body from the whole object, so a ranged download
of a 650 MiB object runs at the server's copying speed whoever the client is; the full
sizes run on radosgw."""


def run(archive: EmulatedArchive, size: str, *, radosgw: bool | None = None) -> Result:
    """Every workload and variant on the emulator (at :data:`EMULATOR_SHAPE`'s sizes), then
    on radosgw at ``size``'s if ``radosgw`` (default: at the default and full sizes, where
    Ceph's programs are installed)."""
    from archivefs.testing._rgw import missing_binaries

    shape = EMULATOR_SHAPE[size]
    latency = archive.latency
    archive.set_latency(0.0)  # the proxy shapes the link instead
    try:
        result = _result(shape, *_sample_on(archive, shape, SAMPLES[size]))
    finally:
        archive.set_latency(latency)
    result.parameters["samples"] = SAMPLES[size]
    result.server = {
        "process": "own process",
        "latency_s": 0.0,
        "proxy": f"{LATENCY * 1000:g} ms each way, {RATE / 1e6:g} MB/s per connection",
    }
    if radosgw is None:
        radosgw = size != "smoke" and not missing_binaries()
    if radosgw:
        from archivefs.testing import LocalRGW

        with LocalRGW(capacity=_capacity(size)) as rgw:
            on_rgw = _result(size, *_sample_on(rgw, size, SAMPLES[size]))
        result.parameters["radosgw"] = on_rgw.parameters
        result.archivefs["radosgw"] = on_rgw.archivefs
        result.baseline["radosgw"] = on_rgw.baseline
        result.runs.update({f"radosgw:{name}": cells for name, cells in on_rgw.runs.items()})
        result.headline = f"on the emulator {result.headline}; on radosgw {on_rgw.headline}"
        result.server["radosgw"] = "a local one-node Ceph cluster (archivefs.testing.LocalRGW)"
    return result


def _capacity(size: str) -> int:
    """Room for ``size``'s workloads on radosgw's in-memory OSD: every object, the small
    files twice (plain and bundled), and a GiB for Ceph's own pools and metadata."""
    from archivefs.testing._rgw import DEFAULT_CAPACITY

    spec = SIZES[size]
    count, mean = spec["several"]
    files, each, _ = spec["small"]
    largest_several = count * mean * (1 + SEVERAL_SPREAD)
    return spec["one"] + int(largest_several) + 2 * files * each + DEFAULT_CAPACITY


def _sample_on(server: Any, size: str, samples: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Seed ``server`` with ``size``'s workloads and take ``samples`` of every variant
    through the proxy."""
    expected = _seed(server, size)
    with ShapingProxy(server.endpoint_url, latency=LATENCY, rate=RATE) as proxy:
        runs = {
            workload: sample(
                {
                    name: _variant(server, proxy, command, prefix, expected[workload])
                    for name, (command, prefix) in VARIANTS[workload].items()
                },
                samples,
                warmup=size != "smoke",
            )
            for workload in _workloads(size)
        }
    return expected, runs


def _workloads(size: str) -> tuple[str, ...]:
    return WORKLOADS if size == "smoke" else (STARTUP, *WORKLOADS)


def _net_of_startup(runs: dict[str, Any], expected: dict[str, Any]) -> None:
    """Add ``net_seconds``/``net_MB_per_s`` to the large workloads' samples: each command's
    time less its median start-up time (the one-object workload)."""
    startup = {name: statistics.median(s["seconds"] for s in runs[STARTUP][name])
               for name in runs[STARTUP]}  # fmt: skip
    for workload in ("one_large", "several_large"):
        for name, samples in runs[workload].items():
            for cell in samples:
                cell["startup_seconds"] = startup[VARIANTS[workload][name][0]]
                cell["net_seconds"] = max(cell["seconds"] - cell["startup_seconds"], 1e-3)
                cell["net_MB_per_s"] = expected[workload]["bytes"] / cell["net_seconds"] / 1e6


def _variant(
    archive: EmulatedArchive,
    proxy: ShapingProxy,
    command: str,
    prefix: str,
    expected: dict[str, Any],
) -> Any:
    def measure(i: int) -> dict[str, Any]:
        return _measure(archive, proxy, command, prefix, expected)

    return measure


def _result(size: str, expected: dict[str, Any], runs: dict[str, Any]) -> Result:
    from archivefs.member_reads import BLOCK

    net = STARTUP in runs
    if net:
        _net_of_startup(runs, expected)
    rate = "MB_per_s"  # issue 49: the whole process is the headline (net of start-up apart)
    med = {w: {name: medians(runs[w], name) for name in runs[w]} for w in runs}
    files, each, per_folder = SIZES[size]["small"]
    count = SIZES[size]["several"][0]
    folders = [min(per_folder, files - start) for start in range(0, files, per_folder)]
    bundled_bound = sum(math.ceil(n * each / BLOCK) for n in folders) + CATALOG_GETS
    small = med["small_files"]
    prefetch_gets = small["archivefs_prefetch_bundled"]["GET"]
    get_gets = small["archivefs_get_bundled"]["GET"]

    def large(workload: str) -> str:
        cells = []
        for name, label in (
            ("archivefs_get", "archivefs get"),
            ("archivefs_prefetch", "prefetch --to"),
            ("aws_cli", "aws s3 cp"),
            ("boto3_transfer", "boto3"),
        ):
            cell = med[workload][name]
            mbs = spread(runs[workload], name, "MB_per_s", ".0f", " MB/s")
            extra = f"{cell['net_MB_per_s']:.0f} net of start-up, " if net else ""
            cells.append(f"{label} {mbs} ({extra}peak {cell['peak_rss_MiB']:.0f} MiB)")
        return ", ".join(cells)

    def small_cell(name: str, label: str) -> str:
        seconds = spread(runs["small_files"], name, "seconds", ".1f")
        return f"{label} {seconds} in {small[name]['GET']:.0f} GETs"

    def vs(workload: str, ours: str, theirs: str) -> float:
        return ratio(runs[workload], ours, theirs, rate)

    headline = (
        f"through {LATENCY * 1000:g} ms each way and {RATE / 1e6:g} MB/s per connection: "
        f"1 object of {expected['one_large']['bytes'] / MiB:.0f} MiB: {large('one_large')}; "
        f"{count} objects, {expected['several_large']['bytes'] / MiB:.0f} MiB in all: "
        f"{large('several_large')}; "
        f"{files:,} files of {each // 1024} KiB: "
        + ", ".join(
            [
                small_cell("archivefs_get_bundled", "get of the bundled folder"),
                small_cell("archivefs_prefetch_bundled", "prefetch --to of it"),
                small_cell("archivefs_get_plain", "get of plain objects"),
                small_cell("aws_cli_plain", "aws s3 cp"),
                small_cell("boto3_transfer_plain", "boto3"),
            ]
        )
        + f"; archivefs get has {vs('one_large', 'archivefs_get', 'boto3_transfer'):.2f}x "
        f"boto3's throughput from start to exit on one object, "
        f"{vs('several_large', 'archivefs_get', 'boto3_transfer'):.2f}x on {count}"
    )
    return Result(
        name="line_rate",
        question="Downloading large and many small objects through a WAN-shaped link",
        parameters={
            "proxy_latency_s_each_way": LATENCY,
            "proxy_rate_bytes_per_s_per_connection": RATE,
            "one_large_bytes": expected["one_large"]["bytes"],
            "several_large_objects": count,
            "several_large_bytes": expected["several_large"]["bytes"],
            "small_files": files,
            "small_file_bytes": each,
            "small_files_per_bundled_folder": per_folder,
            "bundled_prefetch_get_bound": bundled_bound,
            "baseline_threads": THREADS,
            "baseline_part_bytes": PART,
            "throughput_metric": rate,
        },
        archivefs={
            **{w: {k: v for k, v in med[w].items() if k.startswith("archivefs")} for w in med},
            "get_vs_boto3_one_large": vs("one_large", "archivefs_get", "boto3_transfer"),
            "get_vs_boto3_several_large": vs("several_large", "archivefs_get", "boto3_transfer"),
            "get_vs_aws_cli_one_large": vs("one_large", "archivefs_get", "aws_cli"),
            "get_vs_aws_cli_several_large": vs("several_large", "archivefs_get", "aws_cli"),
            **(
                {
                    f"get_vs_boto3_{w}_net_of_startup": ratio(
                        runs[w], "archivefs_get", "boto3_transfer", "net_MB_per_s"
                    )
                    for w in ("one_large", "several_large")
                }
                if net
                else {}
            ),
            "bundled_prefetch_within_get_bound": prefetch_gets <= bundled_bound,
            "bundled_prefetch_gets_vs_get": prefetch_gets / get_gets if get_gets else None,
        },
        baseline={
            w: {k: v for k, v in med[w].items() if not k.startswith("archivefs")} for w in med
        },
        baseline_name=(
            f"aws s3 cp --recursive; boto3 TransferManager ({THREADS} threads, "
            f"{PART // MiB} MiB parts)"
        ),
        headline=headline,
        runs={f"{w}:{name}": samples for w in runs for name, samples in runs[w].items()},
    )


LARGE_VARIANTS = {
    "archivefs_get": "archivefs `get`",
    "archivefs_prefetch": "`archivefs prefetch --to`",
    "aws_cli": "`aws s3 cp --recursive`",
    "boto3_transfer": "boto3 TransferManager",
}
SMALL_VARIANTS = {
    "archivefs_get_bundled": "archivefs `get` of the bundled folder",
    "archivefs_prefetch_bundled": "`archivefs prefetch --to` of the bundled folder",
    "archivefs_get_plain": "archivefs `get` of the plain objects",
    "aws_cli_plain": "`aws s3 cp --recursive` of the plain objects",
    "boto3_transfer_plain": "boto3 TransferManager of the plain objects",
}
WHOLE_VS_AWS_CLI = 0.95  # issue 49: whole process, of `aws s3 cp`'s throughput
WHOLE_VS_BOTO3 = 0.9  # issue 49: whole process, of boto3 TransferManager's
DOWNLOAD_VS_BOTO3 = 0.95  # issue 49: the download phase (net of start-up), of boto3's
FIRST_REQUEST_TARGET_S = 0.5  # issue 49: process start to first request, get/prefetch --to
MEMORY_TARGET_MiB = 256
PREFETCH_TIME_TARGET = 1.2  # issue 35: prefetch --to of the bundled folder, against get of it


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's line-rate passage: per server, the variants' whole-process
    throughput, start-up, CPU, memory and requests, and issue 49's targets met or missed,
    from the result file."""
    params = data["parameters"]
    net = any(f"{STARTUP}:" in key for key in data["summary"])
    throughput = (
        "MB/s are from process start to exit (the headline), then net of each command's "
        "start-up (its median time for one 1 KiB object, in the start-up column)"
        if net
        else "MB/s are from process start to exit (no start-up run at this size)"
    )
    lines = [
        f"Through {params['proxy_latency_s_each_way'] * 1000:g} ms each way and "
        f"{params['proxy_rate_bytes_per_s_per_connection'] / 1e6:g} MB/s per connection "
        f"({data['size']} run, {params.get('samples', '?')} alternating samples of each "
        f"variant after a warm-up; medians with min-max). {throughput}; first request is "
        "the time from process start to its first connection; CPU is user + system "
        "seconds; peak is the command's maximum resident memory; requests are counted at "
        "the server. 1-minute load average when the run ended (the run's own server, proxy "
        f"and commands included): {data['machine'].get('load_average', ['?'])[0]}.",
    ]
    servers = [("the emulator (moto)", "", params)]
    if "radosgw" in params:
        servers.append(("radosgw", "radosgw:", params["radosgw"]))
    for label, prefix, shape in servers:
        lines += ["", *_server_passage(data["summary"], label, prefix, shape)]
    return {"line-rate": "\n".join(lines)}


def _server_passage(
    summary: dict[str, Any], label: str, prefix: str, shape: dict[str, Any]
) -> list[str]:
    """One server's tables and targets."""

    def cell(workload: str, name: str, metric: str) -> dict[str, float]:
        return summary[f"{prefix}{workload}:{name}"][metric]

    def text(c: dict[str, float], fmt: str) -> str:
        return f"{c['median']:{fmt}} ({c['min']:{fmt}}-{c['max']:{fmt}})"

    def requests(workload: str, name: str) -> str:
        counts = [(op, cell(workload, name, op)["median"]) for op in ("LIST", "HEAD", "GET")]
        return ", ".join(f"{n:.0f} {op}" for op, n in counts if n)

    count, one = shape["several_large_objects"], shape["one_large_bytes"] / MiB
    several = shape["several_large_bytes"] / MiB
    lines = [
        f"On {label}:",
        "",
        f"| variant | 1 object of {one:.0f} MiB | {count} objects, {several:.0f} MiB in all "
        "| start-up |",
        "|---|---|---|---|",
    ]
    for name, title in LARGE_VARIANTS.items():
        row = [title]
        for workload in ("one_large", "several_large"):
            mbs = text(cell(workload, name, "MB_per_s"), ".0f")
            netted = f"{cell(workload, name, 'net_MB_per_s')['median']:.0f} net, " if (
                "net_MB_per_s" in summary[f"{prefix}{workload}:{name}"]
            ) else ""  # fmt: skip
            peak = cell(workload, name, "peak_rss_MiB")["max"]
            cpu = summary[f"{prefix}{workload}:{name}"].get("cpu_s")
            cpu_text = f"CPU {cpu['median']:.1f} s, " if cpu else ""
            row.append(
                f"{mbs} MB/s ({netted}{cpu_text}peak {peak:.0f} MiB; {requests(workload, name)})"
            )
        startup = summary.get(f"{prefix}{STARTUP}:{name}")
        if startup:
            first = startup.get("first_request_s")
            to_first = f", first request at {first['median']:.2f} s" if first else ""
            row.append(f"{startup['seconds']['median']:.2f} s{to_first}")
        else:
            row.append("-")
        lines.append("| " + " | ".join(row) + " |")
    files, each = shape["small_files"], shape["small_file_bytes"] // 1024
    lines += [
        "",
        f"| {files:,} files of {each} KiB | time | requests | peak |",
        "|---|---|---|---|",
    ]
    for name, title in SMALL_VARIANTS.items():
        lines.append(
            f"| {title} | {text(cell('small_files', name, 'seconds'), '.1f')} s "
            f"| {requests('small_files', name)} "
            f"| {cell('small_files', name, 'peak_rss_MiB')['max']:.0f} MiB |"
        )
    return [*lines, "", *_targets(summary, prefix, shape)]


def _targets(summary: dict[str, Any], prefix: str, shape: dict[str, Any]) -> list[str]:
    """Issue 49's targets on one server, met or missed."""

    def median(key: str, metric: str) -> float:
        return float(summary[f"{prefix}{key}"][metric]["median"])

    out = ["Targets (issue 49):"]
    for workload, what in (("one_large", "one large object"), ("several_large", "several")):
        for name in ("archivefs_get", "archivefs_prefetch"):
            ours = median(f"{workload}:{name}", "MB_per_s")
            aws = ours / median(f"{workload}:aws_cli", "MB_per_s")
            boto3 = ours / median(f"{workload}:boto3_transfer", "MB_per_s")
            out.append(
                f"- {LARGE_VARIANTS[name]} on {what}, whole process: {aws:.2f}x `aws s3 cp` "
                f"(at least {WHOLE_VS_AWS_CLI}x: {verdict(aws >= WHOLE_VS_AWS_CLI)}), "
                f"{boto3:.2f}x boto3 (at least {WHOLE_VS_BOTO3}x: "
                f"{verdict(boto3 >= WHOLE_VS_BOTO3)});"
            )
        if "net_MB_per_s" in summary[f"{prefix}{workload}:archivefs_get"]:
            net = median(f"{workload}:archivefs_get", "net_MB_per_s") / median(
                f"{workload}:boto3_transfer", "net_MB_per_s"
            )
            out.append(
                f"- archivefs `get` on {what}, download phase (net of start-up): {net:.2f}x "
                f"boto3 (at least {DOWNLOAD_VS_BOTO3}x: {verdict(net >= DOWNLOAD_VS_BOTO3)});"
            )
    for name in ("archivefs_get", "archivefs_prefetch"):
        key = f"{prefix}{STARTUP}:{name}"
        if key in summary and "first_request_s" in summary[key]:
            first = float(summary[key]["first_request_s"]["median"])
            out.append(
                f"- {LARGE_VARIANTS[name]}: first request {first:.2f} s after process start, "
                f"at most {FIRST_REQUEST_TARGET_S} s: {verdict(first <= FIRST_REQUEST_TARGET_S)};"
            )
    floor = summary.get(f"{prefix}{STARTUP}:s3fs_get", {}).get("first_request_s")
    if floor:
        boto3_first = summary[f"{prefix}{STARTUP}:boto3_transfer"]["first_request_s"]["median"]
        out.append(
            f"- for comparison, s3fs's own `get` (the stack archivefs reads S3 through) sends "
            f"its first request {floor['median']:.2f} s after process start, boto3 "
            f"{boto3_first:.2f} s;"
        )
    archivefs_runs = [
        summary[key]
        for workload, names in VARIANTS.items()
        for name in names
        if name.startswith("archivefs") and (key := f"{prefix}{workload}:{name}") in summary
    ]
    peak = max(run["peak_rss_MiB"]["max"] for run in archivefs_runs)
    out.append(
        f"- peak memory of every archivefs command at most {MEMORY_TARGET_MiB} MiB: "
        f"{peak:.0f} MiB at most, {verdict(peak <= MEMORY_TARGET_MiB)};"
    )
    for workload in ("one_large", "several_large"):
        boto3 = median(f"{workload}:boto3_transfer", "requests")
        ours = [n for n in LARGE_VARIANTS if n.startswith("archivefs")]
        worst = max(median(f"{workload}:{n}", "requests") for n in ours)
        out.append(
            f"- requests on {workload.replace('_', ' ')}: archivefs at most {worst:.0f}, boto3 "
            f"{boto3:.0f} plus the catalog registry's GET: {verdict(worst <= boto3 + 1)};"
        )

    def net(name: str) -> float:  # a small-files variant's time less its command's start-up
        command = f"{prefix}{STARTUP}:{VARIANTS['small_files'][name][0]}"
        startup = summary[command]["seconds"]["median"] if command in summary else 0.0
        return max(median(f"small_files:{name}", "seconds") - startup, 1e-3)

    plain = median("small_files:archivefs_get_plain", "seconds")
    aws = median("small_files:aws_cli_plain", "seconds")
    boto3 = median("small_files:boto3_transfer_plain", "seconds")
    out.append(
        f"- small files, whole process: `get` of the plain objects took {plain / aws:.2f}x "
        f"`aws s3 cp`'s time and {plain / boto3:.2f}x boto3's: "
        f"{verdict(plain * WHOLE_VS_AWS_CLI <= aws and plain * WHOLE_VS_BOTO3 <= boto3)};"
    )
    bundled = net("archivefs_get_bundled")
    gets = median("small_files:archivefs_prefetch_bundled", "GET")
    prefetch = net("archivefs_prefetch_bundled")
    bound = shape["bundled_prefetch_get_bound"]
    out.append(
        f"- `prefetch --to` of the bundled folder in at most {bound} GETs and "
        f"{PREFETCH_TIME_TARGET}x `get`'s time (net of start-up): {gets:.0f} GETs, "
        f"{prefetch / bundled:.2f}x, "
        f"{verdict(gets <= bound and prefetch <= PREFETCH_TIME_TARGET * bundled)}."
    )
    return out
