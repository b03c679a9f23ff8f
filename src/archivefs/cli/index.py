"""``archivefs index``: kerchunk references of netCDF4/HDF5 and netCDF3 files that read now."""

from __future__ import annotations

import click

from archivefs.cli import options
from archivefs.cli.context import EXIT_ERROR, Context, fail, global_options, read_paths
from archivefs.cli.render import echo_json, run_guarded
from archivefs.progress import human_bytes


@click.command("index")
@options.paths
@click.option(
    "--inline-threshold",
    default=500,
    show_default=True,
    type=click.IntRange(min=0),
    help="Chunks smaller than this many bytes are kept inline (coordinates always are).",
)
@click.option(
    "--concat-dim",
    metavar="DIM",
    default=None,
    help="Also combine the files' references along this dimension into one set, so that "
    "open_mfdataset of exactly these files opens one dataset from one GET.",
)
@global_options
@click.pass_obj
def index_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    inline_threshold: int,
    concat_dim: str | None,
) -> None:
    """Describe where every chunk of netCDF4/HDF5 files lies, so that they open and
    plan later without a restore.

    Reads only each file's metadata and coordinates (files that read now: hot or
    restored) and keeps kerchunk references beside the catalog
    (.archivefs/references/). An archived file is not read: it is reported with the
    restore that would let it be indexed, the others are indexed, and the command
    exits non-zero. A file whose stored references still describe its object (size,
    ETag) is not read again, archived or not, unless they were made with another
    --inline-threshold and it reads now. With --concat-dim, the files'
    references are then combined along that dimension into one set (.combined/ in
    .archivefs/references/), which opening exactly these files uses: one GET and
    one dataset however many files there are.

    \b
    Examples:
      archivefs index s3://bucket/run42/*.nc
      archivefs index s3://bucket/run42/*.nc --concat-dim time
      archivefs index --from-file files.txt --json
    """
    from archivefs.datasets.indexing import index_files

    paths = read_paths(urls, from_file)
    report = run_guarded(
        ctx,
        lambda: index_files(
            paths,
            fs=ctx.filesystem(paths),
            inline_threshold=inline_threshold,
            concat_dim=concat_dim,
        ),
    )
    if ctx.as_json:
        echo_json(report.as_json())
    else:
        for done in report.indexed:
            state = "indexed" if done.written else "unchanged"
            click.echo(
                f"{state}  {done.path}  {done.chunks} chunks, {done.inline} inline; read "
                f"{human_bytes(done.bytes_read)} of {human_bytes(done.size)}"
            )
        if report.combined is not None:
            made = report.combined
            state = "combined" if made.written else "unchanged"
            click.echo(
                f"{state}  {len(made.files)} files along {made.concat_dim!r}: "
                f"{made.location}  {made.chunks} chunks"
            )
    if not report.ok:
        for error in report.failed.values():
            click.echo(f"archivefs: error: {error}", err=True)
        if report.failed and report.not_combined is not None:
            click.echo(f"archivefs: error: {report.not_combined}", err=True)
        if ctx.as_json:  # the report is the JSON output: the exit code says it failed
            raise SystemExit(EXIT_ERROR)
        if not report.failed:
            fail(str(report.not_combined), EXIT_ERROR)
        first = next(iter(report.failed.values()))
        fail(f"{len(report.failed)} of {len(report.failed) + len(report.indexed)} files were "
             f"not indexed (first: {first.path}).", EXIT_ERROR)  # fmt: skip


COMMANDS = [index_command]
