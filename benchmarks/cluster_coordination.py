"""Across machines: one coordinator vs per-worker polling, and claims vs no claims.

Polling: a restore-aware graph over N archived groups on a 4-worker Dask cluster,
computed with per-group polling on the workers (each ready task polls its own
group with HEAD, every ``poll_interval`` seconds) and with one coordinator task
polling all groups in bulk. Counted at the server while computing: status
requests (HEAD, LIST), per coordinator round and per poll interval; timed: the
first and the last result, from ``compute``. The restores are sent before the
clock starts (``restore_aware`` submits them), the same way for both. The
variants alternate, after a warm-up run of each on 8 groups (worker imports,
connection pools).

Claims: 4 processes standing for 4 hosts (one journal each, no shared file)
restore the same N groups at once, with and without claims in the bucket;
counted: RestoreObject requests sent in all (duplicates are those beyond N) and
the claims' own PUT and GET requests. Alternating too.

The issue's size is 10,000 groups (``--full``); ``default`` is what completes
in minutes on a shared 2-core machine, and the docs say which size ran.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import ROOT, Result, Runs, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

# groups, restore delay (s), samples
SIZES = {"smoke": (60, 2.0, 1), "default": (2000, 10.0, 3), "full": (10_000, 30.0, 3)}
WORKERS = 4
HOSTS = 4
LIST_PAGE = 1000  # keys per listing: the bound of a bulk round is ceil(restoring / 1000)
PARTS = 8  # the computation's results: each sums 1/8 of the groups


def _seed_store(archive: EmulatedArchive, bucket: str, groups: int, tmp: Path) -> None:
    import numpy as np
    import xarray as xr

    data = np.arange(groups * 4, dtype="f8").reshape(groups, 4)
    local = tmp / f"{bucket}.zarr"
    xr.Dataset({"v": (("t", "x"), data)}).chunk({"t": 1}).to_zarr(
        local, mode="w", consolidated=False, zarr_format=3
    )
    archive.create_bucket(bucket)
    hot, cold = {}, {}
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        (hot if file.name == "zarr.json" else cold)[f"store.zarr/{rel}"] = file.read_bytes()
    archive.put_objects(bucket, hot)
    archive.put_objects(bucket, cold, storage_class="GLACIER")


def _one_computation(
    archive: EmulatedArchive, client: Any, bucket: str, delay: float, coordinate: bool
) -> dict[str, float]:
    from distributed import as_completed

    import archivefs.datasets as ads

    began = time.perf_counter()
    ds = ads.open_zarr(
        f"s3://{bucket}/store.zarr",
        storage_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        restore_time_scale=delay / (4 * 3600),  # Standard 3-5 h -> around the delay
        skip_instance_cache=True,
        pickle_credentials=True,  # the emulator's dummy keys: workers have no others
    )
    poll_interval = delay / 4
    gated = ads.restore_aware(
        ds["v"], timeout=600, poll_interval=poll_interval, coordinate=coordinate
    )
    archive.requests.clear()
    steps = ds.sizes["t"]
    part = max(1, math.ceil(steps / PARTS))
    start = time.perf_counter()
    parts = [gated.isel(t=slice(i, i + part)).sum() for i in range(0, steps, part)]
    futures = client.compute(parts)
    first = None
    for _ in as_completed(futures):
        first = time.perf_counter() - start if first is None else first
    total = time.perf_counter() - start
    records = archive.requests.records
    head, listing = archive.requests.count("HEAD"), archive.requests.count("LIST")
    metrics: dict[str, float] = {
        "first_result_s": first or 0.0,
        "all_results_s": total,
        "status_requests": head + listing,
        "head": head,
        "list": listing,
        "gets": archive.requests.count("GET"),
        "sample_s": time.perf_counter() - began,  # submission included: what a run costs
    }
    if coordinate:
        rounds = _final_stats(ads, gated, steps)["rounds"]
        metrics |= {
            "poll_rounds": rounds,
            "status_requests_per_round": (head + listing) / rounds,
            "bound_per_round": math.ceil(steps / LIST_PAGE),
        }
    else:  # no rounds: each waiting group polls on its own, every poll_interval
        heads = sorted(r.time for r in records if r.op == "HEAD")
        metrics |= {
            "polls_per_group": head / steps,
            "status_requests_per_round": _peak_in_window(heads, poll_interval),
        }
    return metrics


def _final_stats(ads: Any, gated: Any, groups: int) -> dict[str, int]:
    """The coordinator's last published progress (published just before it returns)."""
    deadline = time.monotonic() + 60
    while True:
        [stats] = ads.coordination_stats(gated)
        if stats["ready"] == groups or time.monotonic() > deadline:
            return dict(stats)
        time.sleep(0.1)


