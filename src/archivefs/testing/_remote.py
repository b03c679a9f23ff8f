"""RemoteArchive: the emulated archive in a child process, driven over a pipe.

Why: in one process the emulator's server threads and the client under test
share one GIL, so a client that sends more requests at once mostly slows the
server down, and a benchmark measures that contention, not the client. In its
own process (started with ``spawn``, so nothing is inherited), with injected
per-request latency, the server behaves like a remote one: it has its own CPU,
and each request costs a round trip the client can overlap.

:class:`RemoteArchive` forwards the harness API benchmarks and tests use
(seeding, restore settings, latency, reset, the request log) to an
:class:`~archivefs.testing.EmulatedArchive` in the child; every call is one
message and one answer on a :mod:`multiprocessing` connection, under a lock,
so threads may share it. Clients connect to :attr:`endpoint_url` over HTTP as
they would to the in-process archive. Fault injection is not forwarded.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError
from archivefs.testing._server import EmulatedArchive, S3Endpoint

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from archivefs.testing._counters import RequestRecord

_START_TIMEOUT = 120.0  # a spawned interpreter importing moto on a loaded machine


def _serve(conn: Connection, options: dict[str, Any]) -> None:
    """The child: run an EmulatedArchive and answer calls until told to stop."""
    archive = EmulatedArchive(**options)
    try:
        archive.start()
    except BaseException as exc:
        conn.send(("error", _portable(exc)))
        return
    conn.send(("ok", archive.endpoint_url))
    try:
        while True:
            try:
                target, name, args, kwargs = conn.recv()
            except EOFError:  # the parent went away
                return
            if target == "stop":
                conn.send(("ok", None))
                return
            try:
                owners = {"requests": archive.requests, "faults": archive.faults}
                owner = owners.get(target, archive)
                if name.startswith("set:"):
                    setattr(owner, name[4:], args[0])
                    value = None
                elif name.startswith("get:"):
                    value = getattr(owner, name[4:])
                else:
                    value = getattr(owner, name)(*args, **kwargs)
            except Exception as exc:
                conn.send(("error", _portable(exc)))
            else:
                conn.send(("ok", value))
    finally:
        archive.stop()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it pickles (errors keep their class), else an ArchiveError with its text."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return ArchiveError(
            f"the emulated archive's process raised {type(exc).__name__}: {exc}",
            fix="see the message; the child process is still running.",
        )
    return exc


class RemoteRequestLog:
    """The child's :class:`~archivefs.testing.RequestLog`, read over the pipe."""

    def __init__(self, archive: RemoteArchive) -> None:
        self._archive = archive

    @property
    def records(self) -> list[RequestRecord]:
        """A copy of the records so far."""
        records: list[RequestRecord] = self._archive._call("requests", "get:records")
        return records

    def count(
        self,
        op: str | None = None,
        *,
        bucket: str | None = None,
        key: str | None = None,
        status: int | None = None,
    ) -> int:
        """How many requests match every given filter."""
        return int(
            self._archive._call("requests", "count", op, bucket=bucket, key=key, status=status)
        )

    def bytes_sent(self, op: str | None = None, *, bucket: str | None = None) -> int:
        """Response body bytes sent for the matching requests."""
        return int(self._archive._call("requests", "bytes_sent", op, bucket=bucket))

    def bytes_received(self, op: str | None = None, *, bucket: str | None = None) -> int:
        """Request body bytes received (uploads) for the matching requests."""
        return int(self._archive._call("requests", "bytes_received", op, bucket=bucket))

    def counts(self) -> dict[str, int]:
        """Requests per operation (only operations that occurred)."""
        counts: dict[str, int] = self._archive._call("requests", "counts")
        return counts

    def clear(self) -> None:
        self._archive._call("requests", "clear")

    def __len__(self) -> int:
        return int(self._archive._call("requests", "__len__"))


class RemoteFaults:
    """The child's :class:`~archivefs.testing.FaultInjector`, driven over the pipe
    (the same methods: throttle, error, reset_connection, clear, injected)."""

    def __init__(self, archive: RemoteArchive) -> None:
        self._archive = archive

    def throttle(self, **options: Any) -> None:
        """Answer ``503 SlowDown`` instead of serving (``FaultInjector.throttle``)."""
        self._archive._call("faults", "throttle", **options)

    def error(self, status: int = 500, code: str = "InternalError", **options: Any) -> None:
        """Answer ``status`` with an S3 error ``code`` (``FaultInjector.error``)."""
        self._archive._call("faults", "error", status, code, **options)

    def reset_connection(self, **options: Any) -> None:
        """Drop the connection (``FaultInjector.reset_connection``)."""
        self._archive._call("faults", "reset_connection", **options)

    def clear(self) -> None:
        """Remove every rule and set :attr:`injected` back to 0."""
        self._archive._call("faults", "clear")

    @property
    def injected(self) -> int:
        """How many faults have been injected since the last :meth:`clear`."""
        return int(self._archive._call("faults", "get:injected"))


