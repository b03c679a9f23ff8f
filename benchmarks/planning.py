"""Planning scale: plan 10^6 objects from a known listing: CPU seconds and peak memory."""

from __future__ import annotations

import time
import tracemalloc
from typing import TYPE_CHECKING

from benchmarks._common import Result

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
    del states, plan
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
        f"{n:,} objects: plan {planned:.2f} CPU s ({per_100k:.2f} s per 10^5), "
        f"estimate {estimated:.2f} CPU s, "
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
        samples={"plan_cpu_s": [planned]},
    )
