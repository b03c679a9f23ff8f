"""What ArchiveFileSystem answers as its target filesystem (s3fs, adlfs, gcsfs, ocifs) does.

archivefs behaves as its target on objects that need no restore. The calls here have no
archive meaning of their own (object versions, tags, metadata, URLs, bucket listings,
directories and buckets made or removed), so they are the target's: answered by the
target's own method, or refused with an error naming the method and the target when that
library has none. Bundle members are not objects of the store: a call about a member's
own object is refused.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from typing import TYPE_CHECKING, Any, Protocol

from fsspec.asyn import sync_wrapper

from archivefs.entries import version_entry
from archivefs.errors import InvalidPathError
from archivefs.wrapped import unwrapped, wrapped_sync

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from archivefs.access.parts import Parts
    from archivefs.catalog.view import CatalogView

VERSION_QUERY = "?versionId="


def split_version(path: str, version_id: str | None = None) -> tuple[str, str | None]:
    """``path`` without a ``?versionId=`` suffix, and the version it or ``version_id`` names.

    Raises ``ValueError`` when both name a version and they differ (as s3fs does)."""
    bare, _, suffix = path.partition(VERSION_QUERY)
    named = suffix or None
    if named is not None and version_id is not None and named != version_id:
        raise ValueError(
            f"{path!r} names version {named!r} but version_id={version_id!r}: name one."
        )
    return bare, named or version_id


def target_method(target: Any, name: str) -> Any:
    """The target filesystem's method ``name`` (its async ``_name`` if it has one)."""
    inner = unwrapped(target)
    for owner in (target, inner):
        for candidate in (f"_{name}", name):
            method = getattr(owner, candidate, None)
            if method is not None and not _inherited_stub(owner, candidate):
                return method
    protocol = getattr(inner, "protocol", "?")
    raise NotImplementedError(
        f"{name}(): the target filesystem {type(inner).__name__} ({protocol}) has no {name}; "
        "archivefs answers it only through the target's own method."
    )


def _inherited_stub(owner: Any, name: str) -> bool:
    """Whether ``owner.name`` is fsspec's base-class placeholder (which raises)."""
    from fsspec.asyn import AsyncFileSystem
    from fsspec.spec import AbstractFileSystem

    own = getattr(type(owner), name, None)
    return own is not None and own in (
        getattr(AbstractFileSystem, name, None),
        getattr(AsyncFileSystem, name, None),
    )


