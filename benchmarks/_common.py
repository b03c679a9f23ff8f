"""Shared plumbing: sizes, sampling, result files and the generated docs passages.

Sampling (:func:`sample`): the compared variants run ``samples`` times each,
the order rotating from one sample to the next (so neither always runs first
on a warm or a cold machine), after one discarded warm-up run of each (so
neither pays imports, connection pools or worker start-up alone). Every
metric is kept per sample; result files carry min/median/max of each.
"""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

ROOT = Path(__file__).resolve().parents[1]
DOCS_TABLE = ROOT / "docs" / "benchmarks.md"
GENERATED_DOCS = (
    ROOT / "docs" / "benchmarks.md",
    ROOT / "docs" / "bundles.md",
    ROOT / "docs" / "getting-started.md",
    ROOT / "docs" / "clusters.md",
    ROOT / "docs" / "index.md",
    ROOT / "docs" / "datasets.md",
)

MODULES = [
    "time_to_data",
    "status_polling",
    "submission",
    "hot_read",
    "planning",
    "glob_planning",
    "catalog_listing",
    "scale",
    "bundling",
    "member_reads",
    "read_amplification",
    "time_to_first_result",
    "cluster_coordination",
    "azure_time_to_data",
    "azure_status_polling",
    "parallel_listing",
    "demo",
    "line_rate",
    "netcdf_wan",
    "restore_faults",
    "mount",
    "netcdf_references",
]

# samples per variant and size; smoke runs once (CI speed), every other size >= 3
SAMPLES = {"smoke": 1, "default": 3, "full": 5}

Runs = dict[str, list[dict[str, Any]]]
"""Per variant, one dict of metrics per sample."""


def sample(
    variants: Mapping[str, Callable[[int], dict[str, Any]]],
    samples: int,
    *,
    warmup: bool = True,
) -> Runs:
    """Run each variant ``samples`` times in rotating order, after a warm-up of each.

    A variant is called with the sample number (``-1`` for the warm-up, whose
    result is discarded) and returns its metrics. With two variants the order
    alternates (A B, B A, A B ...); with more, it rotates. A single sample
    (``--smoke``) has no warm-up.
    """
    names = list(variants)
    if warmup and samples > 1:  # one sample (smoke) checks that it runs, not its timing
        for name in names:
            variants[name](-1)
    runs: Runs = {name: [] for name in names}
    for i in range(samples):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            runs[name].append(variants[name](i))
    return runs


