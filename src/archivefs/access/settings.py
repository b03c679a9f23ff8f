"""Settings: one filesystem's settings, made once by its constructor and read by every part.

The face (:class:`archivefs.filesystem.ArchiveFileSystem`) checks its options and makes
one :class:`Settings`; :func:`archivefs.access.assembly.assemble` and
:class:`archivefs.access.parts.Parts` take it whole, and the restore engine is made from
it on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from archivefs.errors import InvalidOptionsError

if TYPE_CHECKING:
    from archivefs.hooks import Hooks
    from archivefs.model import RestoreTier
    from archivefs.restore.notify import NotificationSource


@dataclass(frozen=True, slots=True)
class Settings:
    """What the constructor was given, parsed (``tier``, ``days``) and defaulted
    (``price_sheet``: the provider's own sheet); ``claim_lease`` is checked here."""

    tier: RestoreTier
    days: int
    on_archived: str
    wait_timeout: float | None
    restore_time_scale: float
    concurrency: int
    batch_size: int
    hooks: Hooks
    journal: str | Literal[False] | None
    notifications: NotificationSource | None
    bucket_claims: bool
    claim_lease: float | None
    price_sheet: str
    egress: str
    hot: str | None
    hot_options: dict[str, Any]
    store_options: dict[str, Any] | None
    restore_status_in_listings: bool | None
    catalog_ttl: float | None
    part_size: int
    part_concurrency: int

    def __post_init__(self) -> None:
        lease = self.claim_lease
        if lease is not None and not (isinstance(lease, int | float) and 0 < lease < float("inf")):
            raise InvalidOptionsError(
                f"claim_lease must be a number of seconds above 0, got {lease!r}.",
                path="claim_lease",
                fix="leave it out (15 minutes), or give the longest a host may take between "
                "claiming a group and sending its restore.",
            )
