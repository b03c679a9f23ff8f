"""The Azure Blob cold-store adapter: blob states in bulk, rehydrations.

Which library does what, and why:

* **Reads** go through adlfs (``AzureBlobFileSystem._cat_file``), called by the
  filesystem exactly as for any fsspec target: same bytes, same ranged requests
  as adlfs alone. Its 409 ``BlobArchived`` becomes an archivefs error in
  ``stores.translate``.
* **Listings and properties** use the blob service client adlfs already holds
  (``fs.service_client``: adlfs's account, credentials and retry policy), because
  adlfs's own ``ls``/``info`` drop ``blob_tier`` and ``rehydrate_priority``, which
  decide whether a blob reads at once. One List Blobs page answers up to 5,000
  blobs with tier and ``archive_status``: no per-blob request when the listing
  says it.
* **Tier changes** (rehydration) use azure-storage-blob on that same client: adlfs
  has no Set Blob Tier call. Concurrent ``restore()`` calls (the engine's submitter
  sends one per group, all at once) are coalesced into **Blob Batch** requests of up
  to 256 Set Blob Tier sub-requests (``ContainerClient.set_standard_blob_tier_blobs``):
  500 blobs are 2 requests. A service that refuses batches gets one Set Blob Tier
  per blob from then on.

Retries: azure-storage-blob's default policy waits 15 s, then 60 s after a 503
``ServerBusy``, which would stall a submission of thousands of blobs behind one
throttled request. This adapter turns the SDK's retries off for its own requests
(``retry_total=0``) and retries them itself with :class:`AzureRetry` (short,
growing pauses with jitter; configurable through ``store_options={"retry": ...}``),
so the engine's submitter sees throttling only when it persists, as with S3. A
throttled sub-request of a batch is sent again in the next batch, alone with the
others that were throttled; accepted ones never are. Reads keep adlfs's own policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from archivefs.errors import (
    ArchiveError,
    InvalidPathError,
    ObjectNotFoundError,
    StoreUnavailableError,
)
from archivefs.model import (
    ObjectState,
    RestoreState,
    RestoreTier,
    StorageClass,
    check_restore_request,
)
from archivefs.providers import AZURE
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
from archivefs.stores.translate import (
    TRANSIENT_CODES,
    is_transient,
    is_unsatisfiable_range,
    raise_translated,
    s3_error_code,
    translate,
    translate_azure,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

T = TypeVar("T")

LIST_PAGE = 5000  # Azure's maximum per List Blobs page
COPY_DIR = ".archivefs/rehydrated"  # copies, under archivefs's reserved prefix: listings hide it
REHYDRATE_WAYS = ("tier", "copy")
BATCH_LIMIT = 256  # Azure's maximum sub-requests per Blob Batch
_PENDING = "rehydrate-pending-to-"
_CONDITION_FAILED = frozenset({"BlobAlreadyExists", "ConditionNotMet", "TargetConditionNotMet"})
_NOT_A_REFUSAL = frozenset(
    {"ContainerNotFound", "AuthenticationFailed", "AuthorizationFailure"}
    | {"AuthorizationPermissionMismatch", "InsufficientAccountPermissions"}
)


AzureRetry = StoreRetry  # the retries of this adapter's own requests (stores/retry.py)


@dataclass(slots=True)
class _Queued:
    blob: str
    path: str
    done: asyncio.Future[RestoreOutcome]


def copy_path(path: str) -> str:
    """Where ``rehydrate="copy"`` puts the online copy of ``container/blob``:
    ``container/.archivefs/rehydrated/blob`` (same container, a name of its own)."""
    container, blob = split_path(path, AZURE)
    return f"{container}/{COPY_DIR}/{blob}"


def with_copy(original: ObjectState, copy: ObjectState | None) -> ObjectState:
    """The state of an archived blob given its rehydrated copy's: pending copy ->
    ``restoring``; online copy -> ``restored`` (reads go to the copy); the original keeps
    its class (it stays in Archive)."""
    if copy is None or not original.storage_class.needs_restore:
        return original
    if copy.restore is RestoreState.RESTORING:
        return dataclasses.replace(
            original,
            restore=RestoreState.RESTORING,
            pending_tier=copy.pending_tier,
            pending_target=copy.pending_target,
        )
    if copy.readable:
        return dataclasses.replace(original, restore=RestoreState.RESTORED)
    return original  # a copy that is itself archived again: copy once more


def is_folder_marker(props: Any) -> bool:
    """Whether a blob is a folder marker: ADLS Gen2's ``hdi_isfolder=true`` metadata (any
    case: every directory of a hierarchical-namespace account is one), or the
    ``is_directory=true`` adlfs writes, as adlfs's listings read them."""
    metadata = {str(k).lower(): str(v).lower() for k, v in (props.metadata or {}).items()}
    if metadata.get("is_directory") in ("true", "false"):
        return metadata["is_directory"] == "true"
    return metadata.get("hdi_isfolder") == "true"


