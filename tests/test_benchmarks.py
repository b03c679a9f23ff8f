"""The benchmarks run at smoke size and write results (they never rot); the docs are theirs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from benchmarks.__main__ import MODULES
from benchmarks._common import (
    GENERATED_DOCS,
    fill,
    generated_sections,
    load_results,
    render_passages,
    sample,
    summarise,
)
from benchmarks.line_rate import VARIANTS

from archivefs.mount.runner import fuse_problem

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).parents[1]
RESULTS = ROOT / "benchmarks" / "results"


# the Azure twins need Node and npm (Azurite), as the Azure tests do
AZURE = shutil.which("node") is not None and shutil.which("npm") is not None
NO_MOUNT = fuse_problem() or (None if shutil.which("ncdump") else "ncdump is missing (netcdf-bin)")


def _status_polling(polling: dict[str, Any]) -> None:
    assert polling["archivefs"]["LIST"] == 1  # 1,000 restoring objects: one listing
    assert polling["archivefs"]["HEAD"] == 0
    assert polling["baseline"]["LIST"] == 1  # boto3 list_objects_v2: the same one listing
    assert polling["baseline"]["head_per_object"]["HEAD"] == 1000


def _bundling(bundling: dict[str, Any]) -> None:
    assert bundling["baseline"]["restore_requests_sent"] == 1000
    assert bundling["archivefs"]["restore_requests_sent"] == 20  # one bundle per directory


def _time_to_data(ttd: dict[str, Any]) -> None:
    assert ttd["archivefs"]["restore_requests"] == ttd["parameters"]["objects"]
    scaled = ttd["summary"]["scaled_archivefs"]  # the scaled-delay cell, against D + transfer
    assert scaled["restore_requests"]["min"] == ttd["parameters"]["objects"]
    assert scaled["yardstick_s"]["min"] > ttd["parameters"]["scaled_delay_s"]


def _submission(submission: dict[str, Any]) -> None:
    for variant in ("archivefs", "archivefs_no_journal", "boto3_8_threads"):
        assert submission["summary"][variant]["requests"]["min"] == 200


def _restore_faults(faults: dict[str, Any]) -> None:
    n = faults["parameters"]["objects"]
    for variant in faults["summary"].values():  # every key accepted once, faults or not
        assert variant["keys_accepted"]["min"] == n
        assert variant["max_accepted_per_key"]["max"] == 1
    assert faults["summary"]["archivefs_faults"]["faulted"]["min"] > 0


def _catalog_listing(listing: dict[str, Any]) -> None:
    assert listing["parameters"]["s3_entries"] == listing["parameters"]["catalog_entries"]


def _azure_time_to_data(azure_ttd: dict[str, Any]) -> None:
    ours = azure_ttd["archivefs"]
    assert ours["set_blob_tier"] == 20  # each blob rehydrated once...
    assert ours["blob_batch"] == 1  # ...in one Blob Batch
    threaded = azure_ttd["baseline"]["threads_then_properties"]
    assert (threaded["set_blob_tier"], threaded["blob_batch"]) == (20, 0)
    assert threaded["status_requests"] >= 20  # a round of Get Blob Properties at least
    batched = azure_ttd["baseline"]["batches_then_properties"]
    assert (batched["set_blob_tier"], batched["blob_batch"]) == (20, 1)


def _azure_status_polling(azure_poll: dict[str, Any]) -> None:
    polled = azure_poll["archivefs"]
    assert (polled["ListBlobs"], polled["GetBlobProperties"]) == (1, 0)  # 300 blobs, 1 page
    assert azure_poll["baseline"]["ListBlobs"] == 1
    assert azure_poll["baseline"]["properties_per_blob"]["GetBlobProperties"] == 300


def _parallel_listing(plain: dict[str, Any]) -> None:
    pages = plain["baseline"]["LIST_requests"]  # s3fs: one sequence of 1,000-key pages
    assert pages == plain["archivefs"]["sequential"]["LIST_requests"] == 3
    assert pages < plain["archivefs"]["LIST_requests"] <= pages + 8 + 4


def _cluster_coordination(cluster: dict[str, Any]) -> None:
    groups = cluster["parameters"]["groups"]
    assert cluster["archivefs"]["head"] == 0  # the coordinator lists; nobody HEADs
    assert cluster["archivefs"]["status_requests_per_round"] == 1  # ceil(60 / 1000) + 0
    assert cluster["baseline"]["head"] >= groups  # per-group polling: a HEAD each at least
    assert cluster["archivefs"]["hosts_restore_requests"] == groups  # claims: each once
    # without claims a host skips only the groups it saw restoring when it planned,
    # so how many it duplicates depends on how the 4 hosts' starts interleave
    assert groups <= cluster["baseline"]["hosts_restore_requests"] <= 4 * groups


def _member_reads(members: dict[str, Any]) -> None:
    # 2 bundles of 30 members, 1 MiB: a GET per bundle
    assert members["parameters"]["request_bound"] == 2
    assert members["archivefs"]["cat"]["requests"] == members["archivefs"]["get"]["requests"] == 2
    assert members["baseline"]["ranged_per_member"]["requests"] == 60
    assert members["archivefs"]["cat"]["bytes"] <= members["baseline"]["bundles_whole"]["bytes"]


def _demo(results: dict[str, Any]) -> None:
    demo = results["archivefs"]  # the console command, in a fresh process
    assert demo["restore_requests"] == 11  # one per bundle: 10 + 1 for the station files
    assert demo["bytes_read"] == demo["bytes_needed"]


def _line_rate(wan: dict[str, Any]) -> None:
    part = 8 * 2**20  # every variant ran, counted at the server
    assert set(wan["summary"]) == {
        f"{w}:{v}" for w, vs in VARIANTS.items() if w != "startup" for v in vs
    }
    assert all(
        c["GET"]["min"] >= 1 and c["peak_rss_MiB"]["min"] > 0 for c in wan["summary"].values()
    )
    # issue 49: each command's CPU seconds and its start-up to the first request, apart
    assert all(
        c["cpu_s"]["min"] > 0 and 0 < c["first_request_s"]["min"] < c["seconds"]["min"]
        for c in wan["summary"].values()
    )
    one = wan["baseline"]["one_large"]  # 8 MiB ranged parts
    assert (
        one["aws_cli"]["GET"]
        == one["boto3_transfer"]["GET"]
        == -(-wan["parameters"]["one_large_bytes"] // part)
    )
    small, files = wan["archivefs"]["small_files"], wan["parameters"]["small_files"]
    assert wan["baseline"]["small_files"]["aws_cli_plain"]["GET"] == files  # a GET per file
    assert (
        small["archivefs_prefetch_bundled"]["GET"]
        == small["archivefs_get_bundled"]["GET"]
        <= wan["parameters"]["bundled_prefetch_get_bound"]
    )


def _netcdf_wan(wan: dict[str, Any]) -> None:
    rows = wan["archivefs"]["rows"]  # the small file only (the large one: --full)
    assert [(r["file"], r["pattern"]) for r in rows] == [
        ("small", "whole variable"),
        ("small", "one time step"),
        ("small", "whole variable, no listing"),
    ]
    for row in rows[:2]:  # counted at the server; the file is in the listing, so no HEAD
        assert row["archivefs_HEAD"] == row["s3fs_default_HEAD"] == 0
        assert row["s3fs_default_GET"] == 1  # its first 50 MiB block holds the whole file
        assert row["archivefs_GET"] == 1  # at most 1 MiB (archivefs.readahead.WHOLE_FILE)
        assert row["archivefs_bytes"] == row["s3fs_default_bytes"] == row["file_bytes"]
    cold = rows[2]  # caches dropped: each sends the HEAD; archivefs looks for a catalog
    assert cold["archivefs_HEAD"] == cold["s3fs_default_HEAD"] == 1
    assert cold["s3fs_default_GET"] == 1
    assert cold["archivefs_GET"] == 2  # the catalog lookup (404), then the whole file


def _mount(mount: dict[str, Any]) -> None:
    medians = {k: v["median"] for k, v in mount["summary"]["moto:archivefs"].items()}
    assert medians["ls_lR_LIST"] == mount["parameters"]["listing_pages"]
    assert medians["ls_lR_HEAD"] == medians["reread_GET"] == 0
    assert medians["ncdump_amplification"] <= 1.3
    # each peer either ran on the same server and workloads, or says why it did not
    skipped = mount["parameters"]["skipped"]
    for peer, program in (("rclone", "rclone"), ("s3fs_fuse", "s3fs")):
        ran = f"moto:{peer}" in mount["summary"]
        assert ran == (shutil.which(program) is not None) == (peer not in skipped)
        if ran:
            assert (
                mount["summary"][f"moto:{peer}"].keys() == mount["summary"]["moto:archivefs"].keys()
            )
        else:
            assert "not installed" in skipped[peer]


def _netcdf_references(refs: dict[str, Any]) -> None:
    files = refs["parameters"]["files"]
    assert refs["baseline"]["restore_requests"] == files  # today: every file restored
    assert refs["archivefs"]["restore_requests"] == 1  # 2 steps of one file: that file only
    assert refs["archivefs"]["bytes_fetched"] == refs["parameters"]["bytes_needed"]
    assert refs["archivefs"]["zarr_open_chunk_GET"] == 0  # the yardstick opens, reads no chunk
    assert refs["archivefs"]["open_vs_zarr"] > 0


def _glob_planning(plans: dict[str, Any]) -> None:
    (n,) = plans["parameters"]["sizes"]
    row = plans["archivefs"]["rows"][str(n)]
    for way in ("directory", "glob_all", "glob_pattern", "glob_1pct"):
        assert row[way]["requests"] == 1, way  # the bundles' states: one bulk listing
    assert row["sort_names"]["requests"] == 0
    assert plans["archivefs"]["x_sort_names"][str(n)]["glob_all"] > 0


# what each benchmark's smoke result must show beyond running and writing it
CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "status_polling": _status_polling,
    "bundling": _bundling,
    "time_to_data": _time_to_data,
    "submission": _submission,
    "catalog_listing": _catalog_listing,
    "azure_time_to_data": _azure_time_to_data,
    "azure_status_polling": _azure_status_polling,
    "parallel_listing": _parallel_listing,
    "cluster_coordination": _cluster_coordination,
    "member_reads": _member_reads,
    "demo": _demo,
    "line_rate": _line_rate,
    "netcdf_wan": _netcdf_wan,
    "restore_faults": _restore_faults,
    "mount": _mount,
    "netcdf_references": _netcdf_references,
    "glob_planning": _glob_planning,
}


@pytest.mark.parametrize("name", MODULES)
def test_benchmark_smoke_run_writes_its_result(name: str, tmp_path: Path) -> None:
    """Each benchmark on its own (xdist spreads them), through ``python -m benchmarks``."""
    if name.startswith("azure_") and not AZURE:
        pytest.skip("the Azure benchmarks need Node and npm (Azurite)")
    if name == "mount" and NO_MOUNT:
        pytest.skip(f"the mount benchmark cannot mount here: {NO_MOUNT}")
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--out", str(tmp_path), "--no-docs",
         "--only", name],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert [p.stem for p in tmp_path.glob("*.json")] == [name]  # it wrote its result
    data = load_results(tmp_path)[name]
    assert data["size"] == "smoke"
    if name == "demo":  # replays the walk-through: its own process, no latency
        assert data["server"] == {"process": "in the demo's own process", "latency_s": 0.0}
    elif name in ("line_rate", "netcdf_wan", "mount"):  # a shaping proxy, not the latency
        assert data["server"]["latency_s"] == 0.0
    elif not name.startswith("azure_"):
        assert data["server"] == {"process": "own process", "latency_s": 0.02}
    assert data["summary"], name  # min/median/max of every sampled metric
    if name in CHECKS:
        CHECKS[name](data)
    # the docs passages render from this result in place of the committed one
    committed = load_results(RESULTS)
    passages = render_passages({**committed, name: data})
    assert set(passages) == set(render_passages(committed))
    assert {"table", "submission", "catalog-format", "read-amplification", "demo"} <= set(passages)
    assert "cluster-coordination" in passages


def test_every_benchmark_has_a_smoke_test_and_a_committed_result() -> None:
    # the per-benchmark test above covers MODULES; each check names a benchmark
    assert set(CHECKS) <= set(MODULES)
    # a result of a full run, or one awaiting its full run; a preliminary result may also
    # sit beside a committed one of an older version (results/preliminary/README.md)
    # (a size kept beside the default one, <name>.<size>.json, is that benchmark's too)
    committed = {p.stem.split(".")[0] for p in RESULTS.glob("*.json")}
    preliminary = {p.stem for p in (RESULTS / "preliminary").glob("*.json")}
    assert committed | preliminary == set(MODULES)


def test_sample_alternates_and_warms_each_variant_up() -> None:
    calls: list[tuple[str, int]] = []

    def variant(name: str) -> object:
        def measure(i: int) -> dict[str, float]:
            calls.append((name, i))
            return {"seconds": float(i + 1)}

        return measure

    runs = sample({"a": variant("a"), "b": variant("b")}, 3)  # type: ignore[dict-item]
    warmups, first, second, third = calls[:2], calls[2:4], calls[4:6], calls[6:]
    assert warmups == [("a", -1), ("b", -1)]
    assert (first, second, third) == (
        [("a", 0), ("b", 0)],
        [("b", 1), ("a", 1)],
        [("a", 2), ("b", 2)],
    )
    assert summarise(runs)["a"]["seconds"] == {"min": 1.0, "median": 2.0, "max": 3.0}
    calls.clear()
    sample({"a": variant("a")}, 1)  # type: ignore[dict-item]
    assert calls == [("a", 0)]  # one sample (smoke): no warm-up


@pytest.mark.parametrize("doc", GENERATED_DOCS, ids=lambda p: p.name)
def test_generated_docs_passages_match_the_committed_results(doc: Path) -> None:
    """Every number in a generated passage comes from benchmarks/results/*.json."""
    text = doc.read_text()
    sections = generated_sections(text)
    assert sections, f"{doc.name} has no generated passages"
    passages = render_passages(load_results(RESULTS))
    for name, body in sections.items():
        assert name in passages, f"{doc.name}: no result renders the passage {name!r}"
        assert body == passages[name].rstrip("\n") + "\n", f"{doc.name}: {name} is stale"
    assert fill(text, passages) == text


def test_a_measured_run_may_take_fewer_samples_but_never_under_three(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks.__main__ import parse_args

    assert parse_args(["--full", "--samples", "3"]).samples == 3
    assert parse_args(["--smoke", "--samples", "1"]).samples == 1
    assert parse_args(["--full"]).samples is None  # the size's own count
    for argv in (["--full", "--samples", "2"], ["--samples", "0"], ["--smoke", "--samples", "0"]):
        with pytest.raises(SystemExit) as refused:
            parse_args(argv)
        assert refused.value.code == 2
    assert "at least 3 samples" in capsys.readouterr().err


def test_the_line_rate_children_import_nothing_of_the_harness() -> None:
    """A measured child's start-up is what a user's script pays: no module of the
    benchmarks package (nor json, statistics, subprocess it imports) is loaded."""
    from benchmarks import _line_rate_children

    done = subprocess.run(
        [sys.executable, "-X", "importtime", _line_rate_children.__file__, "no-such-child"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown child 'no-such-child'" in done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "pathlib" in imported  # the importtime lines were read
    assert not {name for name in imported if name.split(".")[0] == "benchmarks"}
    assert not imported & {"statistics", "subprocess", "benchmarks"}


def test_docs_are_rendered_only_on_request_and_never_from_smoke_runs(tmp_path: Path) -> None:
    import json

    from benchmarks.__main__ import parse_args
    from benchmarks._common import update_docs

    assert parse_args(["--smoke", "--out", str(tmp_path)]).docs is False
    assert parse_args(["--only", "planning"]).docs is False  # a default run: on request only
    assert parse_args(["--full", "--docs"]).docs is True
    with pytest.raises(SystemExit) as refused:
        parse_args(["--smoke", "--docs"])
    assert refused.value.code == 2
    for path in RESULTS.glob("*.json"):  # the committed results, one of them from a smoke run
        data = json.loads(path.read_text())
        if path.stem == "planning":
            data["size"] = "smoke"
        (tmp_path / path.name).write_text(json.dumps(data))
    before = {doc: doc.read_text() for doc in GENERATED_DOCS}
    with pytest.raises(ValueError, match="planning is from a --smoke run"):
        update_docs(tmp_path)
    assert {doc: doc.read_text() for doc in GENERATED_DOCS} == before


def test_line_rate_payloads_are_made_a_mib_at_a_time_whatever_their_size() -> None:
    import random

    from benchmarks.line_rate import MiB, _payload

    # the full size's 300 MiB in one randbytes() overflowed; in pieces, any size is made
    assert len(_payload(random.Random(0), 3 * MiB + 5)) == 3 * MiB + 5
    assert _payload(random.Random(0), 2 * MiB) == _payload(random.Random(0), 2 * MiB)
    assert _payload(random.Random(0), 0) == b""
