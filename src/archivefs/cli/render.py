"""Everything the commands print, in one place: tables, JSON, amounts and sizes, the
progress display, warnings, and errors as one line (and, with ``--json``, a JSON error
object) with the exit code that goes with them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from archivefs.cli.context import (
    EXIT_BUDGET,
    EXIT_ERROR,
    EXIT_USAGE,
    EXIT_WAITING,
    Context,
    fail,
)
from archivefs.errors import (
    ArchiveError,
    BudgetExceededError,
    ObjectNotFoundError,
    PriceSheetError,
    RestoreTimeoutError,
    WorkloadError,
)
from archivefs.progress import ProgressDisplay, human_bytes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.selection import SelectionSummary


def echo_json(payload: Any, indent: int | None = None) -> None:
    """``payload`` as JSON on standard output (one line unless ``indent``)."""
    click.echo(json.dumps(payload, indent=indent))


def run_guarded(ctx: Context, action: Any, subject: str = "") -> Any:
    """Run a command body; turn archivefs errors into one-line messages and exit codes.

    ``subject`` names the URL a store library's own error is about, for the message."""
    try:
        return action()
    except (click.exceptions.ClickException, BrokenPipeError):
        raise  # click reports usage errors, and ends quietly when a reader (| head) is gone
    except BudgetExceededError as error:
        if ctx.debug:
            raise
        fail(str(error), EXIT_BUDGET, error)
    except RestoreTimeoutError as error:
        if ctx.debug:
            raise
        fail(str(error), EXIT_WAITING, error)
    except (PriceSheetError, WorkloadError) as error:  # a file the user named: wrong usage
        if ctx.debug:
            raise
        fail(str(error), EXIT_USAGE, error)
    except (ArchiveError, ValueError, OSError) as error:
        if ctx.debug:
            raise
        fail(str(error) or type(error).__name__, EXIT_ERROR, error)
    except Exception as error:
        if ctx.debug or not from_a_store_library(error):
            raise  # a bug of archivefs: the traceback is what to report
        from archivefs.stores.translate import translate

        translated = translate(error, subject)
        fail(str(translated), EXIT_ERROR, translated)


STORE_LIBRARIES = frozenset(
    {"botocore", "aiobotocore", "s3fs", "azure", "adlfs", "gcsfs", "google", "oci", "ocifs"}
    | {"aiohttp", "requests", "urllib3"}
)


def from_a_store_library(error: BaseException) -> bool:
    """Raised by a store's client library (a command that reads the store without the
    archive filesystem, e.g. ``catalog show``): translated as the filesystem translates."""
    return type(error).__module__.split(".", 1)[0] in STORE_LIBRARIES


def restore_with_display(
    ctx: Context,
    fs: ArchiveFileSystem,
    paths: list[str],
    *,
    prefetch: bool = False,
    to_hot_store: bool = False,
    **kwargs: Any,
) -> Any:
    """``fs.restore`` (``fs.prefetch`` with ``prefetch``, ``fs.prefetch_to_hot_store`` with
    ``to_hot_store``) with the progress display (none with ``--json``); paths that match
    nothing are named and left out, as ``status`` does."""
    display = None if ctx.as_json else ProgressDisplay()
    try:
        if to_hot_store:
            return fs.prefetch_to_hot_store(
                paths, on_progress=display, on_missing=report_unmatched, **kwargs
            )
        if prefetch:
            return fs.prefetch(paths, on_progress=display, on_missing=report_unmatched, **kwargs)
        return fs.restore(paths, on_progress=display, on_missing=report_unmatched, **kwargs)
    finally:
        if display is not None:
            display.close()


def report_unmatched(plan: Any) -> None:
    """Name each path that matched nothing; exit 1 (one message) if nothing matched at all.

    Raises rather than exits: it is also ``fs.restore``'s ``on_missing``, called on the
    filesystem's event loop."""
    if plan.missing and not len(plan):
        raise ObjectNotFoundError(
            f"matched nothing: {', '.join(plan.missing[:3])}"
            + (f" and {len(plan.missing) - 3} more" if len(plan.missing) > 3 else "")
            + ".",
            fix="check the spelling (`archivefs ls` shows what exists).",
        )
    for path in plan.missing:
        click.echo(f"archivefs: matched nothing: {path}", err=True)


def warn_over_restore(fs: ArchiveFileSystem, plan: Any, summary: SelectionSummary) -> None:
    """Warn when the restores bring back far more than the files need; name a better grouping."""
    from archivefs.selection import grouping_advice

    advice = grouping_advice(fs, plan, summary)
    if advice is None:
        return
    message = (
        f"warning: the {summary.files} files need {human_bytes(summary.bytes_needed_to_restore)}"
        f" but restoring their objects brings back {human_bytes(summary.bytes_to_restore)}"
        f" ({summary.over_restore:.1f}x): they share bundles with files you did not ask for."
    )
    for root, depth in advice.items():
        message += (
            f" Bundling s3://{root} with --group-by prefix:{depth} would restore only them."
            if depth is not None
            else f" No directory grouping of s3://{root} separates them: bundle by a key"
            " function (archivefs.catalog.ByKey) that matches how you select."
        )
    click.echo(message, err=True)


