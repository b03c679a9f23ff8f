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
* **Tier changes** (rehydration) use azure-storage-blob's ``set_standard_blob_tier``
  on that same client: adlfs has no Set Blob Tier call.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from archivefs.errors import ArchiveError, InvalidPathError, ObjectNotFoundError
from archivefs.model import (
    ObjectState,
    RestoreState,
    RestoreTier,
    StorageClass,
    check_restore_request,
)
from archivefs.providers import AZURE
from archivefs.stores.s3 import Listing, RangeRead, RestoreOutcome
from archivefs.stores.translate import raise_translated

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

LIST_PAGE = 5000  # Azure's maximum per List Blobs page
_PENDING = "rehydrate-pending-to-"


def split_path(path: str) -> tuple[str, str]:
    """Split ``container/blob`` (no protocol) into container and blob name."""
    path = path.lstrip("/")
    container, _, blob = path.partition("/")
    if not container:
        raise InvalidPathError(
            "the path names no container.",
            path=path or "''",
            fix="use the form 'container/blob' or 'az://container/blob'.",
        )
    return container, blob


def state_from_properties(container: str, props: Any) -> ObjectState:
    """An :class:`ObjectState` from azure-storage-blob's ``BlobProperties`` (listing or HEAD)."""
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
    )


class AzureStore:
    """Archive-aware operations on an adlfs filesystem (the same interface as ``S3Store``).

    Parameters
    ----------
    fs:
        An ``adlfs.AzureBlobFileSystem``.
    rehydrate_to:
        The online tier rehydrated blobs go to (Hot, Cool or Cold).
    """

    provider = AZURE

    def __init__(self, fs: Any, *, rehydrate_to: str = "Hot", **_: Any) -> None:
        self.fs = fs
        self.rehydrate_to = AZURE.find_target(rehydrate_to) or rehydrate_to

    def _service(self) -> Any:
        service = getattr(self.fs, "service_client", None)
        if service is None:
            raise ArchiveError(
                "the Azure filesystem has no blob service client.",
                fix="pass target_protocol='az' with adlfs options (connection_string, or "
                "account_name plus a credential).",
            )
        return service

    # -- single blobs ----------------------------------------------------------------------

    async def head(self, path: str) -> ObjectState:
        """Get Blob Properties of one blob and return its state."""
        container, blob = split_path(path)
        if not blob:
            raise InvalidPathError(
                "a container is not a blob.", path=path, fix="name a blob inside the container."
            )
        try:
            client = self._service().get_blob_client(container, blob)
            props = await client.get_blob_properties()
        except Exception as error:
            raise_translated(error, path, action="inspect")
        return state_from_properties(container, props)

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
        priority = RestoreTier.parse(str(tier), provider="azure")
        container, blob = split_path(state.path)
        statuses: list[int] = []
        try:
            client = self._service().get_blob_client(container, blob)
            await client.set_standard_blob_tier(
                self.rehydrate_to,
                rehydrate_priority=priority.value,
                raw_response_hook=lambda r: statuses.append(r.http_response.status_code),
            )
        except Exception as error:
            raise_translated(error, state.path, action="rehydrate")
        # 202: a rehydration started (or its priority was raised); 200: already online
        return RestoreOutcome.ACCEPTED if statuses[-1:] == [202] else RestoreOutcome.RESTORED

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
        """One ranged Get Blob of ``[start, end)`` (``if_match``: the ETag it must have)."""
        container, blob = split_path(path)
        kwargs: dict[str, Any] = {}
        if if_match:
            from azure.core import MatchConditions

            kwargs = {"etag": if_match, "match_condition": MatchConditions.IfNotModified}
        client = self._service().get_blob_client(container, blob)
        stream = await client.download_blob(offset=start, length=end - start, **kwargs)
        data: bytes = await stream.readall()
        return RangeRead(data, int(stream.properties.size), stream.properties.etag)

    async def is_directory(self, path: str) -> bool:
        """Whether anything is stored below ``path`` (one List Blobs request)."""
        container, blob = split_path(path)
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
        container, blob = split_path(path)
        prefix = blob.rstrip("/") + "/" if blob else ""
        files: list[ObjectState] = []
        dirs: list[str] = []
        try:
            client = self._service().get_container_client(container)
            if recursive:
                async for props in client.list_blobs(
                    name_starts_with=prefix, results_per_page=LIST_PAGE
                ):
                    files.append(state_from_properties(container, props))
            else:
                async for item in client.walk_blobs(name_starts_with=prefix, delimiter="/"):
                    if hasattr(item, "blob_tier"):
                        files.append(state_from_properties(container, item))
                    else:
                        dirs.append(f"{container}/{item.name.rstrip('/')}")
        except Exception as error:
            raise_translated(error, path, action="list")
        return Listing(files=files, directories=dirs)

    async def probe(self, paths: Iterable[str]) -> dict[str, ObjectState | None]:
        """States of many blobs at once; ``None`` for blobs that do not exist.

        One path: one Get Blob Properties. Several in a container: List Blobs
        pages under their common prefix (up to 5,000 blobs per request).
        """
        by_container: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            container, blob = split_path(path)
            by_container[container].append(blob)
        results: dict[str, ObjectState | None] = {}
        for container, blobs in by_container.items():
            unique = sorted(set(blobs))
            if len(unique) == 1:
                results.update(await self._probe_heads(container, unique))
            else:
                results.update(await self._probe_listing(container, unique))
        return results

    async def _probe_heads(
        self, container: str, blobs: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        async def one(blob: str) -> tuple[str, ObjectState | None]:
            path = f"{container}/{blob}"
            try:
                return path, await self.head(path)
            except ObjectNotFoundError:
                return path, None

        return dict(await asyncio.gather(*(one(b) for b in blobs)))

    async def _probe_listing(
        self, container: str, blobs: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        prefix = _common_prefix(blobs)
        wanted = set(blobs)
        found: dict[str, ObjectState | None] = {f"{container}/{b}": None for b in blobs}
        last = blobs[-1]
        try:
            client = self._service().get_container_client(container)
            async for props in client.list_blobs(
                name_starts_with=prefix, results_per_page=LIST_PAGE
            ):
                if props.name in wanted:
                    state = state_from_properties(container, props)
                    found[state.path] = state
                if props.name >= last:
                    break  # listings are in name order: nothing further is wanted
        except Exception as error:
            raise_translated(error, f"{container}/{prefix}", action="list")
        return found

    # -- claims shared by hosts: not on Azure yet ----------------------------------------------

    async def read_tagged(self, path: str) -> tuple[bytes, str] | None:
        raise _no_claims(path)

    async def create_exclusive(self, path: str, body: bytes) -> bool:
        raise _no_claims(path)

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool:
        raise _no_claims(path)


def _no_claims(path: str) -> ArchiveError:
    return ArchiveError(
        "bucket claims (deduplication across hosts) are not implemented for Azure yet.",
        path=path,
        fix="open the filesystem with bucket_claims=False (the local journal still dedupes).",
    )


def _common_prefix(names: Sequence[str]) -> str:
    first, last = names[0], names[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
