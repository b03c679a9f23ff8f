"""``archivefs bundle`` and ``archivefs catalog show|rebuild``: pack small files into
bundles, and read or rebuild the catalog that finds them."""

from __future__ import annotations

from typing import Any

import click

from archivefs.cli.context import Context, global_options, target_protocol
from archivefs.cli.estimate import parse_size_option
from archivefs.cli.render import echo_json, run_guarded


def grouping_policy(group_by: str, target_size: str, max_members: int, window: int) -> Any:
    from archivefs.catalog import ByChunkNeighbourhood, ByPrefix

    size = parse_size_option(target_size)
    if group_by.startswith("prefix"):
        depth = int(group_by.split(":", 1)[1]) if ":" in group_by else 1
        return ByPrefix(depth=depth, target_size=size, max_members=max_members)
    if group_by.startswith("chunks"):
        dim = int(group_by.split(":", 1)[1]) if ":" in group_by else 0
        return ByChunkNeighbourhood(
            dim_index=dim, window=window, target_size=size, max_members=max_members
        )
    raise click.BadParameter(
        f"{group_by!r}: use prefix[:DEPTH] or chunks[:DIMENSION].", param_hint="--group-by"
    )


@click.command("bundle")
@click.argument("src")
@click.argument("dest")
@click.option(
    "--group-by",
    default="prefix:1",
    show_default=True,
    help="prefix[:DEPTH] (directories) or chunks[:DIM] (zarr chunk windows).",
)
@click.option("--window", default=10, show_default=True, help="Chunks per window (chunks:DIM).")
@click.option("--target-size", default="256MiB", show_default=True, help="Bundle size to aim for.")
@click.option("--max-members", default=10_000, show_default=True, help="Members per bundle.")
@click.option(
    "--storage-class",
    default="DEEP_ARCHIVE",
    show_default=True,
    help="Class of the bundles (the catalog stays STANDARD).",
)
@click.option(
    "--hot-arrays",
    default="auto",
    show_default=True,
    help="zarr arrays kept STANDARD: auto (coordinates and small arrays), none, or a,b,c.",
)
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Bundle the targets of links that leave SRC (skipped, and listed, by default).",
)
@click.option(
    "--orphans",
    type=click.Choice(["keep", "delete"]),
    default="keep",
    show_default=True,
    help="Bundles of an earlier run that no catalog records: keep (listed) or delete "
    "those over an hour old (a younger one may be a concurrent run's; an archived bundle "
    "deleted early is billed its minimum storage period).",
)
@global_options
@click.pass_obj
def bundle_command(
    ctx: Context,
    src: str,
    dest: str,
    group_by: str,
    window: int,
    target_size: str,
    max_members: int,
    storage_class: str,
    hot_arrays: str,
    follow_symlinks: bool,
    orphans: str,
) -> None:
    """Pack small files from SRC (a directory or URL) into bundles at DEST (s3://...).

    Members appear at DEST/<path relative to SRC>; bundles and the catalog go
    under DEST/.archivefs/. Interrupted runs resume; sources are never deleted.
    netCDF4/HDF5/netCDF3 members get kerchunk references under
    DEST/.archivefs/references/, made from the local bundle, so they open and plan
    without a restore; files kerchunk cannot describe are bundled without them (counted).

    \b
    Examples:
      archivefs bundle ./run42 s3://bucket/archive/run42 --storage-class DEEP_ARCHIVE
      archivefs bundle ./store.zarr s3://bucket/store.zarr --group-by chunks:0 --window 30
    """
    from archivefs.catalog.hot import parse_hot_arrays
    from archivefs.catalog.urls import bundle_url

    def body() -> None:
        report = bundle_url(
            src,
            dest,
            dest_options=ctx.storage_options(target_protocol([dest])),  # its library's
            policy=grouping_policy(group_by, target_size, max_members, window),
            storage_class=storage_class,
            hot_arrays=parse_hot_arrays(hot_arrays),
            follow_symlinks=follow_symlinks,
            orphans="delete" if orphans == "delete" else "keep",
        )
        summary = {
            "members": report.members,
            "bundles_written": len(report.bundles_written),
            "bundles_reused": len(report.bundles_reused),
            "kept_hot": len(report.kept_hot),
            "skipped_links": report.skipped_links,
            "orphans": [{**vars(o), "note": o.describe()} for o in report.orphans],
            "cleaned_partials": report.cleaned_partials,
            "referenced": len(report.referenced),
            "unreferenced": report.unreferenced,
        }
        if ctx.as_json:
            echo_json(summary)
            return
        click.echo(
            f"{summary['members']} files in {summary['bundles_written']} new bundles "
            f"({summary['bundles_reused']} already there); {summary['kept_hot']} kept hot"
        )
        if report.referenced:
            click.echo(f"{len(report.referenced)} netCDF/HDF5 files referenced (open unrestored)")
        if report.unreferenced:
            path, why = next(iter(report.unreferenced.items()))
            click.echo(
                f"{len(report.unreferenced)} netCDF/HDF5 file(s) bundled without references "
                f"(kerchunk cannot describe them; they open restored whole), e.g. {path}: {why}"
            )
        for link in report.skipped_links:
            click.echo(f"skipped: {link} (a link leaving SRC; --follow-symlinks to bundle it)")
        for orphan in report.orphans:
            verb = (
                "deleted"
                if orphan.deleted
                else "kept (in no catalog; under an hour old: perhaps a concurrent run's)"
                if orphans == "delete"
                else "kept (in no catalog; --orphans delete)"
            )
            click.echo(f"earlier bundle {verb}: {orphan.describe()}")
        if report.cleaned_partials:
            click.echo(f"removed {report.cleaned_partials} partial bundle(s) of a killed run")

    run_guarded(ctx, body, subject=dest)


