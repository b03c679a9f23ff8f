"""The ``archivefs`` command, a package of thin commands over public Python operations.

``main`` (the console script ``archivefs.cli:main``) is the click group of ``app``;
``context`` holds the global options and opens the filesystem, ``options`` the option
sets commands share, ``render`` everything printed (tables, JSON, amounts, errors and
their exit codes); one module per command group: ``listing`` (ls, status), ``restore``
(restore, prefetch), ``estimate``, ``advise``, ``bundle`` (bundle, catalog) and
``emulator`` (demo, serve). Commands call only public operations of the library
(``tests/test_cli_layers.py`` holds that), so Python can do whatever a command does.

Exit codes: 0 ok, 1 error, 2 usage, 3 budget refused, 4 still waiting / timed out,
130 interrupted.
"""

from __future__ import annotations

from archivefs.cli.app import main
from archivefs.cli.context import (
    EXIT_BUDGET,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_WAITING,
)

__all__ = [
    "EXIT_BUDGET",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_WAITING",
    "main",
]
