"""Retries of an adapter's own requests on throttling, 5xx and dropped connections.

Azure's and Oracle's SDKs retry with long backoffs (15 s, 60 s) that stall a
batch submission; their adapters switch the SDK's retries off and retry here
instead, with short growing pauses, through tenacity. (S3 keeps botocore's
standard mode as its one retry layer: see ``stores/s3.py``.)
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from archivefs.stores.translate import is_transient

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoreRetry:
    """How an adapter retries its own requests on throttling and 5xx.

    ``attempts`` tries per request (1: no retry); the pause before try ``n`` is
    ``backoff * 2**(n-2)`` seconds, at most ``max_backoff``, with up to 50 % jitter.
    """

    attempts: int = 6
    backoff: float = 0.1
    max_backoff: float = 5.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff < 0 or self.max_backoff < 0:
            raise ValueError(
                f"retry: attempts must be >= 1 and pauses >= 0, got {self!r}. "
                "Fix: e.g. store_options={'retry': {'attempts': 6, 'backoff': 0.1}}."
            )

    @classmethod
    def of(cls, value: StoreRetry | Mapping[str, Any] | None) -> StoreRetry:
        """A :class:`StoreRetry` from itself, a mapping of its fields, or ``None`` (defaults)."""
        if value is None:
            return cls()
        if isinstance(value, StoreRetry):
            return value
        unknown = set(value) - {"attempts", "backoff", "max_backoff"}
        if unknown:
            raise ValueError(
                f"retry: unknown option(s) {', '.join(sorted(unknown))}. "
                "Fix: use attempts, backoff and max_backoff."
            )
        return cls(**value)

    def pause(self, attempt: int) -> float:
        """Seconds to wait before try number ``attempt`` (2, 3, ...)."""
        base = min(self.max_backoff, self.backoff * 2.0 ** max(0, attempt - 2))
        return base * (1 + random.random() / 2)  # jitter, not security

    async def call(self, request: Callable[[], Awaitable[T]]) -> T:
        """``request()``, tried again after transient failures, up to ``attempts`` tries;
        the last error is raised as it is."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=lambda state: self.pause(state.attempt_number + 1),
            retry=retry_if_exception(is_transient),
            reraise=True,
        )

        async def attempt() -> T:  # a coroutine function: tenacity awaits what it returns
            return await request()

        return await retrying(attempt)
