"""The Google Cloud Storage cold-store adapter: classes from listings, reads, no restores.

Every GCS class reads at once: NEARLINE, COLDLINE and ARCHIVE bill a retrieval
fee per GB read (``access == "retrieval_fee"``) and a minimum storage duration,
but nothing has to be restored. So this adapter lists and reads, and its
``restore`` refuses with :class:`NotArchivedError` (what any request to restore an
object that reads at once gets, on every provider): plans mark GCS objects
``read``, and the filesystem's budget hooks guard bulk reads of fee-charging ones
instead (docs/cost-model.md).

Which library does what: every request goes through gcsfs's own choke point
(``GCSFileSystem._call``: its session, credentials, retries and error checks).
gcsfs's ``ls``/``info`` keep ``storageClass``, but a listing of the JSON API's
``objects.list`` answers up to 1,000 objects per request with their classes, so
states of many objects come from one listing, never one ``objects.get`` each.

An object's ``etag`` here is its **generation** (GCS's version number), because
GCS's preconditions (``ifGenerationMatch``) take generations: bucket claims use
``ifGenerationMatch=0`` to create and ``ifGenerationMatch=<generation>`` to replace.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn

from archivefs.errors import InvalidPathError
from archivefs.model import (
    ObjectState,
    RestoreState,
    RestoreTier,
    StorageClass,
    check_restore_request,
)
from archivefs.providers import GCS
from archivefs.stores.base import (
    TAGGED_LIMIT,
    BulkProbe,
    Listing,
    RangeRead,
    RestoreOutcome,
    Tagged,
    server_age,
    split_path,
)
from archivefs.stores.translate import raise_translated

if TYPE_CHECKING:
    from collections.abc import Sequence

LIST_PAGE = 1000  # the JSON API's maximum maxResults for objects.list


ZB_HNS_VARIABLE = "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT"


def before_connect(options: dict[str, Any]) -> None:
    """Keep gcsfs from probing each bucket over gRPC when the endpoint is not Google's.

    gcsfs (2026.x) swaps in a filesystem class that asks Google's Storage Control API
    (gRPC) for every bucket's layout, and does not remember an unanswered probe: against
    an emulator or another GCS-compatible endpoint each call waits for its timeout. The class is
    chosen when gcsfs is imported, from ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT``; so, for an
    endpoint that is not Google's (``endpoint_url``, or ``STORAGE_EMULATOR_HOST``), set it
    to ``false`` if the user has not set it, before gcsfs is imported.
    """
    endpoint = options.get("endpoint_url") or os.environ.get("STORAGE_EMULATOR_HOST") or ""
    if not endpoint or endpoint == "default" or _is_google(str(endpoint)):
        return
    os.environ.setdefault(ZB_HNS_VARIABLE, "false")


def _is_google(endpoint: str) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}").hostname or ""
    return host == "googleapis.com" or host.endswith(".googleapis.com")


def state_from_resource(
    bucket: str, item: dict[str, Any], entry: dict[str, Any] | None = None
) -> ObjectState:
    """An :class:`ObjectState` from a JSON API object resource (listing or ``objects.get``);
    ``entry``: gcsfs's own info dict of it (:meth:`GcsStore.own_entry`)."""
    storage_class = StorageClass.parse(
        str(item.get("storageClass") or GCS.default_class), provider="gcs"
    )
    generation = item.get("generation")
    return ObjectState(
        path=f"{bucket}/{item['name']}",
        size=int(item.get("size") or 0),
        storage_class=storage_class,
        restore=RestoreState.HOT,  # every GCS class reads at once
        etag=str(generation) if generation is not None else item.get("etag"),
        last_modified=_timestamp(item.get("updated")),
        entry=entry,
    )


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


class GcsPreconditionFailed(OSError):
    """412 ``conditionNotMet``: the object's generation is not the one required.

    Carries ``error_code = "PreconditionFailed"`` (S3's name for the same answer),
    which ``stores.translate.s3_error_code`` reads, so the filesystem treats a changed
    bundle on GCS as it does on S3.
    """

    error_code = "PreconditionFailed"


def _raise(error: BaseException, path: str, action: str) -> NoReturn:
    """gcsfs's errors as archivefs errors (``stores.translate.translate_gcs``)."""
    raise_translated(error, path, action=action)


