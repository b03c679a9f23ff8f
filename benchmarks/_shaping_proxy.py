"""A TCP proxy that gives a local S3 endpoint the shape of a wide-area link.

Every byte that crosses :class:`ShapingProxy`, in either direction, arrives
``latency`` seconds after it was sent (so a request/response round trip costs
2 x ``latency`` more than it would directly), and each connection carries at
most ``rate`` bytes per second each way: the shape of single S3 streams over a
WAN, where one connection is slow and only many connections reach the line
rate. It runs an asyncio loop in a daemon thread of the process that starts
it; clients connect to :attr:`ShapingProxy.endpoint_url` instead of the
server's. It counts connections and the bytes it forwarded each way.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

CHUNK = 64 * 1024
"""Bytes read from a socket at a time (and the unit the rate is charged in)."""
WINDOW = 64
"""Chunks a direction may hold in flight before it stops reading (its receive window)."""


class Link:
    """One direction of one connection: when each chunk it is given comes out.

    A chunk enters the link once the chunks before it have (at ``rate`` bytes
    per second; ``0``: at once), then takes ``latency`` seconds to cross.
    """

    def __init__(self, latency: float, rate: float) -> None:
        self.latency, self.rate = latency, rate
        self._free = float("-inf")  # when the link can take the next byte

    def deliver_at(self, arrival: float, nbytes: int) -> float:
        """When a chunk of ``nbytes`` handed over at ``arrival`` reaches the other end."""
        start = max(arrival, self._free)
        self._free = start + (nbytes / self.rate if self.rate else 0.0)
        return self._free + self.latency


@dataclass
class ProxyCounts:
    """What the proxy forwarded since it started or was last :meth:`ShapingProxy.reset`."""

    connections: int = 0
    bytes_up: int = 0  # client to server (requests, uploads)
    bytes_down: int = 0  # server to client (responses, downloads)
    first_connection: float | None = None  # time.time() when the first connection arrived


class ShapingProxy:
    """Forward 127.0.0.1:<port> to ``target`` (``http://host:port``) with latency and a cap.

    ``latency`` is seconds added each way (default 10 ms); ``rate`` is bytes per
    second per connection and direction (default 40 MB/s; ``0`` for no cap).
    Use as a context manager, or ``start()``/``stop()``.
    """

    def __init__(self, target: str, *, latency: float = 0.010, rate: float = 40e6) -> None:
        if latency < 0 or rate < 0:
            raise ValueError(f"latency ({latency}) and rate ({rate}) must be >= 0")
        parts = urlsplit(target)
        if not parts.hostname or not parts.port:
            raise ValueError(f"{target!r}: give the target as http://host:port")
        self.target = (parts.hostname, parts.port)
        self.latency, self.rate = latency, rate
        self.counts = ProxyCounts()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> ProxyCounts:
        """The counts so far, and start counting afresh."""
        with self._lock:
            counts, self.counts = self.counts, ProxyCounts()
        return counts

    def start(self) -> ShapingProxy:
        if self._thread is not None:
            return self
        ready = threading.Event()
        errors: list[BaseException] = []

        async def serve() -> None:
            self._stopping = asyncio.Event()
            try:
                server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
                self.port = server.sockets[0].getsockname()[1]
            except BaseException as exc:
                errors.append(exc)
                return
            finally:
                ready.set()
            async with server:
                await self._stopping.wait()
            while tasks := [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

        def thread() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(serve())
            finally:
                loop.close()

        self._thread = threading.Thread(target=thread, name="shaping-proxy", daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            self._thread.join()
            self._thread = None
            raise errors[0]
        return self

    def stop(self) -> None:
        """Close the listener and every connection; wait for the proxy's thread to end."""
        loop, thread, stopping = self._loop, self._thread, self._stopping
        if loop is None or thread is None or stopping is None:
            return
        loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=30)
        self._loop = self._thread = self._stopping = None

    def __enter__(self) -> ShapingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # asyncio holds tasks weakly: without this, a connection whose both directions
        # wait (e.g. on a keep-alive client) is garbage-collected as a pending task
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        with self._lock:
            self.counts.connections += 1
            if self.counts.first_connection is None:
                self.counts.first_connection = time.time()
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, upstream=True),
                self._pipe(up_reader, writer, upstream=False),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            pass  # stop(): end quietly (asyncio 3.11 reports a cancelled handler as an error)
        finally:
            for end in (up_writer, writer):
                with contextlib.suppress(OSError):
                    end.close()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, upstream: bool
    ) -> None:
        """Copy one direction: each chunk held until ``latency`` after it arrived, then paced."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(WINDOW)

        link = Link(self.latency, self.rate)

        async def receive() -> None:
            try:
                while data := await reader.read(CHUNK):
                    await queue.put((link.deliver_at(time.monotonic(), len(data)), data))
            except OSError:
                pass
            finally:
                await queue.put((0.0, b""))  # end of stream

        async def send() -> None:
            try:
                while True:
                    due, data = await queue.get()
                    if not data:
                        break
                    wait = due - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    writer.write(data)
                    await writer.drain()
                    with self._lock:
                        if upstream:
                            self.counts.bytes_up += len(data)
                        else:
                            self.counts.bytes_down += len(data)
                if writer.can_write_eof():
                    writer.write_eof()
            except OSError:
                pass
            finally:
                if not upstream:  # the response side is done: close the client's socket
                    with contextlib.suppress(OSError):
                        writer.close()

        receiver = asyncio.ensure_future(receive())
        try:
            await send()
        finally:
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await receiver