def summarise(runs: Runs) -> dict[str, dict[str, dict[str, float]]]:
    """min/median/max of every numeric metric of every variant."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, samples in runs.items():
        metrics: dict[str, dict[str, float]] = {}
        for metric in samples[0] if samples else {}:
            values = [s[metric] for s in samples if isinstance(s.get(metric), int | float)]
            if len(values) == len(samples) and values:
                metrics[metric] = {
                    "min": min(values),
                    "median": statistics.median(values),
                    "max": max(values),
                }
        out[name] = metrics
    return out


def medians(runs: Runs, name: str) -> dict[str, Any]:
    """The median of each metric of one variant (non-numeric metrics: the first sample's)."""
    samples = runs[name]
    out: dict[str, Any] = dict(samples[0])
    for metric, cell in summarise({name: samples})[name].items():
        out[metric] = cell["median"]
    return out


def spread(runs: Runs, name: str, metric: str, fmt: str = ".2f", unit: str = " s") -> str:
    """``median`` and, over several samples, ``(min-max)`` of one metric: ``1.23 s (1.10-1.40)``."""
    values = [s[metric] for s in runs[name]]
    text = f"{format(statistics.median(values), fmt)}{unit}"
    if len(values) > 1:
        text += f" ({format(min(values), fmt)}-{format(max(values), fmt)})"
    return text


def ratio(runs: Runs, numerator: str, denominator: str, metric: str) -> float:
    """median(numerator's metric) / median(denominator's metric)."""
    top = statistics.median(s[metric] for s in runs[numerator])
    bottom = statistics.median(s[metric] for s in runs[denominator])
    return top / bottom if bottom else float("inf")


@dataclass
class Result:
    """One benchmark's outcome: archivefs vs the plain alternative."""

    name: str
    question: str
    parameters: dict[str, Any]
    archivefs: dict[str, Any]
    baseline: dict[str, Any]
    baseline_name: str
    headline: str  # one line for the docs table, from the measurements
    runs: Runs = field(default_factory=dict)  # every sample of every variant
    server: dict[str, Any] = field(default_factory=dict)  # where the emulator ran, its latency
    size: str = "default"
    apart: bool = False  # kept beside the default-size result: see write()

    def to_json(self) -> dict[str, Any]:
        counts = {name: len(samples) for name, samples in self.runs.items()}
        return {
            "name": self.name,
            "question": self.question,
            "size": self.size,
            "machine": machine(),
            "server": self.server,
            "parameters": self.parameters,
            "archivefs": self.archivefs,
            "baseline": {"name": self.baseline_name, **self.baseline},
            "headline": self.headline,
            "sample_counts": counts,
            "summary": summarise(self.runs),
            "samples": self.runs,
        }


def verdict(ok: bool) -> str:
    """How a generated passage marks a target: met, or missed in bold."""
    return "met" if ok else "**missed**"


def machine() -> dict[str, Any]:
    """The machine a result was measured on; ``load_average`` (1, 5 and 15 minutes, taken
    when the result is written) says how busy it was during the run."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "versions": {p: version(p) for p in ("archivefs", "s3fs", "fsspec", "moto", "botocore")},
    }


def timed(function: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = function(*args, **kwargs)
    return time.perf_counter() - start, out


def write(result: Result, out_dir: Path) -> Path:
    """``<out>/<name>.json``; a result marked ``apart`` (a size a benchmark keeps beside
    its default one instead of over it) ``<out>/<name>.<size>.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{result.name}.{result.size}" if result.apart else result.name
    path = out_dir / f"{stem}.json"
    path.write_text(json.dumps(result.to_json(), indent=1, default=str) + "\n")
    return path


def load_results(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Every result file in ``out_dir``, by benchmark name. A result kept apart
    (``<name>.<size>.json``, see :func:`write`) is not one of its own: it is handed to
    its benchmark's renderer as ``data["sizes"][size]`` of the ``<name>.json`` result
    (and stands for it when there is none); the table shows ``<name>.json``."""
    out: dict[str, dict[str, Any]] = {}
    apart: dict[str, dict[str, Any]] = {}
    for path in sorted(out_dir.glob("*.json")):
        data = json.loads(path.read_text())
        if "headline" in data and "summary" in data:  # files of the sampling format only
            (apart if "." in path.stem else out)[path.stem] = data
    for stem, data in apart.items():
        name, size = stem.split(".", 1)
        if name in out:
            out[name].setdefault("sizes", {})[size] = data
        else:
            out[name] = data
    return out


def render_table(results: Mapping[str, dict[str, Any]]) -> str:
    """The docs table, from the result files' headlines."""
    rows = []
    info: dict[str, Any] = {}
    servers, sizes, counts = set(), set(), set()
    for data in results.values():
        info = data["machine"]
        rows.append(f"| {data['question']} | {data['baseline']['name']} | {data['headline']} |")
        sizes.add(data.get("size", "?"))
        server = data.get("server") or {}
        if server:
            servers.add(f"{server.get('process')}, {server.get('latency_s', 0) * 1000:g} ms")
        counts.update(data.get("sample_counts", {}).values())
    header = [
        "<!-- generated by `python -m benchmarks`; do not edit by hand -->",
        "| question | compared with | result |",
        "|---|---|---|",
    ]
    footer = ""
    if info:
        footer = (
            f"\nSizes: {', '.join(sorted(sizes))}; samples per variant: "
            f"{', '.join(map(str, sorted(counts))) or '1'} (times are medians with min-max); "
            f"emulated server: {'; '.join(sorted(servers)) or 'in-process'} latency per request."
            f"\n\nMachine: {info.get('cpus')} CPUs, {info.get('platform')}, "
            f"Python {info.get('python')}; versions {info.get('versions')}."
        )
    return "\n".join(header + rows) + "\n" + footer + "\n"


def render_passages(results: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """Every generated docs passage: ``table`` and each benchmark module's ``render(data)``."""
    import importlib

    passages = {"table": render_table(results)}
    for name, data in results.items():
        if name not in MODULES:
            continue
        module = importlib.import_module(f"benchmarks.{name}")
        render = getattr(module, "render", None)
        if render is not None:
            passages.update(render(data))
    return passages


def _markers(name: str) -> tuple[str, str]:
    if name == "table":  # the historical markers of the results table
        return "<!-- results:start -->", "<!-- results:end -->"
    return f"<!-- results:{name}:start -->", f"<!-- results:{name}:end -->"


_SECTION = re.compile(
    r"<!-- results(?::([\w-]+))?:start -->\n?(.*?)<!-- results(?::\1)?:end -->", re.S
)


def generated_sections(text: str) -> dict[str, str]:
    """The generated passages in a docs page, by name (what lies between its markers)."""
    return {(m.group(1) or "table"): m.group(2) for m in _SECTION.finditer(text)}


def fill(text: str, passages: Mapping[str, str]) -> str:
    """``text`` with each marked section replaced by its passage (unknown names left alone)."""
    for name in generated_sections(text):
        if name not in passages:
            continue
        start, end = _markers(name)
        body = passages[name].rstrip("\n") + "\n"
        text = text[: text.index(start) + len(start)] + "\n" + body + text[text.index(end) :]
    return text


def update_docs(out_dir: Path) -> None:
    """Regenerate every marked passage of the docs from the result files in ``out_dir``.

    Refuses (``ValueError``, before writing anything) when any of them is from a smoke
    run: the docs quote measured figures, and smoke sizes measure nothing worth quoting.
    """
    results = load_results(out_dir)
    smoke = sorted(name for name, data in results.items() if data.get("size") == "smoke")
    if smoke:
        raise ValueError(
            f"{out_dir}: {', '.join(smoke)} {'is' if len(smoke) == 1 else 'are'} from a "
            "--smoke run; the docs are rendered only from default or --full runs. Run "
            "those benchmarks without --smoke (python -m benchmarks --only NAME --docs)."
        )
    passages = render_passages(results)
    for doc in GENERATED_DOCS:
        text = doc.read_text()
        if doc == DOCS_TABLE and "<!-- results:start -->" not in text:
            text += "\n<!-- results:start -->\n<!-- results:end -->\n"
        doc.write_text(fill(text, passages))


def archive_fs(archive: Any, **kwargs: Any) -> Any:
    """An ArchiveFileSystem on the emulated archive, without a journal, AWS-like listings."""
    from archivefs.filesystem import ArchiveFileSystem

    kwargs.setdefault("journal", False)
    kwargs.setdefault("restore_status_in_listings", True)
    return ArchiveFileSystem(
        target_options=archive.storage_options(), skip_instance_cache=True, **kwargs
    )


def seed_archived(
    archive: Any, bucket: str, n: int, *, storage_class: str = "GLACIER"
) -> list[str]:
    """``n`` one-byte objects ``bucket/o/NNNNNN`` in an archive class; their paths."""
    archive.create_bucket(bucket)
    keys = [f"o/{i:06d}" for i in range(n)]
    archive.put_objects(bucket, dict.fromkeys(keys, b"x"), storage_class=storage_class)
    return [f"{bucket}/{k}" for k in keys]


def bundle_files(archive: EmulatedArchive, files: Mapping[str, bytes], root: str) -> None:
    """Bundle ``files`` (relative path -> bytes) into ``root`` on the emulated archive, one
    STANDARD bundle per top-level folder, with its catalog (``bundle_tree``)."""
    import fsspec
    import s3fs

    from archivefs.catalog import ByPrefix
    from archivefs.catalog.writer import bundle_tree

    s3 = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(tmp, files)
        bundle_tree(
            fsspec.filesystem("file"),
            tmp,
            s3,
            root,
            policy=ByPrefix(depth=1, target_size=2**40),
            storage_class="STANDARD",
        )


def write_tree(root: str | Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (relative path -> bytes) under the local folder ``root``."""
    for name, data in files.items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
