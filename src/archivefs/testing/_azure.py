"""EmulatedAzureArchive: Azurite (Microsoft's Blob emulator, from npm) behind a thin archive layer.

Facts about Azurite 3.35 that decide the design: it answers reads of archived blobs with
``409 BlobArchived`` as Azure does, but Set Blob Tier Archive->online completes *at
once* and it never reports ``x-ms-archive-status``. So a small HTTP proxy of our own
sits in front of it and adds only that (everything else is Azurite's): a Set Blob Tier
that takes a blob out of Archive is held *pending* for a configurable delay per
rehydrate priority (then sent to Azurite),
``x-ms-archive-status``/``x-ms-rehydrate-priority`` appear on HEAD and in listings while
it is pending, a pending target cannot change and a priority cannot be lowered (``409
BlobBeingRehydrated``), reads stay refused (Azurite still holds the blob in Archive). A
Copy Blob from an archived source to an online tier (copy-to-rehydrate; Azurite copies
at once) makes its destination in Archive and holds *that* pending the same way; the
source stays in Archive. Blob Batch requests (``?comp=batch``, up to 256 Set Blob Tier
sub-requests in one multipart/mixed POST) are answered by the proxy itself: each
sub-request goes through the same rehydration rules and gets its own part in a multipart
answer, as Azure frames it. Conditional writes (``If-None-Match: *``, ``If-Match``:
restore claims) to one blob are passed to Azurite one at a time, so that exactly one of
two racing writers wins, as on Azure. The proxy counts every request by operation at the
server side (a batch once, as ``BlobBatch``, and each sub-request with ``batched=True``),
counts the rehydrations started per blob, injects faults (``503 ServerBusy``) on demand,
by count or share, and holds answers back (``stall_next``) to make clients time out.

Clients (adlfs, azure-storage-blob) talk HTTP to the proxy exactly as to Azure;
the harness itself (seeding, completing rehydrations) talks to Azurite directly,
so its requests are never counted.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import http.client
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from email.utils import format_datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError
from archivefs.paths import cache_dir
from archivefs.testing._blob_batch import SubRequest, batch_boundary, parse_batch, response_part
from archivefs.testing._counters import RecordLog
from archivefs.testing._fault_rules import FaultRules
from archivefs.testing._idle import IdleAwareHandler, TrackedServer

if TYPE_CHECKING:
    from collections.abc import Iterable

AZURITE_VERSION = "3.35.0"  # the last release that runs on Node 20 (3.37 needs Node 22)
ACCOUNT = "devstoreaccount1"  # Azurite's well-known development account
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
ONLINE_TIERS = ("Hot", "Cool", "Cold")
DEFAULT_DELAYS = {"Standard": 2.0, "High": 0.5}


def azurite_command(install_dir: Path | None = None) -> list[str]:
    """The ``azurite-blob`` command, installed with npm into a cache directory on first use."""
    folder = install_dir or cache_dir() / "azurite" / AZURITE_VERSION
    binary = folder / "node_modules" / ".bin" / "azurite-blob"
    if binary.exists():
        return [str(binary)]
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise ArchiveError(
            "the emulated Azure archive needs Node.js and npm, and they are not on PATH.",
            fix="install Node.js 20 (it brings npm), then run the tests again.",
        )
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test processes install it once
        if binary.exists():
            return [str(binary)]
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"azurite@{AZURITE_VERSION}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0 or not binary.exists():
        raise ArchiveError(
            f"npm could not install azurite@{AZURITE_VERSION}: {done.stderr.strip()[-500:]}",
            path=str(folder),
            fix="check that npm reaches its registry (npm ping), or install it there by hand.",
        )
    return [str(binary)]


@dataclass(slots=True)
class _Pending:
    target: str
    priority: str
    ready_at: float


@dataclass(frozen=True, slots=True)
class AzureRequest:
    """One request the proxy received (``batched``: a sub-request inside a Blob Batch)."""

    op: str
    container: str | None
    blob: str | None
    status: int
    batched: bool = False


class AzureRequestLog(RecordLog[AzureRequest]):
    """Every request clients sent to the emulated Azure archive (thread-safe)."""

    def count(
        self,
        op: str | None = None,
        *,
        container: str | None = None,
        status: int | None = None,
        batched: bool | None = False,
    ) -> int:
        """How many requests match every given filter (``op`` e.g. ``"SetBlobTier"``).

        ``batched=False`` (default) counts HTTP requests, so a Blob Batch counts once
        as ``"BlobBatch"``; ``True`` counts the sub-requests inside batches; ``None`` both.
        """
        return len(self.matching(op=op, container=container, status=status, batched=batched))

    def counts(self, *, batched: bool | None = False) -> dict[str, int]:
        """Requests per operation (only operations that occurred; ``batched`` as in count)."""
        return self.per_op(self.matching(batched=batched))


def classify(method: str, blob: str | None, query: dict[str, str], headers: Any) -> str:
    """The Azure operation name of a request (as the REST API reference names it)."""
    comp, restype = query.get("comp"), query.get("restype")
    if comp == "list":
        return "ListBlobs" if restype == "container" else "ListContainers"
    if comp == "tier":
        return "SetBlobTier"
    if comp == "batch":
        return "BlobBatch"
    if restype == "container" and not blob:
        return {"PUT": "CreateContainer", "DELETE": "DeleteContainer"}.get(
            method, "GetContainerProperties"
        )
    if blob and comp is None:
        if method == "HEAD":
            return "GetBlobProperties"
        if method == "GET":
            return "GetBlob"
        if method == "DELETE":
            return "DeleteBlob"
        if method == "PUT":
            return "CopyBlob" if headers.get("x-ms-copy-source") else "PutBlob"
    return f"{method} {comp or restype or 'account'}"


class _Handler(IdleAwareHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _handle(self) -> None:
        archive = self.server.archive
        parsed = urllib.parse.urlsplit(self.path)
        parts = parsed.path.lstrip("/").split("/", 2)
        container = parts[1] if len(parts) > 1 and parts[1] else None
        blob = urllib.parse.unquote(parts[2]) if len(parts) > 2 and parts[2] else None
        query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        body = self.read_body()
        if body is None:
            return  # the client went away mid-request: nothing to answer or count
        op = classify(self.command, blob, query, self.headers)
        archive._complete_due()
        status, headers, payload = archive._answer(
            self.command, parsed, container, blob, query, dict(self.headers.items()), body, op
        )
        archive.requests.append(AzureRequest(op, container, blob, status))
        self.send_response(status)
        length_header = str(len(payload))
        for name, value in headers:
            if name.lower() == "content-length" and self.command == "HEAD":
                length_header = value  # HEAD: the blob's length, not the (empty) body's
            elif name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", length_header)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_OPTIONS = _handle


class _ProxyServer(TrackedServer, ThreadingHTTPServer):
    daemon_threads = True
    archive: EmulatedAzureArchive

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (killed by a test, timed out) is not the proxy's error."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class EmulatedAzureArchive:
    """Azurite plus the archive behaviour it lacks, on 127.0.0.1 ephemeral ports.

    Use as a context manager. ``connection_string`` / ``storage_options()`` point
    clients at the proxy; ``requests`` counts what they sent; ``rehydrate_delay``
    (seconds per priority) sets how long a rehydration stays pending.
    """

    def __init__(self, *, install_dir: Path | None = None) -> None:
        self.install_dir = install_dir
        self.requests = AzureRequestLog()
        self.rehydrate_delay: dict[str, float] = dict(DEFAULT_DELAYS)
        self._pending: dict[tuple[str, str], _Pending] = {}
        self._faults = FaultRules("EmulatedAzureArchive")
        self.rehydrations: Counter[str] = Counter()  # container/blob -> rehydrations started
        self.batch_enabled = True  # False: Blob Batch is refused, as on accounts without it
        self._lock = threading.RLock()
        self._write_locks: dict[str, threading.Lock] = {}  # conditional writes to one blob
        self._stalls: dict[str, list[float]] = {}  # op -> seconds to hold its next answers
        self._process: subprocess.Popen[bytes] | None = None
        self._proxy: _ProxyServer | None = None
        self._location: tempfile.TemporaryDirectory[str] | None = None
        self._azurite_port = 0

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> EmulatedAzureArchive:
        command = azurite_command(self.install_dir)
        self._location = tempfile.TemporaryDirectory(prefix="archivefs-azurite-")
        self._azurite_port = _free_port()
        self._process = subprocess.Popen(
            [
                *command,
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(self._azurite_port),
                "--location",
                self._location.name,
                "--disableTelemetry",
                "--skipApiVersionCheck",
                "--loose",
                "--silent",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self._azurite_port), timeout=1),
            ):
                break
            if self._process.poll() is not None or time.monotonic() > deadline:
                err = self._process.stderr.read().decode()[-500:] if self._process.stderr else ""
                self.stop()
                raise ArchiveError(
                    f"Azurite did not start: {err or 'no output'}",
                    fix="run the azurite-blob command by hand to see why.",
                )
            time.sleep(0.1)
        self._proxy = _ProxyServer(("127.0.0.1", 0), _Handler)
        self._proxy.archive = self
        threading.Thread(target=self._proxy.serve_forever, daemon=True).start()
        # a script that raises before stop() (a doc page under test) must not leave
        # Azurite running: stop at interpreter exit too (stop() is idempotent)
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        atexit.unregister(self.stop)
        if self._proxy is not None:
            self._proxy.shutdown()
            self._proxy.server_close()
            self._proxy = None
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stderr is not None:
                self._process.stderr.close()
            self._process = None
        if self._location is not None:
            self._location.cleanup()
            self._location = None

    def __enter__(self) -> EmulatedAzureArchive:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget pending rehydrations, faults and counters; default delays, batches on
        (data stays)."""
        with self._lock:
            self._pending.clear()
            self._faults.clear()
            self._stalls.clear()
            self.rehydrations.clear()
            self.batch_enabled = True
            self.rehydrate_delay = dict(DEFAULT_DELAYS)
        self.requests.clear()

    # -- connection ----------------------------------------------------------------------

    @property
    def blob_endpoint(self) -> str:
        assert self._proxy is not None, "start() the emulated archive first"
        return f"http://127.0.0.1:{self._proxy.server_address[1]}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return _connection_string(self.blob_endpoint)

    def storage_options(self) -> dict[str, Any]:
        """adlfs options pointing at the emulated archive."""
        return {"connection_string": self.connection_string}

    def _direct(self) -> Any:
        """A blob service client that talks to Azurite itself (never counted)."""
        from azure.storage.blob import BlobServiceClient

        endpoint = f"http://127.0.0.1:{self._azurite_port}/{ACCOUNT}"
        return BlobServiceClient.from_connection_string(_connection_string(endpoint))

    # -- seeding and control -------------------------------------------------------------

    def create_container(self, name: str | None = None) -> str:
        name = name or f"test-{uuid.uuid4().hex[:16]}"
        self._direct().create_container(name)
        return name

    def put_blob(self, container: str, blob: str, data: bytes, tier: str = "Hot") -> None:
        """Write a blob in ``tier``, in one Put Blob request (Azurite applies Archive at once)."""
        from azure.storage.blob import StandardBlobTier

        client = self._direct().get_blob_client(container, blob)
        client.upload_blob(data, overwrite=True, standard_blob_tier=StandardBlobTier(tier))

    def put_blobs(self, container: str, blobs: dict[str, bytes], tier: str = "Hot") -> None:
        """Write many blobs at ``tier`` (a few at a time; never counted)."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda name: self.put_blob(container, name, blobs[name], tier), blobs))

    def tier_of(self, path: str) -> str:
        """The access tier Azurite holds for ``container/blob`` (never counted)."""
        container, _, blob = path.partition("/")
        props = self._direct().get_blob_client(container, blob).get_blob_properties()
        return str(props.blob_tier)

    def read_blob(self, path: str) -> bytes:
        """The bytes of ``container/blob``, straight from Azurite (never counted)."""
        container, _, blob = path.partition("/")
        data: bytes = self._direct().get_blob_client(container, blob).download_blob().readall()
        return data

    def fail_next(
        self, op: str, times: int, *, status: int = 503, code: str = "ServerBusy"
    ) -> None:
        """Answer the next ``times`` requests of ``op`` with an error (throttling by default)."""
        self._faults.add(status, code, count=times, ops=[op], first=True)

    def stall_next(self, op: str, times: int, *, seconds: float) -> None:
        """Carry out the next ``times`` requests of ``op``, then hold each answer ``seconds``
        (a slow network: a client with a shorter read timeout gives up on a request that
        did land)."""
        with self._lock:
            self._stalls.setdefault(op, []).extend([seconds] * times)

    def throttle(
        self,
        *,
        fraction: float = 1.0,
        ops: Iterable[str] | None = None,
        count: int | None = None,
        seed: int = 0,
        status: int = 503,
        code: str = "ServerBusy",
    ) -> None:
        """Answer a share of requests with ``503 ServerBusy`` (Azure's throttling).

        ``ops``: operation names (default: every operation); ``"SetBlobTier"`` also
        matches the Set Blob Tier sub-requests inside a Blob Batch (Azure throttles
        them one by one), ``"BlobBatch"`` the batch request as a whole. ``fraction``
        is drawn from a generator seeded with ``seed`` so runs repeat; ``count``
        caps how many faults this rule injects.
        """
        self._faults.add(status, code, count=count, fraction=fraction, ops=ops, seed=seed)

    @property
    def injected(self) -> int:
        """Faults injected since the last reset."""
        return self._faults.injected

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Return once every request that reached the server has been answered and counted.

        For a test that killed a client: call it after the client's process is gone,
        then count (a count read earlier races the client's last requests).
        """
        if self._proxy is None:
            raise ArchiveError(
                "the emulated Azure archive is not running.",
                fix="call start() first, or use it as a context manager.",
            )
        self._proxy.wait_idle(timeout, what="the emulated Azure archive")

    def complete_rehydrations(self) -> None:
        """Finish every pending rehydration now (as if its delay had passed)."""
        with self._lock:
            for pending in self._pending.values():
                pending.ready_at = 0.0
        self._complete_due()

    def pending(self) -> dict[str, tuple[str, str]]:
        """``container/blob`` -> (target tier, priority) of every pending rehydration."""
        with self._lock:
            return {f"{c}/{b}": (p.target, p.priority) for (c, b), p in self._pending.items()}

    def _complete_due(self) -> None:
        now = time.monotonic()
        with self._lock:
            due = [(k, p) for k, p in self._pending.items() if p.ready_at <= now]
            for key, _ in due:
                del self._pending[key]
        if due:
            service = self._direct()
            for (container, blob), p in due:
                service.get_blob_client(container, blob).set_standard_blob_tier(p.target)

    # -- the archive behaviour -------------------------------------------------------------

    def _answer(
        self,
        method: str,
        parsed: urllib.parse.SplitResult,
        container: str | None,
        blob: str | None,
        query: dict[str, str],
        headers: dict[str, str],
        body: bytes,
        op: str,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        fault = self._faults.answer(op)
        if fault is not None:
            return _error(*fault, "Injected by the emulated archive.")
        if op == "BlobBatch":
            return self._batch(container, headers, body)
        if op == "SetBlobTier" and container and blob:
            held = self._set_tier(container, blob, headers)
            if held is not None:
                return held
        if op == "CopyBlob" and container and blob:
            copied = self._copy_archived(container, blob, headers)
            if copied is not None:
                return copied
        if method == "PUT" and _conditional(headers):
            # Azure evaluates a conditional write atomically; Azurite checks, then writes
            # (two concurrent writers could both win), so conditional writes to one blob
            # take turns (writes to different blobs need not wait for each other)
            with self._lock:
                blob_lock = self._write_locks.setdefault(parsed.path, threading.Lock())
            with blob_lock:
                status, out_headers, payload = self._forward(method, parsed, headers, body)
        else:
            status, out_headers, payload = self._forward(method, parsed, headers, body)
        with self._lock:
            stalls = self._stalls.get(op)
            stall = stalls.pop(0) if stalls else 0.0
        if stall:
            time.sleep(stall)  # done, but the client hears of it late (or times out)
        if container and blob and op in ("GetBlobProperties", "GetBlob") and status < 300:
            with self._lock:
                p = self._pending.get((container, blob))
            if p is not None:
                out_headers.append(
                    ("x-ms-archive-status", f"rehydrate-pending-to-{p.target.lower()}")
                )
                out_headers.append(("x-ms-rehydrate-priority", p.priority))
        if op == "ListBlobs" and status == 200 and container and self._pending:
            payload = self._annotate_listing(container, payload)
        return status, out_headers, payload

    def _set_tier(
        self, container: str, blob: str, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes] | None:
        """Hold a rehydration pending; ``None`` lets Azurite answer (not a rehydration)."""
        lower = {k.lower(): v for k, v in headers.items()}
        target = lower.get("x-ms-access-tier", "")
        priority = lower.get("x-ms-rehydrate-priority") or "Standard"
        online = next((t for t in ONLINE_TIERS if t.lower() == target.lower()), None)
        with self._lock:
            pending = self._pending.get((container, blob))
            if pending is not None:
                if online is None or online != pending.target:
                    return _error(
                        409,
                        "BlobBeingRehydrated",
                        "This operation is not permitted because the blob is being rehydrated.",
                    )
                if pending.priority == "High" and priority == "Standard":
                    return _error(
                        409,
                        "BlobBeingRehydrated",
                        "The rehydrate priority of a pending rehydration cannot be lowered.",
                    )
                if priority == "High" and pending.priority == "Standard":
                    pending.priority = "High"
                    pending.ready_at = min(
                        pending.ready_at, time.monotonic() + self.rehydrate_delay["High"]
                    )
                return 202, _ms_headers(), b""
        if online is None:
            return None
        try:
            props = self._direct().get_blob_client(container, blob).get_blob_properties()
        except Exception:
            return None  # missing container/blob: Azurite answers
        if props.blob_tier != "Archive":
            return None
        delay = self.rehydrate_delay.get(priority, self.rehydrate_delay["Standard"])
        with self._lock:
            self._pending[(container, blob)] = _Pending(online, priority, time.monotonic() + delay)
            self.rehydrations[f"{container}/{blob}"] += 1
        return 202, _ms_headers(), b""

    def _copy_archived(
        self, container: str, blob: str, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes] | None:
        """Copy Blob from an archived source to an online tier: the copy-to-rehydrate.

        Azure creates the destination in Archive and rehydrates *it* (``x-ms-copy-status:
        pending``, ``archive_status`` on the destination) while the source stays in
        Archive. Azurite copies such a blob at once, so the proxy makes the destination
        itself (Archive) and holds it pending for the priority's delay, exactly like a
        Set Blob Tier rehydration (``rehydrations`` counts the destination). A second
        copy onto a destination still pending is refused with ``409
        PendingCopyOperation``. ``None``: not from an archived source, Azurite answers
        (it refuses an archived source without a tier with ``409 BlobArchived``, as Azure).
        """
        lower = {k.lower(): v for k, v in headers.items()}
        source = urllib.parse.urlsplit(lower.get("x-ms-copy-source", ""))
        parts = [urllib.parse.unquote(p) for p in source.path.lstrip("/").split("/", 2)]
        if len(parts) < 3 or parts[0] != ACCOUNT:
            return None
        src_container, src_blob = parts[1], parts[2]
        target = next(
            (t for t in ONLINE_TIERS if t.lower() == lower.get("x-ms-access-tier", "").lower()),
            None,
        )
        if target is None:
            return None
        priority = lower.get("x-ms-rehydrate-priority") or "Standard"
        service = self._direct()
        try:
            props = service.get_blob_client(src_container, src_blob).get_blob_properties()
        except Exception:
            return None  # missing source: Azurite answers
        if props.blob_tier != "Archive":
            return None
        with self._lock:
            if (container, blob) in self._pending:
                return _error(409, "PendingCopyOperation", "There is currently a pending copy.")
        destination = service.get_blob_client(container, blob)
        from azure.storage.blob import StandardBlobTier

        destination.start_copy_from_url(
            service.get_blob_client(src_container, src_blob).url,
            standard_blob_tier=StandardBlobTier.HOT,  # Azurite: copied at once...
        )
        destination.set_standard_blob_tier("Archive")  # ...so archive it: Azure's state
        made = destination.get_blob_properties()
        delay = self.rehydrate_delay.get(priority, self.rehydrate_delay["Standard"])
        with self._lock:
            self._pending[(container, blob)] = _Pending(target, priority, time.monotonic() + delay)
            self.rehydrations[f"{container}/{blob}"] += 1
        return (
            202,
            [
                *_ms_headers(),
                ("ETag", str(made.etag)),
                ("Last-Modified", format_datetime(made.last_modified, usegmt=True)),
                ("x-ms-copy-id", str(uuid.uuid4())),
                ("x-ms-copy-status", "pending"),
            ],
            b"",
        )

    # -- Blob Batch ------------------------------------------------------------------------

    def _batch(
        self, container: str | None, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """Blob Batch: each Set Blob Tier sub-request through the same rehydration rules.

        The batch request is logged once by the handler (``BlobBatch``); each
        sub-request is logged here with ``batched=True``. Azure's limits: at most 256
        sub-requests, all of one kind, all in the batch's container when it is
        container-scoped.
        """
        if not self.batch_enabled:
            return _error(400, "FeatureNotSupported", "Blob Batch is not enabled here.")
        lower = {k.lower(): v for k, v in headers.items()}
        boundary = batch_boundary(lower.get("content-type", ""))
        if boundary is None:
            return _error(400, "InvalidInput", "A batch needs a multipart/mixed body.")
        subs = parse_batch(body, boundary)
        if not subs or len(subs) > 256:
            return _error(400, "InvalidInput", "A batch holds between 1 and 256 sub-requests.")
        parts: list[bytes] = []
        answer = f"batchresponse_{uuid.uuid4()}"
        for sub in subs:
            status, out, payload = self._batch_one(container, sub)
            parts.append(response_part(answer, sub.content_id, status, out, payload))
        payload = b"".join(parts) + f"--{answer}--\r\n".encode()
        return (
            202,
            [*_ms_headers(), ("Content-Type", f"multipart/mixed; boundary={answer}")],
            payload,
        )

    def _batch_one(
        self, container: str | None, sub: SubRequest
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        path = urllib.parse.urlsplit(sub.url)
        segments = [urllib.parse.unquote(p) for p in path.path.lstrip("/").split("/")]
        if segments and segments[0] == ACCOUNT:
            segments = segments[1:]
        sub_container = segments[0] if segments else None
        blob = "/".join(segments[1:]) or None
        query = dict(urllib.parse.parse_qsl(path.query, keep_blank_values=True))
        op = classify(sub.method, blob, query, sub.headers)
        result = self._batch_answer(container, sub_container, blob, op, sub.headers)
        self.requests.append(AzureRequest(op, sub_container, blob, result[0], batched=True))
        return result

    def _batch_answer(
        self,
        container: str | None,
        sub_container: str | None,
        blob: str | None,
        op: str,
        headers: dict[str, str],
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        if op != "SetBlobTier" or not sub_container or not blob:
            return _error(400, "InvalidInput", "Only Set Blob Tier is emulated in a batch.")
        if container is not None and sub_container != container:
            return _error(400, "InvalidInput", "A sub-request names another container.")
        fault = self._faults.answer(op)
        if fault is not None:
            return _error(*fault, "Injected by the emulated archive.")
        held = self._set_tier(sub_container, blob, headers)
        if held is not None:
            return held
        lower = {k.lower(): v for k, v in headers.items()}
        try:  # not a rehydration: Azurite sets the tier (it would answer the same)
            client = self._direct().get_blob_client(sub_container, blob)
            client.set_standard_blob_tier(lower.get("x-ms-access-tier", ""))
        except Exception as error:
            code = getattr(error, "error_code", None) or "InvalidHeaderValue"
            status = int(getattr(error, "status_code", None) or 400)
            return _error(status, str(code), "Refused by Azurite.")
        return 200, _ms_headers(), b""

    def _annotate_listing(self, container: str, payload: bytes) -> bytes:
        root = ET.fromstring(payload)
        with self._lock:
            pending = {b: p for (c, b), p in self._pending.items() if c == container}
        for element in root.iter("Blob"):
            name = element.findtext("Name")
            props = element.find("Properties")
            if name in pending and props is not None:
                p = pending[name]
                status = ET.SubElement(props, "ArchiveStatus")
                status.text = f"rehydrate-pending-to-{p.target.lower()}"
                ET.SubElement(props, "RehydratePriority").text = p.priority
        return b'<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(root)

    def _forward(
        self, method: str, parsed: urllib.parse.SplitResult, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self._azurite_port, timeout=60)
        target = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        sent = {k: v for k, v in headers.items() if k.lower() not in ("host", "connection")}
        sent["Host"] = f"127.0.0.1:{self._azurite_port}"
        try:
            connection.request(method, target, body=body or None, headers=sent)
            response = connection.getresponse()
            payload = response.read()
            return response.status, list(response.getheaders()), payload
        finally:
            connection.close()


def _connection_string(endpoint: str) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint={endpoint};"
    )


def _conditional(headers: dict[str, str]) -> bool:
    """A write with ``If-None-Match`` or ``If-Match`` (restore claims rely on its atomicity)."""
    return any(k.lower() in ("if-none-match", "if-match") for k in headers)


def _ms_headers() -> list[tuple[str, str]]:
    return [("x-ms-request-id", str(uuid.uuid4())), ("x-ms-version", "2025-01-05")]


def _error(status: int, code: str, message: str) -> tuple[int, list[tuple[str, str]], bytes]:
    body = (
        f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code>'
        f"<Message>{message}</Message></Error>"
    ).encode()
    return (
        status,
        [*_ms_headers(), ("x-ms-error-code", code), ("Content-Type", "application/xml")],
        body,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
