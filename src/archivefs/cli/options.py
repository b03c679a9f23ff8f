"""The option sets commands share, declared once: paths (URLs and ``--from-file``), tier,
days, timeout, max-cost and price-sheet. Each is a decorator; its help and defaults are
the ones ``--help`` shows, so two commands that take an option take it the same way."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import click

from archivefs.providers import PROVIDERS

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.datasets import FileSelection

DAYS = click.IntRange(min=1)
"""``--days``: a whole number of days, at least 1 (a usage error, exit 2, otherwise)."""


class _Count(click.types.IntParamType):
    """A whole number from 0 to ``MAX_BYTES`` (shown as INTEGER, as click's own)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from archivefs.pricing.sizes import MAX_BYTES  # on use: `ls` imports no pricing

        number = super().convert(value, param, ctx)
        if not 0 <= number <= MAX_BYTES:
            self.fail(f"{value!r} is not a whole number from 0 to 2^80.", param, ctx)
        return number


COUNT = _Count()
"""``--objects``: a whole number up to 2^80, the bound a workload file's counts keep."""


class _Amount(click.types.FloatParamType):
    """A finite number from 0 to ``MAX_AMOUNT`` (click's FLOAT takes ``inf`` and ``nan``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from archivefs.pricing.sizes import MAX_AMOUNT  # on use: `ls` imports no pricing

        number = super().convert(value, param, ctx)
        if not (math.isfinite(number) and 0 <= number <= MAX_AMOUNT):
            self.fail(f"{value!r} is not a finite number from 0 to {MAX_AMOUNT:g}.", param, ctx)
        return number


AMOUNT = _Amount()
"""A rate or a number of days for a cost (``--reads-per-month``): finite, so every figure
printed from it is (docs/guarantees.md)."""

SHEET_HELP = "Name or YAML (default: the provider's own: {}).".format(
    ", ".join(f"{p.price_sheet} for {p.protocols[0]}://" for p in PROVIDERS.values())
)
"""``--price-sheet``'s help: each provider's default sheet, from ``archivefs.providers``."""

TIER_NAMES = "Expedited, Standard or Bulk"


def paths(command: Any) -> Any:
    """``URLS...`` and ``--from-file FILE``: the paths a command works on."""
    command = click.option("--from-file", help="File with one URL per line (- for stdin).")(command)
    return click.argument("urls", nargs=-1)(command)


def tier(*, default: str | None = "Standard") -> Callable[[Any], Any]:
    """``--tier``: the restore tier (with a shown default, or the filesystem's)."""
    if default is None:
        return click.option("--tier", help=f"{TIER_NAMES} (default Standard).")
    return click.option("--tier", default=default, show_default=True, help=f"{TIER_NAMES}.")


def days(*, default: int | None = 1) -> Callable[[Any], Any]:
    """``--days``: how long a restored copy stays (with a shown default, or the
    filesystem's)."""
    if default is None:
        return click.option("--days", type=DAYS, help="Days the restored copy stays (default 1).")
    return click.option(
        "--days", default=default, show_default=True, type=DAYS, help="Days the copy stays."
    )


timeout = click.option("--timeout", type=float, help="Seconds to wait at most (exit 4 after).")
"""``--timeout``: seconds to wait at most."""

max_cost = click.option(
    "--max-cost", type=float, help="Refuse (exit 3) if the estimate is above this."
)
"""``--max-cost``: the budget the estimate is checked against."""

price_sheet = click.option("--price-sheet", help=SHEET_HELP)
"""``--price-sheet``: the sheet that prices a provider's store."""

egress = click.option("--egress", default="same_region", show_default=True, help="Network path.")
"""``--egress``: the network path reads take (priced by the sheet's egress rates)."""


def dataset_selection(command: Any) -> Any:
    """``--var NAME`` and ``--sel DIM=START:STOP`` (each repeatable): the URLs are netCDF/HDF5
    files, and what the variables read over those index ranges is the selection."""
    command = click.option(
        "--sel",
        "ranges",
        multiple=True,
        metavar="DIM=START:STOP",
        callback=_parse_ranges,
        help="With the URLs as netCDF/HDF5 files: only this index range (labels, both "
        "ends included, e.g. time=2023-06-01:2023-08-31).",
    )(command)
    return click.option(
        "--var",
        "variables",
        multiple=True,
        metavar="NAME",
        help="With the URLs as netCDF/HDF5 files: only what this variable reads (files "
        "without references are read whole: the output names them).",
    )(command)


def _parse_ranges(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for value in values:
        dim, equals, bounds = value.partition("=")
        start, colon, stop = bounds.partition(":")
        if not dim or not equals or not colon:
            raise click.BadParameter(
                f"{value!r}: write DIM=START:STOP, e.g. time=2023-06-01:2023-08-31 "
                "(an empty end is open)."
            )
        out[dim] = (start, stop)
    return out


def selected(paths: list[str], **kwargs: Any) -> FileSelection:
    """``--var``/``--sel``: what the selection of the files ``paths`` reads, and which of
    them it reads whole (one public call, ``archivefs.datasets.select_files``)."""
    from archivefs.datasets import select_files

    return select_files(paths[0] if len(paths) == 1 else paths, **kwargs)
