"""Issue 49: what a one-object download does before its first request, in a process of its
own as a user runs it: the installed ``archivefs prefetch URL --to DIR`` script, and
``fs.get``/``fs.cat`` in a fresh interpreter.

Counted, not timed: an audit hook (a ``sitecustomize`` on the child's path, so the
script runs unchanged) writes down ``sys.modules`` at the child's first connection to
the emulator; the requests are counted at the server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from archivefs.cli.app import COMMAND_MODULES

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"

NOT_BEFORE_THE_FIRST_REQUEST = (
    "numpy",
    "pandas",
    "xarray",
    "dask",
    "zarr",
    "h5py",
    "pydantic",
    "yaml",
    "sqlite3",
    "tqdm",
    "archivefs.pricing",
    "archivefs.restore.journal",
    "archivefs.restore.claims",
    "archivefs.datasets",
)
"""What a download of a plain object does not need before it asks the store for it."""

HOOK = """
import atexit, json, os, sys

_PORT = int(os.environ["ARCHIVEFS_TEST_PORT"])
_OUT = os.environ["ARCHIVEFS_TEST_MODULES"]


@atexit.register
def _at_exit():
    with open(_OUT + ".exit", "w") as out:
        json.dump(sorted(sys.modules), out)


def _first_connection(event, args):
    if event == "socket.connect" and not os.path.exists(_OUT):
        address = args[1]
        if isinstance(address, tuple) and len(address) >= 2 and address[1] == _PORT:
            with open(_OUT, "w") as out:
                json.dump(sorted(sys.modules), out)


sys.addaudithook(_first_connection)
"""

PYTHON_GET = """
import os, sys
from archivefs import ArchiveFileSystem

fs = ArchiveFileSystem(
    target_options={"client_kwargs": {"endpoint_url": os.environ["ARCHIVEFS_TEST_ENDPOINT"]}},
    journal=False,
)
if sys.argv[1] == "get":
    fs.get(sys.argv[2], sys.argv[3], recursive=True)
else:
    sys.stdout.buffer.write(fs.cat(sys.argv[2]))
"""


def run_counted(
    archive: EmulatedArchive, tmp_path: Path, command: list[str]
) -> tuple[subprocess.CompletedProcess[bytes], list[str]]:
    """Run ``command`` with the hook; its outcome and the modules it had imported at its
    first connection to ``archive`` (those at its exit: :func:`imported_by_exit`)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    modules = tmp_path / "modules.json"
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    env = {
        **os.environ,
        "PYTHONPATH": path,
        "ARCHIVEFS_TEST_PORT": str(urlsplit(archive.endpoint_url).port),
        "ARCHIVEFS_TEST_MODULES": str(modules),
        "ARCHIVEFS_TEST_ENDPOINT": archive.endpoint_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    done = subprocess.run(command, capture_output=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done, json.loads(modules.read_text())


def imported_by_exit(tmp_path: Path) -> list[str]:
    """The modules the command :func:`run_counted` last ran had imported when it exited."""
    return json.loads((tmp_path / "modules.json.exit").read_text())


def heavy_in(modules: list[str]) -> list[str]:
    return sorted(
        m
        for m in modules
        if any(m == h or m.startswith(h + ".") for h in NOT_BEFORE_THE_FIRST_REQUEST)
    )


def test_prefetch_to_imports_nothing_it_does_not_need_before_its_first_request(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    data = os.urandom(1024)
    archive.put_object(bucket, "one/object-0", data)
    out = tmp_path / "out"
    archive.requests.clear()
    command = [ARCHIVEFS, "prefetch", f"s3://{bucket}/one/", "--to", str(out)]
    command += ["--endpoint-url", archive.endpoint_url, "--journal", str(tmp_path / "j.sqlite")]
    _, modules = run_counted(archive, tmp_path, command)
    assert (out / bucket / "one" / "object-0").read_bytes() == data
    assert heavy_in(modules) == []
    own = COMMAND_MODULES["prefetch"]
    others = {f"archivefs.cli.{m}" for m in COMMAND_MODULES.values() if m != own}
    assert sorted(others & set(modules)) == []  # only the command's own module
    assert f"archivefs.cli.{own}" in modules
    sent = [(r.op, r.key) for r in archive.requests.records]  # the registry, the folder, the object
    assert sent == [("GET", ".archivefs/catalogs.json"), ("LIST", None), ("GET", "one/object-0")]
    # the journal is opened (a prefetch may restore), but no record read: no pydantic, whose
    # import came between the listing and the object's GET
    whole_run = imported_by_exit(tmp_path)
    assert "archivefs.restore.journal" in whole_run
    assert [m for m in whole_run if m == "pydantic" or m.startswith("pydantic.")] == []


@pytest.mark.parametrize("verb", ["get", "cat"])
def test_a_python_get_or_cat_imports_nothing_it_does_not_need_before_its_first_request(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, verb: str
) -> None:
    """The library face in a fresh process (the line-rate benchmark's ``archivefs get``)."""
    data = os.urandom(1024)
    archive.put_object(bucket, "one/object-0", data)
    archive.requests.clear()
    source = f"{bucket}/one/" if verb == "get" else f"{bucket}/one/object-0"
    out = tmp_path / "out"
    command = [sys.executable, "-c", PYTHON_GET, verb, source, str(out) + "/"]
    done, modules = run_counted(archive, tmp_path, command)
    assert heavy_in(modules) == []
    assert not any(m.startswith("archivefs.cli") for m in modules)
    sent = [(r.op, r.key) for r in archive.requests.records]
    if verb == "get":
        assert (out / "object-0").read_bytes() == data
        finds = [("LIST", None)]
    else:
        assert done.stdout == data
        finds = [("HEAD", "one/object-0")]
    assert sent == [("GET", ".archivefs/catalogs.json"), *finds, ("GET", "one/object-0")]


def test_every_command_module_declares_the_commands_the_group_names() -> None:
    """``COMMAND_MODULES`` (what the group imports on use) and each module's ``COMMANDS``
    agree, so no command is missing from ``archivefs --help`` or loaded from elsewhere."""
    import importlib

    declared: dict[str, str] = {}
    for module in sorted(set(COMMAND_MODULES.values())):
        for command in importlib.import_module(f"archivefs.cli.{module}").COMMANDS:
            declared[str(command.name)] = module
    assert declared == COMMAND_MODULES
    import click

    from archivefs.cli import main

    assert main.list_commands(click.Context(main)) == sorted(COMMAND_MODULES)
