"""The ``archivefs`` command group: its help, the global options, and what every command
shares at its end (a closed pipe ends quietly, Ctrl-C says what goes on at the store, a
usage error is also a JSON error object with ``--json``). The commands come from one
module per command group, imported when a command of it is run (or ``--help`` lists
them), so ``archivefs prefetch`` does not import what ``advise``, ``mount`` or ``index``
need before its first request.

Exit codes: 0 ok, 1 error, 2 usage, 3 budget refused, 4 still waiting / timed out.
Errors print one line saying what to fix; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import textwrap
from typing import Any

import click

from archivefs.cli.context import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    Context,
    echo_json_error,
    global_options,
)


def interrupted(command: str | None) -> str:
    """What Ctrl-C leaves behind: restores already requested go on at the store."""
    if command in ("restore", "prefetch"):
        return (
            "interrupted; the restore requests already sent keep going at the store (they "
            "are billed). Fix: run the same command again to resume: what was sent is not "
            "sent again (the journal remembers it) and it waits for the rest; `archivefs "
            "status` shows where they are."
        )
    return "interrupted."


def quiet_stdout() -> None:
    """Point standard output at /dev/null, so nothing more (not even the interpreter's
    flush at exit) writes to a pipe whose reader is gone."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file (click's test runner): nothing to do
        pass


COMMAND_MODULES: dict[str, str] = {
    "ls": "listing",
    "status": "listing",
    "restore": "restore",
    "prefetch": "restore",
    "estimate": "estimate",
    "advise": "advise",
    "sheet": "sheet",
    "bundle": "bundle",
    "catalog": "bundle",
    "index": "index",
    "demo": "emulator",
    "serve": "emulator",
    "mount": "mount",
    "unmount": "mount",
}
"""Each command's module under ``archivefs.cli`` (whose ``COMMANDS`` declares it)."""


class ArchivefsGroup(click.Group):
    """The ``archivefs`` group: what every command shares at its end; each command's
    module is imported when that command is asked for (``COMMAND_MODULES``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            for command in importlib.import_module(f"archivefs.cli.{module}").COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # the last lines reach the reader, or its absence shows here
        except BrokenPipeError:  # `archivefs ls | head`: the reader has what it wanted
            quiet_stdout()
            ctx.exit(EXIT_OK)
        except KeyboardInterrupt:  # Ctrl-C: say what goes on without us, not "Aborted!"
            message = interrupted(ctx.invoked_subcommand)
            click.echo(f"archivefs: {message}", err=True)
            echo_json_error(message, EXIT_INTERRUPTED)
            ctx.exit(EXIT_INTERRUPTED)
        except click.ClickException as error:  # wrong usage: click says it on stderr
            command = getattr(getattr(error, "ctx", None), "command_path", "archivefs")
            echo_json_error(error.format_message(), error.exit_code, fix=f"see `{command} --help`.")
            raise
        return result


@click.group(cls=ArchivefsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@global_options
@click.version_option(package_name="archivefs")
@click.pass_context
def main(click_ctx: click.Context) -> None:
    """Read archived data (S3 Glacier and Deep Archive, Azure Archive, GCS cold classes,
    Oracle Archive, Ceph RGW) without surprises.

    GLOBAL_OPTIONS

    \b
    Examples:
      archivefs demo
      archivefs ls -l s3://bucket/data/
      archivefs estimate s3://bucket/data/ --tier Bulk
      archivefs restore s3://bucket/data/*.nc --wait --max-cost 5 --endpoint-url http://127.0.0.1:9000
    """
    click_ctx.ensure_object(Context)


def _global_options_paragraph(group: click.Group) -> str:
    """The help's sentence naming the group's own options, from their declarations,
    wrapped here (click would break ``--storage-options`` at its hyphen)."""
    names = [
        param.opts[0]
        for param in group.params
        if isinstance(param, click.Option) and param.name not in ("version", "help")
    ]
    sentence = f"Global options ({', '.join(names)}) go before or after the command."
    return "\b\n" + textwrap.fill(sentence, 76, break_on_hyphens=False)


main.help = inspect.cleandoc(main.help or "").replace(
    "GLOBAL_OPTIONS", _global_options_paragraph(main)
)