class RemoteArchive(S3Endpoint):
    """An :class:`~archivefs.testing.EmulatedArchive` in its own process (for benchmarks).

    Takes the same keyword arguments as ``EmulatedArchive`` (``restore_delay``,
    ``seconds_per_day``, ``restore_status_in_listings``, ``region``, ``port``,
    ``latency``) and offers the same harness methods, fault injection included
    (:attr:`faults`, a :class:`RemoteFaults`).

    Examples
    --------
    ::

        with RemoteArchive(latency=0.02) as archive:
            archive.create_bucket("data")
            archive.put_objects("data", {"a": b"x"}, storage_class="GLACIER")
            fs = s3fs.S3FileSystem(**archive.storage_options(), skip_instance_cache=True)
            ...
            archive.requests.count("RestoreObject")
    """

    def __init__(self, **options: Any) -> None:
        self._options = dict(options)
        self._region = str(options.get("region", "us-east-1"))
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        self._process: BaseProcess | None = None
        self._endpoint: str | None = None
        self.requests = RemoteRequestLog(self)
        self.faults = RemoteFaults(self)

    def __repr__(self) -> str:
        return f"RemoteArchive({self._endpoint or 'not started'}, {self._options})"

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> RemoteArchive:
        """Start the child process and its server (idempotent)."""
        with self._lock:
            if self._process is not None:
                return self
            context = multiprocessing.get_context("spawn")
            parent, child = context.Pipe()
            process = context.Process(
                target=_serve, args=(child, self._options), name="archivefs-remote-archive"
            )
            process.daemon = True
            process.start()
            child.close()
            if not parent.poll(_START_TIMEOUT):
                process.kill()
                raise ArchiveError(
                    f"the emulated archive's process did not start in {_START_TIMEOUT:.0f} s.",
                    fix="check that the machine is not overloaded and that moto imports.",
                )
            try:
                status, value = parent.recv()
            except EOFError:
                process.join(10)
                raise ArchiveError(
                    "the emulated archive's process exited before its server started "
                    f"(exit code {process.exitcode}).",
                    fix="a script that starts a RemoteArchive must guard its top level with "
                    "`if __name__ == '__main__':` (multiprocessing's spawn imports it again); "
                    "see the child's traceback above.",
                ) from None
            if status != "ok":
                process.join(10)
                raise value
            self._conn, self._process, self._endpoint = parent, process, value
        return self

    def stop(self) -> None:
        """Stop the server and join the child process (idempotent)."""
        with self._lock:
            conn, process = self._conn, self._process
            if conn is None or process is None:
                return
            try:
                conn.send(("stop", "", (), {}))
                conn.recv()
            except (EOFError, OSError):
                pass
            process.join(30)
            if process.is_alive():
                process.kill()
                process.join(10)
            conn.close()
            self._conn = self._process = self._endpoint = None

    def __enter__(self) -> RemoteArchive:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, target: str, name: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if self._conn is None:
                raise ArchiveError(
                    "the remote emulated archive is not running.",
                    fix="call archive.start() first, or use it as a context manager.",
                )
            self._conn.send((target, name, args, kwargs))
            status, value = self._conn.recv()
        if status != "ok":
            raise value
        return value

    # -- connection ----------------------------------------------------------------------

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:<port>`` of the server in the child process."""
        if self._endpoint is None:
            raise ArchiveError(
                "the remote emulated archive is not running.",
                fix="call archive.start() first, or use it as a context manager.",
            )
        return self._endpoint

    # -- settings ------------------------------------------------------------------------

    def reset(self) -> None:
        """Empty the archive, clear counters and restores, reapply the constructor's settings."""
        self._call("archive", "reset")

    @property
    def restore_delay(self) -> float:
        return float(self._call("archive", "get:restore_delay"))

    def set_restore_delay(self, seconds: float) -> None:
        """Wall-clock time from RestoreObject until the object reads (0 = at once)."""
        self._call("archive", "set_restore_delay", seconds)

    @property
    def latency(self) -> float:
        return float(self._call("archive", "get:latency"))

    def set_latency(self, seconds: float) -> None:
        """Delay every S3 API request by ``seconds`` at the server (0: none)."""
        self._call("archive", "set_latency", seconds)

    @property
    def seconds_per_day(self) -> float:
        return float(self._call("archive", "get:seconds_per_day"))

    @seconds_per_day.setter
    def seconds_per_day(self, value: float) -> None:
        self._call("archive", "set:seconds_per_day", value)

    @property
    def restore_status_in_listings(self) -> bool:
        return bool(self._call("archive", "get:restore_status_in_listings"))

    @restore_status_in_listings.setter
    def restore_status_in_listings(self, value: bool) -> None:
        self._call("archive", "set:restore_status_in_listings", value)

    # -- seeding -------------------------------------------------------------------------

    def create_bucket(self, name: str) -> None:
        """Create a bucket (not counted in :attr:`requests`)."""
        self._call("archive", "create_bucket", name)

    def put_object(
        self,
        bucket: str,
        key: str,
        data: bytes,
        *,
        storage_class: str = "STANDARD",
        archive_access: str | None = None,
    ) -> None:
        """Store one object (not counted in :attr:`requests`)."""
        self._call(
            "archive",
            "put_object",
            bucket,
            key,
            bytes(data),
            storage_class=storage_class,
            archive_access=archive_access,
        )

    def put_objects(
        self,
        bucket: str,
        objects: Mapping[str, bytes],
        *,
        storage_class: str = "STANDARD",
        archive_access: str | None = None,
    ) -> None:
        """Store many objects straight into the child's backend (not counted)."""
        self._call(
            "archive",
            "put_objects",
            bucket,
            {k: bytes(v) for k, v in objects.items()},
            storage_class=storage_class,
            archive_access=archive_access,
        )

    def expire_restore(self, bucket: str, key: str) -> None:
        """End the restored copy of ``bucket/key`` now: the object is archived again."""
        self._call("archive", "expire_restore", bucket, key)
