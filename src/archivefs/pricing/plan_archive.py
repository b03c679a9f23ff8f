"""Plan a whole archive: every placement of a workload priced for a year, ranked, and
where two placements cost the same in data read per month.

:func:`plan_archive` is the one call behind ``archivefs advise --workload`` and
the Python API. Each placement's monthly cost is ``fixed + R * per_tib_read`` at
``R`` TiB read a month (the reads split over its classes as the workload says),
so two placements cross at most once: that ``R`` is their break-even.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from archivefs.errors import WorkloadError
from archivefs.pricing.advise import break_even
from archivefs.pricing.annual import MONTHS_PER_YEAR, TIB, PlacementCost, placement_cost
from archivefs.pricing.comparison import (
    ComparisonSheet,
    access_sheets_for,
    load_any_sheet,
    with_storage_prices,
)
from archivefs.pricing.sheet import PriceSheet, sheet_provider
from archivefs.pricing.workload_file import ArchiveWorkload, Placement, load_workload
from archivefs.providers import S3

REFERENCE_TIB_PER_MONTH = 1.0  # the slope's reference volume when the workload reads nothing


class ReadBreakEven(BaseModel):
    """Where two placements cost the same, in data read per month (and full reads)."""

    model_config = ConfigDict(frozen=True)

    cheaper_when_rare: str
    cheaper_when_frequent: str
    tib_per_month: float | None  # None: one is cheaper at every volume
    gib_per_month: float | None
    reads_per_month: float | None  # the same volume as full reads of the archive a month
    always_cheaper: str | None = None


class ArchivePlan(BaseModel):
    """Every placement's year, cheapest first, the break-evens and what was assumed."""

    model_config = ConfigDict(frozen=True)

    workload: str
    sheet: str
    currency: str
    total_bytes: int
    read_tib_per_month: float
    placements: list[PlacementCost]  # cheapest first
    break_evens: list[ReadBreakEven]
    notes: list[str]

    @property
    def cheapest(self) -> PlacementCost:
        """The placement with the lowest annual total."""
        return self.placements[0]

    def table(self) -> list[list[str]]:
        """Rows for a text table, cheapest first: rank, placement, components, totals."""
        shown = [c for c in self.placements[0].annual if any(p.annual[c] for p in self.placements)]
        rows = [["#", "placement", *shown, "per year", "per month"]]
        for rank, p in enumerate(self.placements, 1):
            rows.append(
                [str(rank), p.name]
                + [f"{p.annual[c]:,.2f}" for c in shown]
                + [f"{p.annual_total:,.2f}", f"{p.monthly_total:,.2f}"]
            )
        return rows


def resolve_sheet(
    workload: ArchiveWorkload, sheet: str | Path | PriceSheet | ComparisonSheet | None = None
) -> tuple[PriceSheet, str, list[str]]:
    """The price sheet that prices the workload, its provider, and notes saying whence.

    ``sheet`` (else the workload's ``price_sheet``, else S3's shipped sheet) may be a
    provider's sheet, or a comparison sheet: then its storage prices and minimum
    days, with the rest from the sheet it names for the provider under ``access_prices``.
    """
    chosen = sheet if sheet is not None else (workload.price_sheet or S3.price_sheet)
    loaded = chosen if isinstance(chosen, PriceSheet | ComparisonSheet) else load_any_sheet(chosen)
    if isinstance(loaded, PriceSheet):
        provider = workload.provider or sheet_provider(loaded)
        return loaded, provider, [f"prices: {loaded.name}."]
    provider = workload.provider or "s3"
    found, said = access_sheets_for(loaded)
    if provider not in found:
        raise WorkloadError(
            f"{loaded.name} gives storage prices only, and no {provider} sheet for the rest. "
            + " ".join(said),
            path=workload.name,
            fix=f"price it with a {provider} price sheet, or a comparison naming one.",
        )
    access = found[provider]
    note = (
        f"prices: storage and minimum days from {loaded.name} ({loaded.source}); requests, "
        f"retrieval, restores, transitions and egress from {access.name} (today's list "
        f"prices, not {loaded.date}'s)."
    )
    return with_storage_prices(access, loaded, provider), provider, [note]


def _fractions(workload: ArchiveWorkload, placement: Placement) -> dict[str, float]:
    """How the placement's reads split over its classes."""
    split = workload.downloads_of(placement)
    total = sum(split.values())
    if not total:  # reads nothing: split a reference volume by the shares
        shares = workload.shares(placement)
        return {k: v / sum(shares.values()) for k, v in shares.items()}
    return {k: v / total for k, v in split.items()}


