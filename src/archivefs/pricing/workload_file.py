"""The workload file: a whole archive, its reads and loads, and the placements to compare.

A YAML file (docs/cost-model.md, "Planning a whole archive", gives one example
per field) validated once into :class:`ArchiveWorkload`; sizes are written
``500TiB``, ``40MiB`` (TiB = 2^40 bytes) and placements' shares as sizes or
percentages. Shipped examples live under ``workloads/`` and load by name.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from archivefs.errors import WorkloadError
from archivefs.model import RestoreTier
from archivefs.pricing.sheet import FieldError, validate_sheet
from archivefs.pricing.sizes import (
    MAX_BYTES,
    Amount,
    Days,
    Price,
    format_size,
    parse_share,
    parse_size,
)
from archivefs.pricing.yaml_files import read_text

Size = Annotated[int, BeforeValidator(parse_size)]
ON_PREMISES = "on_premises"


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


class Data(_Strict):
    """What is stored: the total, and the objects as a size, a count or a distribution."""

    total: Size
    object_size: Size | None = None
    objects: Annotated[int, Field(gt=0, le=MAX_BYTES)] | None = None
    size_distribution: list[Size] | None = None

    @model_validator(mode="after")
    def _one_way(self) -> Data:
        given = [
            n
            for n in ("object_size", "objects", "size_distribution")
            if getattr(self, n) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "give the objects one way: object_size, objects or size_distribution "
                f"(got {', '.join(given) or 'none'})"
            )
        if self.object_size == 0 or (
            self.size_distribution is not None and not any(self.size_distribution)
        ):
            raise ValueError("objects have a size above 0 bytes")
        return self

    @property
    def mean_object_size(self) -> float:
        """Bytes per object on average."""
        if self.object_size is not None:
            return float(self.object_size)
        if self.objects is not None:
            return self.total / self.objects
        sizes = self.size_distribution or [1]
        return sum(sizes) / len(sizes)


class Downloads(_Strict):
    """Data downloaded from the archive per year (a placement may split it by class)."""

    per_year: Size = 0


class Restore(_Strict):
    """How archived data is restored before a download."""

    tier: str = "Standard"
    days: Annotated[Days, Field(ge=1)] = 1


class Egress(_Strict):
    """The network path downloads take, and an optional price that overrides the sheet's."""

    path: str = "internet"
    per_gb: Price | None = None
    label: str | None = None


class RequestLoad(_Strict):
    """A steady stream of requests, e.g. fixity checks."""

    name: str
    per_hour: Amount
    kind: Literal["get", "put"] = "get"
    storage_class: str | None = Field(default=None, alias="class")


class Transition(_Strict):
    """A lifecycle rule: the data now in ``to`` moved there from ``from`` after N days."""

    from_class: str = Field(alias="from")
    to_class: str = Field(alias="to")
    after_days: Amount


class Placement(_Strict):
    """Where the data lives: shares per class, an on-premises share, lifecycle rules.

    ``copies``: how many times the shares hold the data (2: a full copy on premises
    plus one in the cloud); the shares add up to ``copies`` x ``data.total``.
    """

    name: str
    copies: Annotated[int, Field(ge=1)] = 1
    classes: dict[str, str | int] = Field(default_factory=dict)
    on_premises: str | int = 0
    on_premises_per_tib_month: Price | None = None
    downloads_per_year: dict[str, Size] | None = None
    transitions: list[Transition] = Field(default_factory=list)


