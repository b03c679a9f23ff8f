"""The archive emulation: a WSGI middleware in front of moto's S3 that behaves like S3's archive.

moto 5.2.5 stores ``GLACIER``/``DEEP_ARCHIVE`` objects, refuses their GETs
with ``InvalidObjectState``, implements ``RestoreObject`` and the
``x-amz-restore`` header, and, through its state manager (model
``s3::keyrestore``, ``None -> IN_PROGRESS -> RESTORED``), can delay a
restore's completion. What it lacks, and why each piece of this shim exists:

* **Delay from the request.** moto's time progression counts from when the
  *key* last changed state (its creation), so an object created long ago
  would restore at once. When a restore is accepted the shim resets the key's
  managed state to ``IN_PROGRESS`` at the request time; moto's own state
  manager (set over HTTP by ``EmulatedArchive.set_restore_delay``) then
  decides when it completes.
* **One view at a time.** moto advances that state lazily, when ``status`` is
  read. The shim reads it (``_sync``) before every request that concerns the
  key, and takes every answer (HEAD, GET, LIST, RestoreObject) from that
  state, so all requests at one moment agree and a state never goes back.
* **Duplicate restores.** S3 answers ``409 RestoreAlreadyInProgress`` to a
  restore of an object whose restore is in flight; moto accepts it. A
  restore of a restored object still answers 200 and extends its expiry. A
  ``GLACIER``/``DEEP_ARCHIVE`` restore without ``Days`` is refused (400), where
  moto would accept it and never restore.
* **Expiry.** moto never ends a restored copy. The shim sets the copy's expiry
  to ``days * seconds_per_day`` after the restore completes (S3 counts from
  completion too), shows it in ``x-amz-restore`` and archives the object
  again once it has passed.
* **RestoreStatus in listings.** S3 adds ``<RestoreStatus>`` to
  ``ListObjects(V2)`` entries when asked with the header
  ``x-amz-optional-object-attributes: RestoreStatus``; moto ignores it. The
  shim adds it, and refuses a name S3 does not know (``400 InvalidArgument``),
  as S3 does; switched off, it ignores the header, as Ceph RGW and MinIO do.
* **Atomic conditional writes.** moto checks ``If-None-Match``/``If-Match`` and
  then writes; two concurrent writers could both succeed. S3 evaluates them
  atomically (restore claims depend on it), so the shim serialises them.
* **Each class and tier its own time** (``restore_windows``, for ``archivefs
  serve``). moto has one delay for every restore; the shim shifts each key's start
  on moto's clock so that a restore takes its class and tier's documented window
  (its end), scaled so that Deep Archive Standard's 12 hours take that delay.
* **Intelligent-Tiering archive tiers.** moto has no access tiers and refuses
  to restore ``INTELLIGENT_TIERING`` objects. The shim keeps the tier of
  objects seeded into ``ARCHIVE_ACCESS``/``DEEP_ARCHIVE_ACCESS``, reports it
  in ``x-amz-archive-status``, refuses their GETs, and restores them (no
  ``Days``: the object returns to the frequent tier for good).
* **Customer keys (SSE-C).** moto 5.2.5 ignores the
  ``x-amz-server-side-encryption-customer-*`` headers: it stores the object in clear and
  serves it to anyone. The shim remembers the key's MD5 of every single-request PUT that
  carried one and answers a GET or HEAD of that object as S3 does: ``400`` without the
  key (``InvalidRequest``; HEAD has no body), ``403 AccessDenied`` with another key.
  Multipart uploads and copies with customer keys are not emulated.

The state of objects lives in moto's in-process backend (``s3_backends``):
the shim looks keys up there, because moto offers no HTTP API to change a
key's restore state. Everything else goes through moto over HTTP.
"""

from __future__ import annotations

import io
import math
import os
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote
from xml.sax.saxutils import escape, unescape

from archivefs.errors import ArchiveError, ObjectNotFoundError
from archivefs.testing._counters import S3Request, parse_request
from archivefs.testing._faults import drain, error_response

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

RESTORE_MODEL = "s3::keyrestore"
ARCHIVE_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
INTELLIGENT_TIERING = "INTELLIGENT_TIERING"
ARCHIVE_ACCESS_TIERS = frozenset({"ARCHIVE_ACCESS", "DEEP_ARCHIVE_ACCESS"})
OPTIONAL_ATTRIBUTES = frozenset({"RestoreStatus"})  # x-amz-optional-object-attributes S3 knows

