"""Injected faults: throttling, server errors and dropped connections, on demand.

Why: moto never throttles and never drops a connection, yet the restore
submitter and the readers must survive both (``SlowDown`` is S3's answer to a
burst of restore requests). :class:`FaultInjector` holds the rules a test sets;
:class:`FaultMiddleware` sits between the request counter and the archive
emulation, so a faulted request is counted with the status it got and never
reaches moto (a throttled ``RestoreObject`` restores nothing, as on S3).

A dropped connection is a TCP reset: the middleware sets ``SO_LINGER`` to zero
on the socket and raises :class:`ConnectionResetError`; the server (see
``_server``) then closes the socket without a FIN, so the client sees
``ECONNRESET``, either before any response or after the headers and
``after_bytes`` of the body.
"""

from __future__ import annotations

import random
import socket
import struct
from collections.abc import Iterable, Iterator
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from archivefs.testing._counters import OPS, parse_request
from archivefs.testing._fault_rules import FaultRule, FaultRules

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

_THROTTLE = ("throttle", 503, "SlowDown", "Please reduce your request rate.")


def error_response(
    status: int, code: str, message: str, resource: str, **extra: str
) -> tuple[str, list[tuple[str, str]], bytes]:
    """An S3 error response: WSGI status line, headers and the XML ``<Error>`` body.

    ``extra`` adds elements S3 puts in some errors (``StorageClass``, ``AccessTier``).
    """
    request_id = f"{random.getrandbits(64):016X}"
    more = "".join(f"<{name}>{escape(value)}</{name}>" for name, value in extra.items())
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>{more}"
        f"<Resource>{escape(resource)}</Resource><RequestId>{request_id}</RequestId>"
        "<HostId>archivefs-testing</HostId></Error>"
    ).encode()
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    headers = [
        ("Content-Type", "application/xml"),
        ("Content-Length", str(len(body))),
        ("x-amz-request-id", request_id),
    ]
    return f"{status} {reason}", headers, body


class FaultInjector:
    """Rules for faults the emulated archive injects instead of serving a request.

    Each rule applies to requests whose operation is in ``ops`` (default: all
    S3 operations), of the ``buckets`` given (default: any). ``count`` limits how
    many faults the rule injects (default: no limit, until :meth:`clear`);
    ``fraction`` is the chance that a matching request is faulted (default 1.0),
    drawn from a generator seeded with ``seed`` so runs repeat.
    Rules are tried in the order they were added (every emulator's rules are a
    :class:`~archivefs.testing._fault_rules.FaultRules`).
    """

    def __init__(self) -> None:
        self._rules = FaultRules("FaultInjector", OPS)

    def throttle(
        self,
        *,
        count: int | None = None,
        fraction: float | None = None,
        ops: Iterable[str] | None = None,
        seed: int = 0,
        buckets: Iterable[str] | None = None,
    ) -> None:
        """Answer ``503 SlowDown`` (S3's XML error body) instead of serving."""
        _, status, code, message = _THROTTLE
        self._rules.add(
            status, code, message=message, count=count, fraction=fraction, ops=ops,
            seed=seed, buckets=buckets,
        )  # fmt: skip

    def error(
        self,
        status: int = 500,
        code: str = "InternalError",
        *,
        count: int | None = None,
        fraction: float | None = None,
        ops: Iterable[str] | None = None,
        seed: int = 0,
        buckets: Iterable[str] | None = None,
    ) -> None:
        """Answer ``status`` with an S3 XML error whose ``Code`` is ``code``."""
        if not 400 <= status <= 599:
            raise ValueError(
                f"FaultInjector.error: status {status} is not an error status. "
                "Fix: pass a status between 400 and 599."
            )
        message = "We encountered an internal error. Please try again."
        self._rules.add(
            status, code, message=message, count=count, fraction=fraction, ops=ops,
            seed=seed, buckets=buckets,
        )  # fmt: skip

    def reset_connection(
        self,
        *,
        count: int | None = None,
        fraction: float | None = None,
        ops: Iterable[str] | None = None,
        after_bytes: int = 0,
        seed: int = 0,
        buckets: Iterable[str] | None = None,
    ) -> None:
        """Drop the connection with a TCP reset.

        ``after_bytes=0`` drops it before any response; a positive value first
        sends the status, headers and that many bytes of the body.
        """
        if after_bytes < 0:
            raise ValueError(
                f"FaultInjector.reset_connection: after_bytes={after_bytes} is negative. "
                "Fix: pass 0 (reset before any response) or a positive number of body bytes."
            )
        self._rules.add(
            0, "", kind="reset", after_bytes=after_bytes, count=count, fraction=fraction,
            ops=ops, seed=seed, buckets=buckets,
        )  # fmt: skip

    def clear(self) -> None:
        """Remove every rule and set :attr:`injected` back to 0."""
        self._rules.clear()

    @property
    def injected(self) -> int:
        """How many faults have been injected since the last :meth:`clear`."""
        return self._rules.injected

    def pick(self, op: str, bucket: str | None = None) -> FaultRule | None:
        """The rule that faults this request, if any (counts it as injected)."""
        return self._rules.pick(op, bucket)


class FaultMiddleware:
    """WSGI middleware that applies a :class:`FaultInjector` to S3 API requests."""

    def __init__(self, app: WSGIApplication, faults: FaultInjector, *, harness_header: str) -> None:
        self._app = app
        self._faults = faults
        self._harness_key = "HTTP_" + harness_header.upper().replace("-", "_")

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = parse_request(environ)
        if request is None or self._harness_key in environ:
            return self._app(environ, start_response)
        rule = self._faults.pick(request.op, request.bucket)
        if rule is None:
            return self._app(environ, start_response)
        if rule.kind == "error":
            resource = f"/{request.bucket or ''}" + (f"/{request.key}" if request.key else "")
            status, headers, body = error_response(rule.status, rule.code, rule.message, resource)
            start_response(status, headers)
            return [] if request.method == "HEAD" else [body]
        sock = environ.get("werkzeug.socket")
        if rule.after_bytes == 0:
            _arm_reset(sock)
            raise ConnectionResetError("archivefs.testing: injected connection reset")
        return _truncated(self._app, environ, start_response, sock, rule.after_bytes)


def _truncated(
    app: WSGIApplication,
    environ: WSGIEnvironment,
    start_response: StartResponse,
    sock: Any,
    after_bytes: int,
) -> Iterator[bytes]:
    """Serve the real response's status and headers, ``after_bytes`` of its body, then reset."""
    data = drain(app(environ, start_response))
    if data[:after_bytes]:
        yield data[:after_bytes]
    _arm_reset(sock)
    raise ConnectionResetError("archivefs.testing: injected connection reset")


def _arm_reset(sock: Any) -> None:
    """Make the next close of ``sock`` send a TCP RST (linger on, timeout zero)."""
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def is_reset_armed(sock: socket.socket) -> bool:
    """Whether :func:`_arm_reset` was applied to ``sock``."""
    try:
        onoff, linger = struct.unpack("ii", sock.getsockopt(socket.SOL_SOCKET, socket.SO_LINGER, 8))
    except OSError:
        return False
    return bool(onoff) and linger == 0


def drain(body: Iterable[bytes]) -> bytes:
    """The whole body of a WSGI response, closing it as the WSGI spec asks."""
    try:
        return b"".join(body)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
