"""Server-side request counting: what the S3 API received and how many body bytes it sent.

Why at the server: claims such as "one LIST per 1,000 objects" or "read
amplification <= 1.1" are about what a real bill would show, so they are
measured where S3 would meter them, after every client-side retry, cache and
coalescing layer has done its work.

:func:`classify` names each request with the operation S3 would bill
(``GET``, ``LIST``, ``RestoreObject``, ...); :class:`CountingMiddleware` is the
outermost WSGI layer of the emulated archive and appends one
:class:`RequestRecord` per request to a :class:`RequestLog`. The record is
appended *before* the first byte of the response goes out, so a test that has
its answer can count it at once; for that the body is buffered (moto builds its
responses in memory anyway).
"""

from __future__ import annotations

import io
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import parse_qs, unquote

from archivefs.testing._idle import whole_body

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

OPS = (
    "GET",
    "HEAD",
    "LIST",
    "RestoreObject",
    "PUT",
    "COPY",
    "DELETE",
    "DeleteObjects",
    "CreateMultipartUpload",
    "UploadPart",
    "CompleteMultipartUpload",
    "AbortMultipartUpload",
    "CreateBucket",
    "HeadBucket",
    "GetBucketLocation",
    "Other",
)
"""Every operation name a :class:`RequestRecord` can carry."""

HARNESS_HEADER = "x-archivefs-harness"
"""Requests the harness sends for itself (seeding) carry this header and are not counted."""

_LIST_PARAMS = frozenset(
    {
        "list-type",
        "prefix",
        "delimiter",
        "max-keys",
        "continuation-token",
        "start-after",
        "encoding-type",
        "fetch-owner",
        "marker",
    }
)
_OBJECT_SUBRESOURCES = frozenset(
    {"acl", "tagging", "attributes", "torrent", "retention", "legal-hold", "select"}
)

R = TypeVar("R")


_PARSED = "archivefs.testing.request"
LATENCY_KEY = "archivefs.testing.latency"
"""WSGI environ key: seconds the request was delayed on purpose (set by ``_latency``)."""


@dataclass(frozen=True, slots=True)
class S3Request:
    """An S3 API request as the emulated archive sees it (path-style addressing)."""

    op: str
    method: str
    bucket: str | None
    key: str | None
    query: dict[str, list[str]]


def parse_request(environ: WSGIEnvironment) -> S3Request | None:
    """Parse a WSGI request into an :class:`S3Request`; ``None`` for moto's own ``/moto-api``.

    The result is kept in the environ, so the layers of the server parse each request once.
    """
    if _PARSED in environ:
        cached: S3Request | None = environ[_PARSED]
        return cached
    parsed = _parse(environ)
    environ[_PARSED] = parsed
    return parsed


def _parse(environ: WSGIEnvironment) -> S3Request | None:
    raw = str(environ.get("RAW_URI") or environ.get("REQUEST_URI") or environ["PATH_INFO"])
    path, _, query_string = raw.partition("?")
    if path.startswith("/moto-api") or path == "/favicon.ico":
        return None
    # The raw URI is a latin-1 "WSGI string" of the bytes the client sent.
    path = unquote(path.encode("latin-1").decode("utf-8", "replace"))
    query = parse_qs(query_string, keep_blank_values=True)
    bucket, _, key = path.lstrip("/").partition("/")
    method = str(environ["REQUEST_METHOD"]).upper()
    has_copy_source = "HTTP_X_AMZ_COPY_SOURCE" in environ
    op = classify(method, bucket or None, key or None, query, copy_source=has_copy_source)
    return S3Request(op, method, bucket or None, key or None, query)


def classify(
    method: str,
    bucket: str | None,
    key: str | None,
    query: dict[str, list[str]],
    *,
    copy_source: bool = False,
) -> str:
    """The operation name (one of :data:`OPS`) of an S3 request."""
    if bucket is None:
        return "Other"
    if key is None:
        return _classify_bucket(method, query)
    return _classify_object(method, query, copy_source)


def _classify_bucket(method: str, query: dict[str, list[str]]) -> str:
    if method == "GET":
        if "location" in query:
            return "GetBucketLocation"
        return "LIST" if set(query) <= _LIST_PARAMS else "Other"
    if method == "HEAD":
        return "HeadBucket"
    if method == "PUT" and not query:
        return "CreateBucket"
    if method == "POST" and "delete" in query:
        return "DeleteObjects"
    return "Other"


