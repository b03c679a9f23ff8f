"""``archivefs sheet list|show``: the price sheets estimates and advice are priced from."""

from __future__ import annotations

from typing import Any

import click

from archivefs.cli.context import Context, global_options
from archivefs.cli.render import echo_json, echo_table, run_guarded
from archivefs.progress import human_bytes


@click.group("sheet")
def sheet_group() -> None:
    """See the price sheets (shipped, or your own YAML) that estimates use.

    \b
    Examples:
      archivefs sheet list
      archivefs sheet show gcs-us-central1
      archivefs sheet show ./negotiated.yaml --json
    """


@sheet_group.command("list")
@global_options
@click.pass_obj
def list_command(ctx: Context) -> None:
    """Name the shipped price sheets, each with its provider and currency.

    \b
    Example:
      archivefs sheet list
    """
    from archivefs.pricing import available_price_sheets, load_price_sheet
    from archivefs.pricing.sheet import sheet_provider

    def body() -> None:
        sheets = [load_price_sheet(name) for name in available_price_sheets()]
        if ctx.as_json:
            echo_json([{"name": s.name, "provider": sheet_provider(s)} for s in sheets])
            return
        rows = [["NAME", "PROVIDER", "CURRENCY", "CLASSES"]]
        rows += [[s.name, sheet_provider(s), s.currency, str(len(s.classes))] for s in sheets]
        echo_table(rows)

    run_guarded(ctx, body)


@sheet_group.command("show")
@click.argument("name")
@global_options
@click.pass_obj
def show_command(ctx: Context, name: str) -> None:
    """Show one price sheet's prices: per class, per restore tier, per egress path.

    NAME is a shipped sheet (`archivefs sheet list`) or a YAML file's path, as
    --price-sheet takes it; `estimate` names the sheet it used.

    \b
    Examples:
      archivefs sheet show aws-us-east-1
      archivefs sheet show ./negotiated.yaml --json
    """
    from archivefs.pricing import load_price_sheet

    def body() -> None:
        sheet = load_price_sheet(name)
        if ctx.as_json:
            echo_json(sheet.model_dump(mode="json"))
            return
        echo_sheet(sheet)

    run_guarded(ctx, body)


def echo_sheet(sheet: Any) -> None:
    """A sheet as three tables: classes, restores, egress (amounts in its currency)."""
    from archivefs.pricing.sheet import sheet_provider

    unit = "GiB" if sheet.bytes_per_gb == 2**30 else f"GB of {sheet.bytes_per_gb:,} bytes"
    click.echo(
        f"price sheet {sheet.name} (provider {sheet_provider(sheet)}, {sheet.currency}, per {unit})"
    )
    rows = [["CLASS", "STORAGE/GB-MONTH", "MIN DAYS", "MIN SIZE", "PUT/1000", "GET/1000",
             "RETRIEVAL/GB"]]  # fmt: skip
    for klass, price in sheet.classes.items():
        rows.append([
            str(klass), f"{price.storage_per_gb_month:g}", str(price.min_storage_days),
            human_bytes(price.min_billable_object_bytes) if price.min_billable_object_bytes
            else "-",
            f"{price.put_per_1000:g}", f"{price.get_per_1000:g}", f"{price.retrieval_per_gb:g}",
        ])  # fmt: skip
    echo_table(rows)
    restores = [["RESTORE", "TIER", "REQUESTS/1000", "PER GB", "HOURS"]]
    for klass, price in sheet.classes.items():
        for tier, cost in price.restore.items():
            restores.append([
                str(klass), str(tier), f"{cost.per_1000_requests:g}", f"{cost.per_gb:g}",
                f"{cost.hours[0]:g}-{cost.hours[1]:g}",
            ])  # fmt: skip
    click.echo("")
    if len(restores) > 1:
        echo_table(restores)
    else:
        click.echo("no restores: every class reads at once")
    click.echo("")
    egress = [["EGRESS", "UP TO GB", "PER GB"]]
    for path, tiers in sheet.egress.items():
        for tier in tiers:
            bound = "beyond" if tier.up_to_gb is None else f"{tier.up_to_gb:,g}"
            egress.append([path, bound, f"{tier.per_gb:g}"])
    echo_table(egress)


COMMANDS = [sheet_group]