async def call_target(target: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the target's ``name`` (async or blocking) and return its answer."""
    method = target_method(target, name)
    if inspect.iscoroutinefunction(method):
        return await method(*args, **kwargs)
    # a blocking method (s3fs's get_tags, modified) runs its own sync() on the I/O loop:
    # called from a worker thread, never from the loop it waits on
    return await asyncio.to_thread(method, *args, **kwargs)


async def refuse_member(catalogs: CatalogView, path: str, verb: str) -> None:
    """Raise if ``path`` is a bundle member: it has no object of its own to ask about."""
    where = await catalogs.locate(path)
    if where.member is not None:
        raise InvalidPathError(
            f"is a member of bundle {where.member.bundle!r}, not an object of its own: "
            f"{verb} is about the store's objects.",
            path=path,
            fix=f"ask about the bundle ({where.member.bundle!r}), or read the member "
            "with fs.open()/fs.cat().",
        )


class TargetCalls:
    """The target filesystem's own calls (see the module docstring): ``parts`` gives the
    target (``parts.fs``), the catalogs, path stripping and cache invalidation, and
    ``info`` is the filesystem's own ``info`` (checksum's fallback)."""

    def __init__(self, parts: Parts, info: Callable[..., Awaitable[dict[str, Any]]]) -> None:
        self.parts = parts
        self.info = info

    async def object_call(self, name: str, path: str, *args: Any, **kwargs: Any) -> Any:
        path = self.parts.strip(path)
        await refuse_member(self.parts.catalogs, split_version(path)[0], f"{name}()")
        return await call_target(self.parts.fs, name, path, *args, **kwargs)

    async def url(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """A URL that reads ``path`` (the target's ``url``, given only what the caller gave:
        s3fs's and adlfs's take ``expires``, gcsfs's ``generation``)."""
        return await self.object_call("url", path, *args, **kwargs)

    async def getxattr(self, path: str, attr_name: str, **kwargs: Any) -> Any:
        """One user-metadata value of ``path`` (the target's ``getxattr``)."""
        return await self.object_call("getxattr", path, attr_name, **kwargs)

    async def setxattr(self, path: str, copy_kwargs: Any = None, **kwargs: Any) -> Any:
        """Set user metadata of ``path`` (the target's ``setxattr``)."""
        self.parts.invalidate_cache(self.parts.strip(path))
        return await self.object_call("setxattr", path, copy_kwargs=copy_kwargs, **kwargs)

    async def metadata(self, path: str, refresh: bool = False, **kwargs: Any) -> Any:
        """The user metadata of ``path`` (the target's ``metadata``)."""
        return await self.object_call("metadata", path, refresh=refresh, **kwargs)

    async def checksum(self, path: str, refresh: bool = False) -> Any:
        """A number that changes when ``path``'s content does (the target's ``checksum``)."""
        path = self.parts.strip(path)
        if refresh:
            self.parts.invalidate_cache(path)
        try:
            return await self.object_call("checksum", path, refresh=refresh)
        except NotImplementedError:  # fsspec's own answer: a token of the info dict
            from fsspec.utils import tokenize

            return int(tokenize(await self.info(path)), 16)

    async def modified(self, path: str, **kwargs: Any) -> Any:
        """When ``path`` was last written (the target's ``modified``)."""
        return await self.object_call("modified", path, **kwargs)

    async def created(self, path: str, **kwargs: Any) -> Any:
        """When ``path`` was created (the target's ``created``: adlfs has one, s3fs none)."""
        return await self.object_call("created", path, **kwargs)

    async def setxattrs(self, path: str, **kwargs: Any) -> Any:
        """Set the user metadata of ``path`` to ``kwargs`` (the target's ``setxattrs``:
        adlfs's)."""
        self.parts.invalidate_cache(self.parts.strip(path))
        return await self.object_call("setxattrs", path, **kwargs)

    async def get_tags(self, path: str) -> Any:
        """The object tags of ``path`` (the target's ``get_tags``)."""
        return await self.object_call("get_tags", path)

    async def put_tags(self, path: str, tags: dict[str, str], mode: str = "o") -> Any:
        """Set the object tags of ``path`` (the target's ``put_tags``)."""
        return await self.object_call("put_tags", path, tags, mode=mode)

    async def merge(self, path: str, filelist: list[str], **kwargs: Any) -> Any:
        """Write ``path`` as the concatenation of ``filelist`` (the target's ``merge``)."""
        path = self.parts.strip(path)
        self.parts.invalidate_cache(path)
        for part in filelist:
            await refuse_member(self.parts.catalogs, self.parts.strip(part), "merge()")
        return await self.object_call("merge", path, filelist, **kwargs)

    async def list_multipart_uploads(self, bucket: str) -> Any:
        """Unfinished multipart uploads in ``bucket`` (the target's)."""
        return await call_target(self.parts.fs, "list_multipart_uploads", self.parts.strip(bucket))

    async def is_bucket_versioned(self, bucket: str) -> Any:
        """Whether ``bucket`` keeps object versions (the target's)."""
        return await call_target(self.parts.fs, "is_bucket_versioned", self.parts.strip(bucket))

    async def make_bucket_versioned(self, bucket: str, versioned: bool = True) -> Any:
        """Turn object versions on (or off) for ``bucket`` (the target's)."""
        bucket = self.parts.strip(bucket)
        return await call_target(self.parts.fs, "make_bucket_versioned", bucket, versioned)

    async def object_version_info(self, path: str, **kwargs: Any) -> Any:
        """Every version of ``path`` (the target's ``object_version_info``)."""
        return await self.object_call("object_version_info", path, **kwargs)

    async def pinned(
        self, path: str, version_id: str | None
    ) -> tuple[str, str | None, dict[str, Any] | None]:
        """What a read of ``path`` opens: the path without ``?versionId=``, the version read
        and its info (``None``, None: the current object, read as archivefs reads it). As
        s3fs, a version-aware target's read is pinned to the version current at open."""
        path, version = split_version(path, version_id)
        if version is None and getattr(self.parts.fs, "version_aware", False):
            details = dict(await call_target(self.parts.fs, "info", path))
            return path, details.get("VersionId"), details
        if version is not None:
            return path, version, await self.info(path, version_id=version)
        return path, None, None

    async def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        self.parts.invalidate_cache()
        await self.parts.fs._mkdir(self.parts.strip(path), create_parents=create_parents, **kwargs)

    async def makedirs(self, path: str, exist_ok: bool = False) -> None:
        await self.parts.fs._makedirs(self.parts.strip(path), exist_ok=exist_ok)

    async def rmdir(self, path: str, **kwargs: Any) -> None:
        """The target's ``rmdir`` with its own options (adlfs's ``recursive``, ``delimiter``)."""
        self.parts.invalidate_cache()
        await self.parts.fs._rmdir(self.parts.strip(path), **kwargs)

    def split_path(self, path: str) -> tuple[str, str, str | None]:
        """``(bucket, key, version)`` of ``path``: the target's ``split_path`` (s3fs's knows
        access-point and Outposts ARNs), else ``bucket/key?versionId=v`` split."""
        own = getattr(self.parts.fs, "split_path", None)
        if own is not None and len(parts := tuple(own(path))) == 3:
            return parts
        stripped, version = split_version(self.parts.strip(path).lstrip("/"))
        bucket, _, key = stripped.partition("/")
        return bucket, key, version


class _HasTarget(Protocol):
    @property
    def target(self) -> TargetCalls: ...


class TargetMethods:
    """ArchiveFileSystem's methods that are its target's own calls (s3fs's names and
    signatures), each forwarded to the filesystem's :class:`TargetCalls`: the face keeps
    only what has an archive meaning."""

    _crew: _HasTarget

    async def _url(self, path: str, *args: Any, **kwargs: Any) -> Any:
        return await self._crew.target.url(path, *args, **kwargs)

    async def _getxattr(self, path: str, attr_name: str, **kwargs: Any) -> Any:
        return await self._crew.target.getxattr(path, attr_name, **kwargs)

    async def _setxattr(self, path: str, copy_kwargs: Any = None, **kwargs: Any) -> Any:
        return await self._crew.target.setxattr(path, copy_kwargs=copy_kwargs, **kwargs)

    async def _metadata(self, path: str, refresh: bool = False, **kwargs: Any) -> Any:
        return await self._crew.target.metadata(path, refresh=refresh, **kwargs)

    async def _checksum(self, path: str, refresh: bool = False) -> Any:
        return await self._crew.target.checksum(path, refresh=refresh)

    async def _modified(self, path: str, **kwargs: Any) -> Any:
        return await self._crew.target.modified(path, **kwargs)

    async def _created(self, path: str, **kwargs: Any) -> Any:
        return await self._crew.target.created(path, **kwargs)

    async def _setxattrs(self, path: str, **kwargs: Any) -> Any:
        return await self._crew.target.setxattrs(path, **kwargs)

    async def _get_tags(self, path: str) -> Any:
        return await self._crew.target.get_tags(path)

    async def _put_tags(self, path: str, tags: dict[str, str], mode: str = "o") -> Any:
        return await self._crew.target.put_tags(path, tags, mode=mode)

    async def _merge(self, path: str, filelist: list[str], **kwargs: Any) -> Any:
        return await self._crew.target.merge(path, filelist, **kwargs)

    async def _list_multipart_uploads(self, bucket: str) -> Any:
        return await self._crew.target.list_multipart_uploads(bucket)

    async def _is_bucket_versioned(self, bucket: str) -> Any:
        return await self._crew.target.is_bucket_versioned(bucket)

    async def _make_bucket_versioned(self, bucket: str, versioned: bool = True) -> Any:
        return await self._crew.target.make_bucket_versioned(bucket, versioned)

    async def _object_version_info(self, path: str, **kwargs: Any) -> Any:
        return await self._crew.target.object_version_info(path, **kwargs)

    async def _mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        await self._crew.target.mkdir(path, create_parents=create_parents, **kwargs)

    async def _makedirs(self, path: str, exist_ok: bool = False) -> None:
        await self._crew.target.makedirs(path, exist_ok=exist_ok)

    async def _rmdir(self, path: str, **kwargs: Any) -> None:
        await self._crew.target.rmdir(path, **kwargs)

    url = sync_wrapper(_url)
    getxattr = sync_wrapper(_getxattr)
    setxattr = sync_wrapper(_setxattr)
    metadata = sync_wrapper(_metadata)
    checksum = sync_wrapper(_checksum)
    modified = sync_wrapper(_modified)
    created = sync_wrapper(_created)
    setxattrs = sync_wrapper(_setxattrs)
    get_tags = sync_wrapper(_get_tags)
    put_tags = sync_wrapper(_put_tags)
    merge = sync_wrapper(_merge)
    list_multipart_uploads = sync_wrapper(_list_multipart_uploads)
    is_bucket_versioned = sync_wrapper(_is_bucket_versioned)
    make_bucket_versioned = sync_wrapper(_make_bucket_versioned)
    object_version_info = sync_wrapper(_object_version_info)
    rmdir = sync_wrapper(_rmdir)  # fsspec mirrors no _rmdir: its rmdir was a silent no-op

    def split_path(self, path: str) -> tuple[str, str, str | None]:
        """``(bucket, key, version)`` of ``path``, as the target splits it."""
        return self._crew.target.split_path(path)


def _forwarded(name: str, doc: str) -> Any:
    """A read-only property answering the target filesystem's attribute ``name``
    (``AttributeError`` when the target has none, so ``hasattr`` tells)."""

    def get(self: Any) -> Any:
        target = self.fs
        if hasattr(target, name):
            return getattr(target, name)
        inner = wrapped_sync(target)
        if inner is not None and hasattr(inner, name):
            return getattr(inner, name)
        raise AttributeError(
            f"{type(self).__name__}.{name}: the target filesystem {type(target).__name__} "
            f"has no attribute {name!r}"
        )

    return property(get, doc=doc)


class TargetAttributes:
    """The target's public attributes that code written for it reads (s3fs's
    ``endpoint_url``, adlfs's ``account_name``, gcsfs's ``project``, ocifs's ``region``...),
    each forwarded by name, read-only: archivefs changes none of them. The attributes that
    hold a credential (s3fs's ``key``/``secret``/``token``, adlfs's ``account_key``,
    ``connection_string``, ``sas_token``, ``client_secret``, ``credential``; gcsfs's
    ``credentials``; ocifs's ``config``) are not forwarded: archivefs keeps secrets out of
    what it hands on (``stores.credentials``)."""

    fs: Any
    # every target
    anon = _forwarded("anon", "Whether the target connects without credentials.")
    version_aware = _forwarded("version_aware", "Whether the target reads object versions.")
    blocksize = _forwarded("blocksize", "The target's block size for its own files.")
    kwargs = _forwarded("kwargs", "The target's extra options as it keeps them (adlfs).")
    default_block_size = _forwarded("default_block_size", "Block size of its files (s3fs, ocifs).")
    default_cache_type = _forwarded("default_cache_type", "Cache type of its files.")
    default_fill_cache = _forwarded("default_fill_cache", "Whether its files fill their cache.")
    requester_pays = _forwarded("requester_pays", "Whether requests bill the requester.")
    timeout = _forwarded("timeout", "The target's request timeout (adlfs, gcsfs).")
    # s3fs
    endpoint_url = _forwarded("endpoint_url", "The target's endpoint (s3fs).")
    s3 = _forwarded("s3", "The S3 client, once connected (s3fs).")
    session = _forwarded("session", "The aiobotocore session (s3fs).")
    client_kwargs = _forwarded("client_kwargs", "Options of the S3 client (s3fs).")
    config_kwargs = _forwarded("config_kwargs", "Options of the client's config (s3fs, ocifs).")
    s3_additional_kwargs = _forwarded("s3_additional_kwargs", "Extra request options (s3fs).")
    use_ssl = _forwarded("use_ssl", "Whether it connects over TLS (s3fs).")
    cache_regions = _forwarded("cache_regions", "Whether it finds each bucket's region (s3fs).")
    fixed_upload_size = _forwarded("fixed_upload_size", "Whether uploads use fixed parts (s3fs).")
    req_kw = _forwarded("req_kw", "Request options every call carries (s3fs).")
    # adlfs
    account_name = _forwarded("account_name", "The storage account (adlfs).")
    account_url = _forwarded("account_url", "The storage account's URL (adlfs).")
    account_host = _forwarded("account_host", "The storage account's host (adlfs).")
    service_client = _forwarded("service_client", "The blob service client (adlfs).")
    max_concurrency = _forwarded("max_concurrency", "The target's transfer concurrency.")
    location_mode = _forwarded("location_mode", "Primary or secondary location (adlfs).")
    assume_container_exists = _forwarded(
        "assume_container_exists", "Whether writes skip the container check (adlfs)."
    )
    tenant_id = _forwarded("tenant_id", "The service principal's tenant (adlfs).")
    client_id = _forwarded("client_id", "The service principal's client id (adlfs).")
    # gcsfs
    project = _forwarded("project", "The Google Cloud project (gcsfs).")
    consistency = _forwarded("consistency", "How writes are checked (gcsfs).")
    default_location = _forwarded("default_location", "Where new buckets go (gcsfs).")
    cache_timeout = _forwarded("cache_timeout", "How long listings are cached (gcsfs).")
    requests_timeout = _forwarded("requests_timeout", "Timeout of one request (gcsfs).")
    session_kwargs = _forwarded("session_kwargs", "Options of the HTTP session (gcsfs).")
    # ocifs
    region = _forwarded("region", "The OCI region (ocifs).")
    profile = _forwarded("profile", "The OCI config profile (ocifs).")
    oci_client = _forwarded("oci_client", "The Object Storage client (ocifs).")
    default_namespace = _forwarded("default_namespace", "The tenancy's namespace (ocifs).")
    default_tenancy = _forwarded("default_tenancy", "The tenancy (ocifs).")
    compartment_id = _forwarded("compartment_id", "The compartment new buckets go in (ocifs).")
    oci_additional_kwargs = _forwarded("oci_additional_kwargs", "Extra request options (ocifs).")
    default_cache_options = _forwarded("default_cache_options", "Cache options (ocifs).")


async def versioned_info(target: Any, path: str, version: str) -> dict[str, Any]:
    """The target's info of one version of ``path`` (its ``VersionId`` included), with
    the provider-neutral class fields archivefs adds to every entry."""
    return version_entry(await call_target(target, "info", path, version_id=version))


def find_as_s3fs(
    found: Any,
    path: str,
    prefix: str | None,
    withdirs: bool,
    maxdepth: int | None,
    lists_folder: bool = True,
) -> Any:
    """``find``'s answer (names or a dict by name) shaped as the target shapes it: with
    ``prefix`` only names that start ``path/prefix``; a whole-depth find of a bucket with
    ``withdirs`` does not list the bucket itself (with ``maxdepth``, fsspec's walk does, as
    in s3fs); nor of any folder where the target's find does not (``lists_folder``
    False: adlfs)."""
    start = f"{path}/{prefix}" if path else str(prefix or "")

    def keep(name: str) -> bool:
        if prefix and not name.startswith(start):
            return False
        if withdirs and name == path and not lists_folder:
            return False
        return not (withdirs and maxdepth is None and name == path and "/" not in path)

    if isinstance(found, dict):  # folders' sizes 0 (s3fs's and adlfs's find say so)
        return {name: _sized(info) for name, info in found.items() if keep(name)}
    return [name for name in found if keep(name)]


def _sized(info: dict[str, Any]) -> dict[str, Any]:
    if info.get("type") == "directory" and info.get("size") is None:
        return {**info, "size": 0}
    return info


class TargetFileCalls:
    """An open file's metadata calls, as s3fs's files have them: asked of the filesystem
    for the file's path (and version); and the attributes the target's own file takes
    from its info entry (``_fields``: attribute -> (entry key, value when it has none);
    adlfs's and gcsfs's ``metadata`` dict, gcsfs's ``content_type``), read when first
    asked for."""

    fs: Any
    path: str
    version_id: str | None
    _fields: dict[str, tuple[str, Any]] = {}  # each file sets its own (never changed)
    if TYPE_CHECKING:
        details: dict[str, Any]

        def writable(self) -> bool: ...

    def _version(self) -> dict[str, Any]:
        return {} if self.version_id is None else {"version_id": self.version_id}

    def target_field(self, name: str) -> Any:
        """The target file's attribute ``name``, from this file's info entry (kept)."""
        values = self.__dict__.setdefault("_field_values", {})
        if name not in values:
            key, default = self._fields[name]
            value = self.details.get(key)
            values[name] = copy.copy(default) if value is None else value
        return values[name]

    def __getattr__(self, name: str) -> Any:
        # only the target file's attributes the provider names (never a general forward)
        if name in self.__dict__.get("_fields", ()):
            return self.target_field(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def metadata(self) -> Any:
        """The file's user metadata as the target's file gives it: adlfs's and gcsfs's a
        dict; s3fs's a method, ``f.metadata(refresh=False)``."""
        if "metadata" in self._fields or "metadata" in self.__dict__.get("_field_values", ()):
            return self.target_field("metadata")
        return self.user_metadata

    @metadata.setter
    def metadata(self, value: Any) -> None:  # adlfs's and gcsfs's files take a new dict
        self.__dict__.setdefault("_field_values", {})["metadata"] = value

    def user_metadata(self, refresh: bool = False, **kwargs: Any) -> Any:
        """The file's user metadata, asked of the filesystem (s3fs's ``metadata()``)."""
        return self.fs.metadata(self.path, refresh=refresh, **self._version(), **kwargs)

    def getxattr(self, xattr_name: str, **kwargs: Any) -> Any:
        """One user-metadata value of the file."""
        return self.fs.getxattr(self.path, xattr_name, **self._version(), **kwargs)

    def setxattr(self, copy_kwargs: Any = None, **kwargs: Any) -> Any:
        """Set the file's user metadata (not while it is being written, as s3fs)."""
        if self.writable():
            raise NotImplementedError("cannot update metadata while the file is being written")
        return self.fs.setxattr(self.path, copy_kwargs=copy_kwargs, **kwargs)

    def url(self, **kwargs: Any) -> Any:
        """A URL that reads the file without credentials."""
        return self.fs.url(self.path, **kwargs)


def refuse_bucket_as_file(path: str) -> None:
    """Opening a bucket (a path without a key) is a ``ValueError``, as in s3fs."""
    if "/" not in split_version(path)[0]:
        raise InvalidPathError(
            "is a bucket, not a file: only objects open.",
            path=path or "/",
            fix="name an object inside the bucket (bucket/key); fs.ls() lists what is there.",
        )


def refuse_whole_store(path: str) -> None:
    """``find``/``glob`` from the root (every bucket) is a ``ValueError``, as in s3fs."""
    if not path:
        raise InvalidPathError(
            "find and glob do not walk every bucket of the store.",
            path="/",
            fix="start from a bucket (fs.find('bucket'), fs.glob('bucket/*')); "
            "fs.ls('') lists the buckets.",
        )