class GcsStore(BulkProbe):
    """Archive-aware operations on a gcsfs filesystem (the same interface as ``S3Store``).

    Parameters
    ----------
    fs:
        A ``gcsfs.GCSFileSystem``.
    """

    provider = GCS
    makes_own_entries = True  # its states carry the target's own entries (.entry)

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    @property
    def namespace(self) -> str:
        """``gcs::<endpoint>``: bucket names are global, so the endpoint names the store."""
        return GCS.journal_namespace(endpoint=getattr(self.fs, "_location", None))

    async def _json(self, path: str, action: str, url: str, *args: str, **params: Any) -> Any:
        """One JSON API request through gcsfs's ``_call``; errors translated for ``path``."""
        try:
            return await self.fs._call("GET", url, *args, json_out=True, **params)
        except Exception as error:
            _raise(error, path, action)

    def own_entry(self, bucket: str, item: dict[str, Any]) -> dict[str, Any] | None:
        """gcsfs's own info dict of an object resource (its ``_process_object``, made from
        the same answer; no request). ``None`` without gcsfs."""
        process = getattr(self.fs, "_process_object", None)
        return None if process is None else dict(process(bucket, item))

    def _state(self, bucket: str, item: dict[str, Any]) -> ObjectState:
        return state_from_resource(bucket, item, self.own_entry(bucket, item))

    # -- single objects ----------------------------------------------------------------

    async def head(self, path: str) -> ObjectState:
        """``objects.get`` of one object (metadata only) and its state."""
        bucket, name = split_path(path, GCS)
        if not name:
            raise InvalidPathError(
                "a bucket is not an object.", path=path, fix="name an object inside the bucket."
            )
        item = await self._json(path, "inspect", "b/{}/o/{}", bucket, name)
        return self._state(bucket, item)

    async def restore(
        self,
        state: ObjectState,
        *,
        tier: RestoreTier,
        days: int | None,
        extra: dict[str, Any] | None = None,
    ) -> RestoreOutcome:
        """GCS has no restore: every class reads at once. Raises :class:`NotArchivedError`."""
        check_restore_request(state.storage_class, tier, days, path=state.path)
        raise AssertionError("unreachable: check_restore_request refuses every GCS class")

    async def get_bytes(self, path: str) -> bytes:
        """One download of a whole (small) object; :class:`ObjectNotFoundError` if absent."""
        try:
            data: bytes = await self.fs._cat_file(path)
        except Exception as error:
            _raise(error, path, "read")
        return data

    async def get_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeRead:
        """One ranged download of ``[start, end)`` (``if_match``: the generation it must have)."""
        bucket, name = split_path(path, GCS)
        params: dict[str, Any] = {"alt": "media"}
        if if_match:
            params["ifGenerationMatch"] = if_match
        try:
            headers, data = await self.fs._call(
                "GET",
                "b/{}/o/{}",
                bucket,
                name,
                headers={"Range": f"bytes={start}-{end - 1}"},
                **params,
            )
        except FileExistsError as error:  # gcsfs's translation of 412
            changed = GcsPreconditionFailed(f"generation is not {if_match} (412 conditionNotMet)")
            changed.__cause__ = error
            _raise(changed, path, "read")
        except Exception as error:
            _raise(error, path, "read")
        total = str(headers.get("Content-Range", "")).rpartition("/")[2]
        generation = headers.get("x-goog-generation")
        return RangeRead(bytes(data), int(total) if total.isdigit() else None, generation)

    async def is_directory(self, path: str) -> bool:
        """Whether anything is stored below ``path`` (one ``objects.list`` of one entry)."""
        bucket, name = split_path(path, GCS)
        page = await self._json(
            path, "list", "b/{}/o", bucket, prefix=name.rstrip("/") + "/", maxResults=1
        )
        return bool(page.get("items") or page.get("prefixes"))

    # -- listings ----------------------------------------------------------------------

    async def _pages(self, bucket: str, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every page of ``objects.list`` for ``params`` (1,000 objects per page)."""
        pages: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            extra = {"pageToken": token} if token else {}
            page = await self._json(
                path, "list", "b/{}/o", bucket, maxResults=LIST_PAGE, **params, **extra
            )
            pages.append(page)
            token = page.get("nextPageToken")
            if not token:
                return pages

    async def list(self, path: str, *, recursive: bool = False) -> Listing:
        """List a folder (or everything below it) with each object's class."""
        bucket, name = split_path(path, GCS)
        prefix = name.rstrip("/") + "/" if name else ""
        params: dict[str, Any] = {"prefix": prefix}
        if not recursive:
            params["delimiter"] = "/"
        files: list[ObjectState] = []
        dirs: dict[str, None] = {}
        for page in await self._pages(bucket, path, **params):
            for item in page.get("items") or ():
                if item["name"] == prefix:
                    continue  # the folder's own placeholder ("dir/"), not something in it
                if item["name"].endswith("/"):  # a "dir/" placeholder: a folder, as gcsfs
                    dirs[f"{bucket}/{item['name'].rstrip('/')}"] = None
                else:
                    files.append(self._state(bucket, item))
            dirs.update((f"{bucket}/{p.rstrip('/')}", None) for p in page.get("prefixes") or ())
        return Listing(files=files, directories=list(dirs))

    async def _probe_listing(
        self, bucket: str, names: Sequence[str]
    ) -> dict[str, ObjectState | None]:
        """States of many objects from one listing of their common prefix (paged)."""
        prefix = _common_prefix(names)
        wanted = set(names)
        last = names[-1]
        found: dict[str, ObjectState | None] = {f"{bucket}/{n}": None for n in names}
        token: str | None = None
        while True:
            extra = {"pageToken": token} if token else {}
            page = await self._json(
                f"{bucket}/{prefix}",
                "list",
                "b/{}/o",
                bucket,
                prefix=prefix,
                maxResults=LIST_PAGE,
                **extra,
            )
            items = page.get("items") or []
            for item in items:
                if item["name"] in wanted:
                    state = state_from_resource(bucket, item)
                    found[state.path] = state
            token = page.get("nextPageToken")
            if not token or (items and items[-1]["name"] >= last):
                return found  # listings are in name order: nothing further is wanted

    # -- conditional writes (claims shared by every host) ------------------------------

    async def create_exclusive(self, path: str, body: bytes) -> bool:
        """Write ``path`` only if nothing is there (``ifGenerationMatch=0``); False if taken."""
        return await self._upload_if(path, body, "0")

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool:
        """Overwrite ``path`` only if its generation is still ``etag``; False if not."""
        return await self._upload_if(path, body, etag)

    async def read_tagged(self, path: str, *, limit: int = TAGGED_LIMIT) -> Tagged | None:
        """A small object's bytes, generation, age by GCS's clock and size (``None`` when
        absent): ``objects.get`` of its metadata, then its bytes at that generation (read
        again when it was replaced in between); none of an object over ``limit`` bytes."""
        import json

        bucket, name = split_path(path, GCS)
        for _ in range(3):
            try:
                headers, body = await self.fs._call("GET", "b/{}/o/{}", bucket, name)
                item = json.loads(body)
                generation = str(item["generation"])
                size = int(item.get("size") or 0)
                data = b""
                if size <= limit:
                    _, data = await self.fs._call(
                        "GET", "b/{}/o/{}", bucket, name, alt="media", ifGenerationMatch=generation
                    )
            except FileNotFoundError:
                return None
            except FileExistsError:  # gcsfs's 412: replaced since its metadata was read
                continue
            except Exception as error:
                _raise(error, path, "read")
            age = server_age(_timestamp(item.get("updated")), headers.get("Date"))
            return Tagged(bytes(data), generation, age, size)
        _raise(GcsPreconditionFailed("replaced during each of 3 reads (412)"), path, "read")

    async def _upload_if(self, path: str, body: bytes, generation: str) -> bool:
        """One media upload with ``ifGenerationMatch``; False on 412 (precondition failed)."""
        bucket, name = split_path(path, GCS)
        try:
            await self.fs._call(
                "POST",
                f"{self.fs._location}/upload/storage/v1/b/{bucket}/o",
                uploadType="media",
                name=name,
                ifGenerationMatch=generation,
                data=body,
                headers={"Content-Type": "application/octet-stream"},
            )
        except FileExistsError:  # gcsfs's translation of 412 Precondition Failed
            return False
        except Exception as error:
            _raise(error, path, "write")
        self.fs.invalidate_cache(path)
        return True


UPLOAD_CHUNK = 32 * 2**20  # resumable upload chunks: a multiple of 256 KiB, as GCS requires


def upload_in_class(
    fs: Any, local: str, path: str, storage_class: str, metadata: dict[str, str]
) -> None:
    """Upload a local file to ``bucket/object`` directly in ``storage_class`` (blocking).

    One resumable upload whose first request names the class and the metadata
    (gcsfs's ``put_file`` cannot set a class, and a rewrite afterwards would be a
    second, billed write), then chunks of 32 MiB through gcsfs's ``_call``.
    """
    from fsspec.asyn import sync

    bucket, name = split_path(fs._strip_protocol(path), GCS)
    size = os.path.getsize(local)

    async def put() -> None:
        headers, _ = await fs._call(
            "POST",
            f"{fs._location}/upload/storage/v1/b/{bucket}/o",
            uploadType="resumable",
            json={"name": name, "storageClass": storage_class, "metadata": metadata},
        )
        session = headers["Location"]
        with open(local, "rb") as source:
            offset = 0
            while True:
                chunk = source.read(UPLOAD_CHUNK)
                done = offset + len(chunk) >= size
                where = f"{offset}-{offset + len(chunk) - 1}" if chunk else "*"
                await fs._call(
                    "PUT",
                    session,
                    data=chunk,
                    headers={
                        "Content-Range": f"bytes {where}/{size if done else '*'}",
                        "Content-Type": "application/octet-stream",
                    },
                )
                offset += len(chunk)
                if done:
                    return

    try:
        sync(fs.loop, put)
    except Exception as error:
        _raise(error, path, "upload")
    fs.invalidate_cache(path)


def _common_prefix(names: Sequence[str]) -> str:
    first, last = names[0], names[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