@click.group("catalog")
@global_options
def catalog_group() -> None:
    """Show or rebuild the catalog of bundled data.

    \b
    Examples:
      archivefs catalog show s3://bucket/archive/run42
      archivefs catalog rebuild s3://bucket/archive/run42
    """


@catalog_group.command("show")
@click.argument("root")
@global_options
@click.pass_obj
def catalog_show(ctx: Context, root: str) -> None:
    """Bundles and member counts of the catalog at ROOT.

    \b
    Example:
      archivefs catalog show s3://bucket/archive/run42
    """
    from archivefs.catalog.urls import load_catalog

    def body() -> None:
        catalog = load_catalog(root, ctx.storage_options(target_protocol([root])))
        bundles = sorted(catalog.bundles.values(), key=lambda b: b.key)
        if ctx.as_json:
            echo_json(
                {
                    "members": len(catalog),
                    "bundles": [
                        {
                            "key": b.key,
                            "size": b.size,
                            "members": b.members,
                            "storage_class": b.storage_class.value,
                        }
                        for b in bundles
                    ],
                }
            )
            return
        for b in bundles:
            click.echo(f"{b.size:>12}  {b.storage_class.value:<13} {b.members:>7} members  {b.key}")
        click.echo(f"{len(catalog)} members in {len(bundles)} bundles")

    run_guarded(ctx, body, subject=root)


@catalog_group.command("rebuild")
@click.argument("root")
@global_options
@click.pass_obj
def catalog_rebuild(ctx: Context, root: str) -> None:
    """Rebuild the catalog at ROOT from its bundles' central directories.

    The bundles must be readable (hot or restored): their directories are read.

    \b
    Example:
      archivefs catalog rebuild s3://bucket/archive/run42
    """
    from archivefs.catalog.urls import rebuild_catalog_at

    def body() -> None:
        catalog = rebuild_catalog_at(root, ctx.storage_options(target_protocol([root])))
        if ctx.as_json:
            echo_json({"members": len(catalog), "bundles": len(catalog.bundles)})
            return
        click.echo(f"rebuilt: {len(catalog)} members in {len(catalog.bundles)} bundles")

    run_guarded(ctx, body, subject=root)


COMMANDS = [bundle_command, catalog_group]
