"""``archivefs demo`` and ``archivefs serve``: the emulated archive, no cloud account needed."""

from __future__ import annotations

import click

from archivefs.cli.context import Context, global_options
from archivefs.cli.render import echo_json, run_guarded


@click.command("demo")
@click.option("--delay", default=3.0, show_default=True, help="Emulated restore delay (s).")
@click.option("--keep", is_flag=True, help="Keep the temporary files.")
@global_options
@click.pass_obj
def demo_command(ctx: Context, delay: float, keep: bool) -> None:
    """Run the whole story on an emulated archive: no cloud account needed.

    \b
    Example:
      archivefs demo
    """
    from archivefs.demo import run_demo

    summary = run_guarded(ctx, lambda: run_demo(delay=delay, keep=keep, quiet=ctx.as_json))
    if ctx.as_json:
        echo_json(summary)


@click.command("serve")
@click.option("--port", default=0, show_default=True, help="Port on 127.0.0.1 (0: any free).")
@click.option(
    "--delay",
    default=20.0,
    show_default=True,
    help="Seconds a Deep Archive Standard restore takes; other classes and tiers take "
    "their own window on the same scale.",
)
@click.option("--bucket", "buckets", multiple=True, help="Create this bucket (repeatable).")
@click.option("--seed-demo", is_flag=True, help="Put the demo dataset in (needs the demo extra).")
@global_options
@click.pass_obj
def serve_command(
    ctx: Context, port: int, delay: float, buckets: tuple[str, ...], seed_demo: bool
) -> None:
    """Run an emulated S3 archive here until Ctrl-C, to try every command on.

    Prints the endpoint and the environment to export in another shell
    (dummy credentials, AWS_ENDPOINT_URL, and ARCHIVEFS_RESTORE_TIME_SCALE
    matching --delay). Data lives in memory and is gone when it stops.

    \b
    Examples:
      archivefs serve --bucket my-bucket --delay 20
      archivefs serve --seed-demo --port 9000
    """
    from archivefs.serve import run_until_interrupted, start

    if not (delay >= 0):
        raise click.BadParameter("give the restore delay in seconds (0 or more).")
    archive, served, workdir = run_guarded(
        ctx,
        lambda: start(port=port, delay=delay, buckets=list(buckets), seed_demo=seed_demo),
    )
    with workdir:
        if ctx.as_json:
            echo_json(served.as_json())
        else:
            click.echo(served.text())
        run_until_interrupted(archive)
    if not ctx.as_json:
        click.echo("archivefs serve: stopped", err=True)


COMMANDS = [demo_command, serve_command]
