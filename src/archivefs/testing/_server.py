"""EmulatedArchive: moto's S3 server, in-process on an ephemeral port, with the archive shim.

Why moto's own server: tests then talk HTTP through botocore and s3fs exactly
as users' code does against S3. :class:`_MotoThread` subclasses moto's
``ThreadedMotoServer`` only to put three WSGI layers in front of moto's
dispatcher (outermost first): request counting (``_counters``), injected
per-request latency (``_latency``), fault injection (``_faults``) and the
archive emulation (``_shim``); to serve on
127.0.0.1 port 0 so parallel runs never collide; to keep werkzeug's request
log quiet; and to close a socket armed for a reset with an RST instead of a FIN.

moto's backends and state manager are module globals, so one process runs at
most one emulated archive at a time (:meth:`EmulatedArchive.start` refuses a
second). Restore timing is set over HTTP (``/moto-api/state-manager``), state
is reset over HTTP (``/moto-api/reset``); only :meth:`EmulatedArchive.put_objects`
(bulk seeding) and the shim write to moto's in-process backend directly.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import urllib.request
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import ThreadedWSGIServer

from archivefs.errors import ArchiveError, ObjectNotFoundError, UnknownStorageClassError
from archivefs.model import StorageClass
from archivefs.testing._counters import HARNESS_HEADER, CountingMiddleware, RequestLog
from archivefs.testing._faults import FaultInjector, FaultMiddleware, is_reset_armed
from archivefs.testing._idle import IdleAwareHandler, TrackedServer
from archivefs.testing._latency import LatencyMiddleware, check_latency
from archivefs.testing._shim import (
    ARCHIVE_ACCESS_TIERS,
    INTELLIGENT_TIERING,
    RESTORE_MODEL,
    ArchiveShim,
    moto_backend,
)

if TYPE_CHECKING:
    import socket
    from wsgiref.types import WSGIApplication

_log = logging.getLogger("archivefs.testing")

FAKE_KEY = "testing"
FAKE_SECRET = "testing"

_active_lock = threading.Lock()
_active: EmulatedArchive | None = None


class _QuietHandler(IdleAwareHandler, MotoRequestHandler):
    """moto's request handler without werkzeug's per-request log lines, tracked for
    :meth:`EmulatedArchive.wait_idle`."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass

    def log(self, type: str, message: str, *args: Any) -> None:
        (_log.error if type == "error" else _log.debug)(message, *args)

    def connection_dropped(self, error: BaseException, environ: Any = None) -> None:
        # An injected reset raised before any response: do not wait for another request.
        self.close_connection = True


class _Dispatcher(DomainDispatcherApplication):
    """moto's dispatcher, remembering which backend serves each host name.

    moto looks the backend up on every request by listing its package directory and
    matching every service's URL patterns: about a fifth of the server's time in the
    conformance suites. The answer for a host never changes while the server runs.
    """

    def __init__(self, create_app: Any) -> None:
        super().__init__(create_app)
        self._backends: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        # called under the dispatcher's own lock (DomainDispatcherApplication.get_application)
        if host not in self._backends:
            self._backends[host] = super().get_backend_for_host(host)
        return self._backends[host]


class _Server(TrackedServer, ThreadedWSGIServer):
    """werkzeug's threaded server, its connections tracked; a socket armed for a reset is
    closed without a FIN."""

    def log(self, type: str, message: str, *args: Any) -> None:
        (_log.error if type == "error" else _log.debug)(message, *args)

    def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]
        if is_reset_armed(request):
            self.close_request(request)  # linger 0: the kernel sends RST
        else:
            super().shutdown_request(request)