_CONTENTS = re.compile(rb"<Contents>(.*?)</Contents>", re.DOTALL)
_KEY = re.compile(rb"<Key>(.*?)</Key>", re.DOTALL)

Response = tuple[str, list[tuple[str, str]], bytes]
_CUSTOMER_KEY_MD5 = "HTTP_X_AMZ_SERVER_SIDE_ENCRYPTION_CUSTOMER_KEY_MD5"


@dataclass(slots=True)
class _Restore:
    requested_at: float
    days: int | None  # None: an Intelligent-Tiering archive tier (no expiry)
    tier: str = "Standard"
    done: bool = False
    expires_at: float | None = None
    delay: float | None = None  # restore_windows: this restore's own delay (else moto's one)

    def took(self) -> float:
        """Seconds from request to completion."""
        return _restore_delay() if self.delay is None else self.delay


# Restore tiers from fastest to slowest: a request for a faster tier than the one in
# flight is S3's "restore speed upgrade" (accepted); the same or a slower one is a 409.
_TIER_SPEED = {"Expedited": 0, "Standard": 1, "Bulk": 2}


@dataclass(slots=True)
class _Tracked:
    """Emulated state of one object that moto cannot hold by itself."""

    fake: Any  # the moto FakeKey this state belongs to (a new PUT makes a new one)
    storage_class: str
    archive_access: str | None = None
    restore: _Restore | None = None

    @property
    def tier_archived(self) -> bool:
        """In an Intelligent-Tiering archive tier and not (yet) restored."""
        return self.archive_access is not None


