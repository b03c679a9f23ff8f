"""The command line is thin: its modules call public operations of the library only.

No module under ``archivefs/cli/`` imports a private name (``_x``) or a private module
of another package, nor reaches into the filesystem's parts (``fs.engine``, ``fs.store``,
``fs.catalogs``, ``fs.loop``) or any private attribute (``x._y``). What a command needs
that the public API lacks becomes a documented public operation first.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).parents[1] / "src" / "archivefs" / "cli"

PARTS = frozenset({"engine", "store", "catalogs", "loop", "fs"})
"""The filesystem's collaborators and event loop: reached only through its methods."""


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations_in(source: str, module: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 0 and not node.module.startswith("archivefs.cli"):
                if any(private(part) for part in node.module.split(".")):
                    found.append(f"{module}:{node.lineno} imports the private {node.module}")
                found += [
                    f"{module}:{node.lineno} imports the private {node.module}.{alias.name}"
                    for alias in node.names
                    if private(alias.name)
                ]
        elif isinstance(node, ast.Import):
            found += [
                f"{module}:{node.lineno} imports the private {alias.name}"
                for alias in node.names
                if any(private(part) for part in alias.name.split("."))
            ]
        elif isinstance(node, ast.Attribute):
            if private(node.attr):
                found.append(f"{module}:{node.lineno} reaches into .{node.attr}")
            elif node.attr in PARTS:
                found.append(f"{module}:{node.lineno} reaches into the filesystem's .{node.attr}")
    return found


def test_cli_modules_use_public_operations_only() -> None:
    modules = sorted(CLI.rglob("*.py"))
    assert len(modules) > 5, "archivefs/cli/ is a package of command modules"
    found = [v for path in modules for v in violations_in(path.read_text("utf-8"), path.name)]
    assert found == []


def test_the_rule_catches_what_it_names() -> None:
    source = (
        "from archivefs.stores._x import y\n"
        "from archivefs.filesystem import _hidden\n"
        "import archivefs.testing._server\n"
        "fs.engine.journal\n"
        "sync(fs.loop, fs.catalogs.root_for, p)\n"
        "fs._parent(name)\n"
        "from archivefs.cli.render import echo_json\n"  # the package's own: fine
        "fs.restore_eta(plan).__class__\n"  # dunders are not private names
    )
    assert sorted(violations_in(source, "m.py")) == [
        "m.py:1 imports the private archivefs.stores._x",
        "m.py:2 imports the private archivefs.filesystem._hidden",
        "m.py:3 imports the private archivefs.testing._server",
        "m.py:4 reaches into the filesystem's .engine",
        "m.py:5 reaches into the filesystem's .catalogs",
        "m.py:5 reaches into the filesystem's .loop",
        "m.py:6 reaches into ._parent",
    ]
