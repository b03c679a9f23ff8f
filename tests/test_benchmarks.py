"""The benchmarks run at smoke size and write results (they never rot); the docs are theirs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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

ROOT = Path(__file__).parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def test_benchmarks_smoke_run_writes_results(tmp_path: Path) -> None:
    # the Azure twins need Node and npm (Azurite), as the Azure tests do
    azure = shutil.which("node") is not None and shutil.which("npm") is not None
    modules = [m for m in MODULES if azure or not m.startswith("azure_")]
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--smoke",
            "--out",
            str(tmp_path),
            "--no-docs",
            "--only",
            *modules,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    names = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert names == sorted(modules)  # every benchmark wrote its result
    results = load_results(tmp_path)
    for data in results.values():
        assert data["size"] == "smoke"
        if data["name"] == "demo":  # replays the walk-through: its own process, no latency
            assert data["server"] == {"process": "in the demo's own process", "latency_s": 0.0}
        elif data["name"] == "line_rate":  # a shaping proxy instead of the server's latency
            assert data["server"]["latency_s"] == 0.0
        elif not data["name"].startswith("azure_"):
            assert data["server"] == {"process": "own process", "latency_s": 0.02}
        assert data["summary"], data["name"]  # min/median/max of every sampled metric
    polling = results["status_polling"]
    assert polling["archivefs"]["LIST"] == 1  # 1,000 restoring objects: one listing
    assert polling["archivefs"]["HEAD"] == 0
    assert polling["baseline"]["LIST"] == 1  # boto3 list_objects_v2: the same one listing
    assert polling["baseline"]["head_per_object"]["HEAD"] == 1000
    bundling = results["bundling"]
    assert bundling["baseline"]["restore_requests_sent"] == 1000
    assert bundling["archivefs"]["restore_requests_sent"] == 20  # one bundle per directory
    ttd = results["time_to_data"]
    assert ttd["archivefs"]["restore_requests"] == ttd["parameters"]["objects"]
    scaled = ttd["summary"]["scaled_archivefs"]  # the scaled-delay cell, against D + transfer
    assert scaled["restore_requests"]["min"] == ttd["parameters"]["objects"]
    assert scaled["yardstick_s"]["min"] > ttd["parameters"]["scaled_delay_s"]
    submission = results["submission"]
    for variant in ("archivefs", "archivefs_no_journal", "boto3_8_threads"):
        assert submission["summary"][variant]["requests"]["min"] == 200
    listing = results["catalog_listing"]
    assert listing["parameters"]["s3_entries"] == listing["parameters"]["catalog_entries"]
    if azure:
        azure_ttd = results["azure_time_to_data"]
        ours = azure_ttd["archivefs"]
        assert ours["set_blob_tier"] == 20  # each blob rehydrated once...
        assert ours["blob_batch"] == 1  # ...in one Blob Batch
        threaded = azure_ttd["baseline"]["threads_then_properties"]
        assert (threaded["set_blob_tier"], threaded["blob_batch"]) == (20, 0)
        assert threaded["status_requests"] >= 20  # a round of Get Blob Properties at least
        batched = azure_ttd["baseline"]["batches_then_properties"]
        assert (batched["set_blob_tier"], batched["blob_batch"]) == (20, 1)
        polled = results["azure_status_polling"]["archivefs"]
        assert (polled["ListBlobs"], polled["GetBlobProperties"]) == (1, 0)  # 300 blobs, 1 page
        azure_poll = results["azure_status_polling"]
        assert azure_poll["baseline"]["ListBlobs"] == 1
        assert azure_poll["baseline"]["properties_per_blob"]["GetBlobProperties"] == 300
    plain = results["parallel_listing"]
    pages = plain["baseline"]["LIST_requests"]  # s3fs: one sequence of 1,000-key pages
    assert pages == plain["archivefs"]["sequential"]["LIST_requests"] == 3
    assert pages < plain["archivefs"]["LIST_requests"] <= pages + 8 + 4
    cluster = results["cluster_coordination"]
    groups = cluster["parameters"]["groups"]
    assert cluster["archivefs"]["head"] == 0  # the coordinator lists; nobody HEADs
    assert cluster["archivefs"]["status_requests_per_round"] == 1  # ceil(60 / 1000) + 0
    assert cluster["baseline"]["head"] >= groups  # per-group polling: a HEAD each at least
    assert cluster["archivefs"]["hosts_restore_requests"] == groups  # claims: each once
    # without claims a host skips only the groups it saw restoring when it planned,
    # so how many it duplicates depends on how the 4 hosts' starts interleave
    assert groups <= cluster["baseline"]["hosts_restore_requests"] <= 4 * groups
    members = results["member_reads"]  # 2 bundles of 30 members, 1 MiB: a GET per bundle
    assert members["parameters"]["request_bound"] == 2
    assert members["archivefs"]["cat"]["requests"] == members["archivefs"]["get"]["requests"] == 2
    assert members["baseline"]["ranged_per_member"]["requests"] == 60
    assert members["archivefs"]["cat"]["bytes"] <= members["baseline"]["bundles_whole"]["bytes"]
    wan, part = results["line_rate"], 8 * 2**20  # every variant ran, counted at the server
    assert set(wan["summary"]) == {
        f"{w}:{v}" for w, vs in VARIANTS.items() if w != "startup" for v in vs
    }
    assert all(
        c["GET"]["min"] >= 1 and c["peak_rss_MiB"]["min"] > 0 for c in wan["summary"].values()
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
    demo = results["demo"]["archivefs"]  # the console command, in a fresh process
    assert demo["restore_requests"] == 11  # one per bundle: 10 + 1 for the station files
    assert demo["bytes_read"] == demo["bytes_needed"]
    # the docs passages render from these results
    passages = render_passages(results)
    assert {"table", "submission", "catalog-format", "read-amplification", "demo"} <= set(passages)
    assert "cluster-coordination" in passages


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
