"""The benchmarks' WAN-shaping proxy: bytes intact both ways, latency and cap by the byte."""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from benchmarks._shaping_proxy import CHUNK, Link, ShapingProxy


class _Echo(BaseHTTPRequestHandler):
    """Answers a POST with its body reversed (so a proxy that swaps directions fails)."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))[::-1]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _post(port: int, body: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        head = f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
        conn.sendall(head.encode() + body)
        answer = b""
        while chunk := conn.recv(1 << 16):
            answer += chunk
    return answer.split(b"\r\n\r\n", 1)[1]


def test_proxy_forwards_every_byte_both_ways_and_counts_them(echo: str) -> None:
    body = random.Random(0).randbytes(3 * 2**20 + 17)
    with ShapingProxy(echo, latency=0.001, rate=0) as proxy:
        answers = [_post(proxy.port, body) for _ in range(2)]
    assert answers == [body[::-1]] * 2
    counts = proxy.counts
    assert counts.connections == 2
    assert counts.bytes_up > 2 * len(body)  # the bodies and the request lines
    assert counts.bytes_up - 2 * len(body) < 2 * 200
    assert 2 * len(body) < counts.bytes_down < 2 * (len(body) + 300)  # bodies and headers


def test_link_adds_its_latency_to_every_chunk() -> None:
    link = Link(latency=0.010, rate=0)
    assert [link.deliver_at(t, CHUNK) for t in (0.0, 0.0, 5.0)] == [0.010, 0.010, 5.010]


def test_link_caps_the_bytes_delivered_at_its_rate() -> None:
    rate = 40e6
    link = Link(latency=0.010, rate=rate)
    # 64 chunks handed over at once leave one after another at the rate, then cross
    deliveries = [link.deliver_at(0.0, CHUNK) for _ in range(64)]
    for n, when in enumerate(deliveries, 1):
        assert when == pytest.approx(n * CHUNK / rate + 0.010)
    # by any instant, at most rate x (elapsed - latency) bytes have come out
    for t in (0.02, 0.05, 0.1):
        delivered = sum(CHUNK for when in deliveries if when <= t)
        assert delivered <= rate * (t - 0.010)
    # a link that was idle starts afresh: no credit saved from the idle time
    assert link.deliver_at(10.0, CHUNK) == pytest.approx(10.0 + CHUNK / rate + 0.010)


def test_proxy_refuses_a_target_without_a_port() -> None:
    with pytest.raises(ValueError, match="http://host:port"):
        ShapingProxy("http://localhost")
