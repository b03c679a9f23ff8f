"""`archivefs advise --workload`: the CLI parses, calls plan_archive, renders its figures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

from archivefs.cli import EXIT_USAGE, main
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
    assert missing.exit_code == EXIT_USAGE
    assert "no such workload file" in missing.output
    assert "ngas-hybrid" in missing.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndata: {total: 1TiB}\nplacements: []\n", encoding="utf-8")
    invalid = CliRunner().invoke(main, ["advise", "--workload", str(bad)])
    assert invalid.exit_code == EXIT_USAGE
    assert f"{bad}: field data" in invalid.output
    assert "Fix:" in invalid.output


# Hostile files (issue 47, item 2), each as the installed console script reads it.
ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"
WORKLOAD = "name: x\ndata:\n  total: {total}\n  objects: 1\nplacements:\n  - name: p\n    classes: {{STANDARD: 100%}}\n"  # noqa: E501


def _laughs(levels: int, leaf: str) -> str:
    """Nested aliases: ``levels`` lists of nine aliases to the list before (9^levels leaves)."""
    text = f"[&a0 [{','.join([leaf] * 9)}]"
    for i in range(1, levels + 1):
        text += f", &a{i} [{','.join([f'*a{i - 1}'] * 9)}]"
    return text + "]"


VALUES = {  # written where a size (a workload's data.total) or a price (a sheet's) goes
    "billion laughs": _laughs(8, "x"),
    "a 7 MB repr": _laughs(5, "x" * 10),
    "a 60 kB repr within the bounds": _laughs(3, "x" * 10),
    "an alias naming its own list": "&a [1, *a]",
    "aliases nesting past the depth": "["
    + ", ".join(f"&a{i} [{f'*a{i - 1}' if i else 1}]" for i in range(40))
    + "]",
    ".inf": ".inf",
    ".nan": ".nan",
    "400 digits": "1" + "0" * 400,
    "400 digits in a size": "'1" + "0" * 400 + " TiB'",
    "1e400": "1.0e+400",
    "10^400": "10^400",
    "5,000 digits": "1" * 5000,
    "100,000 deep": "[" * 100_000 + "]" * 100_000,
}
SHEET = (files("archivefs.pricing") / "sheets" / "aws-us-east-1.yaml").read_text("utf-8")
HOSTILE = {
    "--workload": {
        **{case: WORKLOAD.format(total=value) for case, value in VALUES.items()},
        "per_hour .inf": WORKLOAD.format(total="1TiB") + "requests: [{name: f, per_hour: .inf}]\n",
        "fixed_monthly 1e308": WORKLOAD.format(total="1TiB") + "fixed_monthly: {a: 1.0e+308}\n",
        "a 300 KiB file": WORKLOAD.format(total="1TiB") + f"description: {'x' * 300_000}\n",
    },
    "--price-sheet": {
        **{
            case: SHEET.replace("storage_per_gb_month: 0.023", f"storage_per_gb_month: {value}")
            for case, value in VALUES.items()
        },
        "1e300 per GB": SHEET.replace("storage_per_gb_month: 0.023", "storage_per_gb_month: 1e300"),
        "a 300 KiB file": f"{SHEET}# {'x' * 300_000}\n",
    },
}


def _limited() -> None:
    """The child's address space capped at 2 GiB: an unbounded load (2.9 GB before) fails
    fast here instead of swapping the machine."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))


@pytest.mark.parametrize("option", ["--workload", "--price-sheet"])
def test_hostile_files_are_refused_in_one_short_line(tmp_path: Path, option: str) -> None:
    for case, text in HOSTILE[option].items():
        path = tmp_path / "hostile.yaml"
        path.write_text(text, encoding="utf-8")
        args = [option, str(path)]
        if option == "--price-sheet":
            args += ["--objects", "1", "--size", "1GiB"]
        completed = subprocess.run(
            [ARCHIVEFS, "advise", *args], capture_output=True, text=True, timeout=120,
            preexec_fn=_limited, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        )  # fmt: skip
        said = completed.stdout + completed.stderr
        assert completed.returncode == EXIT_USAGE, (case, said[-500:])
        assert completed.stdout == "", case
        assert said.startswith(f"archivefs: error: {path}: "), case
        assert said.count("\n") == 1, case
        assert len(said) < 400, (case, len(said))
        assert not {"inf", "nan", "Traceback"} & set(said.replace(",", " ").split()), case


def test_a_price_sheet_past_the_bounds_is_refused_by_the_one_loader(tmp_path: Path) -> None:
    from archivefs.errors import PriceSheetError, WorkloadError
    from archivefs.pricing import load_price_sheet, load_workload
    from archivefs.pricing.comparison import load_any_sheet

    path = tmp_path / "laughs.yaml"
    path.write_text(WORKLOAD.format(total=_laughs(8, "x")), encoding="utf-8")
    for load, error in (
        (load_price_sheet, PriceSheetError),
        (load_any_sheet, PriceSheetError),
        (load_workload, WorkloadError),
    ):
        with pytest.raises(error, match="more than 20,000 values with aliases expanded"):
            load(path)


@pytest.mark.parametrize(
    "args",
    [
        ["--reads-per-month", "inf", "--price-sheet", "aws-us-east-1", "--price-sheet",
         "azure-eastus"],
        ["--reads-per-month", "nan", "--price-sheet", "aws-us-east-1", "--price-sheet",
         "azure-eastus"],
        ["--lifecycle-after-days", "nan"],
        ["--lifecycle-after-days", "inf"],
        ["--objects", "1" + "0" * 50],
        ["--size", "1.0e400"],
        ["--size", "1" + "0" * 400 + "TiB"],
    ],
)  # fmt: skip
def test_numbers_on_the_command_line_are_finite_or_wrong_usage(args: list[str]) -> None:
    """click's FLOAT takes inf and nan: they printed tables of inf costs with exit 0."""
    base = {"--objects": "1", "--size": "1GiB"}
    for option in ("--objects", "--size"):
        if option not in args:
            args = [option, base[option], *args]
    result = CliRunner().invoke(main, ["advise", *args])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "per month" not in result.output  # no table was printed
