"""The S3 cold-store adapter: object states in bulk, restore requests.

Everything goes through s3fs's request path (session, client, per-operation
keyword filtering such as SSE-C, error translation) with botocore as the one
retry layer (``layer_retries_once``); s3fs's own
``info()`` keeps ``StorageClass`` but drops the ``Restore`` header, which is
why states are read here.

Bulk probing. ``ListObjectsV2`` with ``OptionalObjectAttributes=RestoreStatus``
describes up to 1,000 objects per request, restore state included (AWS S3).
To probe an arbitrary set of keys, :meth:`S3Store.probe` lists each bucket in
key order starting just before the next key it still needs (``StartAfter``),
so dense sets cost about one LIST per 1,000 keys and sparse ones never page
through what they do not need.

Asking the server once. A listing names ``RestoreStatus`` only for objects with
a restore in flight or done, so an archived object listed without one is
either never restored or on a server that ignores the attribute (moto, Ceph
RGW, MinIO): those cannot say whether an archived object is being restored.
AWS's endpoints are known to say it. Elsewhere, the first listing that needs
the answer asks the server with one LIST of at most one key naming an
attribute S3 does not have (:data:`PROBE_ATTRIBUTE`): S3, and a server that
implements the header as S3 does, refuses it (``400 InvalidArgument``); a
server that ignores the header answers it. The answer is kept for the
store's life; a listing that carries a ``RestoreStatus`` also teaches it. Only
on a server that ignores the header are archived objects asked with HEAD.

Servers without restores. Ceph RGW stores ``GLACIER`` (any storage class its
zone group placement names) as a plain placement: such objects read at once,
and ``RestoreObject`` answers ``501 NotImplemented``. :class:`S3Store` learns
this per endpoint, from a HEAD answered by radosgw (its ``x-rgw-object-type``
header) or from that 501, and from then on reports those objects ``hot``
(class kept, ``access`` immediate) and refuses restores with
:class:`RestoresNotImplementedError` before sending anything.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, TypeVar

from archivefs.errors import (
    ArchiveError,
    InvalidOptionsError,
    InvalidPathError,
    ObjectNotFoundError,
    RestoresNotImplementedError,
)
from archivefs.model import (
    ArchiveAccessTier,
    ObjectState,
    RestoreState,
    RestoreTier,
    StorageClass,
    check_restore_request,
)
from archivefs.providers import S3
from archivefs.stores.base import (
    EMPTY_READ,
    TAGGED_LIMIT,
    BulkProbe,
    Listing,
    RangeRead,
    RangeStream,
    RestoreOutcome,
    Tagged,
    server_age,
    split_path,
)
from archivefs.stores.keyspace import KeyRange, cut_points, just_before, ranges_after
from archivefs.stores.s3session import give_session
from archivefs.stores.translate import (
    is_restore_in_progress,
    is_unsatisfiable_range,
    raise_translated,
    s3_error_code,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

LIST_PAGE = 1000
LIST_FANOUT = 8  # pieces of one large recursive listing listed at once (stores/keyspace.py)
CUT_PAGES = 4  # delimiter listings read, at most, to find where to cut a large listing
MAX_ATTEMPTS = 5  # per request, the first included: the only retry layer (botocore's)
PIECE = 2**20  # get_range_pieces: the most one piece of a body holds (as get's writes)
RETRY_MODE = "standard"  # jittered exponential backoff per request + a client retry quota
# (not "adaptive": its client-side rate limiter, after a few SlowDown answers, queued every
# request in flight behind one lock; 10 % faults made a 5,000-restore batch 5x slower)
Entries = list[dict[str, Any]]  # listing entries as S3 answers them
Prefixes = list[str]
States = list[ObjectState]
Positions = list[int]  # (``list`` is a method name inside S3Store)
_T = TypeVar("_T")
_RESTORE_RE = re.compile(r'(\w[\w-]*)="([^"]*)"')
RGW_HEADER = "x-rgw-object-type"  # on every object radosgw answers for (HEAD, GET)
_NO_RESTORES: set[str] = set()  # endpoints learned not to implement RestoreObject
PROBE_ATTRIBUTE = "ArchivefsProbe"  # not S3's: a server that checks the names refuses it


def parse_restore_header(value: str | None) -> tuple[bool | None, datetime | None]:
    """Parse ``x-amz-restore``: (ongoing, expiry). ``(None, None)`` when absent."""
    if not value:
        return None, None
    fields = dict(_RESTORE_RE.findall(value))
    ongoing = fields.get("ongoing-request", "").lower() == "true"
    expiry = None
    if "expiry-date" in fields:
        try:
            expiry = parsedate_to_datetime(fields["expiry-date"]).astimezone(UTC)
        except (TypeError, ValueError):
            expiry = None
    return ongoing, expiry


def state_from_restore(
    storage_class: StorageClass,
    ongoing: bool | None,
    expiry: datetime | None,
    archive_access: ArchiveAccessTier | None = None,
    *,
    now: datetime | None = None,
    restores: bool | None = True,
) -> tuple[RestoreState, datetime | None]:
    """The restore state of an object from its class and restore fields.

    ``restores=False``: the server implements no restores, so it reads every class at once.
    """
    needs_restore = storage_class.needs_restore or archive_access is not None
    if not needs_restore or restores is False:
        return RestoreState.HOT, None
    if ongoing:
        return RestoreState.RESTORING, None
    fresh = expiry is None or expiry > (now or datetime.now(UTC))
    if ongoing is False and archive_access is None and fresh:
        return RestoreState.RESTORED, expiry
    return RestoreState.ARCHIVED, None


def restores_not_implemented(state: ObjectState) -> RestoresNotImplementedError:
    """The error for a restore asked of a server that has none (its archive classes read)."""
    return RestoresNotImplementedError(
        f"this server does not implement restores; its {state.storage_class.value} "
        "objects read at once.",
        path=state.path,
        fix="read the object directly: there is nothing to restore on this server.",
    )


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return None


class S3Store(BulkProbe):
    """Archive-aware operations on an s3fs filesystem.

    Parameters
    ----------
    fs:
        An ``s3fs.S3FileSystem`` (sync or async instance).
    restore_status_in_listings:
        Whether the server reports ``RestoreStatus`` in listings. ``None``
        (default): yes for AWS endpoints; for custom endpoints, asked once
        (see the module docstring), HEAD fallback if the server ignores it.
    list_fanout:
        How many pieces of one large recursive listing (``find``), or chunks of
        a bulk probe, are listed at once; 1 lists in one sequence of pages (see
        :meth:`list`).
    list_page:
        Keys per listing request (S3 answers at most 1,000), and per chunk of a
        bulk probe.
    implements_restores:
        Whether the server implements ``RestoreObject``. ``None`` (default):
        yes for AWS endpoints; for custom endpoints, learned (see the module
        docstring). ``False``: archive classes read at once (Ceph RGW).
    """

    provider = S3

    def __init__(
        self,
        fs: Any,
        *,
        restore_status_in_listings: bool | None = None,
        list_fanout: int = LIST_FANOUT,
        list_page: int = LIST_PAGE,
        implements_restores: bool | None = None,
    ) -> None:
        for name, value, top in (("list_fanout", list_fanout, 256), ("list_page", list_page, 1000)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise InvalidOptionsError(
                    f"the S3 store option {name}={value!r} is not a whole number from 1 to {top}.",
                    path="store_options",
                    fix=f"pass e.g. store_options={{'{name}': "
                    f"{LIST_FANOUT if name == 'list_fanout' else LIST_PAGE}}}.",
                )
        self.list_fanout = self.probe_fanout = list_fanout
        self.list_page = self.probe_page = list_page
        self.fs = fs
        layer_retries_once(fs)
        size_connection_pool(fs)
        give_session(fs)
        self._endpoint = _endpoint_url(fs)
        aws = self._endpoint is None or "amazonaws.com" in self._endpoint
        if restore_status_in_listings is None and aws:
            restore_status_in_listings = True
        self.restore_status_in_listings = restore_status_in_listings
        self._assumed_listing_status = restore_status_in_listings  # before anything is asked
        if implements_restores is None:
            if aws:
                implements_restores = True
            elif self._endpoint in _NO_RESTORES:
                implements_restores = False
        self.implements_restores = implements_restores
        self._listing_question: asyncio.Task[None] | None = None

    def learned_options(self) -> dict[str, Any]:
        """What this store learned from its server (an answer or a listing), as the options
        that tell a new store (the filesystem's pickle carries them: a Dask worker's copy
        asks nothing again)."""
        learned = self.restore_status_in_listings
        if learned is None or learned == self._assumed_listing_status:
            return {}
        return {"restore_status_in_listings": learned}

    @property
    def namespace(self) -> str:
        """The endpoint URL, or ``"s3"`` on AWS's default: the formula journals have always
        used, so a journal written before keeps resuming."""
        return S3.journal_namespace(endpoint=self._endpoint)

    def _learn_no_restores(self) -> None:
        """This endpoint reads archive classes at once and refuses restores (remembered)."""
        self.implements_restores = False
        if self._endpoint is not None:
            _NO_RESTORES.add(self._endpoint)

    async def _call(self, method: str, path: str, action: str, **kwargs: Any) -> Any:
        try:
            return await self._send_once(method, **kwargs)
        except Exception as error:  # translated once, here
            raise_translated(error, path, action=action)

    async def _send_once(self, method: str, **kwargs: Any) -> Any:
        """s3fs's request choke point with its own retry loop off: botocore retries, once."""
        if not hasattr(self.fs, "_get_s3_method_kwargs"):
            return await self.fs._call_s3(method, **kwargs)
        from s3fs.core import _error_wrapper

        await self.fs.set_session()
        client = await self.fs.get_s3(kwargs.get("Bucket"))
        call = getattr(client, method)
        request = self.fs._get_s3_method_kwargs(call, **kwargs)
        return await _error_wrapper(call, kwargs=request, retries=1)

    # -- single objects ----------------------------------------------------------------

    async def head(self, path: str) -> ObjectState:
        """HEAD one object and return its state."""
        bucket, key = split_path(path, S3)
        if not key:
            raise InvalidPathError(
                "a bucket is not an object.", path=path, fix="name an object inside the bucket."
            )
        out = await self._call("head_object", path, "inspect", Bucket=bucket, Key=key)
        storage_class = StorageClass.parse(out.get("StorageClass"))
        archive = out.get("ArchiveStatus")
        archive_access = ArchiveAccessTier(archive) if archive else None
        ongoing, expiry = parse_restore_header(out.get("Restore"))
        if self.implements_restores is None and storage_class.needs_restore and ongoing is None:
            headers = out.get("ResponseMetadata", {}).get("HTTPHeaders", {})
            if RGW_HEADER in headers:  # radosgw: its archive classes are plain placements
                self._learn_no_restores()
        restore, expiry = state_from_restore(
            storage_class, ongoing, expiry, archive_access, restores=self.implements_restores
        )
        return ObjectState(
            path=f"{bucket}/{key}",
            size=int(out.get("ContentLength", 0)),
            storage_class=storage_class,
            restore=restore,
            restore_expiry=expiry,
            etag=out.get("ETag"),
            last_modified=_as_datetime(out.get("LastModified")),
            archive_access=archive_access,
            content_type=out.get("ContentType"),
            version_id=out.get("VersionId"),
        )

    async def restore(
        self,
        state: ObjectState,
        *,
        tier: RestoreTier,
        days: int | None,
        extra: dict[str, Any] | None = None,
    ) -> RestoreOutcome:
        """Send one RestoreObject request (validated against S3's rules first)."""
        send_days = check_restore_request(
            state.storage_class, tier, days, archive_access=state.archive_access, path=state.path
        )
        if self.implements_restores is False:
            raise restores_not_implemented(state)
        bucket, key = split_path(state.path, S3)
        request: dict[str, Any] = {"GlacierJobParameters": {"Tier": tier.value}}
        if send_days is not None:
            request["Days"] = send_days
        try:
            out = await self._send_once(
                "restore_object", Bucket=bucket, Key=key, RestoreRequest=request, **(extra or {})
            )
        except Exception as error:
            if is_restore_in_progress(error):
                return RestoreOutcome.IN_PROGRESS
            if s3_error_code(error) == "NotImplemented":  # Ceph RGW: 501, nothing restored
                self._learn_no_restores()
                raise restores_not_implemented(state) from error
            raise_translated(error, state.path, action="restore")
        status = out.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return RestoreOutcome.RESTORED if status == 200 else RestoreOutcome.ACCEPTED

    async def get_bytes(self, path: str) -> bytes:
        """One GET of a whole (small) object; :class:`ObjectNotFoundError` if absent."""
        bucket, key = split_path(path, S3)
        out = await self._call("get_object", path, "read", Bucket=bucket, Key=key)
        body = out["Body"]
        try:
            data: bytes = await body.read()
        finally:
            body.close()
        return data

    async def get_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeRead:
        """One ranged GET of ``[start, end)``, with the answering object's size and ETag.

        ``if_match``: the ETag the object must still have (S3 answers 412
        ``PreconditionFailed`` otherwise). Errors are s3fs's (retried and
        translated as ``cat_file`` does), for the caller's read policy.
        """

        async def whole(out: dict[str, Any]) -> RangeRead:
            data: bytes = await out["Body"].read()
            total = str(out.get("ContentRange") or "").rpartition("/")[2]
            return RangeRead(data, int(total) if total.isdigit() else None, out.get("ETag"))

        return await self._ranged_get(path, start, end, if_match, whole, EMPTY_READ)

    async def get_range_pieces(self, path: str, start: int, end: int) -> list[bytes]:
        """One ranged GET of ``[start, end)``, its body kept as it arrived: pieces of at
        most :data:`PIECE` bytes, never joined into one string (a reader that slices them
        saves a copy of every byte and a large allocation per part). Errors, retries and
        the length check as :meth:`get_range`'s; an empty object gives no piece."""

        async def in_pieces(out: dict[str, Any]) -> list[bytes]:
            pieces = []
            while piece := await out["Body"].read(PIECE):  # the end checks the length
                pieces.append(piece)
            return pieces

        return await self._ranged_get(path, start, end, None, in_pieces, [])

    async def _ranged_get(
        self,
        path: str,
        start: int,
        end: int,
        if_match: str | None,
        read: Callable[[dict[str, Any]], Awaitable[_T]],
        empty: _T,
    ) -> _T:
        """``read`` of the answer to one ranged GET of ``[start, end)`` (its body closed
        after), in s3fs's retry loop for reads, as in ``cat_file``; ``empty`` for an empty
        object, which has no byte 0 to range over."""
        from s3fs.core import _error_wrapper

        request = _range_request(path, start, end, if_match)

        async def call_and_read() -> _T:
            out = await self.fs._call_s3("get_object", **request)
            try:
                return await read(out)
            finally:
                out["Body"].close()

        try:
            found: _T = await _error_wrapper(call_and_read, retries=self.fs.retries)
        except OSError as error:
            if start == 0 and is_unsatisfiable_range(error):
                return empty
            raise
        return found

    async def stream_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeStream:
        """One ranged GET of ``[start, end)``, handed over once its headers arrived.

        Errors opening it are s3fs's (as :meth:`get_range`'s). A connection that drops
        while the body is read is resumed where it stopped, by a GET of the rest that
        must match the first response's ETag, up to s3fs's ``retries`` times (not
        when the response said no ETag).
        """

        async def open_(at: int, etag: str | None) -> dict[str, Any]:
            request = _range_request(path, at, end, etag)
            out: dict[str, Any] = await self.fs._call_s3("get_object", **request)
            return out

        return _S3RangeStream(
            await open_(start, if_match), start, end, open_, self.fs.retries, path
        )

    # -- conditional writes (claims shared by every host) ------------------------------

    async def create_exclusive(self, path: str, body: bytes) -> bool:
        """Write ``path`` only if nothing is there (``If-None-Match: *``); False if taken."""
        return await self._put_conditional(path, body, IfNoneMatch="*")

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool:
        """Overwrite ``path`` only if its ETag is still ``etag`` (``If-Match``); False if not.

        radosgw 16 compares ``If-Match`` with the *unquoted* ETag and refuses the quoted
        one S3 returns: a 412 for an object whose ETag is still ``etag`` is sent once more
        with the ETag unquoted (still conditional: a changed object fails both).
        """
        if await self._put_conditional(path, body, IfMatch=etag):
            return True
        if not (etag.startswith('"') and etag.endswith('"')):
            return False
        current = await self.read_tagged(path, limit=1)
        if current is None or current.etag != etag:
            return False  # really changed (or gone)
        return await self._put_conditional(path, body, IfMatch=etag[1:-1])

    async def read_tagged(self, path: str, *, limit: int = TAGGED_LIMIT) -> Tagged | None:
        """A small object's first ``limit`` bytes (one ranged GET), ETag, age by S3's
        clock and whole size (``None`` when absent)."""
        bucket, key = split_path(path, S3)
        request = {"Bucket": bucket, "Key": key, "Range": f"bytes=0-{limit - 1}"}
        try:
            try:
                out = await self._call("get_object", path, "read", **request)
            except ArchiveError as error:
                if s3_error_code(error) != "InvalidRange":
                    raise
                del request["Range"]  # an empty object has no byte 0: read it whole
                out = await self._call("get_object", path, "read", **request)
        except ObjectNotFoundError:
            return None
        body = out["Body"]
        try:
            data: bytes = await body.read()
        finally:
            body.close()
        date = (out.get("ResponseMetadata") or {}).get("HTTPHeaders", {}).get("date")
        total = str(out.get("ContentRange") or "").rpartition("/")[2]
        return Tagged(
            data,
            str(out.get("ETag", "")),
            server_age(out.get("LastModified"), date),
            int(total) if total.isdigit() else len(data),
        )

    async def _put_conditional(self, path: str, body: bytes, **condition: str) -> bool:
        bucket, key = split_path(path, S3)
        try:
            await self.fs._call_s3("put_object", Bucket=bucket, Key=key, Body=body, **condition)
        except Exception as error:
            # 412: the condition failed; 409: a concurrent conditional write won the race
            if s3_error_code(error) in ("PreconditionFailed", "ConditionalRequestConflict"):
                return False
            raise_translated(error, path, action="write")
        return True

    # -- listings ----------------------------------------------------------------------

    async def _list_page(self, bucket: str, **kwargs: Any) -> dict[str, Any]:
        return dict(
            await self._call(
                "list_objects_v2",
                f"{bucket}/{kwargs.get('Prefix', '')}",
                "list",
                Bucket=bucket,
                OptionalObjectAttributes=["RestoreStatus"],
                **kwargs,
            )
        )

    async def is_directory(self, path: str) -> bool:
        """Whether anything is stored below ``path`` (one LIST of at most one key)."""
        bucket, key = split_path(path, S3)
        page = await self._list_page(bucket, Prefix=key + "/", MaxKeys=1)
        return bool(page.get("Contents") or page.get("CommonPrefixes"))

    def _entry_state(self, bucket: str, entry: dict[str, Any]) -> tuple[ObjectState, bool]:
        """State from a listing entry, and whether the listing could fully describe it."""
        storage_class = StorageClass.parse(entry.get("StorageClass"))
        status = entry.get("RestoreStatus")
        described = True
        if status is not None:
            if not self.restore_status_in_listings:
                self.restore_status_in_listings = True  # learned: this server reports it
            ongoing: bool | None = bool(status.get("IsRestoreInProgress"))
            expiry = _as_datetime(status.get("RestoreExpiryDate"))
        else:
            ongoing, expiry = None, None
            if (
                storage_class.needs_restore
                and not self.restore_status_in_listings
                and self.implements_restores is not False
            ):
                described = False
        restore, expiry = state_from_restore(
            storage_class, ongoing, expiry, restores=self.implements_restores
        )
        state = ObjectState(
            path=f"{bucket}/{entry['Key']}",
            size=int(entry.get("Size", 0)),
            storage_class=storage_class,
            restore=restore,
            restore_expiry=expiry,
            etag=entry.get("ETag"),
            last_modified=_as_datetime(entry.get("LastModified")),
        )
        return state, described

    async def list(self, path: str, *, recursive: bool = False) -> Listing:
        """List a directory (or everything below it) with restore states.

        A recursive listing that does not fit in one page is cut into up to
        ``list_fanout`` key ranges after its first page, listed at once (see
        ``stores/keyspace.py``): the same entries in the same order as one
        sequence of pages, for at most ``list_fanout + CUT_PAGES`` more requests.
        """
        bucket, key = split_path(path, S3)
        prefix = key.rstrip("/") + "/" if key else ""
        kwargs: dict[str, Any] = {"Prefix": prefix, "MaxKeys": self.list_page}
        if not recursive:
            kwargs["Delimiter"] = "/"
        page = await self._list_page(bucket, **kwargs)
        entries: Entries = [*page.get("Contents", [])]
        prefixes = [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if page.get("IsTruncated"):
            if recursive and self.list_fanout > 1 and entries:
                entries += await self._list_in_ranges(bucket, prefix, entries[-1]["Key"])
            else:
                more, more_prefixes = await self._list_pages(bucket, page, kwargs)
                entries += more
                prefixes += more_prefixes
        files: States = []
        undescribed: Positions = []
        for entry in entries:
            state, described = self._entry_state(bucket, entry)
            if not described:
                undescribed.append(len(files))
            files.append(state)
        if undescribed and not self.restore_status_in_listings:
            heads = await self._describe([files[i] for i in undescribed])
            for i, state in zip(undescribed, heads, strict=True):
                files[i] = state
        dirs = [f"{bucket}/{p.rstrip('/')}" for p in prefixes]
        return Listing(files=files, directories=dirs)

    async def _list_pages(
        self,
        bucket: str,
        page: dict[str, Any],
        kwargs: dict[str, Any],
        piece: KeyRange | None = None,
    ) -> tuple[Entries, Prefixes]:
        """The pages after ``page``, by continuation token (within ``piece``, if given)."""
        entries: Entries = []
        prefixes: Prefixes = []
        while page.get("IsTruncated"):
            page = await self._list_page(
                bucket, **kwargs, ContinuationToken=page["NextContinuationToken"]
            )
            contents = page.get("Contents", [])
            if piece is None:
                entries += contents
                prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
                continue
            entries += [e for e in contents if piece.holds(e["Key"])]
            if contents and piece.passed(contents[-1]["Key"]):
                break
        return entries, prefixes

    async def _list_in_ranges(self, bucket: str, prefix: str, after: str) -> Entries:
        """Every key under ``prefix`` after ``after``, listed in key ranges at once."""
        cuts = await self._cuts_after(bucket, prefix, after)

        async def piece(part: KeyRange) -> Entries:
            kwargs = {"Prefix": prefix, "MaxKeys": self.list_page, "StartAfter": part.start_after}
            page = await self._list_page(bucket, **kwargs)
            contents = page.get("Contents", [])
            entries = [e for e in contents if part.holds(e["Key"])]
            if contents and part.passed(contents[-1]["Key"]):
                return entries
            more, _ = await self._list_pages(bucket, page, kwargs, part)
            return entries + more

        pieces = await asyncio.gather(*(piece(p) for p in ranges_after(after, cuts)))
        return [entry for entries in pieces for entry in entries]

    async def _cuts_after(self, bucket: str, prefix: str, after: str) -> Prefixes:
        """Where to cut the keys after ``after``: between the "directories" that follow it.

        Reads at most :data:`CUT_PAGES` delimiter listings: it goes down into a
        directory when everything left lies in it, and stops at a page with no
        directory (a flat stretch of keys has nowhere to cut: one request spent).
        """
        base = prefix
        found: Prefixes = []
        kwargs: dict[str, Any] = {"Delimiter": "/", "MaxKeys": self.list_page}
        for _ in range(CUT_PAGES):
            page = await self._list_page(bucket, Prefix=base, StartAfter=after, **kwargs)
            common = [p["Prefix"] for p in page.get("CommonPrefixes", [])]
            found += [p for p in common if p > after]
            if page.get("IsTruncated") and common:
                kwargs["ContinuationToken"] = page["NextContinuationToken"]
                continue
            if not found and len(common) == 1 and not page.get("Contents"):
                base = common[0]  # the rest lies in the directory holding ``after``
                kwargs.pop("ContinuationToken", None)
                continue
            break
        return cut_points(found, self.list_fanout)

    async def _probe_listing(
        self, bucket: str, keys: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        prefix = _common_prefix(keys)
        wanted = set(keys)
        found: dict[str, ObjectState | None] = {f"{bucket}/{k}": None for k in keys}
        undescribed: list[str] = []
        index = 0  # next unresolved key in sorted order
        start_after: str | None = just_before(keys[0])
        while index < len(keys):
            kwargs: dict[str, Any] = {"Prefix": prefix, "MaxKeys": self.list_page}
            if start_after:
                kwargs["StartAfter"] = start_after
            page = await self._list_page(bucket, **kwargs)
            contents = page.get("Contents", [])
            for entry in contents:
                if entry["Key"] in wanted:
                    state, described = self._entry_state(bucket, entry)
                    found[state.path] = state
                    if not described:
                        undescribed.append(state.path)
            last = contents[-1]["Key"] if contents else None
            if not page.get("IsTruncated") or last is None:
                break
            while index < len(keys) and keys[index] <= last:
                index += 1
            if index < len(keys):
                start_after = max(last, just_before(keys[index]) or last)
        if undescribed and not self.restore_status_in_listings:
            heads = await self._describe([s for p in undescribed if (s := found[p]) is not None])
            found.update((s.path, s) for s in heads)
        return found

    async def _ask_listing_status(self, path: str) -> None:
        """Learn whether this server's listings carry ``RestoreStatus``: one LIST of at
        most one key (``path``'s), asked once per store; callers at the same time share it.
        A failure other than the refusal teaches nothing (HEADs describe the objects)."""
        loop = asyncio.get_running_loop()
        asked = self._listing_question
        if asked is None or asked.get_loop() is not loop:
            asked = self._listing_question = loop.create_task(self._send_listing_question(path))
        await asyncio.shield(asked)

    async def _send_listing_question(self, path: str) -> None:
        bucket, key = split_path(path, S3)
        try:
            await self._send_once(
                "list_objects_v2",
                Bucket=bucket,
                Prefix=key,
                MaxKeys=1,
                OptionalObjectAttributes=[PROBE_ATTRIBUTE],
            )
        except Exception as error:
            if s3_error_code(error) == "InvalidArgument":  # it reads the names: S3's answer
                self.restore_status_in_listings = True
            return
        if self.restore_status_in_listings is None:  # the header ignored (Ceph RGW, MinIO)
            self.restore_status_in_listings = False

    async def _describe(self, states: Sequence[ObjectState]) -> Sequence[ObjectState]:
        """Complete the states of archived objects a listing named no restore status for.

        On a server not asked yet, one LIST asks whether its listings carry restore
        status (:meth:`_ask_listing_status`); if they do, the listing said all. Otherwise
        each is asked with HEAD; on a server not known yet, one goes alone first: if it
        shows the server has no restores (Ceph RGW), the listing already said all there
        is about the others, and their HEADs are saved."""
        if self.restore_status_in_listings is None and self.implements_restores is not False:
            await self._ask_listing_status(states[0].path)
            if self.restore_status_in_listings:
                return states  # archived, no restore asked: what the listing said
        done: Sequence[ObjectState] = []
        if self.implements_restores is None:
            done = [await self.head(states[0].path)]
            states = states[1:]
        if self.implements_restores is False:
            hot = RestoreState.HOT
            return [*done, *(replace(s, restore=hot, restore_expiry=None) for s in states)]
        return [*done, *await asyncio.gather(*(self.head(s.path) for s in states))]


def layer_retries_once(fs: Any) -> None:
    """Give the s3fs client archivefs's retry configuration: botocore's standard mode.

    botocore retries each request up to ``MAX_ATTEMPTS`` times (throttling,
    5xx, dropped connections), each after its own jittered exponential backoff,
    with a retry quota shared by the client; throttling that outlasts those
    retries pauses the whole batch in the submitter (``restore/submitter.py``).
    No client-side rate limiter ("adaptive" mode): it serialised a batch's
    concurrent requests behind one lock after a few ``SlowDown`` answers. It
    is the only layer for the
    requests :class:`S3Store` sends (restores, HEAD, LIST): they bypass s3fs's
    own retry loop (see :meth:`S3Store._send_once`), which used to multiply
    botocore's attempts by 5, and tenacity's by 10 again (75-100 RestoreObject
    requests per object under persistent ``SlowDown``). A retry configuration
    the caller gave (``config_kwargs``) is kept; only missing fields are filled
    in. Applies to the client made after this call (s3fs makes it on first use).
    """
    if not hasattr(fs, "config_kwargs"):
        return  # not s3fs
    if getattr(fs, "_s3", None) is None:
        retries = dict(fs.config_kwargs.get("retries") or {})
        retries.setdefault("mode", RETRY_MODE)
        if "max_attempts" not in retries:
            retries.setdefault("total_max_attempts", MAX_ATTEMPTS)
        fs.config_kwargs = {**fs.config_kwargs, "retries": retries}


POOL_CONNECTIONS = 64
"""HTTP connections the s3fs client may hold open: the restore submitter's concurrency.

botocore's default is 10, so 64 restores "in flight" queued for 10 connections, which
capped submission by the round trip whatever the concurrency; with a pool as large as
the concurrency, the bound is the one asked for.
"""


def size_connection_pool(fs: Any) -> None:
    """Let the s3fs client open :data:`POOL_CONNECTIONS` connections (unless the caller chose).

    A ``max_pool_connections`` given in ``config_kwargs`` is kept. Applies to
    the client made after this call (s3fs makes it on first use).
    """
    if not hasattr(fs, "config_kwargs") or getattr(fs, "_s3", None) is not None:
        return
    if "max_pool_connections" not in fs.config_kwargs:
        fs.config_kwargs = {**fs.config_kwargs, "max_pool_connections": POOL_CONNECTIONS}


def _common_prefix(keys: Sequence[str]) -> str:
    first, last = keys[0], keys[-1]  # sorted: the common prefix of the extremes is everyone's
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _endpoint_url(fs: Any) -> str | None:
    client_kwargs = getattr(fs, "client_kwargs", None) or {}
    endpoint = client_kwargs.get("endpoint_url") or getattr(fs, "endpoint_url", None)
    return str(endpoint) if endpoint else None


class _S3RangeStream:
    """The body of a ranged ``get_object``, resumed after a dropped connection."""

    def __init__(
        self,
        out: dict[str, Any],
        start: int,
        end: int,
        reopen: Callable[[int, str | None], Awaitable[dict[str, Any]]],
        attempts: int,
        path: str,
    ) -> None:
        total = str(out.get("ContentRange") or "").rpartition("/")[2]
        self.total_size = int(total) if total.isdigit() else None
        self.etag: str | None = out.get("ETag")
        length = out.get("ContentLength")
        self.length = length if isinstance(length, int) else None
        self._body = out["Body"]
        self._at, self._end = start, end
        self._reopen, self._attempts = reopen, attempts
        self._failures = 0
        self._path = path

    async def read(self, amount: int) -> bytes:
        from s3fs.core import S3_RETRYABLE_ERRORS

        while True:
            try:
                chunk: bytes = await self._body.read(amount)
            except S3_RETRYABLE_ERRORS as error:
                self._failures += 1
                self._body.close()
                if self._failures >= self._attempts or self.etag is None or self._at >= self._end:
                    raise_translated(error, self._path, action="read")
                await asyncio.sleep(min(1.7**self._failures * 0.1, 15))  # s3fs's backoff
                try:
                    self._body = (await self._reopen(self._at, self.etag))["Body"]
                except Exception as reopened:
                    raise_translated(reopened, self._path, action="read")
                continue
            except Exception as error:
                raise_translated(error, self._path, action="read")
            self._at += len(chunk)
            return chunk

    def close(self) -> None:
        self._body.close()


def _range_request(path: str, start: int, end: int, if_match: str | None) -> dict[str, Any]:
    """GetObject's arguments for bytes ``[start, end)`` of ``path``, ``If-Match`` if given."""
    bucket, key = split_path(path, S3)
    request: dict[str, Any] = {"Bucket": bucket, "Key": key, "Range": f"bytes={start}-{end - 1}"}
    if if_match:
        request["IfMatch"] = if_match
    return request
