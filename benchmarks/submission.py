"""Restore submission throughput: the batch submitter vs a boto3 thread pool of 8.

archivefs as users run it (a journal claiming each group before its request
and recording its outcome after), without a journal, and with claims in the
bucket as well (``bucket_claims=True``: the claims ledger, written before the
restores; its requests counted beside them), against what a
competent user writes: ``restore_object`` from 8 threads sharing one boto3
client. Against a server with per-request latency, throughput is decided by
how many requests are in flight, so this is where concurrency must pay off.
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, archive_fs, medians, sample, seed_archived, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 200, "default": 2000, "full": 10_000}
THREADS = 8
SLOW = 5  # the second comparison: a server SLOW times farther away, on fewer objects
WARMUP_OBJECTS = 50


def _archivefs(
    archive: EmulatedArchive, n: int, sample_no: int, journal: bool, claims: bool = False
) -> dict[str, Any]:
    name = f"submit-a{'j' if journal else 'n'}{'c' if claims else ''}-{sample_no + 1}"
    paths = seed_archived(archive, name, n)
    with tempfile.TemporaryDirectory() as tmp:
        fs = archive_fs(
            archive,
            journal=f"{tmp}/journal.sqlite" if journal else False,
            bucket_claims=claims,
        )
        plan = fs.plan(paths)
        archive.requests.clear()
        start = time.perf_counter()
        cpu = time.process_time()
        fs.submit(plan)
        cpu = time.process_time() - cpu
        seconds = time.perf_counter() - start
    return _metrics(archive, n, seconds, cpu)


def _boto3_pool(archive: EmulatedArchive, n: int, sample_no: int) -> dict[str, Any]:
    from botocore.config import Config

    name = f"submit-b-{sample_no + 1}"
    seed_archived(archive, name, n)
    client = archive.client(Config(max_pool_connections=THREADS))
    keys = [f"o/{i:06d}" for i in range(n)]
    archive.requests.clear()

    def one(key: str) -> None:
        client.restore_object(Bucket=name, Key=key, RestoreRequest={"Days": 1})

    start = time.perf_counter()
    cpu = time.process_time()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, keys))
    cpu = time.process_time() - cpu
    return _metrics(archive, n, time.perf_counter() - start, cpu)


def _verdict(speedup: float) -> str:
    return (
        "archivefs is faster"
        if speedup >= 1.05
        else "on par"
        if speedup >= 0.95
        else "archivefs is slower"
    )


def _metrics(archive: EmulatedArchive, n: int, seconds: float, cpu: float) -> dict[str, Any]:
    return {
        "seconds": seconds,
        "per_second": n / seconds,
        "client_cpu_seconds": cpu,
        "requests": archive.requests.count("RestoreObject"),
        # every request of the submission (the plan's are before it): with claims, the
        # restores and the claims' own LIST, GET and PUT
        "all_requests": len(archive.requests.records),
        "requests_per_group": len(archive.requests.records) / n,
    }


def run(archive: EmulatedArchive, size: str) -> Result:
    n = SIZES[size]
    archive.set_restore_delay(3600)

    def count(i: int) -> int:
        return WARMUP_OBJECTS if i < 0 else n

    latency = archive.latency
    slow_n = max(n // 4, 50)

    def at(seconds: float, function: Any) -> Any:
        def measure(i: int) -> dict[str, Any]:
            archive.set_latency(seconds)
            try:
                return dict(function(i))
            finally:
                archive.set_latency(latency)

        return measure

    runs = sample(
        {
            "archivefs": lambda i: _archivefs(archive, count(i), i, journal=True),
            "archivefs_no_journal": lambda i: _archivefs(archive, count(i), i, journal=False),
            "archivefs_claims": lambda i: _archivefs(
                archive, count(i), i, journal=True, claims=True
            ),
            "boto3_8_threads": lambda i: _boto3_pool(archive, count(i), i),
            "archivefs_far": at(
                latency * SLOW, lambda i: _archivefs(archive, slow_n, i + 100, journal=True)
            ),
            "boto3_8_threads_far": at(
                latency * SLOW, lambda i: _boto3_pool(archive, slow_n, i + 100)
            ),
        },
        SAMPLES[size],
    )
    ours, nojournal, pool = (
        medians(runs, "archivefs"),
        medians(runs, "archivefs_no_journal"),
        medians(runs, "boto3_8_threads"),
    )
    claims = medians(runs, "archivefs_claims")
    claims_cost = claims["seconds"] / ours["seconds"]
    far, pool_far = medians(runs, "archivefs_far"), medians(runs, "boto3_8_threads_far")
    speedup = ours["per_second"] / pool["per_second"]
    speedup_far = far["per_second"] / pool_far["per_second"]
    cpu_ours = ours["client_cpu_seconds"] / n * 1000
    cpu_pool = pool["client_cpu_seconds"] / n * 1000
    headline = (
        f"{n} restores at {latency * 1000:g} ms: archivefs "
        f"{spread(runs, 'archivefs', 'per_second', '.0f', ' req/s')} with its journal "
        f"({spread(runs, 'archivefs_no_journal', 'per_second', '.0f', ' req/s')} without; "
        f"with bucket claims {spread(runs, 'archivefs_claims', 'per_second', '.0f', ' req/s')}, "
        f"{claims_cost:.2f}x the time, {claims['requests_per_group']:.3f} requests per group) vs "
        f"boto3 with {THREADS} threads "
        f"{spread(runs, 'boto3_8_threads', 'per_second', '.0f', ' req/s')}: {speedup:.2f}x, "
        f"{_verdict(speedup)} (client CPU {cpu_ours:.1f} vs {cpu_pool:.1f} ms per request); "
        f"{slow_n} restores at {latency * SLOW * 1000:g} ms: "
        f"{spread(runs, 'archivefs_far', 'per_second', '.0f', ' req/s')} vs "
        f"{spread(runs, 'boto3_8_threads_far', 'per_second', '.0f', ' req/s')}: "
        f"{speedup_far:.2f}x, {_verdict(speedup_far)}"
    )
    return Result(
        name="submission",
        question="Restore submission throughput",
        parameters={
            "objects": n,
            "threads": THREADS,
            "archivefs_concurrency": 64,
            "far_objects": slow_n,
            "far_latency_s": latency * SLOW,
        },
        archivefs={
            **ours,
            "no_journal": nojournal,
            "claims": claims,
            "claims_time_vs_journal": claims_cost,
            "far": far,
            "speedup_vs_boto3_pool": speedup,
            "speedup_vs_boto3_pool_far": speedup_far,
        },
        baseline={**pool, "far": pool_far},
        baseline_name=f"boto3 restore_object from a pool of {THREADS} threads",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """The docs' passage on submission, from its result file."""
    s, p = data["summary"], data["parameters"]
    ours, pool = s["archivefs"]["per_second"], s["boto3_8_threads"]["per_second"]
    nojournal = s["archivefs_no_journal"]["per_second"]
    far, pool_far = s["archivefs_far"]["per_second"], s["boto3_8_threads_far"]["per_second"]
    cpu = {
        name: s[name]["client_cpu_seconds"]["median"] / p["objects"] * 1000
        for name in ("archivefs", "archivefs_no_journal", "boto3_8_threads")
    }
    speedup, speedup_far = ours["median"] / pool["median"], far["median"] / pool_far["median"]
    claims = ""
    if "archivefs_claims" in s:  # results from before the claims variant have none
        with_claims = s["archivefs_claims"]
        cost = with_claims["seconds"]["median"] / s["archivefs"]["seconds"]["median"]
        claims = (
            f" With claims in the bucket (`bucket_claims=True`): "
            f"{with_claims['per_second']['median']:.0f} req/s, {cost:.2f}x the time of the "
            f"journal alone, {with_claims['requests_per_group']['median']:.3f} requests per "
            "group (the restores and the claims ledger's LIST, GET and PUT)."
        )
    latency = data.get("server", {}).get("latency_s", 0)
    ceiling = p["threads"] / latency if latency else float("inf")  # 8 threads, one each
    reached = pool["median"] / ceiling
    bound = (
        f"CPU-bound, not latency-bound: the boto3 pool reached {reached:.0%} of the "
        f"{ceiling:.0f} req/s its {p['threads']} threads allow at this latency, so the "
        "client spending less CPU per request wins (client and server share the cores)"
        if reached < 0.7
        else f"latency-bound: the boto3 pool reached {reached:.0%} of its {ceiling:.0f} req/s"
    )
    return {
        "submission": (
            f"- **Submission throughput** ({data['sample_counts']['archivefs']} samples): "
            f"{p['objects']} restores at {_latency_ms(data)} ms per request, archivefs with its "
            f"journal sent {ours['median']:.0f} req/s (min {ours['min']:.0f}, max "
            f"{ours['max']:.0f}), {nojournal['median']:.0f} without a journal; a boto3 pool of "
            f"{p['threads']} threads {pool['median']:.0f} req/s ({pool['min']:.0f}-"
            f"{pool['max']:.0f}): {speedup:.2f}x, {_verdict(speedup)}. Client CPU per request: "
            f"{cpu['archivefs']:.1f} ms (journal included), {cpu['archivefs_no_journal']:.1f} "
            f"ms without journal, {cpu['boto3_8_threads']:.1f} ms for boto3; the run is {bound}. "
            f"With the server {p['far_latency_s'] * 1000:g} ms away "
            f"({p['far_objects']} restores), where in-flight requests decide: archivefs "
            f"{far['median']:.0f} req/s vs {pool_far['median']:.0f}, {speedup_far:.2f}x, "
            f"{_verdict(speedup_far)}.{claims}"
        )
    }


def _latency_ms(data: dict[str, Any]) -> str:
    return f"{data.get('server', {}).get('latency_s', 0) * 1000:g}"
