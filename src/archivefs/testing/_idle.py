"""Idle detection shared by the in-process emulators: has every request that reached the
server's port been answered?

A test that kills a client mid-run must count what the server received only once the
client is gone and nothing it sent is still unread or being answered; a count read
earlier races the client's last request. "Some time without a new request" is no
proof on a busy machine, so idleness here is a fact about the server's sockets:

* the accept queue is drained: a probe connection made now is accepted after every
  connection made before it (the queue is first in, first out);
* every accepted connection is waiting for its next request (its handler is blocked
  before reading one, see :class:`IdleAwareHandler`) and has no unread byte at the
  kernel (``FIONREAD``): a request's bytes stay at the kernel until its handler has
  marked the connection busy, and it stays busy until the answer is written.

A client killed while sending leaves a request whose body ends early: no server acts
on it, so neither do the emulators (:func:`whole_body`): it is not answered or counted.

:class:`TrackedServer` (a mixin for a ``socketserver`` server) and
:class:`IdleAwareHandler` (a mixin for an ``http.server`` request handler) give an
emulator :meth:`TrackedServer.wait_idle`; every emulator's ``wait_idle`` is that one
method.
"""

from __future__ import annotations

import array
import fcntl
import socket
import socketserver
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


class ConnectionTracker:
    """The connections a server accepted and not yet closed, each busy or waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[socket.socket, bool] = {}  # socket -> waiting for a request
        self._peers: dict[socket.socket, Any] = {}  # socket -> the client's address

    def accepted(self, sock: socket.socket, peer: Any) -> None:
        with self._lock:
            self._waiting[sock] = False
            self._peers[sock] = peer

    def mark(self, sock: socket.socket, *, waiting: bool) -> None:
        with self._lock:
            if sock in self._waiting:
                self._waiting[sock] = waiting

    def closed(self, sock: socket.socket) -> None:
        with self._lock:  # before the socket closes: its descriptor is never read reused
            self._waiting.pop(sock, None)
            self._peers.pop(sock, None)

    def has_peer(self, peer: Any) -> bool:
        with self._lock:
            return peer in self._peers.values()

    def busy(self) -> int:
        """How many connections are answering a request or hold unread bytes."""
        with self._lock:
            return sum(1 for sock, waiting in self._waiting.items() if not waiting or _unread(sock))


def _unread(sock: socket.socket) -> int:
    """Bytes the kernel holds for ``sock`` that no one has read (0 once it is closed)."""
    if sock.fileno() < 0:
        return 0
    count = array.array("i", [0])
    try:
        fcntl.ioctl(sock.fileno(), termios.FIONREAD, count)
    except OSError:
        return 0
    return count[0]


class TrackedServer(socketserver.TCPServer):
    """A server mixin that tracks its connections, for :meth:`wait_idle`."""

    tracker: ConnectionTracker

    def server_activate(self) -> None:
        self.tracker = ConnectionTracker()
        super().server_activate()

    def get_request(self) -> tuple[socket.socket, Any]:
        request, address = super().get_request()
        # Answers go out as two writes (headers, then body). With Nagle's algorithm on,
        # the body waits for the client's delayed ACK of the headers: 40 ms per request
        # on Linux. Servers built for HTTP (radosgw's beast, Node's http) turn it off too.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.tracker.accepted(request, address)
        return request, address

    def close_request(self, request: Any) -> None:
        self.tracker.closed(request)
        super().close_request(request)

    def wait_idle(self, timeout: float = 60.0, *, what: str = "the emulated server") -> None:
        """Return once every request that reached this server has been answered.

        Meant for after a client was killed: its last requests are still read, answered
        and counted after it is gone. Requests from clients that keep sending keep the
        server busy; ``TimeoutError`` after ``timeout`` seconds says how many.
        """
        deadline = time.monotonic() + timeout
        host, port = self.server_address[:2]
        with socket.create_connection((str(host), int(port)), timeout=timeout) as probe:
            here = probe.getsockname()
            while not self.tracker.has_peer(here):  # all earlier connections are accepted
                _before(deadline, timeout, what, "has not accepted a new connection")
                time.sleep(0.005)
        while busy := self.tracker.busy():
            _before(deadline, timeout, what, f"still answers {busy} connection(s)")
            time.sleep(0.005)


def _before(deadline: float, timeout: float, what: str, state: str) -> None:
    if time.monotonic() > deadline:
        raise TimeoutError(
            f"{what} {state} after {timeout} s, so it is not idle. "
            "Fix: stop the clients still sending, or look for a request that hangs."
        )


def whole_body(read: Callable[[int], bytes], length: int) -> bytes | None:
    """The ``length`` bytes of a request's body, or None if the stream ended before them
    (the client went away mid-request: the request must not be acted on)."""
    body = read(length) if length > 0 else b""
    return body if len(body) == max(length, 0) else None


class IdleAwareHandler(BaseHTTPRequestHandler):
    """A handler mixin that marks its connection waiting only while no request is read.

    It waits for the next request with ``MSG_PEEK`` (the bytes stay at the kernel, where
    :meth:`TrackedServer.wait_idle` sees them), then marks the connection busy before
    reading the request, until the answer is written.
    """

    def handle_one_request(self) -> None:
        assert isinstance(self.server, TrackedServer)
        tracker = self.server.tracker
        tracker.mark(self.connection, waiting=True)
        try:
            self.connection.recv(1, socket.MSG_PEEK)  # bytes, or the end of the stream
        except OSError:
            pass  # reading the request below meets the same error and ends the connection
        finally:
            tracker.mark(self.connection, waiting=False)
        super().handle_one_request()

    def read_body(self) -> bytes | None:
        """The request's body; None (and the connection is closed unanswered) if the
        client went away before sending all of it."""
        body = whole_body(self.rfile.read, int(self.headers.get("Content-Length") or 0))
        if body is None:
            self.close_connection = True
        return body
