"""Worker processes a test starts, kills and waits for."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


class Idles(Protocol):
    """A server that can tell when it has answered every request it received."""

    def wait_idle(self, timeout: float = ...) -> None: ...


def kill_when(
    script: Path, config: dict[str, Any], ready: Callable[[], bool], *, server: Idles | None
) -> bool:
    """Run ``script config-json``, SIGKILL it once ``ready()`` is true, and return once the
    process is gone and ``server`` is idle: count only then.

    A count read at the kill races the requests the worker sent just before it died
    (issue #33); once the process is reaped and ``server.wait_idle()`` returned, every one
    of them has been answered and counted. ``server=None`` waits for the process only
    (for :class:`~archivefs.testing.LocalRGW`, a separate radosgw process without
    ``wait_idle``). Returns False if the worker finished before ``ready()`` (it must have
    exited 0).
    """
    return kill_each_when(script, [(config, ready)], server=server)[0]


def kill_each_when(
    script: Path,
    workers: list[tuple[dict[str, Any], Callable[[], bool]]],
    *,
    server: Idles | None,
) -> list[bool]:
    """:func:`kill_when` for several workers at once: ``script config-json`` for each
    ``(config, ready)``, all started together, each SIGKILLed once its own ``ready()`` is
    true; returns (one bool per worker, as :func:`kill_when`) once every process is gone
    and then ``server`` is idle."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), json.dumps(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for config, _ in workers
    ]
    killed = [False] * len(procs)
    try:
        pending = set(range(len(procs)))
        deadline = time.monotonic() + 600  # generous: a busy machine starts slowly
        while pending:
            for i in sorted(pending):
                process, ready = procs[i], workers[i][1]
                if ready():
                    process.send_signal(signal.SIGKILL)
                    killed[i] = True
                    pending.discard(i)
                elif process.poll() is not None:
                    stderr = process.stderr.read() if process.stderr else b""
                    assert process.returncode == 0, stderr.decode()
                    pending.discard(i)
            assert time.monotonic() < deadline, "a worker never reached its kill point"
            if pending:
                time.sleep(0.005)
    finally:
        for process in procs:
            if process.poll() is None and not killed[procs.index(process)]:
                process.kill()
            process.communicate(timeout=60)
    if server is not None:
        server.wait_idle()
    return killed


def start_workers(script: Path, configs: list[dict[str, Any]]) -> list[subprocess.Popen[bytes]]:
    """Start ``script config-json`` once per config, all at once (see :func:`finish_workers`)."""
    return [
        subprocess.Popen(
            [sys.executable, str(script), json.dumps(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for config in configs
    ]


def finish_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    """Wait for each worker and require it to exit 0, or fail with its stderr.

    When one fails the others are killed, so no process outlives the test (and no
    Popen is left to warn, as an unraisable exception, in a later test).
    """
    try:
        for proc in procs:
            _, stderr = proc.communicate(timeout=600)
            assert proc.returncode == 0, stderr.decode()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


# Started in place of the command: it records whether this process handed SIGINT down
# ignored or blocked (both survive exec), then gives the command SIGINT as a terminal's
# foreground job has it (default action, unblocked) and becomes the command.
_AS_FOREGROUND_JOB = """\
import json, os, signal, sys
inherited = {"ignored": signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
             "blocked": signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])}
with open(sys.argv[1], "w") as record:
    json.dump(inherited, record)
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
os.execv(sys.argv[2], sys.argv[2:])
"""


def as_foreground_job(command: list[str], record: Path) -> list[str]:
    """``command`` started as a shell starts a foreground job, for a test that sends it
    SIGINT as Ctrl-C would.

    A child inherits an ignored or blocked SIGINT through fork and exec, and Python then
    leaves it so: a SIGINT sent to it would do nothing. Whether the test process (an
    xdist worker, with servers, clusters and kernels started in it) handed it down so is
    written to ``record`` as JSON (``{"ignored": bool, "blocked": bool}``), for the
    test's failure message.
    """
    return [sys.executable, "-c", _AS_FOREGROUND_JOB, str(record), *command]
