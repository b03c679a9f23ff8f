"""Planning a glob over a bundled root: ``fs.plan("root/**")`` against sorting the
members' names (issue #49).

A catalog of N members (:mod:`benchmarks.scale`'s layout: 1,000 per directory, 1,024
per bundle, the bundles DEEP_ARCHIVE) is put in the emulator. On one filesystem, its
catalog loaded once (untimed), each sample plans, in turn:

- ``directory``: ``fs.plan(root)``, the catalog directory (the bulk planner's own case);
- ``glob_all``: ``fs.plan(root + "/**")``;
- ``glob_pattern``: ``fs.plan(root + "/*/*/*.dat")``: a pattern matched against every name;
- ``glob_1pct``: ``fs.plan(root + "/p00/**")``: one part in a hundred.

The yardstick is ``sorted()`` of the members' names in a shuffled order (``sort_names``):
what any tool pays to put N names in order. Target: each glob plan takes at most
:data:`TARGET` times that at 10^5 and 10^6 members. Each plan asks the bundles' states
with one bulk listing (counted at the server, and within the time).
"""

from __future__ import annotations

import gc
import random
import time
from typing import TYPE_CHECKING, Any

from benchmarks import scale
from benchmarks._common import SAMPLES, Result, medians, sample, spread, verdict

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": (10_000,), "default": (100_000, 1_000_000), "full": (100_000, 1_000_000)}
TARGET = 10.0  # a glob plan's time per the time of sorting the members' names
TARGET_FROM = 100_000  # the target's sizes: below, the plan's one listing outweighs the names
PATTERNS = {
    "directory": "",
    "glob_all": "/**",
    "glob_pattern": "/*/*/*.dat",
    "glob_1pct": "/p00/**",
}


def run(archive: EmulatedArchive, size: str) -> Result:
    rows: dict[int, dict[str, Any]] = {}
    runs: dict[str, list[dict[str, Any]]] = {}
    for n in SIZES[size]:
        archive.reset()
        scale.build(archive, n)
        measured = _sample_size(archive, n, SAMPLES[size])
        rows[n] = {w: medians(measured, w) for w in measured}
        rows[n]["spread"] = {w: spread(measured, w, "seconds", ".3f") for w in measured}
        runs.update({f"{w}_{n}": samples for w, samples in measured.items()})
    return _result(size, rows, runs)


def _sample_size(archive: EmulatedArchive, n: int, samples: int) -> dict[str, Any]:
    """Every way's samples over the catalog of ``n`` members just built."""
    from fsspec.asyn import sync

    fs = scale.archive_fs(archive)
    root = f"{scale.BUCKET}/root"
    names = list(sync(fs.loop, fs.catalogs.root_for, root)[1].paths)  # loaded, untimed
    random.Random(49).shuffle(names)

    def measure(way: str) -> Any:
        def one(i: int) -> dict[str, float]:
            gc.collect()  # the sample before's garbage, untimed
            archive.requests.clear()
            if way == "sort_names":
                start = time.perf_counter()
                ordered = sorted(names)
                seconds = time.perf_counter() - start
                assert len(ordered) == n
                return {"seconds": seconds, "requests": 0}
            start = time.perf_counter()
            plan = fs.plan(root + PATTERNS[way])
            seconds = time.perf_counter() - start
            want = n // 100 if way == "glob_1pct" else n
            assert len(plan.paths) == want, (way, len(plan.paths))
            return {"seconds": seconds, "requests": sum(archive.requests.counts().values())}

        return one

    return sample({w: measure(w) for w in ("sort_names", *PATTERNS)}, samples)


def _result(size: str, rows: dict[int, dict[str, Any]], runs: dict[str, Any]) -> Result:
    ratios = {
        n: {w: row[w]["seconds"] / row["sort_names"]["seconds"] for w in PATTERNS}
        for n, row in rows.items()
    }
    met = all(
        ratios[n][w] <= TARGET
        for n in rows
        if n >= TARGET_FROM
        for w in ("glob_all", "glob_pattern")
    )
    largest = max(rows)
    headline = (
        "; ".join(
            f"{n:,} members: plan of root/** {rows[n]['glob_all']['seconds']:.3f}s "
            f"({ratios[n]['glob_all']:.1f}x sorting the names), of root/*/*/*.dat "
            f"{ratios[n]['glob_pattern']:.1f}x, of the directory {ratios[n]['directory']:.1f}x, "
            f"{rows[n]['glob_all']['requests']:.0f} request per plan"
            for n in sorted(rows)
        )
        + f"; target <= {TARGET:g}x from {TARGET_FROM:,} members: {verdict(met)}"
    )
    return Result(
        name="glob_planning",
        question="Planning a glob over a bundled root",
        parameters={
            "sizes": sorted(rows),
            "per_dir": scale.PER_DIR,
            "per_bundle": scale.PER_BUNDLE,
            "patterns": PATTERNS,
            "target_x_sort": TARGET,
            "samples": SAMPLES[size],
        },
        archivefs={
            "rows": {str(n): row for n, row in rows.items()},
            "x_sort_names": {str(n): r for n, r in ratios.items()},
            "target_met": met,
            "largest": largest,
        },
        baseline={"sort_names_s": {str(n): rows[n]["sort_names"]["seconds"] for n in rows}},
        baseline_name="sorted() of the members' names, shuffled",
        headline=headline,
        runs=runs,
        size=size,
    )


def render(data: dict[str, Any]) -> dict[str, str]:
    """docs/benchmarks.md's table of glob plans against sorting the names."""
    result = data["archivefs"]
    lines = [
        "<!-- generated by `python -m benchmarks`; do not edit by hand -->",
        "| members | sort the names (s) | plan `root` | plan `root/**` "
        "| plan `root/*/*/*.dat` | plan `root/p00/**` |",
        "|---|---|---|---|---|---|",
    ]
    for n, row in sorted(result["rows"].items(), key=lambda kv: int(kv[0])):
        x = result["x_sort_names"][n]
        cells = [
            f"{row[w]['seconds']:.3f} s ({x[w]:.1f}x)"
            for w in ("directory", "glob_all", "glob_pattern", "glob_1pct")
        ]
        lines.append(
            f"| {int(n):,} | {row['sort_names']['seconds']:.3f} | " + " | ".join(cells) + " |"
        )
    target = data["parameters"]["target_x_sort"]
    lines.append("")
    lines.append(
        f"Medians of {data['parameters']['samples']} samples; each plan includes its one bulk "
        f"listing of the bundles' states. Target: a glob plan at most {target:g}x sorting the "
        f"names from {TARGET_FROM:,} members: {verdict(result['target_met'])}."
    )
    return {"glob-planning": "\n".join(lines) + "\n"}
