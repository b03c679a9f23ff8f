"""What a claim says and where it lives: the claims ledger's batches, the per-group claim
objects of older versions, their paths, and summaries of who asked for what.

The values :class:`~archivefs.restore.claims.BucketClaims` reads and writes (see its
module for the protocol), with no I/O of their own.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from archivefs.catalog.layout import RESERVED

CLAIM_VERSION = 1
DEFAULT_LEASE_S = 900.0  # a claimer that has not sent within this long is presumed dead
LEDGER_VERSION = 2
LEDGER_NAME = "ledger.json"
LEDGER_RETAIN_S = 7 * 86400.0  # batches older than this are dropped when the ledger is written
MAX_CLAIM_BYTES = 64 * 1024  # a claim is a few hundred bytes; a larger object is damaged


def claim_path(group_key: str) -> str:
    """``bucket/.archivefs/claims/<sha256 of the key>.json``: where versions before the
    ledger wrote a group's claim (still honoured, read and taken over there)."""
    bucket, _, key = group_key.partition("/")
    digest = hashlib.sha256(key.encode()).hexdigest()
    return f"{bucket}/{RESERVED}/claims/{digest}.json"


def claims_folder(bucket: str) -> str:
    """``bucket/.archivefs/claims``: the ledger and the per-group claims of older versions."""
    return f"{bucket}/{RESERVED}/claims"


def ledger_path(bucket: str) -> str:
    """``bucket/.archivefs/claims/ledger.json``: the bucket's claims, in batches."""
    return f"{claims_folder(bucket)}/{LEDGER_NAME}"


@dataclass(frozen=True, slots=True)
class Claim:
    """What a claim object says."""

    key: str
    tier: str
    days: int | None
    requester: str
    claimed_at: float
    expected_ready_at: float | None
    lease_s: float | None = None  # the claimer's lease (readers cap it at their own)
    claim_id: str = ""  # its writer's random id (kept in memory): it knows its own claims

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "version": CLAIM_VERSION,
                "key": self.key,
                "tier": self.tier,
                "days": self.days,
                "requester": self.requester,
                "claimed_at": self.claimed_at,
                "expected_ready_at": self.expected_ready_at,
                "lease_s": self.lease_s,
                "id": self.claim_id,
            },
            sort_keys=True,
        ).encode()

    @classmethod
    def parse(cls, data: bytes) -> Claim | None:
        """The claim in ``data``, or ``None`` when it is not one this version reads (a
        damaged one included: times that are not finite numbers, a lease not above 0)."""
        try:
            raw: dict[str, Any] = json.loads(data)
            ready = raw.get("expected_ready_at")
            lease = raw.get("lease_s")
            claim = cls(
                key=str(raw["key"]),
                tier=str(raw["tier"]),
                days=None if raw.get("days") is None else int(raw["days"]),
                requester=str(raw["requester"]),
                claimed_at=float(raw["claimed_at"]),
                expected_ready_at=None if ready is None else float(ready),
                lease_s=None if lease is None else float(lease),
                claim_id=str(raw.get("id") or ""),
            )
        except (ValueError, KeyError, TypeError, OverflowError):
            return None
        times = [claim.claimed_at, claim.expected_ready_at, claim.lease_s]
        if not all(math.isfinite(t) for t in times if t is not None):
            return None  # NaN or Infinity: no claim this or any version writes
        if claim.lease_s is not None and claim.lease_s <= 0:
            return None
        return claim

    @property
    def claimed(self) -> datetime:
        return datetime.fromtimestamp(self.claimed_at, UTC)


