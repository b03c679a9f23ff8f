"""wait_idle of every in-process emulator: a request still being read keeps the server busy.

A test that kills a client counts what the server received once the client is gone and the
server is idle; a request whose bytes are not all read yet (or not read at all) is not
answered yet, so wait_idle must not return before it is answered and counted.
"""

from __future__ import annotations

import socket
import threading
import urllib.parse

import pytest

SERVERS = {  # fixture -> (its bucket's fixture, its endpoint's attribute, a GET it counts)
    "archive": ("bucket", "endpoint_url", "/{bucket}?list-type=2"),
    "azure_archive": (
        "azure_container",
        "blob_endpoint",
        "/devstoreaccount1/{bucket}?restype=container&comp=list",
    ),
    "oracle_archive": ("oracle_bucket", "endpoint", "/n/ns/b/{bucket}/o"),
    "gcs_archive": ("gcs_bucket", "endpoint_url", "/storage/v1/b/{bucket}/o"),
}


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_wait_idle_returns_only_once_a_half_sent_request_is_answered(
    name: str, request: pytest.FixtureRequest
) -> None:
    bucket_fixture, endpoint, path = SERVERS[name]
    server = request.getfixturevalue(name)
    bucket = request.getfixturevalue(bucket_fixture)
    address = urllib.parse.urlsplit(getattr(server, endpoint))
    assert address.hostname is not None
    assert address.port is not None
    server.requests.clear()
    path = path.format(bucket=bucket)
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()
    outcome: list[BaseException | None] = []

    def wait() -> None:
        try:
            server.wait_idle(timeout=120)
            outcome.append(None)
        except BaseException as error:  # reported below
            outcome.append(error)

    with socket.create_connection((address.hostname, address.port)) as client:
        client.sendall(head)  # the request's last line is still to come
        waiter = threading.Thread(target=wait)
        waiter.start()
        waiter.join(2.0)
        assert waiter.is_alive(), outcome  # the server is reading a request: not idle
        assert len(server.requests) == 0
        client.sendall(b"\r\n")
        client.shutdown(socket.SHUT_WR)  # the client is gone after its request
        waiter.join(120)
    assert outcome == [None]
    assert len(server.requests) == 1  # answered and counted when wait_idle returned


CUT_SHORT = {  # fixture -> a request with a body (its bucket's fixture, method, path)
    "archive": ("bucket", "PUT", "/{bucket}/k"),
    "azure_archive": ("azure_container", "PUT", "/devstoreaccount1/{bucket}/k"),
    "oracle_archive": ("oracle_bucket", "POST", "/n/ns/b/{bucket}/actions/restoreObjects"),
}


@pytest.mark.parametrize("name", sorted(CUT_SHORT))
def test_a_request_whose_client_died_mid_body_is_neither_answered_nor_counted(
    name: str, request: pytest.FixtureRequest
) -> None:
    """What a client killed while sending leaves: headers and part of the body. No server
    acts on that (the emulators once answered it, e.g. a RestoreObjects as 400, counted)."""
    bucket_fixture, method, path = CUT_SHORT[name]
    server = request.getfixturevalue(name)
    bucket = request.getfixturevalue(bucket_fixture)
    address = urllib.parse.urlsplit(getattr(server, SERVERS[name][1]))
    assert address.hostname is not None
    assert address.port is not None
    server.requests.clear()
    head = (
        f"{method} {path.format(bucket=bucket)} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Length: 100\r\nx-ms-blob-type: BlockBlob\r\n\r\n"
    )
    with socket.create_connection((address.hostname, address.port)) as client:
        client.sendall(head.encode() + b'{"objectName": "o/00')  # 20 of 100 bytes
        client.shutdown(socket.SHUT_WR)  # the client is gone
        server.wait_idle(timeout=120)
    assert server.requests.records == []


def test_every_emulator_answers_without_waiting_for_a_delayed_ack() -> None:
    """Accepted sockets have Nagle's algorithm off: a body written after its headers is
    sent at once, not after the client's delayed ACK (40 ms a request on Linux)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from archivefs.testing import _azure, _gcs, _oracle, _server
    from archivefs.testing._idle import TrackedServer

    servers = [_server._Server, _azure._ProxyServer, _gcs._Server, _oracle._Server]
    assert all(issubclass(server, TrackedServer) for server in servers)

    class Server(TrackedServer, ThreadingHTTPServer):
        pass

    accepted: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            accepted.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with Server(("127.0.0.1", 0), Handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            host, port = server.server_address[:2]
            with socket.create_connection((str(host), int(port))) as client:
                client.sendall(b"GET / HTTP/1.0\r\n\r\n")
                assert client.recv(100).startswith(b"HTTP/1.0 204")
        finally:
            server.shutdown()
    assert len(accepted) == 1
    assert accepted[0]
