"""`archivefs advise --workload`: the CLI parses, calls plan_archive, renders its figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from archivefs.cli import EXIT_ERROR, EXIT_USAGE, main
from archivefs.pricing import available_workloads, plan_archive
from archivefs.pricing.chart import annual_chart


@pytest.mark.parametrize("name", available_workloads())
def test_each_shipped_workload_gives_python_s_figures(name: str) -> None:
    for sheet in ([], ["--price-sheet", "aws-ap-northeast-1"]):
        result = CliRunner().invoke(main, ["advise", "--workload", name, *sheet, "--json"])
        assert result.exit_code == 0, result.output
        expected = plan_archive(name, sheet[1] if sheet else None)
        assert json.loads(result.output) == json.loads(expected.model_dump_json())


def test_the_text_ranks_totals_and_says_the_break_even() -> None:
    result = CliRunner().invoke(main, ["advise", "--workload", "ngas-all-in-cloud"])
    assert result.exit_code == 0, result.output
    plan = plan_archive("ngas-all-in-cloud")
    glacier, ia = plan.placements
    lines = result.output.splitlines()
    assert lines[0].startswith("NGAS (ALMA) on AWS, all data in the cloud: 500.0 TiB")
    assert lines[2].split()[:3] == ["1", "all", "in"]
    assert "Glacier" in lines[2]
    assert f"{glacier.annual_total:,.2f}" in lines[2]
    assert f"{ia.annual_total:,.2f}" in lines[3]
    assert (
        f"cheapest: all in Glacier, {glacier.annual_total:,.2f} a year "
        f"({glacier.monthly_total:,.2f} a month)"
    ) in lines
    point = plan.break_evens[0]
    assert (
        f"  all in Glacier is cheaper below {point.tib_per_month:,.2f} TiB "
        f"({point.reads_per_month:.3g} full reads) a month, all in S3 IA above"
    ) in lines
    assert (
        f"all in Glacier: restored copies {glacier.annual['restored_copies']:,.2f} expected, "
        f"{glacier.restored_copies_bound:,.2f} at most"
    ) in lines
    assert any(
        line.startswith("note: prices: storage and minimum days from study") for line in lines
    )


def test_plot_draws_stacked_bars_labelled_with_totals(tmp_path: Path) -> None:
    target = tmp_path / "ngas.png"
    result = CliRunner().invoke(
        main, ["advise", "--workload", "ngas-all-in-cloud", "--plot", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plan = plan_archive("ngas-all-in-cloud")
    (ax,) = annual_chart(plan).axes
    shown = [c for c in plan.placements[0].annual if any(p.annual[c] for p in plan.placements)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        c.replace("_", " ") for c in shown
    ]
    assert len(ax.containers) == len(shown)  # one stack segment per component
    tops = [sum(c.patches[i].get_height() for c in ax.containers) for i in range(2)]
    assert tops == pytest.approx([p.annual_total for p in plan.placements])
    assert [t.get_text() for t in ax.texts] == [f"{p.annual_total:,.0f}" for p in plan.placements]
    assert ax.get_ylabel() == "annual cost (USD)"


HYBRID = """
name: hybrid
price_sheet: aws-us-east-1
data: {total: 10TiB, object_size: 1GiB}
placements:
  - name: half on premises
    on_premises: 5TiB
    on_premises_per_tib_month: 3.0
    classes: {STANDARD_IA: 5TiB}
"""


def test_the_hybrid_plot_shows_on_premises_apart_and_one_placement_lists_no_pairs(
    tmp_path: Path,
) -> None:
    """On-premises storage was added into the cloud's "storage" segment (one colour), and
    a workload of one placement (ngas-hybrid) printed an empty "each pair:" list."""
    workload = tmp_path / "hybrid.yaml"
    workload.write_text(HYBRID, encoding="utf-8")
    plan = plan_archive(workload)
    (placement,) = plan.placements
    assert placement.annual["on_premises"] == pytest.approx(5 * 3.0 * 12)
    assert placement.annual["storage"] == pytest.approx(5 * 1024 * 0.0125 * 12)
    (ax,) = annual_chart(plan).axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["storage", "on premises"]
    colours = {tuple(c.patches[0].get_facecolor()) for c in ax.containers[:2]}
    assert len(colours) == 2
    for name in (str(workload), "ngas-hybrid"):
        result = CliRunner().invoke(main, ["advise", "--workload", name])
        assert result.exit_code == 0, result.output
        assert "each pair" not in result.output
        assert "break-even data read" not in result.output


def test_workload_mistakes_are_one_clear_line(tmp_path: Path) -> None:
    plot_alone = CliRunner().invoke(
        main, ["advise", "--objects", "1", "--size", "1GiB", "--plot", "x.png"]
    )
    assert plot_alone.exit_code == EXIT_USAGE
    assert "--workload" in plot_alone.output
    nothing = CliRunner().invoke(main, ["advise"])
    assert nothing.exit_code == EXIT_USAGE
    assert "--objects" in nothing.output
    assert "--workload" in nothing.output
    missing = CliRunner().invoke(main, ["advise", "--workload", str(tmp_path / "none.yaml")])
    assert missing.exit_code == EXIT_ERROR
    assert "no such workload file" in missing.output
    assert "ngas-hybrid" in missing.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndata: {total: 1TiB}\nplacements: []\n", encoding="utf-8")
    invalid = CliRunner().invoke(main, ["advise", "--workload", str(bad)])
    assert invalid.exit_code == EXIT_ERROR
    assert f"{bad}: field data" in invalid.output
    assert "Fix:" in invalid.output