def requester_token() -> str:
    """``host:pid`` of this process: who a claim belongs to (never credentials)."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True, slots=True)
class Batch:
    """One write's claims in a ledger: its groups (keys within the bucket) and who asked."""

    batch_id: str
    claim_id: str  # its claimer's random id
    requester: str
    tier: str
    days: int | None
    lease_s: float
    claimed_at: float  # the claimer's clock: shown, decides nothing
    expected_ready_at: float | None
    age: float  # seconds old (store's clock) when the ledger version holding it was written
    keys: tuple[str, ...]

    def to_json(self, age: float) -> dict[str, Any]:
        return {
            "id": self.batch_id,
            "claimer": self.claim_id,
            "requester": self.requester,
            "tier": self.tier,
            "days": self.days,
            "lease_s": self.lease_s,
            "claimed_at": self.claimed_at,
            "expected_ready_at": self.expected_ready_at,
            "age": age,
            "keys": list(self.keys),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Batch:
        """The batch ``raw`` describes; raises ``ValueError`` (or ``KeyError``,
        ``TypeError``) when it is not one this version writes."""
        ready = raw.get("expected_ready_at")
        batch = cls(
            batch_id=str(raw["id"]),
            claim_id=str(raw["claimer"]),
            requester=str(raw["requester"]),
            tier=str(raw["tier"]),
            days=None if raw.get("days") is None else int(raw["days"]),
            lease_s=float(raw["lease_s"]),
            claimed_at=float(raw["claimed_at"]),
            expected_ready_at=None if ready is None else float(ready),
            age=float(raw["age"]),
            keys=tuple(str(k) for k in raw["keys"]),
        )
        times = [batch.lease_s, batch.claimed_at, batch.expected_ready_at, batch.age]
        if not all(math.isfinite(t) for t in times if t is not None):
            raise ValueError("a time that is not a finite number")
        if batch.lease_s <= 0 or batch.age < 0 or not isinstance(raw["keys"], list):
            raise ValueError("a lease not above 0, a negative age or keys not a list")
        return batch

    def claim(self, bucket: str, key: str) -> Claim:
        """The claim this batch makes on ``key`` (within ``bucket``)."""
        return Claim(
            f"{bucket}/{key}",
            self.tier,
            self.days,
            self.requester,
            self.claimed_at,
            self.expected_ready_at,
            lease_s=self.lease_s,
            claim_id=self.claim_id,
        )


@dataclass(slots=True)
class Ledger:
    """A bucket's claims ledger as read: its batches (with their ages now, by the store's
    clock) and the version's ETag (``None``: there is no ledger yet)."""

    bucket: str
    etag: str | None
    batches: list[tuple[Batch, float]] = field(default_factory=list)  # (batch, age now)

    def holders(self) -> dict[str, tuple[Batch, float]]:
        """Which batch holds each key (the youngest, should a key be in several)."""
        held: dict[str, tuple[Batch, float]] = {}
        for batch, age in self.batches:
            for key in batch.keys:
                if key not in held or age < held[key][1]:
                    held[key] = (batch, age)
        return held

    def find(self, batch_id: str) -> Batch | None:
        return next((b for b, _ in self.batches if b.batch_id == batch_id), None)

    def written(self, mine: Batch, taken: set[str]) -> bytes:
        """The next version: this one's batches without ``taken`` keys and without those
        older than :data:`LEDGER_RETAIN_S`, plus ``mine``."""
        kept = []
        for batch, age in self.batches:
            if age > LEDGER_RETAIN_S:
                continue
            keys = [k for k in batch.keys if k not in taken]
            if keys:
                kept.append({**batch.to_json(age), "keys": keys})
        kept.append(mine.to_json(0.0))
        return json.dumps({"version": LEDGER_VERSION, "batches": kept}).encode()


@dataclass(frozen=True, slots=True)
class ClaimSummary:
    """Claims of one requester at one tier: how many groups, since and until when."""

    requester: str
    tier: str
    groups: int
    first_claimed: datetime
    expected_ready: datetime | None


def summarize_claims(claims: dict[str, Claim | None]) -> tuple[list[ClaimSummary], list[str]]:
    """Claims grouped by requester and tier (oldest first), and the groups with no claim."""
    by: dict[tuple[str, str], list[Claim]] = {}
    unclaimed: list[str] = []
    for key, claim in sorted(claims.items()):
        if claim is None:
            unclaimed.append(key)
        else:
            by.setdefault((claim.requester, claim.tier), []).append(claim)
    summaries = []
    for (requester, tier), found in by.items():
        readies = [c.expected_ready_at for c in found if c.expected_ready_at is not None]
        summaries.append(
            ClaimSummary(
                requester=requester,
                tier=tier,
                groups=len(found),
                first_claimed=min(c.claimed for c in found),
                expected_ready=datetime.fromtimestamp(max(readies), UTC) if readies else None,
            )
        )
    return sorted(summaries, key=lambda s: s.first_claimed), unclaimed
