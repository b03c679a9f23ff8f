"""EmulatedGcsArchive: gcp-storage-emulator in-process, with request counters and faults.

Facts about gcp-storage-emulator (pure Python, from PyPI) that decide the design:
it speaks the JSON API that gcsfs uses (listings, metadata, ranged downloads,
uploads), keeps ``storageClass`` given at upload and reports it in listings,
but it has no request counters, serves one request at a time
(``http.server.HTTPServer``), ignores preconditions (``ifGenerationMatch``) and
ignores the body of a rewrite (a class change by rewrite stays STANDARD). GCS has
no restore, so no archive behaviour is missing; only the harness is. So the
emulator's own request handler runs here behind a ``ThreadingHTTPServer`` on
127.0.0.1 and an ephemeral port (one handler at a time, under a lock, since its
storage is not thread-safe), and a thin subclass of it adds only:

* ``objects.list`` in pages of at most 1,000 entries with ``nextPageToken``, as GCS
  pages it (the emulator answers a whole listing at once);
* counting every request by JSON API operation (``objects.list``, ``objects.get``,
  ``objects.download``, ``objects.insert`` ...) with its status and body bytes sent;
* ``ifGenerationMatch`` on uploads, metadata and downloads (412 when it fails), as
  GCS does, for claims and for reads of a bundle at the generation a catalog recorded;
* the ``x-goog-generation`` header on downloads, as GCS sends it, so that the parts of
  a download after the first are read at the first one's generation;
* faults on demand: the next ``count`` requests (of some operations) answered
  with an error status (503 by default), which gcsfs retries.

Clients (gcsfs) talk HTTP to it exactly as to GCS; the harness itself (buckets,
seeding objects in a class) writes into the emulator's storage directly, so its
own work is never counted.

gcsfs (2026.x) by default replaces its filesystem class with an experimental one
that probes every bucket over gRPC, with a 60 s time-out against an emulator;
importing this module sets ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false`` unless the
environment already says otherwise (it must be set before gcsfs is imported).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import urllib.parse
import uuid
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError
from archivefs.testing._counters import RecordLog
from archivefs.testing._fault_rules import FaultRules
from archivefs.testing._idle import IdleAwareHandler, TrackedServer

if TYPE_CHECKING:
    from collections.abc import Iterable

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

PROJECT = "archivefs-test"
_CONDITIONAL = frozenset({"objects.insert", "objects.get", "objects.download"})
PAGE = 1000  # GCS's largest objects.list page
_REASONS = {403: "forbidden", 404: "notFound", 412: "conditionNotMet", 429: "rateLimitExceeded"}
CLASSES = ("STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE")


@dataclass(frozen=True, slots=True)
class GcsRequest:
    """One request the emulated GCS server received."""

    op: str
    bucket: str | None
    name: str | None
    status: int
    bytes_sent: int


class GcsRequestLog(RecordLog[GcsRequest]):
    """Every request clients sent to the emulated GCS server (thread-safe)."""

    def count(
        self, op: str | None = None, *, bucket: str | None = None, status: int | None = None
    ) -> int:
        """How many requests match every given filter (``op`` e.g. ``"objects.download"``)."""
        return len(self.matching(op=op, bucket=bucket, status=status))

    def bytes_sent(self, op: str | None = None) -> int:
        """Body bytes the server sent (all requests, or those of ``op``)."""
        return sum(r.bytes_sent for r in self.matching(op=op))

    def by_op(self) -> dict[str, int]:
        """Request counts per operation."""
        return self.per_op()


def classify(method: str, url: str) -> tuple[str, str | None, str | None]:
    """The JSON API operation of a request, with its bucket and object name."""
    path = urllib.parse.urlsplit(url).path
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    for base in ("/upload/storage/v1", "/download/storage/v1", "/storage/v1", ""):
        if path.startswith(base + "/b"):
            rest = path[len(base) :]
            break
    else:
        return ("batch" if path.startswith("/batch") else "other"), None, None
    parts = rest.split("/", 4)  # '', 'b', bucket, 'o', name...
    bucket = urllib.parse.unquote(parts[2]) if len(parts) > 2 else None
    name = urllib.parse.unquote(parts[4]) if len(parts) > 4 else None
    if bucket is None:
        return ("buckets.insert" if method == "POST" else "buckets.list"), None, None
    if len(parts) < 4 or parts[3] != "o":
        verb = {"GET": "get", "DELETE": "delete", "PATCH": "patch"}.get(method, method.lower())
        return f"buckets.{verb}", bucket, None
    if base == "/upload/storage/v1":
        return "objects.insert", bucket, next(iter(query.get("name", [])), None)
    if name is None:
        return "objects.list", bucket, None
    for verb in ("rewriteTo", "copyTo", "compose"):
        marker = f"/{verb}/"
        if marker in name or name.endswith("/compose"):
            op = {"rewriteTo": "rewrite", "copyTo": "copy"}.get(verb, "compose")
            return f"objects.{op}", bucket, name.split(marker, 1)[0]
    if method == "GET":
        media = base == "/download/storage/v1" or query.get("alt") == ["media"]
        return ("objects.download" if media else "objects.get"), bucket, name
    verb = {"DELETE": "delete", "PATCH": "patch"}.get(method, method.lower())
    return f"objects.{verb}", bucket, name


def _handler_class(archive: EmulatedGcsArchive) -> type:
    from gcp_storage_emulator.server import RequestHandler, Router

    class Handler(IdleAwareHandler, RequestHandler):  # type: ignore[misc]
        """The emulator's handler, counted, with preconditions and faults."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._status = 0
            self._sent = 0
            super().__init__(archive._storage, *args, **kwargs)

        def send_response(self, code: int, message: str | None = None) -> None:
            self._status = code
            super().send_response(code, message)

        def send_header(self, keyword: str, value: str) -> None:
            if keyword.lower() == "content-length":
                self._sent = int(value)
            super().send_header(keyword, value)

        def end_headers(self) -> None:
            # counted before the client can see the answer, so that a test reading the
            # counts right after a call never misses its last request
            op, bucket, name = classify(self.command, self.path)
            archive.requests.append(GcsRequest(op, bucket, name, self._status, self._sent))
            if op == "objects.download" and self._status in (200, 206) and bucket and name:
                # GCS names the generation it served; the emulator does not (in _serve's lock)
                generation = archive.generation(bucket, name)
                if generation is not None:
                    super().send_header("x-goog-generation", generation)
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the request log is the record

        def _serve(self, method: str) -> None:
            op, bucket, name = classify(method, self.path)
            status, _ = archive._faults.answer(op) or (None, "")
            if status is not None:
                self._fail(status)
            else:
                with archive._lock:  # a precondition and its upload: one step
                    status = self._precondition(bucket, name) if op in _CONDITIONAL else None
                    if status is not None:
                        self._fail(status)
                    elif op != "objects.list" or not self._list_page(bucket):
                        Router(self).handle(method)

        def _list_page(self, bucket: str | None) -> bool:
            """One page of ``objects.list`` as GCS pages it: at most ``maxResults`` (1,000
            by default) objects and prefixes in name order, then ``nextPageToken``. The
            emulator answers everything at once; without pages, request counts at scale
            would not be GCS's. False: left to the emulator (``matchGlob``)."""
            from gcp_storage_emulator.exceptions import NotFound

            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            if bucket is None or "matchGlob" in query:
                return False
            first = {k: v[0] for k, v in query.items()}
            try:
                files, prefixes = archive._storage.get_file_list(
                    bucket, first.get("prefix"), first.get("delimiter"), None
                )
            except NotFound:
                self._fail(404)
                return True
            entries = sorted(
                [(str(f["name"]), f) for f in files] + [(str(p), None) for p in prefixes],
                key=lambda e: e[0],
            )
            token = first.get("pageToken", "")
            limit = min(int(first.get("maxResults", PAGE)), PAGE)
            after = [e for e in entries if e[0] > token]
            page = after[:limit]
            answer: dict[str, Any] = {
                "kind": "storage#objects",
                "items": [item for _, item in page if item is not None],
                "prefixes": [name for name, item in page if item is None],
            }
            if len(after) > limit:
                answer["nextPageToken"] = page[-1][0]
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return True

        def _precondition(self, bucket: str | None, name: str | None) -> int | None:
            """412 if the request's ``ifGenerationMatch`` does not hold (GCS's rule)."""
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            wanted = next(iter(query.get("ifGenerationMatch", [])), None)
            if wanted is None or bucket is None or name is None:
                return None
            current = archive.generation(bucket, name)
            holds = current is None if wanted == "0" else current == wanted
            return None if holds else 412

        def _drain(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)

        def _fail(self, status: int) -> None:
            self._drain()
            reason = _REASONS.get(status, "backendError")
            body = json.dumps(
                {"error": {"code": status, "message": reason, "errors": [{"reason": reason}]}}
            ).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

    return Handler


