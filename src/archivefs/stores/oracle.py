"""The Oracle Cloud (OCI Object Storage) cold-store adapter: archival states in bulk, restores.

Which library does what, and why:

* **Reads** go through ocifs (``OCIFileSystem.cat_file``: a HeadObject, then ranged
  GetObjects), called by the filesystem as for any fsspec target. Oracle answers
  a GetObject of an object that is not restored with ``409 NotRestored``; ocifs
  turns that into ``OSError(EBUSY)`` raised from the SDK's ``ServiceError``, and
  ``stores.translate`` reads the code from that cause.
* **Listings and HEADs** use the ``ObjectStorageClient`` ocifs already holds
  (``fs.oci_client``: its config, signer and endpoint). ocifs's ``ls`` asks for
  ``archivalState`` but its ``info`` drops it, and neither pages under our control;
  here one ListObjects page answers up to 1,000 objects with ``storageTier`` and
  ``archivalState`` (Archived / Restoring / Restored): no per-object request when
  the listing says it.
* **Restores** use that client's ``restore_objects`` (RestoreObjects: one object per
  call, ``hours`` 1 to 240). ocifs has no restore call of its own, and the SDK
  call signs and serialises the request exactly as every other OCI call.

The SDK is synchronous: each call runs in a worker thread. Its own retries are
off for this adapter's requests (``NoneRetryStrategy``); :class:`OracleRetry`
retries throttling (``429 TooManyRequests``) and 5xx with short growing pauses,
as ``AzureRetry`` does, so a submission is never stalled by the SDK's long
back-offs. Reads keep ocifs's own policy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, TypeVar

from archivefs.errors import ArchiveError, InvalidPathError, ObjectNotFoundError
from archivefs.model import ObjectState, RestoreState, StorageClass
from archivefs.providers import ORACLE
from archivefs.providers.oracle import MAX_HOURS, MIN_HOURS, check_restore_objects
from archivefs.stores.base import (
    EMPTY_READ,
    TAGGED_LIMIT,
    BulkProbe,
    Listing,
    RangeRead,
    RestoreOutcome,
    Tagged,
    server_age,
    split_path,
)
from archivefs.stores.retry import StoreRetry
from archivefs.stores.translate import is_unsatisfiable_range, raise_translated, s3_error_code
from archivefs.wrapped import unwrapped

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from archivefs.model import RestoreTier

T = TypeVar("T")

LIST_PAGE = 1000  # Oracle's maximum objects per ListObjects page
FIELDS = "name,size,etag,md5,timeCreated,timeModified,storageTier,archivalState"  # as ocifs


OracleRetry = StoreRetry  # the retries of this adapter's own requests (stores/retry.py)


def _time(value: Any) -> datetime | None:
    """A timezone-aware datetime from the SDK's value or an RFC 3339 / HTTP-date string."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not value:
        return None
    text = str(value)
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).astimezone(UTC)
    except (TypeError, ValueError):
        return None


def bucket_key(path: str) -> str:
    """``bucket/key`` of a path as ocifs lists it (``bucket@namespace/key``): what the
    catalog records, and what every other provider's listing already gives."""
    bucket, slash, key = path.partition("/")
    return f"{bucket.partition('@')[0]}{slash}{key}"


def state_of(
    path: str,
    size: int,
    tier: str | None,
    archival_state: str | None,
    *,
    etag: str | None = None,
    modified: Any = None,
    time_of_archival: Any = None,
    entry: dict[str, Any] | None = None,
) -> ObjectState:
    """An :class:`ObjectState` from Oracle's ``storageTier`` and ``archivalState``.

    Archive objects: ``Archived`` (or no state) needs a restore, ``Restoring`` is
    pending, ``Restored`` reads until ``time-of-archival`` (HeadObject gives it;
    listings do not, so a listed restored object has no known expiry).
    """
    storage_class = StorageClass.parse(tier or ORACLE.default_class, provider="oracle")
    expiry = None
    if not storage_class.needs_restore:
        restore = RestoreState.HOT
    elif archival_state == "Restoring":
        restore = RestoreState.RESTORING
    elif archival_state == "Restored":
        restore, expiry = RestoreState.RESTORED, _time(time_of_archival)
    else:
        restore = RestoreState.ARCHIVED
    return ObjectState(
        path=path,
        size=int(size or 0),
        storage_class=storage_class,
        restore=restore,
        restore_expiry=expiry,
        etag=etag,
        last_modified=_time(modified),
        entry=entry,
    )