def plan_archive(
    workload: ArchiveWorkload | str | Path,
    sheet: str | Path | PriceSheet | ComparisonSheet | None = None,
) -> ArchivePlan:
    """Price every placement of ``workload`` (a model, a shipped name or a YAML path) for a year.

    ``sheet`` overrides the workload's ``price_sheet`` (see :func:`resolve_sheet`).
    Placements come back cheapest first by annual total; the restored copies are
    totalled at their expected billed days (``restored_copies_bound`` gives the bound).
    """
    work = workload if isinstance(workload, ArchiveWorkload) else load_workload(workload)
    priced, provider, notes = resolve_sheet(work, sheet)
    read = work.downloads.per_year / MONTHS_PER_YEAR
    reference = read or REFERENCE_TIB_PER_MONTH * TIB
    costs: list[PlacementCost] = []
    intercepts: dict[str, float] = {}
    for placement in work.placements:
        fractions = _fractions(work, placement)
        parts, bound, said = placement_cost(
            work, placement, priced, provider, read_fractions=fractions, bytes_read_per_month=read
        )
        idle, _, _ = placement_cost(
            work, placement, priced, provider, read_fractions=fractions, bytes_read_per_month=0.0
        )
        at_reference = parts
        if not read:
            at_reference, _, _ = placement_cost(
                work,
                placement,
                priced,
                provider,
                read_fractions=fractions,
                bytes_read_per_month=reference,
            )
        idle_month = sum(idle.values()) / MONTHS_PER_YEAR
        slope = (sum(at_reference.values()) / MONTHS_PER_YEAR - idle_month) / (reference / TIB)
        intercepts[placement.name] = idle_month
        costs.append(
            PlacementCost(
                name=placement.name,
                annual=parts,
                restored_copies_bound=bound,
                per_tib_read=slope,
                notes=said,
            )
        )
    notes += _general_notes(work, priced)
    return ArchivePlan(
        workload=work.name,
        sheet=priced.name,
        currency=priced.currency,
        total_bytes=work.data.total,
        read_tib_per_month=read / TIB,
        placements=sorted(costs, key=lambda c: (c.annual_total, c.name)),
        break_evens=_break_evens(costs, intercepts, work.data.total),
        notes=notes,
    )


def _break_evens(
    costs: list[PlacementCost], intercepts: dict[str, float], total_bytes: int
) -> list[ReadBreakEven]:
    points = []
    for a, b in combinations(costs, 2):
        ia, ib = intercepts[a.name], intercepts[b.name]
        rare, frequent = (a, b) if (ia, a.per_tib_read) <= (ib, b.per_tib_read) else (b, a)
        r_rare, r_freq = intercepts[rare.name], intercepts[frequent.name]
        tib = break_even(rare.per_tib_read, r_rare, frequent.per_tib_read, r_freq)
        always = None
        if tib is None:
            always = rare.name
        points.append(
            ReadBreakEven(
                cheaper_when_rare=rare.name,
                cheaper_when_frequent=frequent.name,
                tib_per_month=tib,
                gib_per_month=tib * 1024 if tib is not None else None,
                reads_per_month=tib * TIB / total_bytes if tib is not None else None,
                always_cheaper=always,
            )
        )
    return points


def _general_notes(work: ArchiveWorkload, sheet: PriceSheet) -> list[str]:
    notes = []
    egress = work.egress
    label = f" ({egress.label})" if egress.label else ""
    if egress.per_gb is not None:
        notes.append(f"egress{label}: {egress.per_gb:g} per GB, as the workload gives.")
    else:
        notes.append(f"egress{label}: {sheet.name}'s {egress.path} prices, per month's volume.")
        if len(sheet.egress.get(egress.path, [])) > 1:
            notes.append(
                "break-evens take the egress tiers' average at the workload's volume "
                "(the tiers make cost slightly non-linear in volume)."
            )
    if any(p.transitions for p in work.placements):
        notes.append(
            "transitions and early deletion are paid once, in the year the rule moves the "
            "data; storage is the placement's shares held all year."
        )
    notes.append(
        f"restored copies: expected billed days totalled ({work.restore.days} day(s) asked, "
        "S3's rule); restored_copies_bound gives the year at days + 1."
    )
    return notes