class _Server(TrackedServer, ThreadingHTTPServer):
    """The stdlib's threaded server, its connections tracked for ``wait_idle``."""


class EmulatedGcsArchive:
    """gcp-storage-emulator on 127.0.0.1 (ephemeral port), counted, with faults.

    Use as a context manager, or ``start()``/``stop()``. ``storage_options()``
    are gcsfs's options for it (anonymous, its endpoint). ``put_object(...,
    storage_class="ARCHIVE")`` seeds objects in any GCS class; ``requests`` counts
    what clients sent; ``fail_next`` answers the next requests with an error.
    """

    def __init__(self) -> None:
        self.requests = GcsRequestLog()
        self._faults = FaultRules("EmulatedGcsArchive")
        self._lock = threading.Lock()
        self._storage: Any = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> EmulatedGcsArchive:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> EmulatedGcsArchive:
        """Start the server (in a daemon thread of this process); returns the archive, as
        the other emulated archives' ``start`` does."""
        try:
            from gcp_storage_emulator.storage import Storage
        except ImportError as error:
            raise ArchiveError(
                "the emulated GCS archive needs gcp-storage-emulator, which is not installed.",
                fix="pip install 'archivefs[gcs,test]' (or gcp-storage-emulator).",
            ) from error
        if self._server is not None:
            return self
        # the emulator logs every 404 as an error ("Resource not found:"); a 404 is an
        # answer here (absent catalogs, missing objects), not a fault of the harness
        logging.getLogger("gcp_storage_emulator").setLevel(logging.CRITICAL)

        class MemoryStorage(Storage):  # type: ignore[misc]
            def _write_config_to_file(self) -> None:
                """Skipped: the emulator re-serialises every bucket's metadata after each
                write (O(n) per upload, minutes for a few thousand objects) to a snapshot
                that in-memory storage reads only when it starts."""

        self._storage = MemoryStorage(use_memory_fs=True)
        server = _Server(("127.0.0.1", 0), _handler_class(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="emulated-gcs", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def endpoint_url(self) -> str:
        if self._server is None:
            raise ArchiveError(
                "the emulated GCS archive is not running.",
                fix="use it as a context manager or call start() first.",
            )
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def storage_options(self) -> dict[str, Any]:
        """gcsfs options for this server: its endpoint, anonymous, a test project."""
        return {"endpoint_url": self.endpoint_url, "token": "anon", "project": PROJECT}

    def reset(self) -> None:
        """Empty storage, no faults, zero counters (and gcsfs's instance cache cleared)."""
        with self._lock:
            self._storage.wipe()
        self._faults.clear()
        self.requests.clear()
        try:
            import gcsfs
        except ImportError:
            return
        gcsfs.GCSFileSystem.clear_instance_cache()

    def fail_next(
        self, count: int = 1, *, status: int = 503, ops: Iterable[str] | None = None
    ) -> None:
        """Answer the next ``count`` requests (of ``ops``, e.g. ``{"objects.list"}``) with
        ``status`` instead of serving them."""
        self._faults.add(status, "", count=count, ops=ops, first=True)

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Return once every request that reached the server has been answered and counted.

        For a test that killed a client: call it after the client's process is gone,
        then count (a count read earlier races the client's last requests).
        """
        if self._server is None:
            raise ArchiveError(
                "the emulated GCS archive is not running.",
                fix="use it as a context manager or call start() first.",
            )
        self._server.wait_idle(timeout, what="the emulated GCS archive")

    # -- the harness's own work: straight into the emulator's storage, never counted ------

    def create_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a unique name unless given) and return its name."""
        from gcp_storage_emulator.handlers.buckets import create_bucket

        bucket = name or f"test-{uuid.uuid4().hex[:16]}"
        with self._lock:
            create_bucket(bucket, self._storage)
        return bucket

    def put_object(
        self, bucket: str, name: str, data: bytes, *, storage_class: str = "STANDARD"
    ) -> None:
        """Store ``data`` at ``bucket/name`` in a GCS storage class (as an upload would)."""
        from gcp_storage_emulator.handlers import objects

        if storage_class not in CLASSES:
            raise ValueError(
                f"{storage_class!r} is not a GCS storage class; use one of {', '.join(CLASSES)}."
            )
        resource = objects._make_object_resource(
            self.endpoint_url,
            bucket,
            name,
            "application/octet-stream",
            str(len(data)),
            {"storageClass": storage_class},
        )
        resource = objects._checksums(data, resource)
        with self._lock:
            self._storage.create_file(bucket, name, data, resource)

    def objects(self, bucket: str, prefix: str = "") -> list[str]:
        """Names of the objects in ``bucket`` under ``prefix`` (uncounted)."""
        with self._lock:
            files, _ = self._storage.get_file_list(bucket, prefix or None, None, None)
        return sorted(str(f["name"]) for f in files)

    def storage_class(self, bucket: str, name: str) -> str:
        """The class the server holds for an object (uncounted)."""
        with self._lock:
            return str(self._storage.get_file_obj(bucket, name)["storageClass"])

    def generation(self, bucket: str, name: str) -> str | None:
        """The object's generation, ``None`` if absent (uncounted; callers hold the lock)."""
        from gcp_storage_emulator.exceptions import NotFound

        try:
            return str(self._storage.get_file_obj(bucket, name)["generation"])
        except NotFound:
            return None
