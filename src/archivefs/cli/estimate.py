"""``archivefs estimate``: what restoring and reading would cost, before anything is paid."""

from __future__ import annotations

import click

from archivefs.cli import options
from archivefs.cli.context import Context, global_options, parse_tier, read_paths
from archivefs.cli.render import print_estimate, report_unmatched, run_guarded, warn_over_restore
from archivefs.selection import summarize


def parse_size_option(text: str) -> int:
    """Parse '40MiB', '1.5 GB', '123' into bytes (the workload files' one size parser)."""
    from archivefs.pricing.sizes import parse_size

    try:
        return parse_size(text)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@click.command("estimate")
@options.paths
@options.tier(default=None)
@options.days(default=None)
@options.egress
@click.option("--reads", default=1, show_default=True, type=int, help="How often it is read.")
@options.price_sheet
@options.dataset_selection
@click.option(
    "--objects", type=options.COUNT, help="What-if: number of objects (no bucket needed)."
)
@click.option("--size", help="What-if: size of each object, e.g. 40MiB.")
@click.option("--storage-class", help="What-if: their storage class, e.g. GLACIER.")
@global_options
@click.pass_obj
def estimate_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    tier: str | None,
    days: int | None,
    egress: str,
    reads: int,
    price_sheet: str | None,
    variables: tuple[str, ...],
    ranges: dict[str, tuple[str, str]],
    objects: int | None,
    size: str | None,
    storage_class: str | None,
) -> None:
    """What restoring and reading would cost, before anything is paid.

    \b
    Examples:
      archivefs estimate s3://bucket/run42/ --tier Bulk --egress internet
      archivefs estimate 's3://bucket/era5/*.nc' --var t2m --sel time=2023-06-01:2023-08-31
      archivefs estimate --objects 10000 --size 40MiB --storage-class DEEP_ARCHIVE --tier Bulk
    """
    from archivefs.pricing import Workload, estimate, load_price_sheet

    def body() -> None:
        if objects is not None or size is not None or storage_class is not None:
            if objects is None or size is None or storage_class is None or urls or from_file:
                raise click.UsageError(
                    "the what-if form needs --objects, --size and --storage-class, and no URLs."
                )
            from archivefs.model import StorageClass

            klass = StorageClass.parse(storage_class)
            work = Workload(
                objects=objects, total_bytes=objects * parse_size_option(size), storage_class=klass
            )
            from archivefs.providers import provider_named

            sheet = load_price_sheet(price_sheet or provider_named(klass.provider).price_sheet)
            result = estimate(
                work, sheet, tier=parse_tier(tier, klass.provider), days=days, egress=egress,
                reads=reads,
            )  # fmt: skip
        else:
            paths = read_paths(urls, from_file)
            fs = ctx.filesystem(paths, price_sheet=price_sheet, egress=egress)
            chosen = None
            if variables or ranges:
                chosen = options.selected(paths, fs=fs, variables=variables, ranges=ranges)
                paths = chosen.paths
            plan = fs.plan(
                paths,
                tier=parse_tier(tier, fs.provider.name),
                days=days,
                read_whole=chosen.read_whole if chosen else None,
            )
            report_unmatched(plan)
            result = fs.estimate_plan(plan, reads=reads)
            from archivefs.pricing.amounts import format_amount

            summary = summarize(plan)
            print_estimate(ctx, result, summary, plan.read_whole if chosen else None)
            if not ctx.as_json:
                if plan.fee_reads:
                    click.echo(
                        f"{len(plan.fee_reads)} objects read at once for a retrieval fee "
                        f"({format_amount(result.components['retrieval'], result.currency)}); "
                        "nothing "
                        "to restore for them"
                    )
                warn_over_restore(fs, plan, summary)
            return
        print_estimate(ctx, result)

    run_guarded(ctx, body)


COMMANDS = [estimate_command]
