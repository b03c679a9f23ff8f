"""Planning scale: plan 10^6 objects from a known listing: CPU seconds and peak memory."""

from __future__ import annotations

import time
import tracemalloc
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, medians, sample, spread

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": 10_000, "default": 1_000_000, "full": 1_000_000}


def run(archive: EmulatedArchive, size: str) -> Result:
    from archivefs.model import ObjectState, RestoreState, StorageClass
    from archivefs.pricing import estimate, load_price_sheet
    from archivefs.restore.planner import make_plan, single_object_groups

    del archive  # pure: no requests
    n = SIZES[size]

    def listing() -> dict[str, ObjectState]:
        return {
            f"bucket/obs/{i:07d}.fits": ObjectState(
                f"bucket/obs/{i:07d}.fits",
                40 << 20,
                StorageClass.DEEP_ARCHIVE,
                RestoreState.ARCHIVED,
            )
            for i in range(n)
        }

    def timed_pass(i: int) -> dict[str, float]:
        cpu = time.process_time()  # timing pass, without tracemalloc's overhead
        states = listing()
        built = time.process_time() - cpu
        cpu = time.process_time()
        plan = make_plan(single_object_groups(states), states)
        planned = time.process_time() - cpu
        cpu = time.process_time()
        cost = estimate(plan, load_price_sheet("aws-us-east-1"), tier="Bulk")
        estimated = time.process_time() - cpu
        assert cost.restore_request_count == n
        return {
            "cpu_seconds_listing_to_states": built,
            "cpu_seconds_plan": planned,
            "cpu_seconds_estimate": estimated,
        }

    # one variant (absolute figures): samples in a row; pure CPU, no warm-up needed
    runs = sample({"archivefs": timed_pass}, SAMPLES[size], warmup=False)
    med = medians(runs, "archivefs")
    built, planned, estimated = (
        med["cpu_seconds_listing_to_states"],
        med["cpu_seconds_plan"],
        med["cpu_seconds_estimate"],
    )
    tracemalloc.start()  # memory pass
    states = listing()
    plan = make_plan(single_object_groups(states), states)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(plan.to_restore) == n
    ours = {
        "objects": n,
        "cpu_seconds_listing_to_states": built,
        "cpu_seconds_plan": planned,
        "cpu_seconds_estimate": estimated,
        "peak_memory_MiB": peak / 2**20,
        "bytes_per_object": peak / n,
    }
    per_100k = planned / n * 100_000
    headline = (
        f"{n:,} objects: plan {spread(runs, 'archivefs', 'cpu_seconds_plan', unit=' CPU s')} "
        f"({per_100k:.2f} s per 10^5), "
        f"estimate {spread(runs, 'archivefs', 'cpu_seconds_estimate', unit=' CPU s')}, "
        f"peak {peak / 2**20:.0f} MiB with the states ({peak / n:.0f} B/object)"
    )
    return Result(
        name="planning",
        question="Planning scale",
        parameters={"objects": n},
        archivefs=ours,
        baseline={},
        baseline_name="(absolute; target: 10^5 well under 1 CPU s)",
        headline=headline,
        runs=runs,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's planning note, from the result file."""
    ours, plan = data["archivefs"], data["summary"]["archivefs"]["cpu_seconds_plan"]
    n = ours["objects"]
    per_100k = plan["median"] / n * 100_000
    verdict = "well under" if per_100k < 0.5 else "under" if per_100k < 1 else "over"
    return {
        "planning": (
            f"- **Planning {n:,} objects** takes {plan['median']:.2f} CPU s (min "
            f"{plan['min']:.2f}, max {plan['max']:.2f}, {data['sample_counts']['archivefs']} "
            f"samples) and {ours['peak_memory_MiB']:.0f} MiB at peak including the object "
            f"states themselves; 10^5 objects plan in {per_100k:.2f} CPU s, {verdict} a second."
        )
    }
