"""Settings: one filesystem's settings, made once by its constructor and read by every part.

The face (:class:`archivefs.filesystem.ArchiveFileSystem`) hands its options to
:meth:`Settings.checked`, which checks and parses them into one :class:`Settings`;
:func:`archivefs.access.assembly.assemble` and :class:`archivefs.access.parts.Parts` take
it whole, and the restore engine is made from it on first use. The face's and the parts'
attributes of the same names are read-only views of it (:class:`Setting`): one copy of
each setting, fixed for the filesystem's life.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from archivefs.errors import InvalidOptionsError
from archivefs.hooks import Hooks
from archivefs.ledger import Tally, new_ledger_name
from archivefs.model import RestoreTier, parse_days

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from archivefs.providers.base import ProviderSpec
    from archivefs.restore.notify import NotificationSource

POLICIES = ("raise", "restore", "wait")
"""The values of ``on_archived``: what a read of an archived object does."""

_T = TypeVar("_T")


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
    hot_options: dict[str, Any] = field(repr=False)  # may hold credentials
    store_options: dict[str, Any] | None = field(repr=False)
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

    @classmethod
    def checked(
        cls,
        provider: ProviderSpec,
        *,
        tier: str,
        days: object,
        on_archived: str,
        price_sheet: str | None,
        max_cost: float | None,
        on_estimate: Callable[..., bool | None] | None,
        budget_ledger: str | None = None,
        budget_seed: Sequence[float] | None = None,
        **options: Any,
    ) -> Settings:
        """The settings of a filesystem on ``provider``: ``on_archived`` and ``days``
        checked (``ValueError``), ``tier`` parsed in the provider's names, the provider's
        own price sheet unless one is named, the budget hooks made."""
        if on_archived not in POLICIES:
            raise ValueError(
                f"ArchiveFileSystem: on_archived={on_archived!r} is not a policy; "
                f"use one of {', '.join(POLICIES)}."
            )
        return cls(
            # a provider without restores (GCS) keeps S3's tier names as a placeholder
            # (RestoreTier.parse): its plans never restore, and restore() refuses every object
            tier=RestoreTier.parse(tier, provider=provider.name),
            days=parse_days(days),
            on_archived=on_archived,
            price_sheet=price_sheet or provider.price_sheet,
            hooks=Hooks(
                on_estimate=[on_estimate] if on_estimate is not None else [],
                max_cost=max_cost,
                ledger_name=budget_ledger or new_ledger_name(max_cost),
                seed=Tally(*map(float, budget_seed)) if budget_seed else Tally(),
            ),
            **options,
        )


class Setting(Generic[_T]):
    """A read-only attribute that reads the field of its owner's ``_settings`` with the
    same name (or ``field``): settings are fixed at construction, and fsspec shares an
    instance among all who made it with the same options, so one is never changed in place."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field or ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.field = self.field or name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Setting[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj._settings, self.field)  # type: ignore[attr-defined]

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(
            f"{self.name} is fixed when the filesystem is made: make a new one with "
            f"{self.name}=... (fsspec shares an instance among all who made it with the "
            "same options, so changing it here would change theirs)."
        )
