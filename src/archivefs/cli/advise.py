"""``archivefs advise``: which storage class (and provider) is cheapest, at which reads."""

from __future__ import annotations

from typing import Any

import click

from archivefs.cli import options
from archivefs.cli.context import Context, global_options
from archivefs.cli.estimate import parse_size_option
from archivefs.cli.render import echo_break_even, echo_json, echo_table, run_guarded
from archivefs.progress import human_bytes


@click.command("advise")
@click.option(
    "--workload",
    metavar="FILE",
    help="A whole archive: a workload YAML file or a shipped example (docs/cost-model.md); "
    "prices each placement for a year, ranked, with break-evens in data read per month.",
)
@click.option(
    "--plot",
    metavar="FILE.png",
    help="With --workload: draw each placement's annual cost as stacked bars to FILE.png.",
)
@click.option("--objects", type=options.COUNT, help="Number of objects.")
@click.option("--size", help="Size of each object, e.g. 40MiB (or give --total-size).")
@click.option("--total-size", help="Size of all objects together, e.g. 100TiB (or --size).")
@click.option(
    "--classes",
    help="Comma-separated storage classes to compare (default: STANDARD,STANDARD_IA,"
    "GLACIER_IR,GLACIER,DEEP_ARCHIVE; on another provider's sheet, all its classes; "
    "across providers, provider:Class names such as s3:STANDARD_IA,azure:Cool).",
)
@click.option("--tier", default="Standard", show_default=True, help="Restore tier for archives.")
@options.egress
@click.option(
    "--lifecycle-after-days", type=options.AMOUNT, help="Also: first class, then last, after N d."
)
@click.option(
    "--price-sheet",
    multiple=True,
    help="Name or YAML (default: aws-us-east-1). Repeat it, or give a comparison sheet "
    "such as study-2018-tokyo, to compare providers.",
)
@click.option(
    "--reads-per-month",
    type=options.AMOUNT,
    help="Across providers: full reads per month, or the fraction of the data read per "
    "month (0.01 = 1%); the ranking is at this frequency.",
)
@click.option(
    "--access-prices",
    multiple=True,
    metavar="PROVIDER=SHEET",
    help="Across providers, with a comparison sheet: the sheet giving PROVIDER's request, "
    "retrieval and restore prices (or PROVIDER=none).",
)
@click.option("--cold-only", is_flag=True, help="Across providers: only classes that bill reads.")
@click.option(
    "--read-amplification",
    type=click.FloatRange(min=1.0),
    default=1.0,
    show_default=True,
    help="Bytes a read fetches per byte it needs (a FUSE mount's block reads; `estimate` "
    "prices it the same way), e.g. 1.103.",
)
@global_options
@click.pass_obj
def advise_command(
    ctx: Context,
    objects: int | None,
    size: str | None,
    total_size: str | None,
    classes: str | None,
    tier: str,
    egress: str,
    lifecycle_after_days: float | None,
    price_sheet: tuple[str, ...],
    reads_per_month: float | None,
    access_prices: tuple[str, ...],
    cold_only: bool,
    workload: str | None,
    plot: str | None,
    read_amplification: float,
) -> None:
    """Which storage class (and provider) is cheapest at which read frequency.

    With one provider's sheet: a break-even table of its classes. With several
    sheets, or a comparison sheet, it ranks every provider's classes at
    --reads-per-month and gives the break-even between each pair. With
    --workload: a whole archive's placements over a year (one --price-sheet
    overrides the workload's).

    \b
    Examples:
      archivefs advise --objects 1000 --size 650MiB --tier Bulk --egress internet
      archivefs advise --price-sheet study-2018-tokyo --objects 51200 --total-size 100TiB \\
          --reads-per-month 0.01 --cold-only
      archivefs advise --price-sheet aws-ap-northeast-1 --price-sheet azure-eastus \\
          --objects 1000 --size 1GiB --reads-per-month 0.5
      archivefs advise --workload ngas-all-in-cloud --plot ngas.png
    """
    from archivefs.model import StorageClass
    from archivefs.pricing import Workload, advise, load_price_sheet

    def body() -> None:
        from archivefs.pricing.advise import DEFAULT_CLASSES
        from archivefs.pricing.comparison import ComparisonSheet, load_any_sheet
        from archivefs.pricing.sheet import sheet_provider

        if workload is not None:
            if read_amplification != 1.0:
                raise click.UsageError(
                    "--read-amplification prices reads of --objects; a workload's downloads "
                    "are the bytes transferred: scale its downloads.per_year instead."
                )
            show_workload_plan(ctx, workload, price_sheet, plot)
            return
        if plot is not None:
            raise click.UsageError("--plot draws a workload's placements: give --workload FILE.")
        if objects is None:
            raise click.UsageError("give --objects (with --size or --total-size), or --workload.")
        if (size is None) == (total_size is None):
            raise click.UsageError("give the size: --size (each object) or --total-size (all).")
        nbytes = (
            objects * parse_size_option(size)
            if size is not None
            else parse_size_option(total_size or "0")
        )
        from archivefs.providers import S3

        sources = price_sheet or (S3.price_sheet,)
        loaded = [load_any_sheet(name) for name in sources]
        if len(loaded) > 1 or isinstance(loaded[0], ComparisonSheet):
            compare_providers(
                ctx,
                loaded,
                objects=objects,
                total_bytes=nbytes,
                classes=classes,
                tier=tier,
                egress=egress,
                lifecycle_after_days=lifecycle_after_days,
                reads_per_month=reads_per_month,
                access_prices=access_prices,
                cold_only=cold_only,
                read_amplification=read_amplification,
            )
            return
        if reads_per_month is not None or access_prices or cold_only:
            raise click.UsageError(
                "--reads-per-month, --access-prices and --cold-only compare providers: give "
                "several --price-sheet, or a comparison sheet such as study-2018-tokyo."
            )
        sheet = load_price_sheet(sources[0])
        provider = sheet_provider(sheet)
        if classes is not None:
            names: list[str] = [c.strip() for c in classes.split(",") if c.strip()]
        elif provider == "s3":
            names = [c.value for c in DEFAULT_CLASSES]
        else:
            names = [c.value for c in sheet.classes]
        compared = [
            StorageClass.parse(n) if provider == "s3" else StorageClass.parse(n, provider=provider)
            for n in names
        ]
        work = Workload(objects=objects, total_bytes=nbytes, storage_class=compared[0])
        advice = advise(
            work,
            sheet,
            compared,
            tier=tier,
            egress=egress,
            lifecycle_after_days=lifecycle_after_days,
            read_amplification=read_amplification,
        )
        if ctx.as_json:
            click.echo(advice.model_dump_json())
            return
        echo_table(advice.table())
        click.echo("")
        for point in advice.break_evens:
            echo_break_even(point)

    run_guarded(ctx, body)


