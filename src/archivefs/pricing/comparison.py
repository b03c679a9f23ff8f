"""Comparison sheets: one sheet that prices classes of several providers side by side.

A :class:`PriceSheet` prices one provider's classes in full. A comparison sheet
holds what a published comparison gives, for every provider at once: per
``provider:Class`` the storage price and the minimum storage days (the study's
Table 1, say). Request, retrieval, restore and egress prices are not part of it;
:func:`archivefs.pricing.advise.advise_providers` takes them from the providers'
own price sheets and says which (see docs/cost-model.md).

A class is named ``provider:Class`` in its provider's own spelling
(``s3:STANDARD_IA``, ``gcs:COLDLINE``, ``azure:Cool``, ``oracle:Archive``). Each
entry says what reading it takes (``access``): for a provider archivefs
describes (``archivefs.providers.PROVIDERS``), the name must be one of its
classes and ``access`` must agree with the description; for a provider it does
not describe yet, the sheet's ``access`` is taken as given.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from archivefs.errors import PriceSheetError
from archivefs.pricing.sheet import (
    PriceSheet,
    available_price_sheets,
    load_price_sheet,
    read_sheet_text,
    sheet_provider,
    validate_sheet,
)
from archivefs.pricing.sizes import MAX_BYTES, Days, Price
from archivefs.pricing.yaml_files import YAMLError, load_yaml, read_text
from archivefs.providers import PROVIDERS, Access


class ComparedClass(BaseModel):
    """One provider's class in a comparison: its storage price and minimum days."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    label: str
    access: Access
    storage_per_gb_month: Price
    min_storage_days: Days = 0


