"""``archivefs ls`` and ``archivefs status``: what is there, and in which restore state."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from archivefs.cli import options
from archivefs.cli.context import Context, fail, global_options, read_paths
from archivefs.cli.render import (
    claims_json,
    echo_claims,
    echo_json,
    echo_status,
    jsonable,
    report_unmatched,
    run_guarded,
    warn_over_restore,
)
from archivefs.globbing import has_wildcard
from archivefs.selection import summarize

# what a read of an entry's class asks for (its ``access``), as ``ls -l`` shows it
RETRIEVAL = {"immediate": "-", "retrieval_fee": "fee/GB", "restore": "restore"}


def long_row(size: str, klass: str, state: str, retrieval: str, expiry: str, name: str) -> str:
    """One line of ``ls -l`` (its header too): fixed columns, the name last."""
    return f"{size:>12}  {klass:<19} {state:<10} {retrieval:<9} {expiry:<20} {name}"


def utc_minute(when: datetime | None) -> str:
    """A restored copy's expiry to the minute, in UTC, saying so."""
    if when is None:
        return ""
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return f"{when:%Y-%m-%d %H:%M} UTC"


@click.command("ls")
@click.argument("url")
@click.option(
    "-l",
    "long",
    is_flag=True,
    help="Show size, class, restore state, what a read costs (- / fee/GB / restore) and "
    "expiry (UTC), under a header.",
)
@click.option("-r", "--recursive", is_flag=True, help="List everything below URL.")
@global_options
@click.pass_obj
def ls_command(ctx: Context, url: str, long: bool, recursive: bool) -> None:
    """List objects with their storage class and restore state (a glob lists what it matches).

    \b
    Examples:
      archivefs ls s3://bucket/prefix/
      archivefs ls -l --recursive s3://bucket/prefix/
      archivefs ls -l 's3://bucket/prefix/*/*.nc'
    """

    def body() -> None:
        fs = ctx.filesystem([url])
        entries = fs.list_entries(url, recursive=recursive)
        if not entries and has_wildcard(url):
            fail(f"matched nothing: {url}; check the spelling (`archivefs ls` of its folder "
                 "shows what exists).")  # fmt: skip
        if ctx.as_json:
            echo_json([jsonable(e) for e in entries], indent=1)
            return
        if long and entries:
            click.echo(long_row("SIZE", "CLASS", "STATE", "RETRIEVAL", "EXPIRES", "NAME"))
        for entry in entries:
            if not long:
                click.echo(entry["name"])
            elif entry["type"] == "directory":
                click.echo(long_row("DIR", "", "", "", "", f"{entry['name']}/"))
            else:
                click.echo(
                    long_row(
                        str(entry["size"]),
                        entry.get("storage_class") or "",
                        entry.get("restore") or "",
                        RETRIEVAL.get(entry.get("access") or "", ""),
                        utc_minute(entry.get("restore_expiry")),
                        entry["name"],
                    )
                )

    run_guarded(ctx, body)


@click.command("status")
@options.paths
@click.option(
    "--claims",
    "show_claims",
    is_flag=True,
    help="Read the bucket's claims of the restores in flight: who asked, at which tier, "
    "when, and when it is expected (one GET per restoring group).",
)
@global_options
@click.pass_obj
def status_command(
    ctx: Context, urls: tuple[str, ...], from_file: str | None, show_claims: bool
) -> None:
    """Count objects and bytes by restore state (one bulk probe).

    \b
    Examples:
      archivefs status s3://bucket/data/
      archivefs status --from-file needed.txt
      archivefs status --claims s3://bucket/data/
    """

    def body() -> None:
        paths = read_paths(urls, from_file)
        fs = ctx.filesystem(paths)
        plan = fs.plan(paths)
        report_unmatched(plan)
        summary = summarize(plan)
        eta = fs.restore_eta(plan)
        claims = fs.restore_claims(plan) if show_claims else None
        if ctx.as_json:
            echo_json(
                {
                    **summary.as_json(),
                    "missing": list(plan.missing),
                    "restoring_expected_by": eta.isoformat() if eta else None,
                    **({} if claims is None else {"claims": claims_json(*claims)}),
                }
            )
            return
        echo_status(summary)
        warn_over_restore(fs, plan, summary)
        if summary.states["restoring"].objects:
            click.echo(
                "restores in flight expected by "
                + (
                    f"{eta:%Y-%m-%d %H:%M} UTC (from the journal)"
                    if eta
                    else "(not in the journal)"
                )
            )
        if claims is not None:
            echo_claims(*claims)

    run_guarded(ctx, body)


COMMANDS = [ls_command, status_command]