class ArchiveWorkload(_Strict):
    """A whole archive and the placements to compare (see docs/cost-model.md)."""

    name: str
    description: str = ""
    price_sheet: str | None = None
    provider: str | None = None
    data: Data
    downloads: Downloads = Field(default_factory=Downloads)
    restore: Restore = Field(default_factory=Restore)
    egress: Egress = Field(default_factory=Egress)
    requests: list[RequestLoad] = Field(default_factory=list)
    fixed_monthly: dict[str, Price] = Field(default_factory=dict)
    placements: list[Placement]

    @model_validator(mode="after")
    def _placements_hold_the_data(self) -> ArchiveWorkload:
        if not self.placements:
            raise ValueError("give at least one placement")
        names = [p.name for p in self.placements]
        if len(set(names)) != len(names):
            raise ValueError(f"placement names repeat: {names}")
        for index, placement in enumerate(self.placements):
            field = f"placements.{index}"
            held = self.shares(placement)
            wanted = placement.copies * self.data.total
            if sum(held.values()) != wanted:
                copies = (
                    f"{placement.copies} x data.total {format_size(self.data.total)} = "
                    f"{format_size(wanted)}"
                    if placement.copies > 1
                    else f"data.total {format_size(self.data.total)}"
                )
                raise FieldError(
                    f"{field}.classes",
                    f"placement {placement.name!r} holds {format_size(sum(held.values()))} "
                    f"(classes plus on_premises), not {copies}; give copies: N if it keeps "
                    "the data N times (on premises and in the cloud), else fix its shares",
                )
            split = placement.downloads_per_year
            if split is not None:
                unknown = set(split) - set(held)
                if unknown:
                    raise FieldError(
                        f"{field}.downloads_per_year",
                        f"placement {placement.name!r} downloads from {sorted(unknown)}, which "
                        f"it does not hold; use {sorted(held)}",
                    )
                if sum(split.values()) != self.downloads.per_year:
                    raise FieldError(
                        f"{field}.downloads_per_year",
                        f"placement {placement.name!r} downloads "
                        f"{format_size(sum(split.values()))} a year, not downloads.per_year "
                        f"{format_size(self.downloads.per_year)}",
                    )
            for rule in placement.transitions:
                if rule.to_class not in placement.classes:
                    raise FieldError(
                        f"{field}.transitions",
                        f"placement {placement.name!r}: a transition to {rule.to_class} it "
                        "does not hold; name one of its classes",
                    )
        return self

    def shares(self, placement: Placement) -> dict[str, int]:
        """Bytes per class of a placement (``on_premises`` for the on-premises share)."""
        held = {k: parse_share(v, self.data.total) for k, v in placement.classes.items()}
        on_prem = parse_share(placement.on_premises, self.data.total)
        if on_prem:
            held[ON_PREMISES] = on_prem
        return {k: v for k, v in held.items() if v}

    def downloads_of(self, placement: Placement) -> dict[str, int]:
        """Bytes downloaded per year per class: as given, else in proportion to the shares."""
        if placement.downloads_per_year is not None:
            return dict(placement.downloads_per_year)
        held = self.shares(placement)
        total = sum(held.values())
        return {k: round(self.downloads.per_year * v / total) for k, v in held.items()}


def _folder() -> Path:
    return Path(str(resources.files("archivefs.pricing") / "workloads"))


def available_workloads() -> list[str]:
    """Names of the example workloads shipped with archivefs."""
    return sorted(p.stem for p in _folder().iterdir() if p.name.endswith(".yaml"))


def load_workload(name_or_path: str | Path) -> ArchiveWorkload:
    """A shipped example workload by name (``"ngas-all-in-cloud"``) or a YAML file by path."""
    source = str(name_or_path)
    path = _folder() / f"{source}.yaml" if source in available_workloads() else Path(source)
    if not path.is_file():
        raise WorkloadError(
            "no such workload file.",
            path=source,
            fix=f"give a YAML file path or one of: {', '.join(available_workloads())}.",
        )
    try:
        text = read_text(path)
    except (OSError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise WorkloadError(
            f"cannot read it ({error}).", path=source, fix="check the file."
        ) from error
    return parse_workload(text, source=source)


def parse_workload(text: str, *, source: str = "<text>") -> ArchiveWorkload:
    """Validate a YAML workload; errors name the file, the field and the fix."""
    return validate_sheet(
        text,
        ArchiveWorkload,
        source=source,
        kind="workload",
        start="start from a shipped example (archivefs.pricing.available_workloads()).",
        fields="docs/cost-model.md describes every field of a workload.",
        error_type=WorkloadError,
    )


def tier_of(workload: ArchiveWorkload, provider: str) -> RestoreTier:
    """The workload's restore tier, in ``provider``'s names."""
    return RestoreTier.parse(workload.restore.tier, provider=provider)
