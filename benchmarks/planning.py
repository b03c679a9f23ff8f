"""Planning scale: plan and price N archived objects from a known listing.

Three questions, each answered in this run:

- **Time and scaling.** CPU seconds of ``plan_objects`` (straight into columns)
  and of ``estimate`` at 10^4, 10^5 and 10^6 objects (median of the samples),
  side by side with the per-placement path (``make_plan`` of one
  ``PathInGroup`` per object, what a caller with its own placements runs);
  the exponent is the slope of log(CPU s) over log(N) between sizes.
- **Memory.** Bytes traced by ``tracemalloc`` while planning (peak and kept),
  beyond the listing that already holds the states, and with it.
- **Bundle members.** The same sizes of members, 1,024 per bundle, planned
  from their placements (what ``fs.plan`` of a catalog directory runs).
- **Streaming.** 10^7 objects (``--full``: also as one plan) planned and
  priced a batch of 10^6 at a time with ``estimate_batches``: peak memory stays
  that of one batch, and the estimate is checked against its closed form. 10^8
  is extrapolated from the measured exponent, and said to be.
"""

from __future__ import annotations

import gc
import math
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from benchmarks._common import SAMPLES, Result, sample

if TYPE_CHECKING:
    from archivefs.model import ObjectState
    from archivefs.plans import Plan
    from archivefs.testing import EmulatedArchive

SIZES = {
    "smoke": (1_000, 10_000),
    "default": (10_000, 100_000, 1_000_000),
    "full": (10_000, 100_000, 1_000_000, 10_000_000),
}
STREAMED = {"smoke": (20_000, 10_000), "default": (10_000_000, 1_000_000)}
STREAMED["full"] = STREAMED["default"]
OBJECT = 40 << 20  # 40 MiB each, DEEP_ARCHIVE, archived
PER_BUNDLE = 1024
PLACEMENTS_UP_TO = 1_000_000


def listing(start: int, stop: int) -> dict[str, ObjectState]:
    """The states a listing gives for objects ``start`` to ``stop``."""
    from archivefs.model import ObjectState, RestoreState, StorageClass

    return {
        f"bucket/obs/{i:09d}.fits": ObjectState(
            f"bucket/obs/{i:09d}.fits", OBJECT, StorageClass.DEEP_ARCHIVE, RestoreState.ARCHIVED
        )
        for i in range(start, stop)
    }