def _peak_in_window(times: list[float], window: float) -> int:
    """The most requests sent within any ``window`` seconds: HEADs per poll interval."""
    peak, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] > window:
            lo += 1
        peak = max(peak, hi - lo + 1)
    return peak


def _polling(archive: EmulatedArchive, groups: int, delay: float, samples: int) -> Runs:
    from distributed import Client, LocalCluster

    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(
            n_workers=WORKERS, threads_per_worker=2, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):

        def variant(name: str) -> Any:
            def measure(i: int) -> dict[str, float]:
                # the warm-up (i < 0): both variants pay imports and worker start-up
                bucket = f"cc-{name}-{'w' if i < 0 else i}"
                _seed_store(archive, bucket, 8 if i < 0 else groups, Path(tmp))
                archive.set_restore_delay(0.1 if i < 0 else delay)
                return _one_computation(
                    archive, client, bucket, 0.1 if i < 0 else delay, name == "coordinator"
                )

            return measure

        return sample({name: variant(name) for name in ("coordinator", "per-group")}, samples)


def _claims(archive: EmulatedArchive, groups: int, samples: int) -> Runs:
    with tempfile.TemporaryDirectory() as tmp:

        def variant(claims: bool) -> Any:
            def measure(i: int) -> dict[str, float]:
                n = 8 if i < 0 else groups
                archive.set_restore_delay(3600.0)  # nothing completes while the hosts race
                bucket = f"cc-claims-{'on' if claims else 'off'}-{'w' if i < 0 else i}"
                paths = _seed_flat(archive, bucket, n)
                archive.requests.clear()
                start = time.perf_counter()
                _race(archive, paths, claims, Path(tmp) / bucket)
                seconds = time.perf_counter() - start
                claim_records = [
                    r for r in archive.requests.records if (r.key or "").startswith(".archivefs/")
                ]
                sent = archive.requests.count("RestoreObject")
                return {
                    "restore_requests": sent,
                    "duplicate_restores": sent - n,
                    "claim_put": sum(r.op == "PUT" for r in claim_records),
                    "claim_get": sum(r.op == "GET" for r in claim_records),
                    "seconds": seconds,
                }

            return measure

        return sample({"claims": variant(True), "no-claims": variant(False)}, samples)


def _seed_flat(archive: EmulatedArchive, bucket: str, n: int) -> list[str]:
    archive.create_bucket(bucket)
    keys = [f"o/{i:06d}" for i in range(n)]
    archive.put_objects(bucket, dict.fromkeys(keys, b"x"), storage_class="GLACIER")
    return [f"{bucket}/{k}" for k in keys]


def _race(archive: EmulatedArchive, paths: list[str], claims: bool, journals: Path) -> None:
    """``HOSTS`` processes, each with its own journal, restore ``paths`` at once."""
    procs = []
    journals.mkdir(parents=True, exist_ok=True)
    for host in range(HOSTS):
        config = {
            "storage_options": archive.storage_options(),
            "journal": str(journals / f"host-{host}" / "journal.sqlite"),
            "paths": paths,
            "bucket_claims": claims,
        }
        # in a file: 10,000 paths on the command line pass the kernel's limit of one argument
        config_file = journals / f"host-{host}.json"
        config_file.write_text(json.dumps(config))
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", __name__, str(config_file)],
                stderr=subprocess.PIPE,
                cwd=ROOT,
            )
        )
    for proc in procs:
        _, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(err.decode())


