"""What reads really cost: requests sent, bytes fetched, bytes handed to the caller.

The filesystem counts these as it reads, so estimates can use the measured
read amplification instead of assuming reads are exact (a FUSE mount that
reads 4x the data bills 4x the egress).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class ReadStats:
    """Counters of one filesystem's reads (thread-safe)."""

    requests: int = 0
    bytes_fetched: int = 0
    bytes_delivered: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def fetched(self, nbytes: int) -> None:
        """One request to the store that returned ``nbytes``."""
        with self._lock:
            self.requests += 1
            self.bytes_fetched += nbytes

    def delivered(self, nbytes: int) -> None:
        """``nbytes`` handed to the caller."""
        with self._lock:
            self.bytes_delivered += nbytes

    @property
    def amplification(self) -> float | None:
        """Bytes fetched per byte delivered (``None`` before any read)."""
        with self._lock:
            if not self.bytes_delivered:
                return None
            return max(1.0, self.bytes_fetched / self.bytes_delivered)

    def reset(self) -> None:
        with self._lock:
            self.requests = self.bytes_fetched = self.bytes_delivered = 0
