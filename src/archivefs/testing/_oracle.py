"""EmulatedOracleArchive: the smallest fake of OCI Object Storage that ocifs and archivefs use.

No Oracle emulator exists in any package registry, so this is a small HTTP
server of our own (stdlib ``ThreadingHTTPServer`` on 127.0.0.1, an ephemeral
port) that answers exactly the endpoints ocifs and ``stores.oracle`` call, in
the shapes of Oracle's Object Storage API reference (API version 20160918):
GetNamespace, HeadBucket, ListObjects (``prefix``, ``start``, ``end``,
``startAfter``, ``limit``, ``delimiter``, ``fields`` incl. ``archivalState``),
HeadObject, GetObject (with ranges and If-Match), PutObject (with the
``storage-tier`` header, ``if-match`` and ``if-none-match: *``, checked and written
under one lock as Oracle does atomically), DeleteObject and RestoreObjects. docs/testing.md lists,
per endpoint, which reference fields it implements and which answers are our
assumption, so a reader can check its fidelity.

Archive behaviour: objects uploaded in the Archive tier are ``Archived``; a
RestoreObjects makes them ``Restoring`` for ``restore_delay`` seconds, then
``Restored`` for ``hours`` (scaled by ``seconds_per_hour``), then ``Archived``
again. GETs of an object that is not restored are refused with ``409
NotRestored``. Requests are counted per operation at the server side, restores
started are counted per object, and faults (``429 TooManyRequests``, ``503``) are
injected on demand. Clients must sign requests (the ``Authorization`` header's
``keyId`` must be the emulator's throwaway key), as the OCI SDK always does; the
harness seeds and inspects objects in-process, so its work is never counted.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import formatdate
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivefs.testing._counters import RecordLog
from archivefs.testing._fault_rules import FaultRules
from archivefs.testing._idle import IdleAwareHandler, TrackedServer

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

NAMESPACE = "archivefs"
REGION = "us-ashburn-1"
TENANCY = "ocid1.tenancy.oc1..archivefstesting"
USER = "ocid1.user.oc1..archivefstesting"
TIERS = ("Standard", "InfrequentAccess", "Archive")
LIST_LIMIT = 1000  # Oracle's maximum (and default) page of ListObjects
MIN_HOURS, MAX_HOURS, DEFAULT_HOURS = 1, 240, 24
OPS = (
    "GetNamespace",
    "HeadBucket",
    "ListObjects",
    "HeadObject",
    "GetObject",
    "PutObject",
    "DeleteObject",
    "RestoreObjects",
    "Other",
)
"""Every operation name an :class:`OracleRequest` can carry (Oracle's operation names)."""

_ALL_FIELDS = ("size", "etag", "md5", "timeCreated", "timeModified", "storageTier", "archivalState")


@dataclass(frozen=True, slots=True)
class OracleRequest:
    """One request the emulator answered (``status`` as sent; ``name`` the object name)."""

    op: str
    bucket: str | None
    name: str | None
    status: int
    bytes_sent: int = 0
    range: str | None = None


class OracleRequestLog(RecordLog[OracleRequest]):
    """Every request clients sent to the emulated Oracle archive, in order (thread-safe)."""

    def count(
        self,
        op: str | None = None,
        *,
        bucket: str | None = None,
        name: str | None = None,
        status: int | None = None,
    ) -> int:
        """How many requests match every given filter (``op`` e.g. ``"RestoreObjects"``)."""
        if op is not None and op not in OPS:
            raise ValueError(
                f"OracleRequestLog: unknown operation {op!r}. Fix: use one of {', '.join(OPS)}."
            )
        return len(self.matching(op=op, bucket=bucket, name=name, status=status))

    def bytes_sent(self, op: str | None = None) -> int:
        """Response body bytes sent for the matching requests."""
        return sum(r.bytes_sent for r in self.matching(op=op))

    def counts(self) -> dict[str, int]:
        """Requests per operation (only operations that occurred)."""
        return self.per_op()


@dataclass(slots=True)
class _Object:
    data: bytes
    tier: str
    etag: str
    md5: str
    created: float
    state: str | None = None  # Archive tier only: Archived, Restoring or Restored
    ready_at: float = 0.0
    expires_at: float = 0.0
    hours: int = DEFAULT_HOURS
    meta: dict[str, str] = field(default_factory=dict)  # opc-meta-* headers, as sent


Answer = tuple[int, list[tuple[str, str]], bytes]


class EmulatedOracleArchive:
    """A fake OCI Object Storage endpoint with Archive-tier behaviour, on 127.0.0.1.

    Use as a context manager. ``storage_options()`` are ocifs's options pointing at
    it; ``requests`` counts what clients sent; ``restores`` counts the restores
    started per ``bucket/name``; ``restore_delay`` (seconds) is how long an object
    stays ``Restoring``; ``seconds_per_hour`` scales the ``hours`` a restored copy
    stays readable (3600: real time).
    """

    def __init__(
        self,
        *,
        namespace: str = NAMESPACE,
        restore_delay: float = 1.0,
        seconds_per_hour: float = 3600.0,
    ) -> None:
        self.namespace = namespace
        self.restore_delay = restore_delay
        self.seconds_per_hour = seconds_per_hour
        self.requests = OracleRequestLog()
        self.restores: Counter[str] = Counter()
        self._buckets: dict[str, dict[str, _Object]] = {}
        self._faults = FaultRules("EmulatedOracleArchive", OPS)
        self._lock = threading.RLock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._keys: tempfile.TemporaryDirectory[str] | None = None
        self.key_file = ""
        self.fingerprint = ""

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> EmulatedOracleArchive:
        self._keys = tempfile.TemporaryDirectory(prefix="archivefs-oci-")
        self.key_file, self.fingerprint = _throwaway_key(Path(self._keys.name))
        server = _Server(("127.0.0.1", 0), _Handler)
        server.archive = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="emulated-oracle", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._keys is not None:
            self._keys.cleanup()
            self._keys = None

    def __enter__(self) -> EmulatedOracleArchive:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """No buckets, no faults, zero counters, default timing."""
        with self._lock:
            self._buckets.clear()
            self._faults.clear()
            self.restores.clear()
            self.restore_delay = 1.0
            self.seconds_per_hour = 3600.0
        self.requests.clear()

    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError(
                "EmulatedOracleArchive is not running. Fix: use it as a context manager "
                "or call start() first."
            )
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def oci_config(self) -> dict[str, str]:
        """The OCI SDK config for this endpoint: a throwaway key made by :meth:`start`."""
        return oci_config(self.key_file, self.fingerprint)

    def storage_options(self) -> dict[str, Any]:
        """ocifs options (``fsspec.filesystem("oci", **options)``) pointing at the emulator."""
        return storage_options(self.endpoint, self.key_file, self.fingerprint, self.namespace)

    # -- seeding and inspection (in-process: never counted) --------------------------------

    def create_bucket(self, name: str | None = None) -> str:
        name = name or f"test-{uuid.uuid4().hex[:16]}"
        with self._lock:
            self._buckets.setdefault(name, {})
        return name

    def put_object(self, bucket: str, name: str, data: bytes, tier: str = "Standard") -> None:
        if tier not in TIERS:
            raise ValueError(f"put_object: unknown tier {tier!r}. Fix: use one of {TIERS}.")
        with self._lock:
            self._buckets.setdefault(bucket, {})[name] = _new_object(data, tier)

    def put_objects(
        self, bucket: str, objects: Mapping[str, bytes], tier: str = "Standard"
    ) -> None:
        for name, data in objects.items():
            self.put_object(bucket, name, data, tier)

    def backdate(self, bucket: str, prefix: str, seconds: float) -> int:
        """Make the objects under ``bucket/prefix`` ``seconds`` older (their modified time,
        in listings and HEADs), as if written that long ago; returns how many."""
        aged = 0
        with self._lock:
            for name, obj in self._buckets[bucket].items():
                if name.startswith(prefix):
                    obj.created -= seconds
                    aged += 1
        return aged

    def archival_state(self, bucket: str, name: str) -> str | None:
        """``Archived``/``Restoring``/``Restored`` (Archive tier), ``None`` otherwise."""
        with self._lock:
            obj = self._buckets[bucket][name]
            self._advance(obj, time.time())
            return obj.state

    def expire_restore(self, bucket: str, name: str) -> None:
        """End the restored copy of ``bucket/name`` now: the object is archived again."""
        with self._lock:
            obj = self._buckets[bucket][name]
            self._advance(obj, time.time())
            if obj.state != "Restored":
                raise ValueError(
                    f"expire_restore: {bucket}/{name} is {obj.state}, not Restored. "
                    "Fix: restore it (and let the restore finish) first."
                )
            obj.state = "Archived"

    def complete_restores(self) -> None:
        """Finish every pending restore now (as if ``restore_delay`` had passed)."""
        with self._lock:
            for objects in self._buckets.values():
                for obj in objects.values():
                    if obj.state == "Restoring":
                        obj.ready_at = 0.0

    def throttle(
        self,
        *,
        fraction: float = 1.0,
        ops: Iterable[str] | None = None,
        count: int | None = None,
        seed: int = 0,
        status: int = 429,
        code: str = "TooManyRequests",
    ) -> None:
        """Answer a share of requests with ``429 TooManyRequests`` (Oracle's throttling).

        ``ops``: operation names from :data:`OPS` (default: all); ``fraction`` is drawn
        from a generator seeded with ``seed``; ``count`` caps the faults of this rule.
        ``status=503, code="ServiceUnavailable"`` injects server errors instead.
        """
        self._faults.add(status, code, count=count, fraction=fraction, ops=ops, seed=seed)

    def fail_next(
        self, op: str, times: int = 1, *, status: int = 503, code: str = "ServiceUnavailable"
    ) -> None:
        """Answer the next ``times`` requests of ``op`` with an error."""
        self._faults.add(status, code, count=times, ops=[op], first=True)

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Return once every request that reached the server has been answered and counted.

        For a test that killed a client: call it after the client's process is gone,
        then count (a count read earlier races the client's last requests).
        """
        if self._server is None:
            raise RuntimeError(
                "the emulated Oracle archive is not running. "
                "Fix: call start() first, or use it as a context manager."
            )
        self._server.wait_idle(timeout, what="the emulated Oracle archive")

    # -- the API -------------------------------------------------------------------------

    @property
    def injected(self) -> int:
        """Faults injected since the last reset."""
        return self._faults.injected

    def _advance(self, obj: _Object, now: float) -> None:
        """Move a restore along the clock: Restoring -> Restored -> Archived."""
        if obj.state == "Restoring" and now >= obj.ready_at:
            obj.state = "Restored"
            since = obj.ready_at if obj.ready_at > 0 else now  # 0: completed by the harness
            obj.expires_at = since + obj.hours * self.seconds_per_hour
        if obj.state == "Restored" and now >= obj.expires_at:
            obj.state = "Archived"

    def answer(self, request: _Request) -> Answer:
        """Answer one parsed request (called by the HTTP handler under no lock)."""
        fault = self._faults.answer(request.op)
        if fault is not None:
            return _error(fault[0], fault[1], "Too many requests; retry later.")
        if not _signed_by(request.headers.get("authorization", ""), self.fingerprint):
            return _error(
                401, "NotAuthenticated", "The required information to complete "
                "authentication was not provided or was incorrect.",
            )  # fmt: skip
        if request.op == "GetNamespace":
            return 200, _json_headers(), json.dumps(self.namespace).encode()
        if request.namespace != self.namespace:
            return _error(404, "NamespaceNotFound", f"Namespace {request.namespace} not found.")
        with self._lock:
            objects = self._buckets.get(request.bucket or "")
            if objects is None:
                return _error(
                    404, "BucketNotFound", f"Either the bucket named '{request.bucket}' does "
                    f"not exist in the namespace '{self.namespace}' or you are not authorized "
                    "to access it",
                )  # fmt: skip
            now = time.time()
            for obj in objects.values():
                self._advance(obj, now)
            handler = getattr(self, f"_{request.op}", None)
            if handler is None:
                return _error(501, "MethodNotImplemented", f"{request.method} is not emulated.")
            answer: Answer = handler(request, objects, now)
            return answer

    def _HeadBucket(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        etag = hashlib.md5(str(request.bucket).encode()).hexdigest()
        return 200, [("ETag", etag)], b""

    def _ListObjects(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        q = request.query
        prefix, delimiter = q.get("prefix", ""), q.get("delimiter")
        if delimiter not in (None, "/"):
            return _error(400, "InvalidParameter", "Only '/' is a supported delimiter.")
        try:
            limit = int(q.get("limit", LIST_LIMIT))
        except ValueError:
            return _error(400, "InvalidParameter", "limit must be an integer.")
        if not 1 <= limit <= LIST_LIMIT:
            return _error(400, "InvalidParameter", "limit must be between 1 and 1000.")
        fields = {f.strip().lower() for f in q.get("fields", "name").split(",") if f.strip()}
        wanted = [f for f in _ALL_FIELDS if f.lower() in fields]
        start, end, after = q.get("start"), q.get("end"), q.get("startAfter")
        out: list[dict[str, Any]] = []
        prefixes: list[str] = []
        next_start: str | None = None
        for name in sorted(objects):
            if not name.startswith(prefix) or (start is not None and name < start):
                continue
            if (after is not None and name <= after) or (end is not None and name >= end):
                continue
            common = None
            if delimiter:
                cut = name.find(delimiter, len(prefix))
                common = name[: cut + 1] if cut >= 0 else None
            if common is not None and prefixes and prefixes[-1] == common:
                continue  # still inside the last common prefix
            if len(out) + len(prefixes) >= limit:
                next_start = name
                break
            if common is not None:
                prefixes.append(common)
            else:
                out.append(_summary(name, objects[name], wanted))
        body: dict[str, Any] = {"objects": out, "prefixes": prefixes}
        if next_start is not None:
            body["nextStartWith"] = next_start
        return 200, _json_headers(), json.dumps(body).encode()

    def _HeadObject(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        obj = objects.get(request.name or "")
        if obj is None:
            return _error(404, "ObjectNotFound", _not_found(request))
        return 200, _object_headers(obj, len(obj.data)), b""

    def _GetObject(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        obj = objects.get(request.name or "")
        if obj is None:
            return _error(404, "ObjectNotFound", _not_found(request))
        if obj.state in ("Archived", "Restoring"):
            return _error(
                409, "NotRestored", f"The object '{request.name}' is {obj.state.lower()}; "
                "restore it (RestoreObjects) and wait until it is restored.",
            )  # fmt: skip
        match = request.headers.get("if-match")
        if match and match.strip('"') != obj.etag:
            return _error(412, "IfMatchFailed", "The If-Match precondition failed.")
        size = len(obj.data)
        window = _parse_range(request.headers.get("range"), size)
        if window is None:
            return 200, _object_headers(obj, size), obj.data
        first, last = window
        if first >= size:
            return _error(416, "InvalidRange", "The requested range is not satisfiable.")
        headers = _object_headers(obj, last - first + 1)
        headers.append(("Content-Range", f"bytes {first}-{last}/{size}"))
        return 206, headers, obj.data[first : last + 1]

    def _PutObject(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        tier = request.headers.get("storage-tier", "Standard")
        if tier not in TIERS:
            return _error(400, "InvalidStorageTier", f"Unknown storage tier {tier!r}.")
        current = objects.get(request.name or "")
        match, none_match = request.headers.get("if-match"), request.headers.get("if-none-match")
        if match and (current is None or match.strip('"') != current.etag):
            return _error(412, "IfMatchFailed", "The If-Match precondition failed.")
        if none_match == "*" and current is not None:
            return _error(412, "IfNoneMatchFailed", "The If-None-Match precondition failed.")
        obj = _new_object(request.body, tier)
        obj.meta = {k: v for k, v in request.headers.items() if k.startswith("opc-meta-")}
        objects[request.name or ""] = obj
        headers = [
            ("ETag", obj.etag),
            ("opc-content-md5", obj.md5),
            ("last-modified", formatdate(obj.created, usegmt=True)),
            ("version-id", obj.etag),
        ]
        return 200, headers, b""

    def _DeleteObject(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        if objects.pop(request.name or "", None) is None:
            return _error(404, "ObjectNotFound", _not_found(request))
        return 204, [], b""

    def _RestoreObjects(self, request: _Request, objects: dict[str, _Object], now: float) -> Answer:
        try:
            details = json.loads(request.body or b"{}")
            name = details["objectName"]
            hours = details.get("hours", DEFAULT_HOURS)
        except (ValueError, KeyError, TypeError):
            return _error(400, "InvalidParameter", "The body must name objectName.")
        if (
            isinstance(hours, bool)
            or not isinstance(hours, int)
            or not (MIN_HOURS <= hours <= MAX_HOURS)
        ):
            return _error(400, "InvalidParameter", "hours must be between 1 and 240.")
        obj = objects.get(name)
        if obj is None:
            return _error(404, "ObjectNotFound", f"The object '{name}' does not exist.")
        if obj.tier != "Archive":
            return _error(
                400, "InvalidParameter", f"The object '{name}' is not in the Archive tier."
            )
        if obj.state == "Restoring":
            return _error(409, "RestoreInProgress", f"The object '{name}' is being restored.")
        obj.hours = hours
        if obj.state == "Restored":
            obj.expires_at = now + hours * self.seconds_per_hour  # a new readable period
            return 200, [], b""
        obj.state = "Restoring"
        obj.ready_at = now + self.restore_delay
        self.restores[f"{request.bucket}/{name}"] += 1
        return 202, [], b""


# -- HTTP ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    op: str
    method: str
    namespace: str | None
    bucket: str | None
    name: str | None
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


def classify(method: str, parts: list[str]) -> str:
    """Oracle's operation name for ``method`` on the path split at '/' (``n/{ns}/b/...``)."""
    if parts[:1] != ["n"]:
        return "Other"
    if len(parts) == 1 or (len(parts) == 2 and not parts[1]):
        return "GetNamespace" if method == "GET" else "Other"
    if len(parts) == 4 and parts[2] == "b" and method == "HEAD":
        return "HeadBucket"
    if len(parts) >= 5 and parts[2] == "b":
        if parts[4] == "actions" and parts[5:] == ["restoreObjects"] and method == "POST":
            return "RestoreObjects"
        if parts[4] == "o" and len(parts) == 5 and method == "GET":
            return "ListObjects"
        if parts[4] == "o" and len(parts) > 5:
            return {
                "HEAD": "HeadObject",
                "GET": "GetObject",
                "PUT": "PutObject",
                "DELETE": "DeleteObject",
            }.get(method, "Other")
    return "Other"


class _Handler(IdleAwareHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: never log headers
        pass

    def _handle(self) -> None:
        archive = self.server.archive
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.lstrip("/").split("/")
        if parts and parts[-1] == "" and len(parts) > 2:
            parts = parts[:-1]
        op = classify(self.command, parts)
        body = self.read_body()
        if body is None:
            return  # the client went away mid-request: nothing to answer or count
        name = urllib.parse.unquote("/".join(parts[5:])) if op.endswith("Object") else None
        request = _Request(
            op=op,
            method=self.command,
            namespace=urllib.parse.unquote(parts[1]) if len(parts) > 1 else None,
            bucket=urllib.parse.unquote(parts[3]) if len(parts) > 3 else None,
            name=name,
            query=dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True)),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        status, headers, payload = archive.answer(request)
        if op == "RestoreObjects":
            name = _object_name(body)
        sent = 0 if self.command == "HEAD" else len(payload)
        archive.requests.append(
            OracleRequest(op, request.bucket, name, status, sent, request.headers.get("range"))
        )
        self.send_response(status)
        length_header = str(len(payload))
        for key, value in headers:
            if key.lower() == "content-length":
                length_header = value  # HEAD: the object's length, not the empty body's
            else:
                self.send_header(key, value)
        self.send_header("opc-request-id", uuid.uuid4().hex)
        self.send_header("Content-Length", length_header)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class _Server(TrackedServer, ThreadingHTTPServer):
    daemon_threads = True
    archive: EmulatedOracleArchive

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (killed by a test) is not the server's error."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


# -- helpers ------------------------------------------------------------------------------


def oci_config(key_file: str, fingerprint: str) -> dict[str, str]:
    """An OCI SDK config dict (``oci.config.validate_config`` accepts it) for the emulator."""
    return {
        "user": USER,
        "tenancy": TENANCY,
        "fingerprint": fingerprint,
        "key_file": key_file,
        "region": REGION,
    }


def storage_options(
    endpoint: str, key_file: str, fingerprint: str, namespace: str = NAMESPACE
) -> dict[str, Any]:
    """ocifs options for the emulator at ``endpoint`` (plain JSON: a subprocess rebuilds them)."""
    return {
        "config": oci_config(key_file, fingerprint),
        "config_kwargs": {"service_endpoint": endpoint},
        "namespace": namespace,
    }


@contextlib.contextmanager
def circuit_breaker_off() -> Iterator[None]:
    """Turn the OCI SDK's default circuit breaker off for clients made meanwhile.

    The emulator throttles on purpose; after ten 429s the SDK's breaker would refuse
    every request for 30 s. This is Oracle's own global switch (what
    ``OCI_SDK_DEFAULT_CIRCUITBREAKER_ENABLED=false`` sets at import); real use keeps it.
    """
    from oci import circuit_breaker

    before = circuit_breaker.GLOBAL_CIRCUIT_BREAKER_STRATEGY
    circuit_breaker.GLOBAL_CIRCUIT_BREAKER_STRATEGY = circuit_breaker.NoCircuitBreakerStrategy()
    try:
        yield
    finally:
        circuit_breaker.GLOBAL_CIRCUIT_BREAKER_STRATEGY = before


def _throwaway_key(folder: Path) -> tuple[str, str]:
    """A new 2048-bit RSA key in ``folder`` (mode 0600) and its OCI fingerprint."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path = folder / "oci_api_key.pem"
    path.touch(mode=0o600)
    path.write_bytes(pem)
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    digest = hashlib.md5(der).hexdigest()
    return str(path), ":".join(digest[i : i + 2] for i in range(0, 32, 2))


def _signed_by(authorization: str, fingerprint: str) -> bool:
    """The request carries an OCI HTTP signature made with the emulator's key."""
    return authorization.startswith("Signature ") and f'keyId="{TENANCY}/{USER}/{fingerprint}"' in (
        authorization
    )


def _new_object(data: bytes, tier: str) -> _Object:
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    return _Object(
        data=bytes(data),
        tier=tier,
        etag=uuid.uuid4().hex,
        md5=md5,
        created=time.time(),
        state="Archived" if tier == "Archive" else None,
    )


def _rfc3339(seconds: float) -> str:
    stamp = datetime.fromtimestamp(seconds, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def _summary(name: str, obj: _Object, wanted: list[str]) -> dict[str, Any]:
    """An ObjectSummary with the requested ``fields`` (``archivalState``: Archive tier only)."""
    values: dict[str, Any] = {
        "size": len(obj.data),
        "etag": obj.etag,
        "md5": obj.md5,
        "timeCreated": _rfc3339(obj.created),
        "timeModified": _rfc3339(obj.created),
        "storageTier": obj.tier,
        "archivalState": obj.state,
    }
    summary: dict[str, Any] = {"name": name}
    for key in wanted:
        if values[key] is not None:
            summary[key] = values[key]
    return summary


def _object_headers(obj: _Object, length: int) -> list[tuple[str, str]]:
    headers = [
        ("Content-Length", str(length)),
        ("Content-Type", "application/octet-stream"),
        ("ETag", obj.etag),
        ("Content-MD5", obj.md5),
        ("last-modified", formatdate(obj.created, usegmt=True)),
        ("accept-ranges", "bytes"),
        ("version-id", obj.etag),
        ("storage-tier", obj.tier),
        *obj.meta.items(),
    ]
    if obj.state is not None:
        headers.append(("archival-state", obj.state))
    if obj.state == "Restored":
        headers.append(("time-of-archival", _rfc3339(obj.expires_at)))
    return headers


def _parse_range(value: str | None, size: int) -> tuple[int, int] | None:
    """``bytes=a-b`` / ``bytes=a-`` / ``bytes=-n`` as (first, last) inclusive; ``None``: all."""
    if not value or not value.startswith("bytes="):
        return None
    first_text, _, last_text = value[len("bytes=") :].partition("-")
    if not first_text:
        n = int(last_text)
        return max(0, size - n), size - 1
    first = int(first_text)
    last = int(last_text) if last_text else size - 1
    return first, min(last, size - 1)


def _object_name(body: bytes) -> str | None:
    """The ``objectName`` of a RestoreObjects body, if it has one."""
    try:
        details = json.loads(body or b"{}")
    except ValueError:
        return None
    name = details.get("objectName") if isinstance(details, dict) else None
    return name if isinstance(name, str) else None


def _json_headers() -> list[tuple[str, str]]:
    return [("Content-Type", "application/json")]


def _error(status: int, code: str, message: str) -> Answer:
    """Oracle's error shape: a JSON body ``{"code", "message"}``."""
    body = json.dumps({"code": code, "message": message}).encode()
    return status, _json_headers(), body


def _not_found(request: _Request) -> str:
    return f"The object '{request.name}' was not found in the bucket '{request.bucket}'"