def ocifs_listed_entry(path: str, summary: Any) -> dict[str, Any]:
    """ocifs's own listing entry of an object summary, as ocifs 1.3's ``_lsdir`` makes it
    (ocifs builds it inline: the same keys from the same ListObjects answer)."""
    return {
        "name": path,
        "type": "file",
        "size": summary.size,
        "etag": summary.etag,
        "md5": getattr(summary, "md5", None),
        "timeCreated": summary.time_created,
        "timeModified": summary.time_modified,
        "storageTier": summary.storage_tier,
        "archivalState": summary.archival_state,
    }


def ocifs_described_entry(path: str, headers: Any) -> dict[str, Any]:
    """ocifs's own ``info`` of an object, as ocifs 1.3 makes it from HeadObject's headers."""
    return {
        "name": path,
        "type": "file",
        "size": int(headers.get("content-length") or 0),
        "contentType": headers.get("content-type"),
        "timeModified": headers.get("last-modified"),
        "acceptRanges": headers.get("accept-ranges"),
        "etag": headers.get("etag"),
        "versionId": headers.get("version-id"),
        "storageTier": headers.get("storage-tier"),
    }


class OracleStore(BulkProbe):
    """Archive-aware operations on an ocifs filesystem (the same interface as ``S3Store``).

    Parameters
    ----------
    fs:
        An ``ocifs.OCIFileSystem`` (or fsspec's async wrapper around one).
    hours:
        How long a restored copy stays readable, 1 to 240 (default: the restore's
        ``days`` times 24, i.e. Oracle's default of 24 hours for ``days=1``).
    retry:
        :class:`OracleRetry` (or a mapping of its fields) for this adapter's requests.
    """

    provider = ORACLE
    makes_own_entries = True  # its states carry the target's own entries (.entry)
    lists_restore_expiry = False  # ListObjects has no time-of-archival; HeadObject has
    reads_ranges = True
    """archivefs reads byte ranges of plain objects with :meth:`get_range` (one ranged
    GetObject): ocifs's ``cat_file`` opens the file, a HeadObject per read, and reads on
    to the end of its readahead block."""

    def __init__(
        self,
        fs: Any,
        *,
        hours: int | None = None,
        retry: OracleRetry | Mapping[str, Any] | None = None,
    ) -> None:
        if hours is not None and (
            isinstance(hours, bool)
            or not isinstance(hours, int)
            or not MIN_HOURS <= hours <= MAX_HOURS
        ):
            raise ValueError(
                f"OracleStore: hours={hours!r} is outside Oracle's 1..240. "
                "Fix: pass store_options={'hours': n} with n from 1 to 240, or leave it out "
                "(days * 24 is sent)."
            )
        self.fs = fs
        self.hours = hours
        self.retry = OracleRetry.of(retry)

    # -- plumbing --------------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        """``oracle:<tenancy OCID>:<regional endpoint>``: a tenancy has one Object Storage
        namespace, buckets are per region (an instance principal's config names no tenancy:
        then the endpoint alone)."""
        inner = self._ocifs()
        config = inner.config if isinstance(inner.config, dict) else {}
        return ORACLE.journal_namespace(
            account=config.get("tenancy"), endpoint=inner.oci_client.base_client.endpoint
        )

    def _ocifs(self) -> Any:
        inner = unwrapped(self.fs)
        if getattr(inner, "oci_client", None) is None:
            raise ArchiveError(
                "the Oracle filesystem has no Object Storage client.",
                fix="pass target_protocol='oci' with ocifs options (config=..., or an "
                "iam_type such as 'instance_principal').",
            )
        return inner

    def _bucket(self, bucket: str) -> tuple[str, str]:
        """(namespace, bucket name) of a bucket part (``bucket`` or ``bucket@namespace``)."""
        name, _, namespace = bucket.partition("@")
        if not namespace:
            namespace = str(self._ocifs()._get_default_namespace())
        return namespace, name

    async def _call(self, path: str, action: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """One SDK call in a worker thread, retried by :attr:`retry`, errors translated."""
        from oci.retry import NoneRetryStrategy

        def call() -> Any:
            client = self._ocifs().oci_client
            return getattr(client, method)(*args, retry_strategy=NoneRetryStrategy(), **kwargs)

        try:
            return await self.retry.call(lambda: asyncio.to_thread(call))
        except Exception as error:
            raise_translated(error, path, action=action)

    async def bucket_info(self, bucket: str) -> dict[str, Any]:
        """``info()`` of a bucket: one HeadBucket (ocifs's own ``info`` sends an argument
        the SDK refuses, ``compartment_id``, and fails)."""
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        response = await self._call(bucket, "inspect", "head_bucket", namespace, bucket_name)
        return {
            "name": bucket,
            "size": 0,
            "type": "directory",
            "etag": response.headers.get("etag"),
        }

    # -- single objects --------------------------------------------------------------------

    async def head(self, path: str) -> ObjectState:
        """HeadObject of one object and its state (``time-of-archival`` included)."""
        bucket, name = split_path(path, ORACLE)
        if not name:
            raise InvalidPathError(
                "a bucket is not an object.", path=path, fix="name an object inside the bucket."
            )
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        response = await self._call(path, "inspect", "head_object", namespace, bucket_name, name)
        headers = response.headers
        return state_of(
            f"{bucket}/{name}",
            int(headers.get("content-length") or 0),
            headers.get("storage-tier"),
            headers.get("archival-state"),
            etag=headers.get("etag"),
            modified=headers.get("last-modified"),
            time_of_archival=headers.get("time-of-archival"),
            entry=ocifs_described_entry(f"{bucket}/{name}", headers),
        )

    async def restore(
        self,
        state: ObjectState,
        *,
        tier: RestoreTier,
        days: int | None,
        extra: dict[str, Any] | None = None,
    ) -> RestoreOutcome:
        """One RestoreObjects for ``hours`` (Oracle's rules checked first).

        202: a restore started; 200: the object was already restored (its readable
        period starts again); 409: a restore is in progress.
        """
        from oci.object_storage.models import RestoreObjectsDetails

        hours = check_restore_objects(
            state.storage_class.value, str(tier), days, path=state.path, hours=self.hours
        )
        bucket, name = split_path(state.path, ORACLE)
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        details = RestoreObjectsDetails(object_name=name, hours=hours)
        try:
            response = await self._call(
                state.path, "restore", "restore_objects", namespace, bucket_name, details
            )
        except ArchiveError as error:
            if s3_error_code(error) == "RestoreInProgress" or _status(error) == 409:
                return RestoreOutcome.IN_PROGRESS
            raise
        return RestoreOutcome.ACCEPTED if response.status == 202 else RestoreOutcome.RESTORED

    async def get_bytes(self, path: str) -> bytes:
        """A whole (small) object in one GetObject; :class:`ObjectNotFoundError` if absent.

        Not through ocifs's ``cat_file``, which sends a HeadObject first and, for a
        missing object, a ListObjects to tell a directory: three requests for one answer.
        """
        bucket, name = split_path(path, ORACLE)
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        response = await self._call(path, "read", "get_object", namespace, bucket_name, name)
        data: bytes = await asyncio.to_thread(lambda: response.data.content)
        return data

    async def get_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeRead:
        """One ranged GetObject of ``[start, end)`` (``if_match``: the ETag it must have)."""
        bucket, name = split_path(path, ORACLE)
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        kwargs: dict[str, Any] = {"range": f"bytes={start}-{max(start, end - 1)}"}
        if if_match:
            kwargs["if_match"] = if_match
        try:
            response = await self._call(
                path, "read", "get_object", namespace, bucket_name, name, **kwargs
            )
        except ArchiveError as error:
            if start == 0 and is_unsatisfiable_range(error):
                return EMPTY_READ  # an empty object has no byte 0 to range over
            raise
        data: bytes = await asyncio.to_thread(lambda: response.data.content)
        content_range = str(response.headers.get("content-range") or "")
        total = content_range.rsplit("/", 1)[-1]
        size = int(total) if total.isdigit() else len(data)
        return RangeRead(data[: max(0, end - start)], size, response.headers.get("etag"))

    async def is_directory(self, path: str) -> bool:
        """Whether anything is stored below ``path`` (one ListObjects request)."""
        bucket, name = split_path(path, ORACLE)
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        response = await self._call(
            path, "list", "list_objects", namespace, bucket_name,
            prefix=name.rstrip("/") + "/" if name else "", limit=1,
        )  # fmt: skip
        return bool(response.data.objects or response.data.prefixes)

    # -- listings --------------------------------------------------------------------------

    async def list(self, path: str, *, recursive: bool = False) -> Listing:
        """List a directory (or everything below it) with tiers and archival states."""
        bucket, name = split_path(path, ORACLE)
        prefix = name.rstrip("/") + "/" if name else ""
        files: list[ObjectState] = []
        dirs: list[str] = []
        async for page in self._pages(path, bucket, prefix, delimiter=not recursive):
            files += [
                _summary_state(bucket, o)
                for o in page.objects
                if not (o.name.endswith("/") and not o.size)  # folder markers
            ]
            dirs += [f"{bucket}/{p.rstrip('/')}" for p in page.prefixes or ()]
            if recursive:  # the folder markers below the folder: folders, as ocifs lists
                dirs += [
                    f"{bucket}/{o.name.rstrip('/')}"
                    for o in page.objects
                    if o.name.endswith("/") and not o.size and o.name != prefix
                ]
        return Listing(files=files, directories=dirs)

    async def _probe_listing(
        self, bucket: str, names: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        """States of ``names`` (sorted) from ListObjects pages starting at the first one."""
        found: dict[str, ObjectState | None] = {f"{bucket}/{n}": None for n in names}
        wanted, last = set(names), names[-1]
        prefix = _common_prefix(names)
        async for page in self._pages(f"{bucket}/{prefix}", bucket, prefix, start=names[0]):
            for summary in page.objects:
                if summary.name in wanted:
                    state = _summary_state(bucket, summary)
                    found[state.path] = state
            if page.objects and page.objects[-1].name >= last:
                break  # listings are in name order: nothing further is wanted
        return found

    async def _pages(
        self,
        path: str,
        bucket: str,
        prefix: str,
        *,
        delimiter: bool = False,
        start: str | None = None,
    ) -> AsyncIterator[Any]:
        """ListObjects pages (one request each), following ``nextStartWith``."""
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        while True:
            kwargs: dict[str, Any] = {"prefix": prefix, "fields": FIELDS, "limit": LIST_PAGE}
            if delimiter:
                kwargs["delimiter"] = "/"
            if start is not None:
                kwargs["start"] = start
            response = await self._call(
                path, "list", "list_objects", namespace, bucket_name, **kwargs
            )
            yield response.data
            start = response.data.next_start_with
            if start is None:
                return

    # -- conditional writes (claims and catalogs shared by hosts) ---------------------------

    async def read_tagged(self, path: str, *, limit: int = TAGGED_LIMIT) -> Tagged | None:
        """A small object's first ``limit`` bytes (one ranged GetObject), ETag, age by
        Oracle's clock and whole size (``None`` when absent)."""
        bucket, name = split_path(path, ORACLE)
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        ranged = {"range": f"bytes=0-{max(0, limit - 1)}"}
        try:
            try:
                response = await self._call(
                    path, "read", "get_object", namespace, bucket_name, name, **ranged
                )
            except ArchiveError as error:
                if _status(error) != 416:
                    raise
                # an empty object has no byte 0: read it whole
                response = await self._call(
                    path, "read", "get_object", namespace, bucket_name, name
                )
        except ObjectNotFoundError:
            return None
        data: bytes = await asyncio.to_thread(lambda: response.data.content)
        headers = response.headers
        total = str(headers.get("content-range") or "").rpartition("/")[2]
        return Tagged(
            data[:limit],
            str(headers.get("etag") or ""),
            server_age(headers.get("last-modified"), headers.get("date")),
            int(total) if total.isdigit() else len(data),
        )

    async def create_exclusive(self, path: str, body: bytes) -> bool:
        """PutObject only if nothing is there (``if-none-match: *``); False if taken."""
        return await self._put_conditional(path, body, if_none_match="*")

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool:
        """PutObject only if the ETag is still ``etag`` (``if-match``); False if not."""
        return await self._put_conditional(path, body, if_match=etag)

    async def _put_conditional(self, path: str, body: bytes, **condition: str) -> bool:
        bucket, name = split_path(path, ORACLE)
        namespace, bucket_name = await asyncio.to_thread(self._bucket, bucket)
        try:
            await self._call(
                path, "write", "put_object", namespace, bucket_name, name, body, **condition
            )
        except ArchiveError as error:
            if _status(error) == 412:  # IfMatchFailed / IfNoneMatchFailed
                return False
            raise
        return True


def _summary_state(bucket: str, summary: Any) -> ObjectState:
    path = f"{bucket}/{summary.name}"
    return state_of(
        path,
        summary.size or 0,
        summary.storage_tier,
        summary.archival_state,
        etag=summary.etag,
        modified=summary.time_modified or summary.time_created,
        entry=ocifs_listed_entry(path, summary),
    )


def _status(error: BaseException) -> int | None:
    """The HTTP status of the SDK error behind ``error``, if any."""
    current: BaseException | None = error
    while current is not None:
        status = getattr(current, "status", None)
        if isinstance(status, int):
            return status
        current = current.__cause__
    return None


def _common_prefix(names: Sequence[str]) -> str:
    first, last = names[0], names[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def upload_in_tier(fs: Any, local: str, path: str, tier: str, metadata: dict[str, str]) -> None:
    """Upload a local file to ``bucket/object`` directly in ``tier`` (blocking).

    One PutObject with ``storage-tier`` and ``opc-meta-*`` through the client ocifs
    holds: ocifs's ``put_file`` cannot set a tier, and Oracle has no call that moves
    an object into Archive without writing it again.
    """
    store = OracleStore(fs)
    bucket, name = split_path(fs._strip_protocol(path), ORACLE)
    namespace, bucket_name = store._bucket(bucket)
    spec = ORACLE.find_class(tier)
    with open(local, "rb") as body:
        store._ocifs().oci_client.put_object(
            namespace,
            bucket_name,
            name,
            body,
            storage_tier=spec.name if spec is not None else tier,
            opc_meta=metadata,
        )


def user_metadata(fs: Any, path: str) -> dict[str, str]:
    """An object's user metadata (its ``opc-meta-*`` headers, prefix dropped) from one
    HeadObject through the client ocifs holds (ocifs's ``metadata`` is its ``info``)."""
    store = OracleStore(fs)
    bucket, name = split_path(fs._strip_protocol(path), ORACLE)
    namespace, bucket_name = store._bucket(bucket)
    response = store._ocifs().oci_client.head_object(namespace, bucket_name, name)
    prefix = "opc-meta-"
    return {
        str(k)[len(prefix) :]: str(v)
        for k, v in response.headers.items()
        if str(k).lower().startswith(prefix)
    }