def echo_status(summary: SelectionSummary) -> None:
    """One line per restore state: files and bytes needed, in how many objects (bundles)."""
    for state, c in summary.states.items():
        kind = "bundles" if c.bundles == c.objects and c.objects else "objects"
        click.echo(
            f"{state:<10} {c.files:>8} files {human_bytes(c.bytes_needed):>10}"
            f"   in {c.objects} {kind}"
            + (f" ({c.bundles} bundles)" if c.bundles and kind == "objects" else "")
            + f" of {human_bytes(c.bytes_in_objects)}"
        )


def claims_json(summaries: list[Any], unclaimed: list[str]) -> dict[str, Any]:
    return {
        "by_requester": [
            {
                "requester": s.requester,
                "tier": s.tier,
                "groups": s.groups,
                "first_claimed": s.first_claimed.isoformat(),
                "expected_ready": s.expected_ready.isoformat() if s.expected_ready else None,
            }
            for s in summaries
        ],
        "unclaimed": unclaimed,
    }


def echo_claims(summaries: list[Any], unclaimed: list[str]) -> None:
    if not summaries and not unclaimed:
        click.echo("claims: no restore in flight")
        return
    for s in summaries:
        ready = s.expected_ready
        expected = f", expected by {ready:%Y-%m-%d %H:%M} UTC" if ready else ""
        click.echo(
            f"claimed by {s.requester}: {s.groups} group{'s' * (s.groups != 1)} at {s.tier}, "
            f"since {s.first_claimed:%Y-%m-%d %H:%M} UTC{expected}"
        )
    if unclaimed:
        click.echo(
            f"{len(unclaimed)} restoring group{'s' * (len(unclaimed) != 1)} with no claim in "
            "the bucket (restored without --bucket-claims)"
        )


def print_estimate(
    ctx: Context,
    result: Any,
    summary: SelectionSummary | None = None,
    read_whole: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """An estimate; with ``summary``, in files and objects; with ``read_whole`` (a dataset
    selection's), which files it reads whole and why."""
    from archivefs.pricing.amounts import format_amount

    if ctx.as_json:
        extra: dict[str, Any] = {"selection": summary.as_json()} if summary is not None else {}
        if read_whole is not None:
            from archivefs.plans import whole_file_json

            extra["read_whole"] = whole_file_json(read_whole)
        click.echo(json.dumps({**result.model_dump(mode="json"), "total": result.total, **extra}))
        return
    if summary is not None:
        click.echo(
            f"{summary.files} files; {human_bytes(summary.bytes_needed_to_restore)} of them to "
            f"restore, in objects of {human_bytes(summary.bytes_to_restore)} "
            f"({result.restore_request_count} restore requests)"
        )
    echo_read_whole(read_whole)
    for name, dollars in result.table():
        click.echo(f"{name:<24} {format_amount(dollars, result.currency):>16}")
    lo, hi = result.restore_hours
    click.echo(
        f"restore wait {lo:g}-{hi:g} h; transfer {result.transfer_seconds:.0f} s; "
        f"{result.restore_request_count} restore requests, {result.get_request_count} GETs"
    )
    for warning in result.warnings:
        click.echo(f"warning: {warning}")
    click.echo(f"prices: the {result.sheet} price sheet (`archivefs sheet show {result.sheet}`)")


def echo_read_whole(read_whole: Mapping[str, Sequence[str]] | None) -> None:
    """A dataset selection's files read whole and why, in the plan repr's words (if any)."""
    from archivefs.plans import whole_file_text

    if read_whole:
        click.echo(whole_file_text(read_whole))


def echo_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))


def echo_break_even(point: Any, indent: str = "", *, tib: bool = False) -> None:
    """One break-even line: in reads a month, or (``tib``) in TiB read a month first."""
    if (point.tib_per_month if tib else point.reads_per_month) is None:
        other = (
            point.cheaper_when_frequent
            if point.always_cheaper == point.cheaper_when_rare
            else point.cheaper_when_rare
        )
        click.echo(f"{indent}{point.always_cheaper} is always cheaper than {other}")
    elif tib:
        click.echo(
            f"{indent}{point.cheaper_when_rare} is cheaper below {point.tib_per_month:,.2f} TiB "
            f"({point.reads_per_month:.3g} full reads) a month, "
            f"{point.cheaper_when_frequent} above"
        )
    else:
        click.echo(
            f"{indent}{point.cheaper_when_rare} is cheaper below {point.reads_per_month:.2f} "
            f"reads/month, {point.cheaper_when_frequent} above"
        )


def jsonable(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as JSON takes it: the target's own values too (adlfs's
    ``content_settings`` mapping with its MD5 bytes, times) made plain."""
    return {str(key): _plain(value) for key, value in entry.items()}


def _plain(value: Any) -> Any:
    import base64
    from collections.abc import Mapping

    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()  # as Azure shows Content-MD5
    if isinstance(value, Mapping) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    return str(value)