def _classify_object(method: str, query: dict[str, list[str]], copy_source: bool) -> str:
    if _OBJECT_SUBRESOURCES & set(query):
        return "Other"
    upload = "uploadId" in query
    if method == "GET":
        return "Other" if upload else "GET"
    if method == "HEAD":
        return "HEAD"
    if method == "PUT":
        if upload:
            return "Other" if copy_source else "UploadPart"
        return "COPY" if copy_source else "PUT"
    if method == "POST":
        if "restore" in query:
            return "RestoreObject"
        if "uploads" in query:
            return "CreateMultipartUpload"
        return "CompleteMultipartUpload" if upload else "Other"
    if method == "DELETE":
        return "AbortMultipartUpload" if upload else "DELETE"
    return "Other"


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request the S3 API received.

    ``status`` is the HTTP status sent, or 0 when the connection was dropped
    before any response; ``bytes_sent`` counts response body bytes only;
    ``range`` is the request's ``Range`` header; ``time`` is ``time.time()``
    when the request arrived; ``latency`` the seconds the server delayed it
    on purpose (``EmulatedArchive(latency=...)``) before answering.
    """

    op: str
    method: str
    bucket: str | None
    key: str | None
    status: int
    bytes_sent: int
    range: str | None
    time: float
    latency: float = 0.0
    bytes_received: int = 0


class RecordLog(Generic[R]):
    """Records of the requests a server received, in arrival order (thread-safe).

    The base of every emulator's request log: each adds the filters its
    records have (bucket, key, container, ...) through :meth:`matching`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[R] = []

    def append(self, record: R) -> None:
        with self._lock:
            self._records.append(record)

    @property
    def records(self) -> list[R]:
        """A copy of the records so far."""
        with self._lock:
            return list(self._records)

    def matching(self, **filters: Any) -> list[R]:
        """The records whose fields equal every filter given as other than ``None``."""
        wanted = [(name, value) for name, value in filters.items() if value is not None]
        return [r for r in self.records if all(getattr(r, n) == v for n, v in wanted)]

    def per_op(self, records: Iterable[Any] | None = None) -> dict[str, int]:
        """Requests per operation (only operations that occurred)."""
        chosen: Iterable[Any] = self.records if records is None else records
        return dict(Counter(r.op for r in chosen))

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)


class RequestLog(RecordLog[RequestRecord]):
    """Every S3 API request the emulated archive received, in arrival order (thread-safe)."""

    def _select(
        self,
        op: str | None,
        bucket: str | None,
        key: str | None = None,
        status: int | None = None,
    ) -> list[RequestRecord]:
        if op is not None and op not in OPS:
            raise ValueError(
                f"RequestLog: unknown operation {op!r}. Fix: use one of {', '.join(OPS)}."
            )
        return self.matching(op=op, bucket=bucket, key=key, status=status)

    def count(
        self,
        op: str | None = None,
        *,
        bucket: str | None = None,
        key: str | None = None,
        status: int | None = None,
    ) -> int:
        """How many requests match every given filter."""
        return len(self._select(op, bucket, key, status))

    def bytes_sent(self, op: str | None = None, *, bucket: str | None = None) -> int:
        """Response body bytes sent for the matching requests."""
        return sum(r.bytes_sent for r in self._select(op, bucket))

    def bytes_received(self, op: str | None = None, *, bucket: str | None = None) -> int:
        """Request body bytes received (uploads) for the matching requests."""
        return sum(r.bytes_received for r in self._select(op, bucket))

    def counts(self) -> dict[str, int]:
        """Requests per operation (only operations that occurred)."""
        return self.per_op()


class CountingMiddleware:
    """WSGI middleware that records each S3 API request in a :class:`RequestLog`."""

    def __init__(self, app: WSGIApplication, log: RequestLog) -> None:
        self._app = app
        self._log = log

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = parse_request(environ)
        if request is None or _from_harness(environ):
            return self._app(environ, start_response)
        if not _whole_input(environ):  # the client went away mid-request: not acted on
            start_response("400 Bad Request", [("Content-Length", "0"), ("Connection", "close")])
            return []
        arrived = time.time()
        sent: list[Any] = []

        def record(status: int, nbytes: int) -> None:
            self._log.append(
                RequestRecord(
                    op=request.op,
                    method=request.method,
                    bucket=request.bucket,
                    key=request.key,
                    status=status,
                    bytes_sent=nbytes,
                    range=environ.get("HTTP_RANGE"),
                    time=arrived,
                    latency=float(environ.get(LATENCY_KEY, 0.0)),
                    bytes_received=_content_length(environ),
                )
            )

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            sent[:] = [status, headers, exc_info]
            return lambda data: None  # the legacy write() callable is not used here

        try:
            body = self._app(environ, capture)
        except ConnectionError:
            record(0, 0)  # dropped before any response
            raise
        chunks: list[bytes] = []
        dropped: ConnectionError | None = None
        try:
            for chunk in body:
                chunks.append(chunk)
        except ConnectionError as exc:  # a fault drops the connection mid-body
            dropped = exc
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
        status, headers, exc_info = sent
        head = request.method == "HEAD"
        record(int(status.split(None, 1)[0]), 0 if head else sum(map(len, chunks)))
        start_response(status, headers, exc_info)
        return _replay(chunks, dropped)


def _replay(chunks: list[bytes], dropped: ConnectionError | None) -> Iterator[bytes]:
    yield from chunks
    if dropped is not None:
        raise dropped


def _whole_input(environ: WSGIEnvironment) -> bool:
    """Read the request's body into memory (``wsgi.input`` then reads it from there);
    False if the client went away before sending all of it."""
    if environ.get("wsgi.input_terminated"):  # chunked: the server ends the stream itself
        return True
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return True  # the app answers a malformed length
    body = whole_body(environ["wsgi.input"].read, length)
    if body is None:
        return False
    environ["wsgi.input"] = io.BytesIO(body)
    return True


def _from_harness(environ: WSGIEnvironment) -> bool:
    return "HTTP_" + HARNESS_HEADER.upper().replace("-", "_") in environ


def _content_length(environ: WSGIEnvironment) -> int:
    """The body's length; for an ``aws-chunked`` upload, the data's (without the framing)."""
    value = environ.get("HTTP_X_AMZ_DECODED_CONTENT_LENGTH") or environ.get("CONTENT_LENGTH")
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0
