"""LocalRGW: a real Ceph RADOS Gateway (radosgw) on 127.0.0.1, for tests.

An S3-compatible server with none of S3's archive behaviour, run as it is in
production: a one-node Ceph cluster (one monitor, one OSD on ``memstore``,
pools of size 1, ``auth none`` inside the cluster) in a temporary directory,
and radosgw with its beast frontend on 127.0.0.1 and an ephemeral port. S3
clients sign with a user made by ``radosgw-admin user create``.

Facts about radosgw (Ceph 16) that tests rely on: it refuses a storage class
it does not know (``400 InvalidStorageClass``) until the zone group placement
names it; :data:`STORAGE_CLASSES` are configured, so a ``GLACIER`` object is
stored, reported as ``GLACIER`` and read at once; ``RestoreObject`` answers
``501 NotImplemented``; listings carry no ``RestoreStatus``; SSE-C is served over
plain HTTP (``rgw crypt require ssl = false``: the test cluster has no TLS). Every S3 request
it answers is written to its ops log (``rgw_ops_log_file_path``), which
:attr:`LocalRGW.requests` counts.

Needs Debian's ``ceph-mon``, ``ceph-osd`` and ``radosgw`` packages
(:func:`missing_binaries` says which are absent).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

BINARIES = ("ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "ceph", "monmaptool")
PACKAGES = "ceph-mon ceph-osd radosgw"
STORAGE_CLASSES = ("GLACIER", "DEEP_ARCHIVE")  # besides STANDARD, in the default placement
START_TIMEOUT = 180.0  # seconds; generous, for a cluster starting on a busy machine
_ACCESS_KEY = "archivefs-test"
HARNESS_AGENT = "archivefs-harness"  # the harness's own requests carry it and are not counted
HARNESS_BUCKET = "archivefs-harness"
_OPS = {  # radosgw's operation names -> archivefs.testing.OPS
    "get_obj": "GET",
    "list_bucket": "LIST",
    "list_buckets": "LIST",
    "put_obj": "PUT",
    "copy_obj": "COPY",
    "delete_obj": "DELETE",
    "multi_object_delete": "DeleteObjects",
    "init_multipart": "CreateMultipartUpload",
    "complete_multipart": "CompleteMultipartUpload",
    "abort_multipart": "AbortMultipartUpload",
    "create_bucket": "CreateBucket",
    "stat_bucket": "HeadBucket",
    "get_bucket_location": "GetBucketLocation",
}


DEFAULT_CAPACITY = 2**30
"""Bytes of the in-memory OSD (``memstore device bytes``) unless the caller asks for more."""


def missing_binaries() -> list[str]:
    """The Ceph programs :class:`LocalRGW` needs that are not on PATH."""
    return [name for name in BINARIES if shutil.which(name) is None]


class LocalRGW:
    """A one-node Ceph cluster and radosgw, started in a temporary directory.

    Use as a context manager (or ``start()``/``stop()``; also stopped at
    interpreter exit). ``storage_options()`` is for s3fs/fsspec, ``client()``
    a boto3 client; ``requests`` counts the S3 requests radosgw answered.
    ``capacity`` is the bytes its in-memory OSD holds (objects and their
    metadata): a write beyond it stalls until the client times out.
    """

    def __init__(self, *, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < DEFAULT_CAPACITY:
            raise ValueError(
                f"LocalRGW(capacity={capacity}): Ceph's own pools need room too; give at "
                f"least {DEFAULT_CAPACITY} bytes."
            )
        self.capacity = capacity
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._secret = uuid.uuid4().hex
        self.port = 0
        self.requests = RGWRequestLog(None, self._mark)

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> LocalRGW:
        if self._processes:
            return self
        missing = missing_binaries()
        if missing:
            raise ArchiveError(
                f"a local Ceph RGW needs {', '.join(missing)}, not found on PATH.",
                fix=f"install Debian's packages: apt-get install -y {PACKAGES}.",
            )
        atexit.register(self.stop)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        atexit.unregister(self.stop)
        for process in reversed(self._processes):  # radosgw, then the OSD, then the monitor
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._processes = []
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> LocalRGW:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def storage_options(self) -> dict[str, Any]:
        """Keyword arguments for ``s3fs.S3FileSystem`` (or fsspec's ``s3`` protocol)."""
        return {
            "key": _ACCESS_KEY,
            "secret": self._secret,
            "client_kwargs": {"endpoint_url": self.endpoint_url, "region_name": "us-east-1"},
        }

    def client(self, *, harness: bool = False) -> Any:
        """A boto3 S3 client on this endpoint (``harness=True``: its requests are not counted)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id=_ACCESS_KEY,
            aws_secret_access_key=self._secret,
            config=Config(user_agent_extra=HARNESS_AGENT if harness else None),
        )

    # -- seeding -------------------------------------------------------------------------

    def create_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a new unique name if none is given) and return its name."""
        name = name or f"test-{uuid.uuid4().hex[:16]}"
        self._harness.create_bucket(Bucket=name)
        return name

    def put_object(
        self, bucket: str, key: str, data: bytes, storage_class: str = "STANDARD"
    ) -> None:
        """Write one object in a storage class radosgw was configured with."""
        self._harness.put_object(Bucket=bucket, Key=key, Body=data, StorageClass=storage_class)

    def put_objects(
        self, bucket: str, objects: Mapping[str, bytes], *, storage_class: str = "STANDARD"
    ) -> None:
        """Write many objects (not counted), a few at a time, as the emulated archive's
        :meth:`~archivefs.testing.EmulatedArchive.put_objects` does."""
        from concurrent.futures import ThreadPoolExecutor

        def put(key: str) -> None:
            self.put_object(bucket, key, objects[key], storage_class=storage_class)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(put, objects))

    def _mark(self, marker: str) -> None:
        """A request radosgw logs with ``marker`` in its URI (a HEAD of a missing key)."""
        from botocore.exceptions import ClientError

        with contextlib.suppress(ClientError):
            self._harness.head_object(Bucket=HARNESS_BUCKET, Key=marker)

    # -- the cluster ---------------------------------------------------------------------

    def _start(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="archivefs-rgw-")
        root = Path(self._dir.name)
        for sub in ("mon", "osd", "run", "log"):
            (root / sub).mkdir()
        mon_port, self.port = _free_port(), _free_port()
        fsid = str(uuid.uuid4())
        self.requests = RGWRequestLog(root / "log" / "ops.log", self._mark)
        conf = root / "ceph.conf"
        conf.write_text(_config(root, fsid, mon_port, self.port, self.capacity))
        self._conf = conf
        _run(["monmaptool", "--create", "--addv", "a", f"[v2:127.0.0.1:{mon_port}]",
              "--fsid", fsid, str(root / "monmap")])  # fmt: skip
        _run(["ceph-mon", "-c", str(conf), "--mkfs", "-i", "a", "--monmap", str(root / "monmap")])
        self._daemon(["ceph-mon", "-c", str(conf), "-i", "a", "-f"], root / "log" / "mon.out")
        osd_uuid = str(uuid.uuid4())
        osd_id = self._ceph("osd", "new", osd_uuid).strip()
        _run(["ceph-osd", "-c", str(conf), "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid])
        self._daemon(["ceph-osd", "-c", str(conf), "-i", osd_id, "-f"], root / "log" / "osd.out")
        self._wait("the OSD to come up", self._osd_up)
        self._admin("user", "create", "--uid", "archivefs", "--display-name", "archivefs tests",
                    "--access-key", _ACCESS_KEY, "--secret-key", self._secret)  # fmt: skip
        for storage_class in STORAGE_CLASSES:
            self._admin("zonegroup", "placement", "add", "--rgw-zonegroup", "default",
                        "--placement-id", "default-placement",
                        "--storage-class", storage_class)  # fmt: skip
            self._admin("zone", "placement", "add", "--rgw-zone", "default",
                        "--placement-id", "default-placement", "--storage-class", storage_class,
                        "--data-pool", f"default.rgw.{storage_class.lower()}.data")  # fmt: skip
        self._daemon(
            ["radosgw", "-c", str(conf), "-n", "client.rgw", "-f"], root / "log" / "rgw.out"
        )
        self._wait("radosgw to answer HTTP", self._rgw_answers)
        self._harness = self.client(harness=True)
        self._harness.create_bucket(Bucket=HARNESS_BUCKET)

    def _daemon(self, command: list[str], output: Path) -> None:
        with output.open("wb") as out:
            self._processes.append(
                subprocess.Popen(
                    command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            )

    def _ceph(self, *args: str) -> str:
        return _run(["ceph", "-c", str(self._conf), "--connect-timeout", "60", *args])

    def _admin(self, *args: str) -> str:
        return _run(["radosgw-admin", "-c", str(self._conf), "-n", "client.rgw", *args])

    def _osd_up(self) -> bool:
        stat = json.loads(self._ceph("osd", "stat", "-f", "json"))
        return int(stat.get("num_up_osds", 0)) >= 1

    def _rgw_answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.endpoint_url, timeout=5):
                return True
        except urllib.error.HTTPError:
            return True  # any HTTP answer: radosgw is serving
        except OSError:
            return False

    def _wait(self, what: str, ready: Any) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            for process in self._processes:
                if process.poll() is not None:
                    raise ArchiveError(
                        f"the local Ceph cluster stopped while waiting for {what}: "
                        f"{process.args!r} exited with {process.returncode}.",
                        path=self._dir.name if self._dir else None,
                        fix="read the logs in the cluster directory's log/ folder.",
                    )
            if time.monotonic() > deadline:
                raise ArchiveError(
                    f"the local Ceph cluster did not get ready: waited {START_TIMEOUT:.0f} s "
                    f"for {what}.",
                    fix="read the logs in the cluster directory's log/ folder.",
                )
            time.sleep(0.2)


class RGWRequestLog:
    """The S3 requests radosgw answered, from its ops log (one JSON record per request).

    radosgw writes a request's record once it has answered, from a background
    thread; so every read first sends a marker request of the harness and waits
    until the log shows it. radosgw does not log requests it has no operation
    for: ``RestoreObject`` (501) never appears.

    The log only grows: each read parses only what was appended since the last one.
    :meth:`clear` sends a marker of its own and returns at once; a later read counts
    from that marker's record on.
    """

    def __init__(self, path: Path | None, mark: Callable[[str], None]) -> None:
        self.path = path
        self._mark = mark
        self._parsed: list[dict[str, Any]] = []  # every record read so far, in log order
        self._offset = 0  # bytes of the log parsed into _parsed
        self._cleared_at: str | None = None  # the marker sent by the last clear()
        self._cleared_from: int | None = None  # its record's index in _parsed, once read

    def _all(self) -> list[dict[str, Any]]:
        if self.path is None:
            return []
        marker = f"sync-{uuid.uuid4().hex}"
        self._mark(marker)
        deadline = time.monotonic() + 60
        synced = False
        while True:  # until this read's marker and the last clear()'s are both logged
            synced = any(marker in _uri(r) for r in self._read_new()) or synced
            if synced and (self._cleared_at is None or self._cleared_from is not None):
                break
            if time.monotonic() > deadline:
                raise ArchiveError(
                    "radosgw did not write its ops log within 60 s.",
                    path=str(self.path),
                    fix="check that radosgw runs with rgw_enable_ops_log and the file path.",
                )
            time.sleep(0.01)
        return self._parsed

    def _read_new(self) -> list[dict[str, Any]]:
        """Parse the whole records appended since the last read; return them."""
        assert self.path is not None
        if not self.path.exists():
            return []
        with self.path.open("rb") as log:
            log.seek(self._offset)
            appended = log.read()
        # surrogateescape: a character cut at the end comes back as the same bytes
        text = appended.decode("utf-8", errors="surrogateescape")
        records, consumed = _json_records(text)
        self._offset += len(text[:consumed].encode("utf-8", errors="surrogateescape"))
        for record in records:
            if self._cleared_at is not None and self._cleared_at in _uri(record):
                self._cleared_from = len(self._parsed)
            self._parsed.append(record)
        return records

    def records(self) -> list[dict[str, Any]]:
        """Every client request since the last :meth:`clear` (the harness's left out)."""
        logged = self._all()[self._cleared_from or 0 :]
        return [r for r in logged if HARNESS_AGENT not in str(r.get("user_agent", ""))]

    def count(
        self, op: str | None = None, *, bucket: str | None = None, status: int | None = None
    ) -> int:
        """Requests of one operation (``GET``, ``HEAD``, ``LIST``, ``PUT``, ...), or all."""
        return sum(
            1
            for r in self.records()
            if (op is None or operation(r) == op)
            and (bucket is None or r.get("bucket") == bucket)
            and (status is None or str(r.get("http_status")) == str(status))
        )

    def bytes_sent(self, op: str | None = None) -> int:
        """Bytes radosgw sent for the requests of one operation (or all), as its ops log
        records them (``bytes_sent``: the response body)."""
        return sum(
            int(r.get("bytes_sent") or 0)
            for r in self.records()
            if op is None or operation(r) == op
        )

    def counts(self) -> dict[str, int]:
        """Requests per operation."""
        found: dict[str, int] = {}
        for record in self.records():
            found[operation(record)] = found.get(operation(record), 0) + 1
        return found

    def clear(self) -> None:
        """Count from now on: the requests answered after this call's marker request."""
        if self.path is not None:
            self._cleared_at, self._cleared_from = f"clear-{uuid.uuid4().hex}", None
            self._mark(self._cleared_at)


def _uri(record: dict[str, Any]) -> str:
    return str(record.get("uri", ""))


def _json_records(text: str) -> tuple[list[dict[str, Any]], int]:
    """The whole JSON objects at the start of an ops log's ``text`` (radosgw does not always
    end one with a newline), and how many characters they take; a record still being
    written at the end is left for the next read."""
    decoder = json.JSONDecoder()
    records: list[dict[str, Any]] = []
    at = consumed = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return records, consumed
        try:
            record, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return records, consumed
        records.append(record)
        consumed = at


def operation(record: dict[str, Any]) -> str:
    """The operation of one ops-log record, in :data:`archivefs.testing.OPS`' names."""
    if str(record.get("uri", "")).startswith("HEAD "):
        return "HEAD"
    name = str(record.get("operation", ""))
    return _OPS.get(name, name)


def _config(root: Path, fsid: str, mon_port: int, rgw_port: int, capacity: int) -> str:
    return f"""[global]
fsid = {fsid}
mon host = [v2:127.0.0.1:{mon_port}]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = {capacity}
run dir = {root}/run
admin socket = {root}/run/$name.asok
log file = {root}/log/$name.log
pid file = {root}/run/$name.pid
mon data = {root}/mon
osd data = {root}/osd
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:{rgw_port} tcp_nodelay=1
rgw enable ops log = true
ms mon client mode = crc
rgw ops log rados = false
rgw ops log file path = {root}/log/ops.log
rgw crypt require ssl = false
"""


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise ArchiveError(
            f"{command[0]} failed ({done.returncode}): {(done.stderr or done.stdout)[-500:]}",
            fix="run the command by hand to see why; the Ceph packages may be broken.",
        )
    return done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