def traced(build: Any) -> tuple[Any, int, int]:
    """``build()``, and the bytes traced at peak and kept while it ran."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        made = build()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return made, peak - base, kept - base


def exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float | None:
    """Slope of log(seconds) over log(N) between the first and the last size."""
    if len(sizes) < 2 or min(seconds) <= 0:
        return None
    return math.log(seconds[-1] / seconds[0]) / math.log(sizes[-1] / sizes[0])


def one_size(n: int, samples: int) -> dict[str, Any]:
    """Columns vs placements at ``n`` objects: CPU medians and traced bytes."""
    from archivefs.pricing import estimate, load_price_sheet
    from archivefs.restore.planner import make_plan, plan_objects, single_object_groups

    sheet = load_price_sheet("aws-us-east-1")
    states = listing(0, n)

    def columns(_: int) -> dict[str, float]:
        cpu = time.process_time()
        plan = plan_objects(states)
        planned = time.process_time() - cpu
        cpu = time.process_time()
        cost = estimate(plan, sheet, tier="Bulk")
        assert cost.restore_request_count == n
        return {"cpu_s_plan": planned, "cpu_s_estimate": time.process_time() - cpu}

    def placements(_: int) -> dict[str, float]:
        cpu = time.process_time()
        plan = make_plan(single_object_groups(states), states)
        planned = time.process_time() - cpu
        assert len(plan) == n
        return {"cpu_s_plan": planned}

    variants = {"columns": columns, "placements": placements}
    if n > PLACEMENTS_UP_TO:  # 10^7 PathInGroup objects: minutes and gigabytes for nothing new
        del variants["placements"]
    runs = sample(variants, samples, warmup=False)
    row: dict[str, Any] = {"objects": n}
    for name, got in runs.items():
        for metric in got[0]:
            row[f"{name}_{metric}"] = sorted(s[metric] for s in got)[len(got) // 2]
    plan, peak, kept = traced(lambda: plan_objects(states))
    row["columns_peak_B_per_object"] = peak / n
    row["columns_kept_B_per_object"] = kept / n
    del plan
    if "placements" in variants:
        _, peak, kept = traced(lambda: make_plan(single_object_groups(states), states))
        row["placements_peak_B_per_object"] = peak / n
        row["placements_kept_B_per_object"] = kept / n
    states.clear()  # then the listing itself counts too
    _, peak, _ = traced(lambda: plan_objects(listing(0, n)))  # the listing included
    row["columns_peak_with_states_B_per_object"] = peak / n
    return row


def members(n: int, samples: int) -> dict[str, Any]:
    """``n`` bundle members (1,024 per bundle) planned from their placements, as
    ``fs.plan`` of a catalog directory does once the catalog has picked them."""
    from archivefs.model import ObjectState, RestoreState, StorageClass
    from archivefs.pricing import estimate, load_price_sheet
    from archivefs.restore.planner import PathsInGroup, make_plan

    sheet = load_price_sheet("aws-us-east-1")
    per = PER_BUNDLE
    paths = [f"bucket/root/p{i // 10_000:05d}/f{i:09d}.dat" for i in range(n)]
    keys = [f"bucket/root/.archivefs/bundles/b{j:07d}.zip" for j in range(-(-n // per))]
    states = {
        k: ObjectState(k, per * 4096, StorageClass.DEEP_ARCHIVE, RestoreState.ARCHIVED)
        for k in keys
    }
    placements = [
        PathsInGroup(tuple(paths[j * per : (j + 1) * per]), k, 4096 * per, per)
        for j, k in enumerate(keys)
    ]

    def columns(_: int) -> dict[str, float]:
        cpu = time.process_time()
        plan = make_plan(placements, states)
        planned = time.process_time() - cpu
        cpu = time.process_time()
        cost = estimate(plan, sheet, tier="Bulk")
        assert cost.restore_request_count == len(keys)
        return {"cpu_s_plan": planned, "cpu_s_estimate": time.process_time() - cpu}

    runs = sample({"columns": columns}, samples, warmup=False)["columns"]
    _, peak, kept = traced(lambda: make_plan(placements, states))
    return {
        "members": n,
        "cpu_s_plan": sorted(r["cpu_s_plan"] for r in runs)[len(runs) // 2],
        "cpu_s_estimate": sorted(r["cpu_s_estimate"] for r in runs)[len(runs) // 2],
        "peak_B_per_member": peak / n,
        "kept_B_per_member": kept / n,
    }


def batch_plans(n: int, batch: int) -> Iterator[Plan]:
    """Plans of ``n`` objects ``batch`` at a time; each listing is dropped once planned."""
    from archivefs.restore.planner import plan_objects

    for start in range(0, n, batch):
        yield plan_objects(listing(start, min(start + batch, n)))


def streamed(n: int, batch: int) -> dict[str, Any]:
    """``n`` objects planned and priced ``batch`` at a time; CPU s and peak memory."""
    from archivefs.pricing import estimate_batches, load_price_sheet

    sheet = load_price_sheet("aws-us-east-1")
    plans = batch_plans(n, batch)
    cpu = time.process_time()
    cost, peak, _ = traced(lambda: estimate_batches(plans, sheet, tier="Bulk"))
    seconds = time.process_time() - cpu
    assert cost.restore_request_count == n
    assert cost.bytes_restored == n * OBJECT
    return {
        "objects": n,
        "batch": batch,
        "cpu_s_list_plan_estimate": seconds,  # states made per batch, traced: an upper bound
        "peak_MiB": peak / 2**20,
        "restore_requests": cost.restore_request_count,
        "total": cost.total,
    }


def run(archive: EmulatedArchive, size: str) -> Result:
    del archive  # pure: no requests
    samples = min(SAMPLES[size], 3)
    rows = [one_size(n, samples) for n in SIZES[size]]
    sizes = [r["objects"] for r in rows]
    exponents = {
        metric: exponent(
            [r["objects"] for r in rows if metric in r], [r[metric] for r in rows if metric in r]
        )
        for metric in ("columns_cpu_s_plan", "columns_cpu_s_estimate", "placements_cpu_s_plan")
    }
    compared = [r for r in rows if "placements_cpu_s_plan" in r][-1]
    bundled = [members(n, samples) for n in SIZES[size]]
    exponents["members_cpu_s_plan"] = exponent(
        [r["members"] for r in bundled], [r["cpu_s_plan"] for r in bundled]
    )
    stream = streamed(*STREAMED[size])
    per_object = rows[-1]["columns_cpu_s_plan"] / sizes[-1]
    slope = exponents["columns_cpu_s_plan"] or 1.0
    at_1e8 = rows[-1]["columns_cpu_s_plan"] * (1e8 / sizes[-1]) ** slope
    big = rows[-1]
    ours = {
        "rows": rows,
        "exponents": exponents,
        "streamed": stream,
        "members": bundled,
        "extrapolated_cpu_s_plan_1e8": at_1e8,
        "cpu_us_per_object": per_object * 1e6,
    }
    headline = (
        f"{compared['objects']:,} objects: plan {compared['columns_cpu_s_plan']:.2f} CPU s in "
        f"columns vs {compared['placements_cpu_s_plan']:.2f} per placement, estimate "
        f"{compared['columns_cpu_s_estimate']:.2f} CPU s; "
        f"{compared['columns_peak_B_per_object']:.0f} B/object at peak beyond the listing "
        f"({compared['placements_peak_B_per_object']:.0f} per placement); {big['objects']:,} "
        f"in {big['columns_cpu_s_plan']:.2f} CPU s; "
        f"exponent {slope:.2f} from {sizes[0]:,}; {stream['objects']:,} streamed in batches of "
        f"{stream['batch']:,}: peak {stream['peak_MiB']:.0f} MiB; 10^8 extrapolated "
        f"~{at_1e8:.0f} CPU s"
    )
    return Result(
        name="planning",
        question="Planning scale",
        parameters={
            "sizes": sizes,
            "samples": samples,
            "streamed": list(STREAMED[size]),
            "object_bytes": OBJECT,
        },
        archivefs=ours,
        baseline={"rows": [{k: v for k, v in r.items() if "placements" in k} for r in rows]},
        baseline_name="per-placement planning (make_plan of one PathInGroup per object)",
        headline=headline,
        runs={f"objects_{r['objects']}": [r] for r in rows},  # medians per size
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's planning note, from the result file."""
    ours = data["archivefs"]
    rows, stream = ours["rows"], ours["streamed"]
    big, small = rows[-1], rows[0]
    compared = [r for r in rows if "placements_cpu_s_plan" in r][-1]
    m = ours["members"][-1]
    slope = ours["exponents"]["columns_cpu_s_plan"]
    return {
        "planning": (
            f"- **Planning {compared['objects']:,} objects** (a listing of archived objects, "
            f"medians of {data['parameters'].get('samples', 'the')} samples) takes "
            f"{compared['columns_cpu_s_plan']:.2f} CPU s into columns and "
            f"{compared['columns_cpu_s_estimate']:.2f} CPU s to price; the per-placement path "
            f"takes {compared['placements_cpu_s_plan']:.2f} CPU s. A plan costs "
            f"{compared['columns_peak_B_per_object']:.0f} B per object at peak and keeps "
            f"{compared['columns_kept_B_per_object']:.0f} B beyond the listing "
            f"({compared['placements_peak_B_per_object']:.0f} and "
            f"{compared['placements_kept_B_per_object']:.0f} per placement; "
            f"{compared['columns_peak_with_states_B_per_object']:.0f} B with the listing "
            f"itself). {big['objects']:,} objects plan in {big['columns_cpu_s_plan']:.2f} CPU s "
            f"at {big['columns_peak_B_per_object']:.0f} B per object at peak. "
            f"CPU time grows with exponent {slope:.2f} from {small['objects']:,} to "
            f"{big['objects']:,}. {stream['objects']:,} objects planned and priced in batches "
            f"of {stream['batch']:,} peak at {stream['peak_MiB']:.0f} MiB traced "
            f"({stream['cpu_s_list_plan_estimate']:.1f} CPU s with the listing made per "
            f"batch); 10^8 would take ~{ours['extrapolated_cpu_s_plan_1e8']:.0f} CPU s to plan "
            "(extrapolated from the exponent, not measured). Bundle members (1,024 per "
            f"bundle, as `fs.plan` of a catalog directory plans them): {m['members']:,} plan "
            f"in {m['cpu_s_plan']:.2f} CPU s at {m['peak_B_per_member']:.0f} B per member at "
            f"peak, exponent {ours['exponents']['members_cpu_s_plan']:.2f}."
        )
    }