def moto_backend(region: str) -> Any:
    """moto's in-process S3 backend for the account and partition the server uses."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    account = os.environ.get("MOTO_ACCOUNT_ID", DEFAULT_ACCOUNT_ID)
    return s3_backends[account][get_partition(region)]


def lookup(region: str, bucket: str, key: str) -> Any:
    """The moto FakeKey for ``bucket/key``, or ``None``."""
    from moto.s3.exceptions import MissingBucket

    try:
        return moto_backend(region).get_object(bucket, key)
    except MissingBucket:
        return None


class ArchiveShim:
    """WSGI middleware that adds S3's archive behaviour to moto (see the module docstring)."""

    def __init__(
        self,
        app: WSGIApplication,
        *,
        region: str,
        seconds_per_day: float,
        restore_status_in_listings: bool,
        restore_windows: bool = False,
    ) -> None:
        self._app = app
        self._region = region
        self._lock = threading.RLock()
        self._tracked: dict[tuple[str, str], _Tracked] = {}
        self._customer_keys: dict[tuple[str, str], str] = {}  # SSE-C objects: key MD5
        self.seconds_per_day = seconds_per_day
        self.restore_status_in_listings = restore_status_in_listings
        self.restore_windows = restore_windows

    # -- harness API -------------------------------------------------------------------

    def clear(self) -> None:
        """Forget every emulated state (call together with moto's reset)."""
        with self._lock:
            self._tracked.clear()
            self._customer_keys.clear()

    def set_archive_access(self, bucket: str, key: str, tier: str) -> None:
        """Put an existing Intelligent-Tiering object into an archive access tier."""
        with self._lock:
            fake = self._fake(bucket, key)
            self._tracked[(bucket, key)] = _Tracked(fake, INTELLIGENT_TIERING, tier)

    def start_restores(self, bucket: str, keys: Iterable[str], days: int, tier: str) -> None:
        """Start a restore of each archived ``bucket/key`` as an accepted RestoreObject would
        (straight in moto's backend, no request); each must have no restore yet."""
        with self._lock:
            now = time.time()
            for key in keys:
                fake = self._fake(bucket, key)
                tracked = self._sync(bucket, key, now)
                if fake.storage_class not in ARCHIVE_CLASSES or tracked is not None:
                    raise ArchiveError(
                        "the object is not in GLACIER or DEEP_ARCHIVE without a restore.",
                        path=f"{bucket}/{key}",
                        fix="seed it with storage_class='GLACIER' or 'DEEP_ARCHIVE' and "
                        "start its restore once.",
                    )
                delay = self._windowed_delay(fake.storage_class, tier)
                _start_progression(fake, now, delay)
                fake.restore(days)
                self._accepted(bucket, key, fake, None, days, tier, now, delay)

    def expire(self, bucket: str, key: str) -> None:
        """End the restored copy (or the restore in flight) of ``bucket/key`` now."""
        with self._lock:
            fake = self._fake(bucket, key)
            tracked = self._sync(bucket, key, time.time())
            if tracked is None or tracked.restore is None:
                raise ArchiveError(
                    "the object has no restored copy (and no restore in flight) to expire.",
                    path=f"{bucket}/{key}",
                    fix="restore it first (RestoreObject) and expire it after the request.",
                )
            self._end_restore(bucket, key, tracked, fake)

    # -- WSGI ----------------------------------------------------------------------------

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = parse_request(environ)
        if request is None or request.bucket is None:
            return self._app(environ, start_response)
        if request.op == "RestoreObject" and request.key is not None:
            return self._respond(
                start_response, self._restore(request.bucket, request.key, environ)
            )
        if request.op == "LIST":
            return self._list(request, environ, start_response)
        if request.op == "PUT" and _conditional(environ):
            # S3 evaluates a conditional write atomically; moto checks, then writes.
            with self._lock:
                return self._respond(start_response, call(self._app, environ))
        if request.key is None:
            return self._app(environ, start_response)
        if request.op == "PUT" and self._customer_key_changes(request, environ):
            return self._respond(start_response, self._put(request.bucket, request.key, environ))
        refused = self._customer_key_refusal(request, environ)
        if refused is not None:
            return self._respond(start_response, refused)
        now = time.time()
        with self._lock:
            tracked = self._sync(request.bucket, request.key, now)
            source = self._copy_source(environ, now) if request.op == "COPY" else None
            archived = tracked is not None and tracked.tier_archived
            restoring = tracked is not None and tracked.restore is not None
            tier = tracked.archive_access if tracked is not None else None
        if request.op == "GET" and archived:
            return self._respond(start_response, _tier_error(request, tier))
        if source is not None and source.tier_archived:
            return self._respond(start_response, _tier_error(request, source.archive_access))
        if request.op == "HEAD" and archived:
            status, headers, body = call(self._app, environ)
            if status.startswith("200"):
                headers.append(("x-amz-archive-status", str(tier)))
                if restoring:
                    headers.append(("x-amz-restore", 'ongoing-request="true"'))
            return self._respond(start_response, (status, headers, body))
        return self._app(environ, start_response)

    # -- customer keys (SSE-C) -----------------------------------------------------------

    def _customer_key_changes(self, request: S3Request, environ: WSGIEnvironment) -> bool:
        """Whether a PUT writes with a customer key, or over an object written with one."""
        with self._lock:
            known = (str(request.bucket), str(request.key)) in self._customer_keys
        return known or _CUSTOMER_KEY_MD5 in environ

    def _put(self, bucket: str, key: str, environ: WSGIEnvironment) -> Response:
        """moto's PUT, remembering whether the object was written with a customer key."""
        md5 = environ.get(_CUSTOMER_KEY_MD5)
        response = call(self._app, environ)
        if response[0].startswith("200"):
            with self._lock:
                if md5:
                    self._customer_keys[(bucket, key)] = str(md5)
                else:
                    self._customer_keys.pop((bucket, key), None)
        return response

    def _customer_key_refusal(
        self, request: S3Request, environ: WSGIEnvironment
    ) -> Response | None:
        """S3's answer to a GET or HEAD of an SSE-C object without its key (or with another)."""
        if request.op not in ("GET", "HEAD") or request.key is None:
            return None
        with self._lock:
            stored = self._customer_keys.get((str(request.bucket), request.key))
        given = environ.get(_CUSTOMER_KEY_MD5)
        if stored is None or given == stored:
            return None
        resource = f"/{request.bucket}/{request.key}"
        if given is None:
            message = (
                "The object was stored using a form of Server Side Encryption. "
                "The correct parameters must be provided to retrieve the object."
            )
            status, headers, body = error_response(400, "InvalidRequest", message, resource)
        else:
            status, headers, body = error_response(403, "AccessDenied", "Access Denied", resource)
        if request.op == "HEAD":  # S3 answers HEAD with the status alone
            headers = [(n, v) for n, v in headers if n != "Content-Length"]
            headers.append(("Content-Length", "0"))
            body = b""
        return status, headers, body

    # -- restore -------------------------------------------------------------------------

    def _restore(self, bucket: str, key: str, environ: WSGIEnvironment) -> Response:
        body = _read_body(environ)
        days, tier = _restore_days(body), _requested_tier(body)
        # Serialised, so that of two concurrent restores exactly one is accepted.
        with self._lock:
            now = time.time()
            tracked = self._sync(bucket, key, now)
            fake = lookup(self._region, bucket, key)
            deep = (fake is not None and fake.storage_class == "DEEP_ARCHIVE") or (
                tracked is not None and tracked.archive_access == "DEEP_ARCHIVE_ACCESS"
            )
            if deep and tier == "Expedited":
                where = "the Deep Archive Access tier" if tracked else "DEEP_ARCHIVE"
                return error_response(
                    400,
                    "InvalidArgument",
                    f"Expedited retrieval is not available for {where}",
                    f"/{bucket}/{key}",
                )
            if tracked is not None and tracked.restore is not None and not tracked.restore.done:
                return self._in_flight(bucket, key, tracked, tier, now)
            if tracked is not None and tracked.tier_archived:
                return self._restore_tier(bucket, key, tracked, days, tier, now)
            archive = fake is not None and fake.storage_class in ARCHIVE_CLASSES
            if archive and days is None:
                return error_response(
                    400,
                    "InvalidArgument",
                    f"Days is required to restore an object from {fake.storage_class}",
                    f"/{bucket}/{key}",
                )
            fresh = archive and tracked is None
            delay = self._windowed_delay(fake.storage_class, tier) if fresh else None
            if fresh:
                _start_progression(fake, now, delay)  # before moto sets the expiry: no flicker
            response = call(self._app, environ)
            if archive and days is not None and response[0][:3] in ("200", "202"):
                self._accepted(bucket, key, fake, tracked, days, tier, now, delay)
            return response

    def _windowed_delay(self, source: str, tier: str) -> float | None:
        """With ``restore_windows``: the documented window's end for restoring ``source`` (a
        storage class or an archive access tier) at ``tier``, scaled so that Deep Archive
        Standard's takes the restore delay; else ``None`` (every restore takes that delay)."""
        if not self.restore_windows:
            return None
        from archivefs.restore.schedule import restore_window

        if source in ("ARCHIVE_ACCESS", "DEEP_ARCHIVE_ACCESS"):
            window = restore_window(INTELLIGENT_TIERING, tier, archive_access=source)
        else:
            window = restore_window(source, tier)
        return window.max_s * _restore_delay() / restore_window("DEEP_ARCHIVE", "Standard").max_s

    def _in_flight(
        self, bucket: str, key: str, tracked: _Tracked, tier: str, now: float
    ) -> Response:
        """A restore request while one is in flight: a faster tier upgrades it, else 409."""
        restore = tracked.restore
        assert restore is not None
        if _TIER_SPEED.get(tier, 1) < _TIER_SPEED.get(restore.tier, 1):
            restore.tier = tier  # S3's restore speed upgrade: accepted, billed at the new tier
            faster = self._windowed_delay(tracked.archive_access or tracked.storage_class, tier)
            if faster is not None and restore.delay is not None:
                restore.delay = min(restore.delay, now - restore.requested_at + faster)
                _start_progression(tracked.fake, restore.requested_at, restore.delay)
            return "202 Accepted", [("Content-Length", "0")], b""
        return error_response(
            409,
            "RestoreAlreadyInProgress",
            "Object restore is already in progress",
            f"/{bucket}/{key}",
        )

    def _restore_tier(
        self, bucket: str, key: str, tracked: _Tracked, days: int | None, tier: str, now: float
    ) -> Response:
        if days is not None:
            return error_response(
                400,
                "InvalidArgument",
                "Days must not be specified to restore an object from an "
                "Intelligent-Tiering archive access tier",
                f"/{bucket}/{key}",
            )
        delay = self._windowed_delay(str(tracked.archive_access), tier)
        _start_progression(tracked.fake, now, delay)
        tracked.restore = _Restore(requested_at=now, days=None, tier=tier, delay=delay)
        return "202 Accepted", [("Content-Length", "0")], b""

    def _accepted(
        self,
        bucket: str,
        key: str,
        fake: Any,
        tracked: _Tracked | None,
        days: int,
        tier: str,
        now: float,
        delay: float | None,
    ) -> None:
        """Record a restore moto accepted: a new one, or the extension of a restored copy."""
        if tracked is None or tracked.restore is None:
            restore = _Restore(requested_at=now, days=days, tier=tier, delay=delay)
            self._tracked[(bucket, key)] = _Tracked(fake, fake.storage_class, restore=restore)
            # provisional until completion is seen; the same value unless the delay changes
            restore.expires_at = self._copy_expiry(now, now + restore.took(), days)
        else:  # restored already: S3 extends the copy, counting from now
            restore = tracked.restore
            restore.days = days
            restore.expires_at = self._expiry(now, days)
        fake.set_expiry(_utc_naive(restore.expires_at))

    # -- listings ------------------------------------------------------------------------

    def _list(
        self, request: S3Request, environ: WSGIEnvironment, start_response: StartResponse
    ) -> Iterable[bytes]:
        assert request.bucket is not None
        asked = [
            name.strip()
            for name in str(environ.get("HTTP_X_AMZ_OPTIONAL_OBJECT_ATTRIBUTES", "")).split(",")
            if name.strip()
        ]
        now = time.time()
        with self._lock:
            states = self._sync_bucket(request.bucket, now)
            implemented = self.restore_status_in_listings
        unknown = [name for name in asked if name not in OPTIONAL_ATTRIBUTES]
        if implemented and unknown:  # S3 checks the names; servers that ignore them do not
            return self._respond(
                start_response,
                error_response(
                    400,
                    "InvalidArgument",
                    "Invalid attribute name specified.",
                    f"/{request.bucket}",
                    ArgumentName="x-amz-optional-object-attributes",
                    ArgumentValue=unknown[0],
                ),
            )
        if not (implemented and asked):
            return self._app(environ, start_response)
        status, headers, body = call(self._app, environ)
        if status.startswith("200") and states:
            url_encoded = request.query.get("encoding-type", [""])[0] == "url"
            body = _add_restore_status(body, states, url_encoded)
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            headers.append(("Content-Length", str(len(body))))
        return self._respond(start_response, (status, headers, body))

    # -- state ---------------------------------------------------------------------------

    def _sync(self, bucket: str, key: str, now: float) -> _Tracked | None:
        """Bring the emulated state of ``bucket/key`` up to ``now`` (lock held)."""
        tracked = self._tracked.get((bucket, key))
        if tracked is None:
            return None
        fake = lookup(self._region, bucket, key)
        if fake is not tracked.fake or fake.storage_class != tracked.storage_class:
            del self._tracked[(bucket, key)]  # overwritten, deleted or copied to another class
            return None
        restore = tracked.restore
        if restore is None:
            return tracked
        if not restore.done:
            if fake.status != "RESTORED":  # moto's state manager decides (lazily, on read)
                return tracked
            completed = _completion(restore, now)
            if restore.days is None:  # Intelligent-Tiering: back in the frequent tier
                del self._tracked[(bucket, key)]
                fake._status = None
                return None
            restore.done = True
            restore.expires_at = self._copy_expiry(restore.requested_at, completed, restore.days)
            fake.set_expiry(_utc_naive(restore.expires_at))
        if restore.expires_at is not None and now >= restore.expires_at:
            self._end_restore(bucket, key, tracked, fake)
            return self._tracked.get((bucket, key))
        return tracked

    def _sync_bucket(self, bucket: str, now: float) -> dict[str, _Tracked]:
        keys = [key for (b, key) in self._tracked if b == bucket]
        states = {key: self._sync(bucket, key, now) for key in keys}
        return {key: state for key, state in states.items() if state is not None}

    def _copy_source(self, environ: WSGIEnvironment, now: float) -> _Tracked | None:
        source = unquote(str(environ.get("HTTP_X_AMZ_COPY_SOURCE", ""))).split("?", 1)[0]
        bucket, _, key = source.lstrip("/").partition("/")
        return self._sync(bucket, key, now) if bucket and key else None

    def _end_restore(self, bucket: str, key: str, tracked: _Tracked, fake: Any) -> None:
        """Archive the object again: no restored copy, no restore in flight."""
        fake.set_expiry(None)
        fake._status = None
        tracked.restore = None
        if tracked.archive_access is None:
            del self._tracked[(bucket, key)]

    def _expiry(self, requested: float, days: int) -> float:
        """S3's rule: request time + ``days``, rounded up to the next midnight UTC.

        On the emulated clock a day is ``seconds_per_day`` long and midnights fall on
        multiples of it since the epoch (with the default 86400 s: real midnights UTC);
        whole seconds, so that the expiry-date S3 shows (second precision) is exact.
        """
        day = self.seconds_per_day
        return float(math.ceil(math.ceil((requested + days * day) / day) * day))

    def _copy_expiry(self, requested: float, completed: float, days: int) -> float:
        """When a new restore's copy expires: S3's rule, but never before the emulated
        midnight after completion (a scaled day can be shorter than the restore delay)."""
        day = self.seconds_per_day
        return max(self._expiry(requested, days), float(math.ceil(completed / day) * day))

    def _fake(self, bucket: str, key: str) -> Any:
        fake = lookup(self._region, bucket, key)
        if fake is None:
            raise ObjectNotFoundError(
                "no such object in the emulated archive.",
                path=f"{bucket}/{key}",
                fix="create it first with archive.put_object(bucket, key, data, ...).",
            )
        return fake

    @staticmethod
    def _respond(start_response: StartResponse, response: Response) -> Iterable[bytes]:
        status, headers, body = response
        start_response(status, headers)
        return [body]