def _host(config: dict[str, Any]) -> None:
    """One "host": restore every path, with its own journal (run as a subprocess)."""
    from archivefs.filesystem import ArchiveFileSystem

    Path(config["journal"]).parent.mkdir(parents=True, exist_ok=True)
    fs = ArchiveFileSystem(
        target_options=config["storage_options"],
        journal=config["journal"],
        restore_status_in_listings=True,
        bucket_claims=config["bucket_claims"],
        skip_instance_cache=True,
    )
    fs.submit(fs.plan(config["paths"]))


def _compare(ours: float, theirs: float) -> str:
    """How ``ours`` (a time) compares with ``theirs``, from the two medians."""
    ratio = ours / theirs if theirs else float("inf")
    word = "faster than" if ratio <= 0.95 else "on par with" if ratio <= 1.05 else "slower than"
    return f"{word} per-group polling ({ratio:.2f}x its time)"


def run(archive: EmulatedArchive, size: str) -> Result:
    groups, delay, samples = SIZES[size]
    runs = _polling(archive, groups, delay, samples)
    claims = _claims(archive, groups, samples)
    ours, base = medians(runs, "coordinator"), medians(runs, "per-group")
    with_claims, without = medians(claims, "claims"), medians(claims, "no-claims")
    headline = (
        f"{groups:,} groups on {WORKERS} workers, restore delay {delay:g} s: the coordinator "
        f"sent {ours['status_requests_per_round']:.1f} status requests per bulk round "
        f"(bound ceil({groups:,}/1000) = {ours['bound_per_round']}; "
        f"{ours['list']:.0f} LIST + {ours['head']:.0f} HEAD in {ours['poll_rounds']:.0f} rounds) "
        f"vs {base['status_requests_per_round']:.0f} HEAD per poll interval polling each group "
        f"on its worker ({base['head']:.0f} HEAD in all); first result "
        f"{spread(runs, 'coordinator', 'first_result_s', '.1f')} vs "
        f"{spread(runs, 'per-group', 'first_result_s', '.1f')} "
        f"({_compare(ours['first_result_s'], base['first_result_s'])}), all results "
        f"{spread(runs, 'coordinator', 'all_results_s', '.1f')} vs "
        f"{spread(runs, 'per-group', 'all_results_s', '.1f')}; {HOSTS} hosts restoring the "
        f"same groups sent {with_claims['restore_requests']:.0f} RestoreObject with claims "
        f"({with_claims['duplicate_restores']:.0f} duplicates) vs "
        f"{without['restore_requests']:.0f} without ({without['duplicate_restores']:.0f})"
    )
    return Result(
        name="cluster_coordination",
        question="Cluster-wide polling and cross-host dedupe",
        parameters={
            "groups": groups,
            "delay_s": delay,
            "poll_interval_s": delay / 4,
            "workers": WORKERS,
            "threads_per_worker": 2,
            "hosts": HOSTS,
            "issue_size_groups": SIZES["full"][0],
        },
        archivefs={**ours, **{f"hosts_{k}": v for k, v in with_claims.items()}},
        baseline={**base, **{f"hosts_{k}": v for k, v in without.items()}},
        baseline_name="each worker polls its group with HEAD; no claims",
        headline=headline,
        runs={**runs, **claims},
    )


def _pairs(data: dict[str, Any], metric: str) -> str:
    """The coordinator/per-group ratio of each alternating pair, when there are several."""
    pairs = list(zip(data["samples"]["coordinator"], data["samples"]["per-group"], strict=True))
    if len(pairs) < 2:
        return ""
    ratios = ", ".join(f"{a[metric] / b[metric]:.2f}" for a, b in pairs if b[metric])
    return f"; pair by pair {ratios}"