def state_from_properties(
    container: str, props: Any, entry: dict[str, Any] | None = None
) -> ObjectState:
    """An :class:`ObjectState` from azure-storage-blob's ``BlobProperties`` (listing or HEAD);
    ``entry``: adlfs's own info dict of the blob (:meth:`AzureStore.own_entry`)."""
    tier = props.blob_tier or AZURE.default_class  # accounts default blobs to Hot
    storage_class = StorageClass.parse(str(tier), provider="azure")
    status = props.archive_status or ""
    pending_target = status[len(_PENDING) :].capitalize() if status.startswith(_PENDING) else None
    if pending_target is not None:
        restore = RestoreState.RESTORING
    elif storage_class.needs_restore:
        restore = RestoreState.ARCHIVED
    else:
        restore = RestoreState.HOT  # a rehydrated blob is online for good: no expiry
    modified = props.last_modified
    if isinstance(modified, datetime) and modified.tzinfo is None:
        modified = modified.replace(tzinfo=UTC)
    return ObjectState(
        path=f"{container}/{props.name}",
        size=int(props.size or 0),
        storage_class=storage_class,
        restore=restore,
        etag=props.etag,
        last_modified=modified,
        pending_tier=props.rehydrate_priority if pending_target else None,
        pending_target=pending_target,
        entry=entry,
    )