def show_workload_plan(
    ctx: Context, workload: str, price_sheet: tuple[str, ...], plot: str | None
) -> None:
    """``archivefs advise --workload``: parse, call plan_archive, render."""
    from archivefs.pricing import plan_archive

    if len(price_sheet) > 1:
        raise click.UsageError("--workload prices with one --price-sheet (or the workload's).")
    plan = plan_archive(workload, price_sheet[0] if price_sheet else None)
    if plot is not None:
        from archivefs.pricing.chart import annual_chart

        annual_chart(plan).savefig(plot, dpi=120, bbox_inches="tight")
    if ctx.as_json:
        click.echo(plan.model_dump_json())
        return
    click.echo(f"{plan.workload}: {human_bytes(plan.total_bytes)}, prices {plan.sheet}; "
               f"{plan.currency} a year")  # fmt: skip
    echo_table(plan.table())
    click.echo("")
    best = plan.cheapest
    click.echo(f"cheapest: {best.name}, {best.annual_total:,.2f} a year "
               f"({best.monthly_total:,.2f} a month)")  # fmt: skip
    if plan.break_evens:  # one placement has no pair to compare
        click.echo(f"break-even data read per month (this workload: "
                   f"{plan.read_tib_per_month:,.2f} TiB), each pair:")  # fmt: skip
        for point in plan.break_evens:
            echo_break_even(point, "  ", tib=True)
    for placement in plan.placements:
        if placement.annual["restored_copies"]:
            click.echo(
                f"{placement.name}: restored copies {placement.annual['restored_copies']:,.2f} "
                f"expected, {placement.restored_copies_bound:,.2f} at most"
            )
        for note in placement.notes:
            click.echo(f"{placement.name}: {note}")
    for note in plan.notes:
        click.echo(f"note: {note}")
    if plot is not None:
        click.echo(f"plot: {plot}")