def _samples(data: dict[str, Any], variant: str) -> str:
    count = data["sample_counts"][variant]
    return "1 sample" if count == 1 else f"{count} alternating samples after a warm-up"


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's cluster note, from the result file."""
    s, p = data["summary"], data["parameters"]
    ours, base = s["coordinator"], s["per-group"]
    first, base_first = ours["first_result_s"]["median"], base["first_result_s"]["median"]
    pair = ours["sample_s"]["median"] + base["sample_s"]["median"]
    scale = p["issue_size_groups"] / p["groups"]
    size_note = (
        ""
        if scale <= 1
        else (
            f" The issue's size, {p['issue_size_groups']:,} groups, was not run here: one "
            f"sample pair at {p['groups']:,} groups took {pair:.0f} s (submission, polling "
            f"and reads), so a pair at {p['issue_size_groups']:,} would take about "
            f"{pair * scale / 60:.0f} min if everything scaled linearly "
            "(`python -m benchmarks --full --only cluster_coordination` runs it)."
        )
    )
    puts, gets = s["claims"]["claim_put"]["median"], s["claims"]["claim_get"]["median"]
    claimed = p["hosts"] * p["groups"]
    how = (
        # runs before the claims ledger wrote one claim object per host and group
        ": this run predates the claims ledger, when every host wrote a claim object for "
        "each group and read each one another host held"
        if puts >= claimed
        else ": the ledger, one conditional write per batch of up to 1,000 groups"
    )
    return {
        "cluster-coordination": (
            f"- **Cluster-wide polling** ({p['groups']:,} archived groups, {p['workers']} "
            f"worker processes, restore delay {p['delay_s']:g} s, per-group polls every "
            f"{p['poll_interval_s']:g} s, {_samples(data, 'coordinator')}): the coordinator sent "
            f"{ours['status_requests_per_round']['median']:.1f} status requests per bulk round "
            f"(max {ours['status_requests_per_round']['max']:.1f}; the bound "
            f"ceil(restoring/1000) is {ours['bound_per_round']['median']:.0f}) and "
            f"{ours['head']['max']:.0f} HEAD; per-group polling sent up to "
            f"{base['status_requests_per_round']['median']:.0f} HEAD per poll interval, "
            f"{base['head']['median']:.0f} in all. First result after {first:.1f} s "
            f"(min {ours['first_result_s']['min']:.1f}, max {ours['first_result_s']['max']:.1f})"
            f" vs {base_first:.1f} s ({base['first_result_s']['min']:.1f}-"
            f"{base['first_result_s']['max']:.1f}): the coordinator is "
            f"{_compare(first, base_first)}{_pairs(data, 'first_result_s')}; all results "
            f"{ours['all_results_s']['median']:.1f} s vs "
            f"{base['all_results_s']['median']:.1f} s.{size_note}\n"
            f"- **Claims across hosts** ({p['hosts']} processes with their own journals "
            f"restoring the same {p['groups']:,} groups at once, "
            f"{_samples(data, 'claims')}): "
            f"{s['claims']['restore_requests']['median']:.0f} RestoreObject with claims in the "
            f"bucket ({s['claims']['duplicate_restores']['max']:.0f} duplicates at most; the "
            f"claims cost {puts:.0f} conditional PUT and {gets:.0f} GET, "
            f"{(puts + gets) / claimed:.2f} per host and group{how}) vs "
            f"{s['no-claims']['restore_requests']['median']:.0f} without "
            f"({s['no-claims']['duplicate_restores']['median']:.0f} duplicates). The hosts were "
            f"done after {s['claims']['seconds']['median']:.0f} s with claims and "
            f"{s['no-claims']['seconds']['median']:.0f} s without "
            "(20 ms of server latency per request here)."
        )
    }


if __name__ == "__main__":
    _host(json.loads(Path(sys.argv[1]).read_text()))