def call(app: WSGIApplication, environ: WSGIEnvironment) -> Response:
    """Run a WSGI app and collect its whole response."""
    captured: list[Any] = []

    def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        captured[:] = [status, list(headers)]
        return lambda data: None

    data = drain(app(environ, capture))
    return captured[0], captured[1], data


def _conditional(environ: WSGIEnvironment) -> bool:
    """A write with ``If-None-Match`` or ``If-Match`` (claims rely on its atomicity)."""
    return "HTTP_IF_NONE_MATCH" in environ or "HTTP_IF_MATCH" in environ


def _start_progression(fake: Any, now: float, delay: float | None = None) -> None:
    """Reset the key's managed state so moto's delay counts from the restore request (with
    ``delay``: moto's one transition time, shifted so this key completes ``delay`` after)."""
    fake._status = "IN_PROGRESS"
    start = now if delay is None else now + delay - _restore_delay()
    fake._time_progressed = datetime.fromtimestamp(start)  # moto's clock: naive local time


def _restore_delay() -> float:
    from moto.moto_api import state_manager

    transition = state_manager.get_transition(RESTORE_MODEL)
    if transition.get("progression") == "time":
        return float(transition.get("seconds", 0.0))
    return 0.0


def _completion(restore: _Restore, now: float) -> float:
    """When a restore moto reports as complete did complete."""
    from moto.moto_api import state_manager

    progression = state_manager.get_transition(RESTORE_MODEL).get("progression")
    if progression in ("time", "immediate"):
        return restore.requested_at + restore.took()
    return now  # "manual": whenever it was seen