class AzureStore(BulkProbe):
    """Archive-aware operations on an adlfs filesystem (the same interface as ``S3Store``).

    Parameters
    ----------
    fs:
        An ``adlfs.AzureBlobFileSystem``.
    rehydrate_to:
        The online tier rehydrated blobs go to (Hot, Cool or Cold).
    retry:
        :class:`AzureRetry` (or a mapping of its fields) for this adapter's requests.
    batch_size:
        Set Blob Tier sub-requests per Blob Batch (1 to 256; 1: no batches).
    rehydrate:
        ``"tier"`` (default): Set Blob Tier moves the blob itself online. ``"copy"``:
        Copy Blob makes an online copy at :func:`copy_path` (one request per blob; Blob
        Batch has no Copy Blob) and leaves the original in Archive (no early-deletion
        fee); states and reads of the original's path then follow its copy.
    """

    probe_page = LIST_PAGE

    provider = AZURE
    makes_own_entries = True  # its states carry the target's own entries (.entry)
    directory_size = None  # adlfs's entries of folders say size None

    def __init__(
        self,
        fs: Any,
        *,
        rehydrate_to: str = "Hot",
        retry: AzureRetry | Mapping[str, Any] | None = None,
        batch_size: int = BATCH_LIMIT,
        rehydrate: str = "tier",
    ) -> None:
        if rehydrate not in REHYDRATE_WAYS:
            raise ValueError(
                f"AzureStore: rehydrate={rehydrate!r} is not a way to rehydrate. "
                "Fix: pass rehydrate='tier' (Set Blob Tier, the default) or 'copy' (Copy Blob "
                "to .archivefs/rehydrated/, the original stays in Archive)."
            )
        if not 1 <= batch_size <= BATCH_LIMIT:
            raise ValueError(
                f"AzureStore: batch_size={batch_size} is outside Azure's 1..256. "
                "Fix: pass a batch_size between 1 and 256 (1 sends one request per blob)."
            )
        self.fs = fs
        self.rehydrate_to = AZURE.find_target(rehydrate_to) or rehydrate_to
        self.retry = AzureRetry.of(retry)
        self.restore_batch_size = batch_size  # the submitter keeps this many calls in flight
        self.batches_refused = False
        self.copies = rehydrate == "copy"
        self._online_copies: set[str] = set()  # originals whose copy was seen online
        self._queues: dict[tuple[str, str], list[_Queued]] = {}
        self._flushing: set[asyncio.Task[None]] = set()

    @property
    def _sdk_options(self) -> dict[str, Any]:
        """Options of each SDK call: no SDK retries (:attr:`retry` retries instead) and the
        user's adlfs timeouts (``read_timeout``, ``connection_timeout``, ``timeout``), which
        adlfs applies to its own calls only."""
        return {"retry_total": 0, **getattr(self.fs, "_timeout_kwargs", {})}

    @property
    def namespace(self) -> str:
        """``azure:<account>:<blob endpoint>``: containers are named per account."""
        service = self._service()
        return AZURE.journal_namespace(
            account=service.account_name, endpoint=service.primary_endpoint
        )

    def _service(self) -> Any:
        service = getattr(self.fs, "service_client", None)
        if service is None:
            raise ArchiveError(
                "the Azure filesystem has no blob service client.",
                fix="pass target_protocol='az' with adlfs options (connection_string, or "
                "account_name plus a credential).",
            )
        return service

    async def own_entry(self, props: Any) -> dict[str, Any] | None:
        """adlfs's own info dict of a listed or described blob or prefix, made by adlfs
        from the same answer (its ``_details``; no request). ``None`` without adlfs."""
        details = getattr(self.fs, "_details", None)
        if details is None:
            return None
        entries = await details([props])
        return dict(entries[0])

    async def _state(self, container: str, props: Any) -> ObjectState:
        return state_from_properties(container, props, await self.own_entry(props))

    # -- single blobs ----------------------------------------------------------------------

    async def head(self, path: str) -> ObjectState:
        """Get Blob Properties of one blob and return its state."""
        container, blob = split_path(path, AZURE)
        if not blob:
            raise InvalidPathError(
                "a container is not a blob.", path=path, fix="name a blob inside the container."
            )
        try:
            client = self._service().get_blob_client(container, blob)
            props = await self.retry.call(lambda: client.get_blob_properties(**self._sdk_options))
        except Exception as error:
            raise_translated(error, path, action="inspect")
        state = await self._state(container, props)
        if self.copies and state.storage_class.needs_restore and not blob.startswith(COPY_DIR):
            copy: ObjectState | None = None
            with contextlib.suppress(ObjectNotFoundError):
                copy = await self.head(copy_path(path))
            state = self._noted(with_copy(state, copy))
        return state

    def _noted(self, state: ObjectState) -> ObjectState:
        """Remember an original whose copy reads (reads of its path go there)."""
        if state.restore is RestoreState.RESTORED:
            self._online_copies.add(state.path)
        return state

    def read_path(self, path: str) -> str:
        """Where the bytes of ``path`` are read: its rehydrated copy once that is online
        (``rehydrate="copy"``), else ``path`` itself."""
        return copy_path(path) if path in self._online_copies else path

    async def restore(
        self,
        state: ObjectState,
        *,
        tier: RestoreTier,
        days: int | None,
        extra: dict[str, Any] | None = None,
    ) -> RestoreOutcome:
        """One Set Blob Tier to ``rehydrate_to`` at priority ``tier`` (Azure's rules first)."""
        check_restore_request(
            state.storage_class,
            tier,
            days,
            path=state.path,
            target=self.rehydrate_to,
            pending_tier=state.pending_tier,
            pending_target=state.pending_target,
        )
        priority = AZURE.find_speed(tier)  # Azure's spelling; the check refused any other
        assert priority is not None
        if self.copies and state.restore is RestoreState.RESTORING:
            # a pending copy: Azure raises its priority with Set Blob Tier on the copy
            container, blob = split_path(copy_path(state.path), AZURE)
            return await self._set_tier(container, blob, priority, state.path)
        if self.copies:
            return await self._copy(state.path, priority)
        container, blob = split_path(state.path, AZURE)
        if self.restore_batch_size > 1 and not self.batches_refused:
            return await self._enqueue(container, blob, priority, state.path)
        return await self._set_tier(container, blob, priority, state.path)

    async def _set_tier(
        self, container: str, blob: str, priority: str, path: str
    ) -> RestoreOutcome:
        """One Set Blob Tier request (retried by :attr:`retry`)."""
        statuses: list[int] = []
        try:
            client = self._service().get_blob_client(container, blob)
            await self.retry.call(
                lambda: client.set_standard_blob_tier(
                    self.rehydrate_to,
                    rehydrate_priority=priority,
                    raw_response_hook=lambda r: statuses.append(r.http_response.status_code),
                    **self._sdk_options,
                )
            )
        except Exception as error:
            raise_translated(error, path, action="rehydrate")
        # 202: a rehydration started (or its priority was raised); 200: already online
        return RestoreOutcome.ACCEPTED if statuses[-1:] == [202] else RestoreOutcome.RESTORED

    async def _copy(self, path: str, priority: str) -> RestoreOutcome:
        """One Copy Blob of the archived ``path`` to :func:`copy_path`, at ``rehydrate_to``
        and ``priority``: Azure rehydrates the copy; the original stays in Archive."""
        from azure.storage.blob import StandardBlobTier

        container, blob = split_path(path, AZURE)
        target_container, target_blob = split_path(copy_path(path), AZURE)
        service = self._service()
        source = service.get_blob_client(container, blob).url
        target = service.get_blob_client(target_container, target_blob)
        tier = StandardBlobTier(self.rehydrate_to)
        try:
            result = await self.retry.call(
                lambda: target.start_copy_from_url(
                    source,
                    standard_blob_tier=tier,
                    rehydrate_priority=priority,
                    **self._sdk_options,
                )
            )
        except Exception as error:
            if s3_error_code(error) == "PendingCopyOperation":
                return RestoreOutcome.IN_PROGRESS  # a copy is already on its way (a retry)
            raise_translated(error, path, action="copy to rehydrate")
        if str(result.get("copy_status") or "").lower() == "success":
            self._online_copies.add(path)
            return RestoreOutcome.RESTORED
        return RestoreOutcome.ACCEPTED  # pending: rehydrating into the copy

    # -- Blob Batch: concurrent restore() calls coalesced, 256 per request -------------------

    async def _enqueue(self, container: str, blob: str, priority: str, path: str) -> RestoreOutcome:
        """Queue one blob for the next batch of its container and priority; await its answer.

        The batch is sent when it is full, or once the calls already scheduled in
        this turn of the event loop have queued theirs (the submitter starts all its
        calls in one turn), so no request waits on a timer.
        """
        loop = asyncio.get_running_loop()
        key = (container, priority)
        queue = self._queues.setdefault(key, [])
        if not queue:
            loop.call_soon(self._flush, key)
        done: asyncio.Future[RestoreOutcome] = loop.create_future()
        queue.append(_Queued(blob, path, done))
        if len(queue) >= self.restore_batch_size:
            self._flush(key)
        return await done

    def _flush(self, key: tuple[str, str]) -> None:
        queued = self._queues.pop(key, None)
        if queued:
            task = asyncio.ensure_future(self._send_batch(key, queued))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def _send_batch(self, key: tuple[str, str], queued: list[_Queued]) -> None:
        if len(queued) == 1:  # a batch of one is still one request: send the plain one
            await self._fall_back(queued[0], key[1], key[0])
            return
        try:
            await self._batch_rounds(key, queued)
        except Exception as error:  # never leave a caller waiting
            for item in queued:
                if not item.done.done():
                    item.done.set_exception(translate(error, item.path, action="rehydrate"))

    async def _batch_rounds(self, key: tuple[str, str], queued: list[_Queued]) -> None:
        """Send ``queued`` in one Blob Batch; send the throttled ones again, per :attr:`retry`."""
        container, priority = key
        client = self._service().get_container_client(container)
        waiting = queued
        for attempt in range(1, self.retry.attempts + 1):
            if attempt > 1:
                await asyncio.sleep(self.retry.pause(attempt))
            try:
                parts = await client.set_standard_blob_tier_blobs(
                    self.rehydrate_to,
                    *[{"name": q.blob, "rehydrate_priority": priority} for q in waiting],
                    raise_on_any_failure=False,
                    **self._sdk_options,
                )
                answers = [part async for part in parts]
            except Exception as error:
                if is_transient(error) and attempt < self.retry.attempts:
                    continue  # the whole batch was throttled: all of it again
                code = getattr(error, "error_code", None)
                if is_transient(error) or code in _NOT_A_REFUSAL:
                    raise
                # the service refuses batches (e.g. an account without them): per blob
                self.batches_refused = True
                await asyncio.gather(*(self._fall_back(q, priority, container) for q in waiting))
                return
            again: list[_Queued] = []
            for item, answer in zip(waiting, answers, strict=True):
                status = int(answer.status_code)
                code = answer.headers.get("x-ms-error-code")
                if status in (200, 202):  # 202: pending (or priority raised); 200: online
                    accepted = status == 202
                    item.done.set_result(
                        RestoreOutcome.ACCEPTED if accepted else RestoreOutcome.RESTORED
                    )
                elif code in TRANSIENT_CODES or status >= 500:
                    again.append(item)
                else:
                    item.done.set_exception(_sub_error(code, status, item.path))
            waiting = again
            if not waiting:
                return
        for item in waiting:
            item.done.set_exception(
                StoreUnavailableError(
                    f"Azure kept throttling the rehydration ({self.retry.attempts} tries).",
                    path=item.path,
                    fix="run the same restore again later (only what was not accepted is "
                    "sent), or raise store_options={'retry': {'attempts': ...}}.",
                )
            )

    async def _fall_back(self, item: _Queued, priority: str, container: str) -> None:
        try:
            item.done.set_result(await self._set_tier(container, item.blob, priority, item.path))
        except Exception as error:
            item.done.set_exception(error)

    async def get_bytes(self, path: str) -> bytes:
        """One Get Blob of a whole (small) blob; :class:`ObjectNotFoundError` if absent."""
        try:
            data: bytes = await self.fs._cat_file(path)
        except Exception as error:
            raise_translated(error, path, action="read")
        return data

    async def get_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeRead:
        """One ranged Get Blob of ``[start, end)`` (``if_match``: the ETag it must have).

        From the rehydrated copy when there is one online: the copy has an ETag of its
        own, so ``if_match`` (the original's) is not sent; member reads still check
        each member's CRC-32."""
        where = self.read_path(path)
        if where != path:
            if_match = None
        container, blob = split_path(where, AZURE)
        kwargs: dict[str, Any] = {}
        if if_match:
            from azure.core import MatchConditions

            kwargs = {"etag": if_match, "match_condition": MatchConditions.IfNotModified}
        try:
            client = self._service().get_blob_client(container, blob)
            stream = await client.download_blob(offset=start, length=end - start, **kwargs)
            data: bytes = await stream.readall()
        except Exception as error:
            if start == 0 and is_unsatisfiable_range(error):
                return EMPTY_READ  # an empty blob has no byte 0 to range over
            raise_translated(error, path, action="read")
        # properties.size is the ranged download's length; the blob's own size is the
        # total in Content-Range ("bytes 506-865/11397")
        content_range = str(getattr(stream.properties, "content_range", "") or "")
        total = content_range.rsplit("/", 1)[-1]
        size = int(total) if total.isdigit() else int(stream.properties.size)
        return RangeRead(data, size, stream.properties.etag)

    async def is_directory(self, path: str) -> bool:
        """Whether anything is stored below ``path`` (one List Blobs request)."""
        container, blob = split_path(path, AZURE)
        try:
            pages = (
                self._service()
                .get_container_client(container)
                .list_blobs(name_starts_with=blob.rstrip("/") + "/", results_per_page=1)
                .by_page()
            )
            async for page in pages:
                async for _ in page:
                    return True
                return False
        except Exception as error:
            raise_translated(error, path, action="list")
        return False

    # -- listings --------------------------------------------------------------------------

    async def list(self, path: str, *, recursive: bool = False) -> Listing:
        """List a directory (or everything below it) with tiers and rehydration states."""
        container, blob = split_path(path, AZURE)
        prefix = blob.rstrip("/") + "/" if blob else ""

        async def listing() -> Listing:
            files: list[ObjectState] = []
            dirs: dict[str, dict[str, Any] | None] = {}
            client = self._service().get_container_client(container)
            # metadata (as adlfs lists): it says which blobs are folder markers
            if recursive:
                items = client.list_blobs(
                    name_starts_with=prefix,
                    results_per_page=LIST_PAGE,
                    include=["metadata"],
                    **self._sdk_options,
                )
            else:
                items = client.walk_blobs(
                    name_starts_with=prefix,
                    delimiter="/",
                    include=["metadata"],
                    **self._sdk_options,
                )
            async for item in items:
                name = f"{container}/{item.name.rstrip('/')}"
                if item.name == prefix:
                    continue  # the folder's own marker ("dir/"), not something in it
                if not hasattr(item, "blob_tier"):  # a prefix: a folder
                    dirs.setdefault(name, await self.own_entry(item))
                elif is_folder_marker(item) or item.name.endswith("/"):
                    dirs[name] = await self.own_entry(item)  # the marker describes it
                else:
                    files.append(await self._state(container, item))
            entries = {d: e for d, e in dirs.items() if e is not None}
            return Listing(files=files, directories=list(dirs), directory_entries=entries)

        try:
            found = await self.retry.call(listing)
        except Exception as error:
            raise_translated(error, path, action="list")
        if not self.copies:
            return found
        merged = await self._merge_copies(container, {s.path: s for s in found.files})
        return Listing(
            files=[s for s in merged.values() if s is not None], directories=found.directories
        )

    async def _merge_copies(
        self, container: str, states: dict[str, ObjectState | None]
    ) -> dict[str, ObjectState | None]:
        """``states`` with the archived ones' copies taken into account (``rehydrate="copy"``):
        one List Blobs (per 5,000) of the copies below the archived blobs' common prefix."""
        archived = sorted(
            split_path(p, AZURE)[1]
            for p, s in states.items()
            if s is not None and s.storage_class.needs_restore
        )
        if not archived:
            return states
        copies = await self._list_states(container, [f"{COPY_DIR}/{b}" for b in archived])
        out = dict(states)
        for name in archived:
            path = f"{container}/{name}"
            original = out[path]
            assert original is not None
            out[path] = self._noted(with_copy(original, copies.get(copy_path(path))))
        return out

    async def _probe_listing(
        self, container: str, blobs: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        found = await self._list_states(container, blobs)
        if self.copies:
            found = await self._merge_copies(container, found)
        return found

    async def _list_states(
        self, container: str, blobs: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        """States of ``blobs`` (sorted) from List Blobs under their common prefix."""
        prefix = _common_prefix(blobs)
        wanted = set(blobs)
        last = blobs[-1]

        async def listing() -> dict[str, ObjectState | None]:
            found: dict[str, ObjectState | None] = {f"{container}/{b}": None for b in blobs}
            client = self._service().get_container_client(container)
            async for props in client.list_blobs(
                name_starts_with=prefix, results_per_page=LIST_PAGE, **self._sdk_options
            ):
                if props.name in wanted:
                    state = state_from_properties(container, props)
                    found[state.path] = state
                if props.name >= last:
                    break  # listings are in name order: nothing further is wanted
            return found

        try:
            return await self.retry.call(listing)
        except Exception as error:
            raise_translated(error, f"{container}/{prefix}", action="list")

    # -- claims shared by hosts: conditional Put Blob --------------------------------------

    async def read_tagged(self, path: str, *, limit: int = TAGGED_LIMIT) -> Tagged | None:
        """A small blob's first ``limit`` bytes, ETag, age by Azure's clock and whole size,
        from one Get Blob (``None`` when absent)."""
        container, blob = split_path(path, AZURE)

        async def get() -> Tagged:
            dates: list[str] = []

            def date_of(response: Any) -> None:  # the response's Date: the store's clock
                dates.append(str(response.http_response.headers.get("Date", "")))

            client = self._service().get_blob_client(container, blob)
            stream = await client.download_blob(
                offset=0, length=limit, raw_response_hook=date_of, **self._sdk_options
            )
            data: bytes = await stream.readall()
            props = stream.properties
            age = server_age(props.last_modified, dates[0] if dates else None)
            total = str(props.content_range or "").rpartition("/")[2]  # of the whole blob
            return Tagged(data, str(props.etag), age, int(total) if total.isdigit() else None)

        try:
            return await self.retry.call(get)
        except Exception as error:
            if s3_error_code(error) in ("BlobNotFound", "ResourceNotFound"):
                return None
            raise_translated(error, path, action="read")

    async def create_exclusive(self, path: str, body: bytes) -> bool:
        """Put Blob only if no blob is there (``If-None-Match: *``); False if taken."""
        return await self._put_conditional(path, body, overwrite=False)

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool:
        """Put Blob only if its ETag is still ``etag`` (``If-Match``); False if not."""
        from azure.core import MatchConditions

        return await self._put_conditional(
            path, body, overwrite=True, etag=etag, match_condition=MatchConditions.IfNotModified
        )

    async def _put_conditional(self, path: str, body: bytes, **condition: Any) -> bool:
        """One Put Blob (azure-storage-blob sends ``If-None-Match: *`` for
        ``overwrite=False``, ``If-Match`` for an etag). A try that was throttled is sent
        again: if an earlier try did land, the claim found carries this filesystem's
        claimer id, which the claims treat as won."""
        container, blob = split_path(path, AZURE)
        client = self._service().get_blob_client(container, blob)
        try:
            await self.retry.call(
                lambda: client.upload_blob(body, **condition, **self._sdk_options)
            )
        except Exception as error:
            # 409 BlobAlreadyExists (If-None-Match: *), 412 ConditionNotMet (If-Match)
            if s3_error_code(error) in _CONDITION_FAILED:
                return False
            raise_translated(error, path, action="write")
        return True


def upload_at_tier(fs: Any, local: str, path: str, tier: str, metadata: dict[str, str]) -> None:
    """Upload a local file to ``container/blob`` directly in ``tier`` (blocking).

    One Put Blob with ``x-ms-access-tier`` (azure-storage-blob's
    ``standard_blob_tier``): adlfs's ``put_file`` cannot set a tier, and a
    second Set Blob Tier request would make the blob Hot first.
    """
    from azure.storage.blob import StandardBlobTier
    from fsspec.asyn import sync

    container, blob = split_path(fs._strip_protocol(path), AZURE)
    spec = AZURE.find_class(tier)
    standard = StandardBlobTier(spec.name if spec is not None else tier)

    async def put() -> None:
        client = fs.service_client.get_blob_client(container, blob)
        with open(local, "rb") as data:
            await client.upload_blob(
                data, overwrite=True, standard_blob_tier=standard, metadata=metadata
            )

    try:
        sync(fs.loop, put)
    except Exception as error:
        raise_translated(error, path, action="upload")


def _sub_error(code: str | None, status: int, path: str) -> ArchiveError:
    """The archivefs error for one refused sub-request of a Blob Batch."""
    known = translate_azure(code or str(status), path, "rehydrate")
    if known is not None:
        return known
    return ArchiveError(
        f"Azure refused to rehydrate this blob ({code or status}).",
        path=path,
        fix="check the blob's tier and type (only block blobs in Archive rehydrate); run the "
        "restore again to retry it alone.",
    )


def _common_prefix(names: Sequence[str]) -> str:
    first, last = names[0], names[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
