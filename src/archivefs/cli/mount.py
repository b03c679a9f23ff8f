"""``archivefs mount`` and ``archivefs unmount``: the archive as a POSIX tree (docs/mount.md)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from archivefs.cli import options
from archivefs.cli.context import Context, global_options
from archivefs.cli.render import run_guarded

POLICIES = click.Choice(["raise", "restore", "wait"])


@click.command("mount")
@click.argument("url")
@click.argument("mountpoint", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--on-archived",
    type=POLICIES,
    default="raise",
    show_default=True,
    help="Opening an archived file: raise (refused, EACCES), restore (its group requested, "
    "then refused), wait (requested, and the open blocks until it reads).",
)
@click.option(
    "--wait-timeout",
    type=float,
    help="--on-archived wait: seconds an open blocks at most (then ETIMEDOUT).",
)
@click.option(
    "--listing-ttl",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Seconds a directory's listing answers stat and ls before it is listed again.",
)
@click.option(
    "--batch-window",
    type=click.FloatRange(min=0),
    default=0.2,
    show_default=True,
    help="Seconds opens of archived files gather into one restore batch.",
)
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep files read whole in this directory (LRU, survives remounts, checked by "
    "ETag): a reread sends no GET.",
)
@click.option(
    "--cache-size",
    default="10GiB",
    show_default=True,
    help="The most the --cache directory holds (e.g. 50GiB).",
)
@options.tier(default=None)
@options.days(default=None)
@click.option(
    "--max-cost",
    type=float,
    help="The mount's budget: a restore or fee-charging read estimated above it is "
    "refused (the open fails with EDQUOT, the log says why).",
)
@click.option(
    "--writable",
    is_flag=True,
    help="Upload files written and closed (in --storage-class, the cost in the log); "
    "delete with rm. Without it every write fails with EROFS.",
)
@click.option(
    "--storage-class",
    help="--writable: the class files are uploaded in (default: the provider's hot class, "
    "e.g. STANDARD; an archive class is allowed and the log says so).",
)
@click.option(
    "--allow-early-delete",
    is_flag=True,
    help="--writable: let rm and overwrites remove objects younger than their class's "
    "minimum storage days (the log says the early-deletion charge); else EPERM.",
)
@click.option("--daemon", is_flag=True, help="Detach once mounted (log: --log-file).")
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where a --daemon mount logs (default: MOUNTPOINT's name in the user cache).",
)
@global_options
@click.pass_obj
def mount_command(
    ctx: Context,
    url: str,
    mountpoint: Path,
    on_archived: str,
    wait_timeout: float | None,
    listing_ttl: float,
    batch_window: float,
    cache_dir: Path | None,
    cache_size: str,
    tier: str | None,
    days: int | None,
    max_cost: float | None,
    writable: bool,
    storage_class: str | None,
    allow_early_delete: bool,
    daemon: bool,
    log_file: Path | None,
) -> None:
    """Mount URL at MOUNTPOINT for programs that read files (read-only unless --writable).

    In the foreground until Ctrl-C (or `archivefs unmount MOUNTPOINT`); the log says
    which archived object an open refused and the command that restores it.

    \b
    Examples:
      archivefs mount s3://bucket/run42/ /mnt/run42
      archivefs mount s3://bucket/run42/ /mnt/run42 --on-archived wait --tier Bulk --daemon
      archivefs mount s3://bucket/out/ /mnt/out --writable --storage-class GLACIER
      getfattr -d /mnt/run42/a.nc
    """
    from archivefs.mount.runner import MountOptions, check_mountpoint, daemonize, serve
    from archivefs.paths import cache_dir as user_cache
    from archivefs.pricing.sizes import parse_size

    try:
        cache_bytes = parse_size(cache_size)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--cache-size'") from None
    if not writable and (storage_class is not None or allow_early_delete):
        raise click.UsageError("--storage-class and --allow-early-delete need --writable.")
    if storage_class is not None:
        from archivefs.model import StorageClass
        from archivefs.providers import provider_for_url

        try:
            StorageClass.parse(storage_class, provider=provider_for_url(url).name)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="'--storage-class'") from None

    def body() -> None:
        path = check_mountpoint(mountpoint)
        if daemon:
            log_path = log_file or user_cache() / "mounts" / f"{path.name or 'root'}.log"
            pid = daemonize(path, log_path)
            if pid is not None:  # the parent: the child serves the mount
                click.echo(f"mounted {url} at {path} (pid {pid}; log {log_path})")
                return
        logging.basicConfig(
            level=logging.DEBUG if ctx.debug else logging.INFO,
            format="%(asctime)s archivefs mount: %(message)s",
            stream=sys.stderr,
        )
        logging.getLogger("mfusepy").setLevel(logging.WARNING)
        settings: dict[str, object] = {"on_archived": "raise", "max_cost": max_cost}
        if tier is not None:
            settings["tier"] = tier
        if days is not None:
            settings["days"] = days
        fs = ctx.filesystem([url], wait_timeout=wait_timeout, **settings)
        policy = MountOptions(
            on_archived,  # type: ignore[arg-type]
            wait_timeout,
            listing_ttl,
            batch_window,
            None if cache_dir is None else str(cache_dir),
            cache_bytes,
            writable,
            storage_class,
            allow_early_delete,
        )
        serve(fs, url, path, policy)

    run_guarded(ctx, body, url)


@click.command("unmount")
@click.argument("mountpoint")  # not checked: a dead mount cannot even be stat()ed
@click.option("--lazy", is_flag=True, help="Detach now, even while files are open (-uz).")
@global_options
@click.pass_obj
def unmount_command(ctx: Context, mountpoint: str, lazy: bool) -> None:
    """Unmount an archivefs mount (also one whose process was killed).

    \b
    Examples:
      archivefs unmount /mnt/run42
    """
    from archivefs.mount import unmount

    run_guarded(ctx, lambda: unmount(mountpoint, lazy=lazy))


COMMANDS = [mount_command, unmount_command]