def _read_body(environ: WSGIEnvironment) -> bytes:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return bytes(body)


def _restore_days(body: bytes) -> int | None:
    """``Days`` of a ``RestoreRequest`` body, or ``None`` (absent or unreadable)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] == "Days" and element.text:
            try:
                return int(element.text.strip())
            except ValueError:
                return None
    return None


def _requested_tier(body: bytes) -> str:
    """``Tier`` of a ``RestoreRequest`` body (top level or in ``GlacierJobParameters``)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return "Standard"
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] == "Tier" and element.text:
            return element.text.strip()
    return "Standard"


def _tier_error(request: S3Request, tier: str | None) -> Response:
    status, headers, body = error_response(
        403,
        "InvalidObjectState",
        "The operation is not valid for the object's access tier",
        f"/{request.bucket}/{request.key}",
        StorageClass=INTELLIGENT_TIERING,
        AccessTier=str(tier),
    )
    return status, headers, b"" if request.method == "HEAD" else body


def _add_restore_status(body: bytes, states: dict[str, _Tracked], url_encoded: bool) -> bytes:
    """Insert ``<RestoreStatus>`` into the listing entries of restoring or restored objects."""

    def entry(match: re.Match[bytes]) -> bytes:
        inner = match.group(1)
        found = _KEY.search(inner)
        if found is None:
            return match.group(0)
        key = unescape(found.group(1).decode(), {"&quot;": '"', "&apos;": "'"})
        state = states.get(unquote(key) if url_encoded else key)
        if state is None or state.restore is None:
            return match.group(0)
        return b"<Contents>" + inner + _restore_status(state.restore) + b"</Contents>"

    return _CONTENTS.sub(entry, body)


def _restore_status(restore: _Restore) -> bytes:
    if not restore.done:
        return b"<RestoreStatus><IsRestoreInProgress>true</IsRestoreInProgress></RestoreStatus>"
    assert restore.expires_at is not None
    expiry = datetime.fromtimestamp(restore.expires_at, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return (
        "<RestoreStatus><IsRestoreInProgress>false</IsRestoreInProgress>"
        f"<RestoreExpiryDate>{escape(expiry)}</RestoreExpiryDate></RestoreStatus>"
    ).encode()


def _utc_naive(timestamp: float) -> datetime:
    """moto keeps restore expiry as a naive UTC datetime."""
    return datetime.fromtimestamp(timestamp, UTC).replace(tzinfo=None)
