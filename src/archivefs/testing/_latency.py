"""Injected latency: every S3 API request waits a set time before it is answered.

Why: against S3 a request costs a network round trip (tens of milliseconds)
during which the client's CPU is free, so concurrency pays off and request
counts decide wall-clock time. The emulator on 127.0.0.1 answers in well under
a millisecond of network time, which hides both. :class:`LatencyMiddleware`
sleeps (``time.sleep``, which releases the GIL, in the request's own server
thread) before passing each request on, so concurrent requests wait in
parallel as they would on the wire. Harness requests (seeding) and moto's
``/moto-api`` are not delayed. The seconds applied are left in the WSGI
environ for the request counter, so a record says how long its request waited.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from archivefs.testing._counters import LATENCY_KEY, parse_request

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment


def check_latency(seconds: float) -> float:
    """``seconds`` as a float, or a ``ValueError`` naming the fix."""
    number = float(seconds)
    if not math.isfinite(number) or number < 0:
        raise ValueError(
            f"EmulatedArchive: latency={seconds!r} is not a number of seconds >= 0. "
            "Fix: pass a finite number >= 0 (0: no added latency)."
        )
    return number


class LatencyMiddleware:
    """WSGI middleware that delays every S3 API request by :attr:`seconds` (0: none)."""

    def __init__(self, app: WSGIApplication, seconds: float = 0.0, *, harness_header: str) -> None:
        self._app = app
        self._harness = "HTTP_" + harness_header.upper().replace("-", "_")
        self._lock = threading.Lock()
        self._seconds = check_latency(seconds)

    @property
    def seconds(self) -> float:
        with self._lock:
            return self._seconds

    @seconds.setter
    def seconds(self, value: float) -> None:
        number = check_latency(value)
        with self._lock:
            self._seconds = number

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = parse_request(environ)
        if request is not None and self._harness not in environ:
            seconds = self.seconds
            if seconds > 0:
                time.sleep(seconds)
            environ[LATENCY_KEY] = seconds
        return self._app(environ, start_response)