def compare_providers(
    ctx: Context,
    sheets: list[Any],
    *,
    objects: int,
    total_bytes: int,
    classes: str | None,
    tier: str,
    egress: str,
    lifecycle_after_days: float | None,
    reads_per_month: float | None,
    access_prices: tuple[str, ...],
    cold_only: bool,
    read_amplification: float = 1.0,
) -> None:
    """``archivefs advise`` across providers: rank (provider, class) at the workload's reads."""
    from archivefs.model import StorageClass
    from archivefs.pricing import Workload
    from archivefs.pricing.advise import advise_providers
    from archivefs.pricing.comparison import ComparisonSheet, access_sheets_for

    if reads_per_month is None:
        raise click.UsageError(
            "comparing providers needs --reads-per-month: full reads per month, or the "
            "fraction of the data read per month (e.g. 0.01 for 1% a month)."
        )
    if lifecycle_after_days is not None:
        raise click.UsageError(
            "--lifecycle-after-days compares classes of one provider's sheet; leave it out "
            "when comparing providers."
        )
    overrides: dict[str, str] = {}
    for item in access_prices:
        provider, sep, name = item.partition("=")
        if not sep or not provider or not name:
            raise click.UsageError(
                f"--access-prices {item!r}: write PROVIDER=SHEET, e.g. azure=azure-eastus "
                "or oracle=none."
            )
        overrides[provider.strip().lower()] = name.strip()
    comparisons = [s for s in sheets if isinstance(s, ComparisonSheet)]
    if overrides and not comparisons:
        raise click.UsageError("--access-prices goes with a comparison sheet (study-2018-tokyo).")
    access: dict[str, Any] = {}
    notes: list[str] = []
    for comparison in comparisons:
        found, said = access_sheets_for(comparison, overrides)
        access.update(found)
        notes += said
    work = Workload(objects=objects, total_bytes=total_bytes, storage_class=StorageClass.STANDARD)
    wanted = [c.strip() for c in classes.split(",") if c.strip()] if classes else None
    advice = advise_providers(
        work,
        sheets,
        reads_per_month=reads_per_month,
        tier=tier,
        egress=egress,
        access_sheets=access,
        classes=wanted,
        cold_only=cold_only,
        read_amplification=read_amplification,
    )
    notes = list(dict.fromkeys(notes + advice.notes))
    if ctx.as_json:
        payload = advice.model_dump(mode="json")
        payload.update(
            workload={"objects": objects, "total_bytes": total_bytes, "tier": tier},
            cheapest=advice.cheapest.name,
            notes=notes,
        )
        echo_json(payload)
        return
    best = advice.cheapest
    click.echo(
        f"{objects} objects, {human_bytes(total_bytes)}, {reads_per_month:g} reads/month, "
        f"{tier} restores, egress {egress}; costs in USD"
    )
    echo_table(advice.table())
    click.echo("")
    click.echo(
        f"cheapest at {reads_per_month:g} reads/month: {best.name} ({best.label}), "
        f"{best.cost(reads_per_month):.2f} a month"
    )
    click.echo("break-even reads per month, each pair:")
    for point in advice.break_evens:
        echo_break_even(point, indent="  ")
    for note in notes:
        click.echo(f"note: {note}")


COMMANDS = [advise_command]
