"""What every cold-store adapter offers: the contract the engine and the filesystem use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from archivefs.model import ObjectState, RestoreTier
    from archivefs.stores.s3 import Listing, RangeRead, RestoreOutcome


class ColdStore(Protocol):
    """States in bulk, restore requests, reads of ranges (``S3Store``, ``AzureStore``)."""

    fs: Any

    async def head(self, path: str) -> ObjectState: ...

    async def probe(self, paths: Iterable[str]) -> dict[str, ObjectState | None]: ...

    async def list(self, path: str, *, recursive: bool = False) -> Listing: ...

    async def is_directory(self, path: str) -> bool: ...

    async def restore(
        self,
        state: ObjectState,
        *,
        tier: RestoreTier,
        days: int | None,
        extra: dict[str, Any] | None = None,
    ) -> RestoreOutcome: ...

    async def get_bytes(self, path: str) -> bytes: ...

    async def get_range(
        self, path: str, start: int, end: int, *, if_match: str | None = None
    ) -> RangeRead: ...

    async def read_tagged(self, path: str) -> tuple[bytes, str] | None: ...

    async def create_exclusive(self, path: str, body: bytes) -> bool: ...

    async def replace_if_unchanged(self, path: str, body: bytes, etag: str) -> bool: ...
