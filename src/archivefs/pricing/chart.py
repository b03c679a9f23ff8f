"""The picture of an archive plan: each placement's annual cost as stacked bars by component.

Draws a matplotlib ``Figure`` (no pyplot state, nothing written); the caller
saves or shows it. matplotlib is optional (the ``notebooks`` extra has it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from archivefs.pricing.annual import COMPONENTS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from archivefs.pricing.plan_archive import ArchivePlan


def annual_chart(plan: ArchivePlan) -> Figure:
    """Stacked bars, one per placement (cheapest first), one segment per nonzero component,
    each bar labelled with its annual total."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "drawing a plan needs matplotlib: pip install matplotlib (or 'archivefs[notebooks]')"
        ) from error

    placements = plan.placements
    shown = [c for c in COMPONENTS if any(p.annual[c] for p in placements)]
    figure = Figure(figsize=(max(6.0, 2.2 * len(placements) + 3), 5.5))
    ax = figure.add_subplot()
    names = [p.name for p in placements]
    positions = range(len(placements))
    bottoms = [0.0] * len(placements)
    for component in shown:
        values = [p.annual[component] for p in placements]
        ax.bar(positions, values, bottom=bottoms, label=component.replace("_", " "), width=0.6)
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    for x, placement in zip(positions, placements, strict=True):
        ax.annotate(
            f"{placement.annual_total:,.0f}",
            (x, placement.annual_total),
            ha="center",
            va="bottom",
            xytext=(0, 3),
            textcoords="offset points",
        )
    ax.set_xticks(list(positions), [_wrap(n) for n in names])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    ax.set_ylabel(f"annual cost ({plan.currency})")
    ax.set_xlabel("placement")
    ax.set_title(f"{plan.workload}\nprices: {plan.sheet}", fontsize=10)
    ax.set_ylim(0, max(p.annual_total for p in placements) * 1.12 or 1.0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    return figure


def _wrap(name: str, width: int = 22) -> str:
    """A long placement name over several lines."""
    lines: list[str] = []
    for word in name.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)