class _MotoThread(ThreadedMotoServer):
    """moto's threaded server, serving ``app`` (moto behind our middleware) on a daemon thread."""

    def __init__(self, app: WSGIApplication, port: int = 0) -> None:
        super().__init__(ip_address="127.0.0.1", port=port, verbose=False)
        self._app = app
        self._error: BaseException | None = None

    def _server_entry(self) -> None:
        try:
            self._server = _Server(self._ip_address, self._port, self._app, handler=_QuietHandler)
        except BaseException as exc:  # report it to start() instead of hanging it
            self._error = exc
            self._server_ready_event.set()
            return
        self._server_ready_event.set()
        self._server.serve_forever(poll_interval=0.05)

    def wait_idle(self, timeout: float) -> None:
        assert isinstance(self._server, _Server)
        self._server.wait_idle(timeout, what="the emulated archive")

    def start(self) -> None:
        super().start()
        if self._error is not None:
            raise ArchiveError(
                f"the emulated archive's server could not start ({self._error}).",
                fix="check that 127.0.0.1 accepts local connections.",
            ) from self._error


class S3Endpoint:
    """What a client needs to reach an emulated archive: options, a boto3 client, the region."""

    _region: str

    @property
    def endpoint_url(self) -> str:
        raise NotImplementedError

    @property
    def region(self) -> str:
        return self._region

    def storage_options(self) -> dict[str, Any]:
        """Keyword arguments for ``s3fs.S3FileSystem`` (or fsspec's ``s3`` protocol)."""
        return {
            "key": FAKE_KEY,
            "secret": FAKE_SECRET,
            "client_kwargs": {"endpoint_url": self.endpoint_url, "region_name": self._region},
        }

    def client(self, config: Any = None) -> Any:
        """A boto3 S3 client on this endpoint; ``config`` is a ``botocore.config.Config``."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self._region,
            aws_access_key_id=FAKE_KEY,
            aws_secret_access_key=FAKE_SECRET,
            config=config,
        )


class EmulatedArchive(S3Endpoint):
    """An S3 endpoint with archive behaviour, for tests and the demo.

    Parameters
    ----------
    restore_delay:
        Wall-clock seconds from an accepted RestoreObject until the object
        reads (0: at once).
    seconds_per_day:
        How long a restore "day" lasts; restored copies expire
        ``days * seconds_per_day`` seconds after the restore completes.
    restore_status_in_listings:
        Whether listings carry ``RestoreStatus`` when asked (S3 does; Ceph RGW
        and MinIO do not).
    restore_windows:
        Whether each restore takes its class and tier's documented window (its
        end), scaled so that Deep Archive Standard's 12 hours take
        ``restore_delay`` (GLACIER Standard's 5 hours then take 5/12 of it);
        by default every restore takes ``restore_delay``.
    region:
        The region clients are told to use.
    port:
        The port on 127.0.0.1 (0, the default: any free one; see :attr:`endpoint_url`).
    latency:
        Seconds every S3 API request waits at the server before it is answered
        (0, the default: none), so that concurrency and request counts show as
        against a remote S3; see :meth:`set_latency`.

    Examples
    --------
    Use it as a context manager, or call :meth:`start` and :meth:`stop`::

        with EmulatedArchive(restore_delay=2) as archive:
            archive.create_bucket("data")
            archive.put_object("data", "a.nc", b"...", storage_class="GLACIER")
            fs = s3fs.S3FileSystem(**archive.storage_options(), skip_instance_cache=True)
    """

    def __init__(
        self,
        *,
        restore_delay: float = 0.0,
        seconds_per_day: float = 86400.0,
        restore_status_in_listings: bool = True,
        region: str = "us-east-1",
        port: int = 0,
        latency: float = 0.0,
        restore_windows: bool = False,
    ) -> None:
        self._port = port
        self._initial_latency = check_latency(latency)
        self._initial_delay = _check_seconds("restore_delay", restore_delay, allow_zero=True)
        self._initial_day = _check_seconds("seconds_per_day", seconds_per_day, allow_zero=False)
        self._initial_listings = bool(restore_status_in_listings)
        self._restore_windows = bool(restore_windows)
        self._region = region
        self._restore_delay = self._initial_delay
        self.requests = RequestLog()
        self.faults = FaultInjector()
        self._shim: ArchiveShim | None = None
        self._thread: _MotoThread | None = None
        self._latency: LatencyMiddleware | None = None
        self._endpoint: str | None = None
        self._harness: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        where = self._endpoint or "not started"
        return f"EmulatedArchive({where}, restore_delay={self._restore_delay})"

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> EmulatedArchive:
        """Start the server (idempotent) on 127.0.0.1 and an ephemeral port."""
        global _active
        with _active_lock:
            if self._thread is not None:
                return self
            if _active is not None:
                raise ArchiveError(
                    f"another EmulatedArchive is already running in this process ({_active!r}); "
                    "moto keeps its state in module globals, so two would share it.",
                    fix="stop the other one first, or reuse it (in pytest: the session-wide "
                    "`emulated_archive` fixture).",
                )
            shim = ArchiveShim(
                _Dispatcher(create_backend_app),
                region=self._region,
                seconds_per_day=self._initial_day,
                restore_status_in_listings=self._initial_listings,
                restore_windows=self._restore_windows,
            )
            faulty = FaultMiddleware(shim, self.faults, harness_header=HARNESS_HEADER)
            slow = LatencyMiddleware(faulty, self._initial_latency, harness_header=HARNESS_HEADER)
            thread = _MotoThread(CountingMiddleware(slow, self.requests), port=self._port)
            thread.start()
            host, port = thread.get_host_and_port()
            self._shim, self._thread, self._latency = shim, thread, slow
            self._endpoint = f"http://{host}:{port}"
            _active = self
        self.reset()
        return self

    def stop(self) -> None:
        """Shut the server down and join its thread (idempotent)."""
        global _active
        with _active_lock:
            thread = self._thread
            if thread is None:
                return
            try:
                self._moto_api("state-manager/unset-transition", {"model_name": RESTORE_MODEL})
            finally:
                thread.stop()
                self._thread = self._shim = self._harness = self._latency = None
                self._endpoint = None
                if _active is self:
                    _active = None

    def __enter__(self) -> EmulatedArchive:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Empty moto; clear counters, faults and emulated restores; reapply the settings."""
        shim = self._started()
        self.set_latency(self._initial_latency)
        self.faults.clear()
        shim.clear()
        self._moto_api("reset", {})
        self.set_restore_delay(self._initial_delay)
        shim.seconds_per_day = self._initial_day
        shim.restore_status_in_listings = self._initial_listings
        shim.restore_windows = self._restore_windows
        self.requests.clear()

    # -- connection ----------------------------------------------------------------------

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        self._started()
        assert self._endpoint is not None
        return self._endpoint

    # -- restore settings ----------------------------------------------------------------

    @property
    def restore_delay(self) -> float:
        return self._restore_delay

    def set_restore_delay(self, seconds: float) -> None:
        """Set the wall-clock time from RestoreObject until the object reads (0 = at once).

        It is moto's state-manager transition for ``s3::keyrestore``, so it also
        applies to restores already in flight.
        """
        seconds = _check_seconds("restore_delay", seconds, allow_zero=True)
        self._started()
        transition: dict[str, Any] = (
            {"progression": "time", "seconds": seconds}
            if seconds > 0
            else {"progression": "immediate"}
        )
        self._moto_api(
            "state-manager/set-transition", {"model_name": RESTORE_MODEL, "transition": transition}
        )
        self._restore_delay = seconds

    @property
    def latency(self) -> float:
        """Seconds each S3 API request waits at the server before its answer (0: none)."""
        return self._latency.seconds if self._latency is not None else self._initial_latency

    def set_latency(self, seconds: float) -> None:
        """Delay every S3 API request by ``seconds`` from now on (0: none).

        The server thread sleeps without holding the GIL, so concurrent requests
        wait in parallel, as on the network; seeding by the harness is not
        delayed. Each :class:`RequestRecord` carries the ``latency`` it got.
        :meth:`reset` restores the value given to the constructor.
        """
        self._started()
        assert self._latency is not None
        self._latency.seconds = check_latency(seconds)

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Return once every request that reached the server has been answered and counted.

        For a test that killed a client: call it after the client's process is gone,
        then count (a count read earlier races the client's last requests).
        """
        self._started()
        assert self._thread is not None
        self._thread.wait_idle(timeout)

    @property
    def seconds_per_day(self) -> float:
        """Length of a restore "day"; applies to restores that complete (or extend) from now on."""
        return self._shim.seconds_per_day if self._shim is not None else self._initial_day

    @seconds_per_day.setter
    def seconds_per_day(self, value: float) -> None:
        self._started().seconds_per_day = _check_seconds("seconds_per_day", value, allow_zero=False)

    @property
    def restore_status_in_listings(self) -> bool:
        """Whether listings answer ``RestoreStatus`` (False emulates Ceph RGW and MinIO)."""
        shim = self._shim
        return shim.restore_status_in_listings if shim is not None else self._initial_listings

    @restore_status_in_listings.setter
    def restore_status_in_listings(self, value: bool) -> None:
        self._started().restore_status_in_listings = bool(value)

    @property
    def restore_windows(self) -> bool:
        """Whether each restore takes its class and tier's window (see the class docs)."""
        shim = self._shim
        return shim.restore_windows if shim is not None else self._restore_windows

    @restore_windows.setter
    def restore_windows(self, value: bool) -> None:
        """Applies to restores requested from now on."""
        self._started().restore_windows = bool(value)

    # -- seeding -------------------------------------------------------------------------

    def create_bucket(self, name: str) -> None:
        """Create a bucket (not counted in :attr:`requests`)."""
        kwargs: dict[str, Any] = {"Bucket": name}
        if self._region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": self._region}
        self._harness_call("create_bucket", name, **kwargs)

    def put_object(
        self,
        bucket: str,
        key: str,
        data: bytes,
        *,
        storage_class: str = "STANDARD",
        archive_access: str | None = None,
    ) -> None:
        """Store one object over HTTP (not counted in :attr:`requests`).

        ``archive_access`` (``"ARCHIVE_ACCESS"`` or ``"DEEP_ARCHIVE_ACCESS"``)
        puts an ``INTELLIGENT_TIERING`` object into that archive tier.
        """
        cls = _check_class(storage_class, archive_access)
        self._harness_call(
            "put_object", f"{bucket}/{key}", Bucket=bucket, Key=key, Body=data, StorageClass=cls
        )
        if archive_access is not None:
            self._started().set_archive_access(bucket, key, archive_access)

    def put_objects(
        self,
        bucket: str,
        objects: Mapping[str, bytes],
        *,
        storage_class: str = "STANDARD",
        archive_access: str | None = None,
    ) -> None:
        """Store many objects fast, straight into moto's backend (no HTTP, not counted)."""
        from moto.s3.exceptions import MissingBucket

        cls = _check_class(storage_class, archive_access)
        shim = self._started()
        backend = moto_backend(self._region)
        try:
            for key, data in objects.items():
                backend.put_object(bucket, key, bytes(data), storage=cls)
                if archive_access is not None:
                    shim.set_archive_access(bucket, key, archive_access)
        except MissingBucket:
            raise ObjectNotFoundError(
                "the bucket does not exist in the emulated archive.",
                path=bucket,
                fix=f"create it first with archive.create_bucket({bucket!r}).",
            ) from None

    def backdate(self, bucket: str, prefix: str, seconds: float) -> int:
        """Make the objects under ``bucket/prefix`` ``seconds`` older (their Last-Modified,
        in listings and HEADs), as if written that long ago; returns how many. For tests of
        age rules (orphan bundles, stale leases) without waiting."""
        from datetime import timedelta

        self._started()
        keys = moto_backend(self._region).buckets[bucket].keys
        aged = 0
        for name in list(keys.keys()):
            if name.startswith(prefix):
                for key in keys.getlist(name):
                    key.last_modified -= timedelta(seconds=seconds)
                aged += 1
        return aged

    def start_restores(
        self, bucket: str, keys: Iterable[str], *, days: int = 1, tier: str = "Standard"
    ) -> None:
        """Start the restores of many archived objects at once, as accepted RestoreObject
        requests would, straight in moto's backend (no HTTP, not counted): seeding for a
        test about objects whose restore is in flight or done, not about sending them."""
        if days < 1:
            raise ArchiveError(
                f"days={days} is not a number of days a restored copy can be kept.",
                fix="pass days=1 or more.",
            )
        if tier not in ("Expedited", "Standard", "Bulk"):
            raise ArchiveError(
                f"unknown restore tier {tier!r}.", fix="use Expedited, Standard or Bulk."
            )
        self._started().start_restores(bucket, list(keys), days, tier)

    def expire_restore(self, bucket: str, key: str) -> None:
        """End the restored copy of ``bucket/key`` now: the object is archived again."""
        self._started().expire(bucket, key)

    # -- internals -----------------------------------------------------------------------

    def _started(self) -> ArchiveShim:
        if self._shim is None:
            raise ArchiveError(
                "the emulated archive is not running.",
                fix="call archive.start() first, or use it as a context manager "
                "(`with EmulatedArchive() as archive:`).",
            )
        return self._shim

    def _moto_api(self, path: str, payload: dict[str, Any]) -> None:
        """POST to moto's own control API (``/moto-api/...``)."""
        request = urllib.request.Request(
            f"{self.endpoint_url}/moto-api/{path}",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=30) as response:
            response.read()

    def _harness_call(self, method: str, path: str, **kwargs: Any) -> None:
        from botocore.exceptions import ClientError

        with self._lock:
            if self._harness is None:
                self._harness = self.client()
                self._harness.meta.events.register("before-sign.s3", _mark_harness)
            client = self._harness
        try:
            getattr(client, method)(**kwargs)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code, message = error.get("Code", "?"), error.get("Message", "")
            if code == "NoSuchBucket":
                raise ObjectNotFoundError(
                    "the bucket does not exist in the emulated archive.",
                    path=path.split("/", 1)[0],
                    fix="create it first with archive.create_bucket(name).",
                ) from exc
            raise ArchiveError(
                f"the emulated archive refused {method}: {code}: {message}",
                path=path,
                fix="check the arguments against what S3 accepts.",
            ) from exc


def _mark_harness(request: Any, **kwargs: Any) -> None:
    request.headers[HARNESS_HEADER] = "1"


def _check_seconds(name: str, value: float, *, allow_zero: bool) -> float:
    number = float(value)
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(
            f"EmulatedArchive: {name}={value!r} is not a number of seconds {bound}. "
            f"Fix: pass a finite number {bound}."
        )
    return number


def _check_class(storage_class: str, archive_access: str | None) -> str:
    cls = StorageClass.parse(storage_class).value
    if archive_access is None:
        return cls
    if cls != INTELLIGENT_TIERING:
        raise UnknownStorageClassError(
            f"archive_access={archive_access!r} applies only to INTELLIGENT_TIERING objects, "
            f"not {cls}.",
            fix="pass storage_class='INTELLIGENT_TIERING', or leave archive_access out.",
        )
    if archive_access not in ARCHIVE_ACCESS_TIERS:
        raise UnknownStorageClassError(
            f"unknown archive access tier {archive_access!r}.",
            fix="use 'ARCHIVE_ACCESS' or 'DEEP_ARCHIVE_ACCESS'.",
        )
    return cls
