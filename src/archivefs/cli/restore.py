"""``archivefs restore`` and ``archivefs prefetch``: get archived objects ready to read."""

from __future__ import annotations

from typing import Any

import click

from archivefs.cli import options
from archivefs.cli.context import Context, global_options, read_paths
from archivefs.cli.options import selected
from archivefs.cli.render import (
    echo_json,
    echo_read_whole,
    restore_with_display,
    run_guarded,
    warn_over_restore,
)
from archivefs.progress import human_bytes
from archivefs.selection import summarize


@click.command("restore")
@options.paths
@options.tier()
@options.days()
@click.option("--wait", is_flag=True, help="Wait until everything reads.")
@options.timeout
@options.max_cost
@options.price_sheet
@global_options
@click.pass_obj
def restore_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    tier: str,
    days: int,
    wait: bool,
    timeout: float | None,
    max_cost: float | None,
    price_sheet: str | None,
) -> None:
    """Restore archived objects in one batch (one request per object, never twice).

    \b
    Examples:
      archivefs restore s3://bucket/run42/ --tier Bulk --days 3
      archivefs restore --from-file needed.txt --wait --timeout 43200
    """

    def body() -> None:
        paths = read_paths(urls, from_file)
        fs = ctx.filesystem(paths, tier=tier, days=days, max_cost=max_cost, price_sheet=price_sheet)
        result = restore_with_display(ctx, fs, paths, wait=wait, timeout=timeout)
        summary = {
            "groups": len(result.plan),
            "requests_sent": result.requests_sent,
            "already_in_progress_elsewhere": len(result.submitted.skipped),
            "ready": len(result.ready) if wait else None,
        }
        if ctx.as_json:
            echo_json(summary)
        else:
            selection = summarize(result.plan)
            bundles = sum(c.bundles for c in selection.states.values())
            cold = ("archived", "restoring")
            if summary["groups"] and not any(selection.states[s].objects for s in cold):
                click.echo(  # a folder or glob of objects that read at once: say so
                    f"nothing to restore: the {selection.files} files in {summary['groups']} "
                    "objects read at once (`archivefs ls -l` shows any retrieval fee); "
                    "0 restore requests sent"
                )
                return
            click.echo(
                f"{selection.files} files in {summary['groups']} objects"
                + (f" ({bundles} bundles)" if bundles else "")
                + f"; {summary['requests_sent']} restore requests sent"
                + (f"; {summary['ready']} ready" if wait else "")
            )
            warn_over_restore(fs, result.plan, selection)

    run_guarded(ctx, body)


@click.command("prefetch")
@options.paths
@click.option(
    "--to",
    "hot",
    help="Once restored, write the requested files to this directory (at DIR/BUCKET/KEY), "
    "or copy the restored objects to this s3:// URL.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --to DIR: fetch every file again, also those an earlier run wrote there "
    "whose file and object are unchanged (skipped otherwise, as aws s3 sync does).",
)
@click.option(
    "--promote",
    is_flag=True,
    help="Once restored, copy each object onto itself in STANDARD (permanent; billed as such).",
)
@options.tier()
@options.days()
@options.timeout
@options.max_cost
@options.price_sheet
@options.dataset_selection
@global_options
@click.pass_obj
def prefetch_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    hot: str | None,
    force: bool,
    promote: bool,
    tier: str,
    days: int,
    timeout: float | None,
    max_cost: float | None,
    price_sheet: str | None,
    variables: tuple[str, ...],
    ranges: dict[str, tuple[str, str]],
) -> None:
    """Restore in one batch, wait with a progress bar, optionally copy to a hot store.

    Run it before a batch job so the job reads without waiting.

    \b
    Examples:
      archivefs prefetch s3://bucket/run42/ --tier Bulk
      archivefs prefetch --from-file inputs.txt --to /scratch/run42-cache
      archivefs prefetch 's3://bucket/era5/*.nc' --var t2m --sel time=2023-06-01:2023-08-31
    """

    def body() -> None:
        if hot and promote:
            raise click.UsageError("use --to HOT_URL or --promote, not both.")
        if force and not (hot and is_local(hot)):
            raise click.UsageError("--force re-fetches into a local --to DIR; give one.")
        options: dict[str, Any] = {
            "tier": tier,
            "days": days,
            "max_cost": max_cost,
            "price_sheet": price_sheet,
        }
        local = hot is not None and is_local(hot)
        if hot and not local:
            options["hot"] = hot
            options["hot_options"] = ctx.storage_options()
        paths = read_paths(urls, from_file)
        fs = ctx.filesystem(paths, **options)
        chosen = None
        whole: dict[str, Any] = {}  # fs.prefetch's read_whole: the plan names those files
        if variables or ranges:
            chosen = selected(paths, fs=fs, variables=variables, ranges=ranges)
            paths = chosen.paths
            whole["read_whole"] = chosen.read_whole
            if not ctx.as_json:  # before the wait: which files come back whole, and why
                echo_read_whole(chosen.read_whole)
        if local:
            assert hot is not None
            result = restore_with_display(
                ctx, fs, paths, prefetch=True, timeout=timeout, to=hot, force=force, **whole
            )
            copied = result.copied
            summary: dict[str, Any] = {
                "groups": len(result.plan),
                "requests_sent": result.requests_sent,
                "ready": len(result.ready),
                "readable_for_a_fee": len(result.plan.fee_reads),
                "copied_to": hot,
                "files_written": len(copied.files),
                "bytes_written": copied.bytes_written,
                "files_skipped": len(copied.skipped),
                "partials_removed": len(copied.partials_removed),
                "promoted_in_place": 0,
            }
        else:
            if hot:  # prefetch, then copy into the hot store
                result = restore_with_display(
                    ctx, fs, paths, to_hot_store=True, timeout=timeout, **whole
                )
            else:  # objects that read at once are part of the job, not an error
                result = restore_with_display(
                    ctx, fs, paths, prefetch=True, timeout=timeout, **whole
                )
            promoted = fs.promote_in_place(paths) if promote else []
            summary = {
                "groups": len(result.plan),
                "requests_sent": result.requests_sent,
                "ready": len(result.ready),
                "readable_for_a_fee": len(result.plan.fee_reads),
                "copied_to": hot,
                "promoted_in_place": len(promoted),
            }
        if chosen is not None:
            from archivefs.plans import whole_file_json

            summary["read_whole"] = whole_file_json(chosen.read_whole)
        if ctx.as_json:
            echo_json(summary)
        else:
            click.echo(
                f"{summary['ready']}/{summary['groups']} objects ready; "
                f"{summary['requests_sent']} restore requests sent"
                + (
                    f"; {summary['readable_for_a_fee']} read at once for a retrieval fee"
                    if summary.get("readable_for_a_fee")
                    else ""
                )
                + (
                    f"; {summary['files_written']} files ({human_bytes(summary['bytes_written'])})"
                    f" written to {hot}"
                    + (
                        f", {summary['files_skipped']} already there (unchanged; --force "
                        "fetches them again)"
                        if summary.get("files_skipped")
                        else ""
                    )
                    if local
                    else (f"; copied to {hot}" if hot else "")
                )
                + (f"; {summary['promoted_in_place']} made STANDARD in place" if promote else "")
            )

    run_guarded(ctx, body)


def is_local(url: str) -> bool:
    return "://" not in url or url.startswith("file://")


COMMANDS = [restore_command, prefetch_command]