class ComparisonSheet(BaseModel):
    """Storage prices of several providers' classes, from one source and date."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str
    source: str
    date: str
    region: str
    currency: str = "USD"
    bytes_per_gb: Annotated[int, Field(gt=0, le=MAX_BYTES)] = 2**30
    not_included: list[str] = Field(default_factory=list)
    access_prices: dict[str, str] = Field(default_factory=dict)
    classes: dict[str, ComparedClass]

    @field_validator("classes")
    @classmethod
    def _names(cls, value: dict[str, ComparedClass]) -> dict[str, ComparedClass]:
        if not value:
            raise ValueError("a comparison sheet prices at least one class")
        for key, entry in value.items():
            provider, _, name = key.partition(":")
            if not provider or not name:
                raise ValueError(f"{key!r} is not provider:Class (e.g. s3:STANDARD_IA, azure:Cool)")
            spec = PROVIDERS.get(provider)
            if spec is None:
                continue  # a provider archivefs does not describe: its access is as given
            known = next((c for c in spec.classes if c.name == name), None)
            if known is None:
                names = ", ".join(c.name for c in spec.classes)
                raise ValueError(f"{key!r}: {provider} has no class {name!r}; use one of: {names}")
            if known.access is not entry.access:
                raise ValueError(
                    f"{key!r}: access is {known.access.value} for {provider} {name}, "
                    f"not {entry.access.value}"
                )
        return value

    def split(self, key: str) -> tuple[str, str]:
        """``("azure", "Cool")`` for ``"azure:Cool"``."""
        provider, _, name = key.partition(":")
        return provider, name

    @property
    def providers(self) -> list[str]:
        """The providers the sheet prices, in the order they first appear."""
        return list(dict.fromkeys(self.split(k)[0] for k in self.classes))


def _folder() -> Path:
    return Path(str(resources.files("archivefs.pricing") / "comparisons"))


def available_comparison_sheets() -> list[str]:
    """Names of the comparison sheets shipped with archivefs."""
    return sorted(
        p.name.removesuffix(".yaml") for p in _folder().iterdir() if p.name.endswith(".yaml")
    )


def access_sheets_for(
    comparison: ComparisonSheet, overrides: dict[str, str] | None = None
) -> tuple[dict[str, PriceSheet], list[str]]:
    """The price sheets that give a comparison's missing prices, per provider, and notes.

    Each provider's sheet is ``overrides[provider]`` if given, else the one the
    comparison names under ``access_prices``; ``"none"`` leaves the provider
    without one. A named sheet that does not ship with this archivefs is
    skipped, and a note says so.
    """
    wanted = {**comparison.access_prices, **(overrides or {})}
    unknown = set(overrides or {}) - set(comparison.providers)
    if unknown:
        raise PriceSheetError(
            f"{comparison.name} prices no class of {', '.join(sorted(unknown))}.",
            path=comparison.name,
            fix=f"name sheets for its providers only: {', '.join(comparison.providers)}.",
        )
    sheets: dict[str, PriceSheet] = {}
    notes: list[str] = []
    for provider in comparison.providers:
        name = wanted.get(provider, "none")
        if name == "none":
            notes.append(f"{provider}: no price sheet for requests, retrieval and restores.")
            continue
        if name not in available_price_sheets() and not Path(name).is_file():
            notes.append(
                f"{provider}: {name} does not ship with this archivefs; requests, retrieval "
                f"and restores of {provider} are not included (pass one with "
                f"--access-prices {provider}=SHEET)."
            )
            continue
        sheet = load_price_sheet(name)
        if sheet_provider(sheet) != provider and all(c.provider != provider for c in sheet.classes):
            raise PriceSheetError(
                f"{sheet.name} prices {sheet_provider(sheet)} classes, not {provider}'s.",
                path=name,
                fix=f"give a {provider} price sheet for {provider}.",
            )
        sheets[provider] = sheet
    return sheets, notes


def with_storage_prices(
    sheet: PriceSheet, comparison: ComparisonSheet, provider: str
) -> PriceSheet:
    """``sheet`` with the storage prices and minimum days ``comparison`` gives for its classes.

    What the comparison does not give (requests, retrieval, restores, egress) stays the
    sheet's; the result is named after both.
    """
    classes = {}
    for klass, price in sheet.classes.items():
        entry = comparison.classes.get(f"{provider}:{klass}")
        if entry is not None:
            price = price.model_copy(
                update={
                    "storage_per_gb_month": entry.storage_per_gb_month,
                    "min_storage_days": entry.min_storage_days,
                }
            )
        classes[klass] = price
    return sheet.model_copy(
        update={
            "name": f"{comparison.name} + {sheet.name}",
            "classes": classes,
            "bytes_per_gb": comparison.bytes_per_gb,
        }
    )


def _names_providers(data: object) -> bool:
    """Whether parsed YAML looks like a comparison sheet: classes keyed ``provider:Class``."""
    if not isinstance(data, dict) or not isinstance(data.get("classes"), dict):
        return False
    keys = [str(k) for k in data["classes"]]
    return bool(keys) and all(":" in k for k in keys)


def load_any_sheet(name_or_path: str | Path) -> PriceSheet | ComparisonSheet:
    """A shipped sheet of either kind by name, or a YAML file of either kind by path.

    A file whose classes are keyed ``provider:Class`` is a comparison sheet;
    any other is a provider's price sheet.
    """
    source = str(name_or_path)
    if source in available_comparison_sheets():
        return load_comparison_sheet(source)
    if source in available_price_sheets():
        return load_price_sheet(source)
    path = Path(source)
    if not path.is_file():
        known = available_price_sheets() + available_comparison_sheets()
        raise PriceSheetError(
            "no such price sheet.",
            path=source,
            fix=f"give a YAML file path or one of: {', '.join(sorted(known))}.",
        )
    try:
        data = load_yaml(read_text(path))
    except (OSError, ValueError, YAMLError):  # UnicodeDecodeError is a ValueError
        data = None  # the loader below reports it properly
    if _names_providers(data):
        return load_comparison_sheet(path)
    return load_price_sheet(path)


def load_comparison_sheet(name_or_path: str | Path) -> ComparisonSheet:
    """Load a shipped comparison sheet by name (``"study-2018-tokyo"``) or a YAML file."""
    text, source = read_sheet_text(
        name_or_path, available_comparison_sheets(), _folder(), "comparison sheet"
    )
    return parse_comparison_sheet(text, source=source)


def parse_comparison_sheet(text: str, *, source: str = "<text>") -> ComparisonSheet:
    """Validate a YAML comparison sheet; errors name the file and the field."""
    return validate_sheet(
        text,
        ComparisonSheet,
        source=source,
        kind="comparison sheet",
        start="start from the shipped study-2018-tokyo sheet (see docs/cost-model.md).",
        fields="docs/cost-model.md describes the comparison sheet format.",
    )
