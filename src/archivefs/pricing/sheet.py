"""Price sheets: storage, request, retrieval, restore and egress prices as validated data.

Sheets are YAML files (shipped ones under ``sheets/``, or your own: a
negotiated price, another region, an on-prem tape system), validated once when
loaded; every later computation can trust them.
"""

from __future__ import annotations

from collections import Counter
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from archivefs.errors import ArchiveError, PriceSheetError
from archivefs.model import RestoreTier, StorageClass, check_tier
from archivefs.pricing.sizes import MAX_BYTES, Bytes, Days, Price
from archivefs.pricing.yaml_files import YAMLError, load_yaml, one_line, problem, read_text
from archivefs.providers import PROVIDERS

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

SheetModel = TypeVar("SheetModel", bound=BaseModel)
DEFAULT_SHEET = PROVIDERS["s3"].price_sheet  # each provider names its own (providers/)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RestorePrice(_Strict):
    """What one restore tier costs and how long it takes."""

    per_1000_requests: Price
    per_gb: Price
    hours: tuple[Price, Price]

    @field_validator("hours")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if value[0] > value[1]:
            raise ValueError(f"hours must be [min, max] with min <= max, got {list(value)}")
        return value


class ClassPrice(_Strict):
    """Prices of one storage class."""

    storage_per_gb_month: Price
    min_storage_days: Days = 0
    min_billable_object_bytes: Bytes = 0
    overhead_bytes_at_class: Bytes = 0
    overhead_bytes_at_standard: Bytes = 0
    put_per_1000: Price = 0.0
    get_per_1000: Price = 0.0
    retrieval_per_gb: Price = 0.0
    transition_in_per_1000: Price = 0.0
    restore: dict[RestoreTier, RestorePrice] = Field(default_factory=dict)


class EgressTier(_Strict):
    """Egress price up to a cumulative volume (``None``: everything beyond)."""

    up_to_gb: Annotated[float, Field(gt=0, le=MAX_BYTES)] | None
    per_gb: Price


class PriceSheet(_Strict):
    """A complete price sheet (see docs/cost-model.md for the format)."""

    name: str
    provider: str | None = None
    currency: str = "USD"
    bytes_per_gb: Annotated[int, Field(gt=0, le=MAX_BYTES)] = 2**30
    classes: dict[StorageClass, ClassPrice]
    restored_copy_class: StorageClass = Field(default=StorageClass.STANDARD, validate_default=True)
    egress: dict[str, list[EgressTier]]

    @model_validator(mode="before")
    @classmethod
    def _in_providers_names(cls, data: Any) -> Any:
        """With ``provider:``, class names are that provider's (GCS ``STANDARD`` is not S3's)."""
        if not isinstance(data, dict) or data.get("provider") is None:
            return data
        provider = str(data["provider"]).lower()
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r}; use one of: {', '.join(PROVIDERS)}")
        classes = data.get("classes")
        if isinstance(classes, dict):
            classes = {_named(k, provider): v for k, v in classes.items()}
        copy = data.get("restored_copy_class")
        if copy is None:
            copy = PROVIDERS[provider].default_class
        return {
            **data,
            "provider": provider,
            "classes": classes,
            "restored_copy_class": _named(copy, provider),
        }

    @field_validator("egress")
    @classmethod
    def _tiers(cls, value: dict[str, list[EgressTier]]) -> dict[str, list[EgressTier]]:
        for path, tiers in value.items():
            if not tiers:
                raise ValueError(f"egress path {path!r} has no tiers")
            bounds = [t.up_to_gb for t in tiers]
            if bounds[-1] is not None or None in bounds[:-1]:
                raise ValueError(
                    f"egress path {path!r}: only the last tier may be open-ended (up_to_gb: null),"
                    " and it must be"
                )
            closed = [b for b in bounds[:-1] if b is not None]
            if closed != sorted(set(closed)):
                raise ValueError(f"egress path {path!r}: up_to_gb must increase, got {closed}")
        return value

    @field_validator("restored_copy_class")
    @classmethod
    def _restored_copy_class_is_priced(
        cls, value: StorageClass, info: ValidationInfo
    ) -> StorageClass:
        classes = info.data.get("classes")
        if classes is not None and value not in classes:
            raise ValueError(f"{value.value} has no entry in classes; add one or pick another")
        return value

    def price(self, storage_class: StorageClass | str, *, path: str | None = None) -> ClassPrice:
        """The prices of a storage class, or a clear error if the sheet lacks it."""
        klass = StorageClass.parse(storage_class)
        try:
            return self.classes[klass]
        except KeyError:
            raise PriceSheetError(
                f"price sheet {self.name!r} has no prices for {klass.value}.",
                path=path,
                fix=f"add a '{klass.value}' entry under 'classes' or use another price sheet.",
            ) from None

    def restore_price(self, storage_class: StorageClass, tier: RestoreTier) -> RestorePrice:
        """The price of restoring ``storage_class`` at ``tier``.

        A tier the class does not offer is refused as a restore would refuse it
        (:func:`~archivefs.model.check_tier`); a tier it offers that the sheet does
        not price is a :class:`PriceSheetError`.
        """
        check_tier(storage_class, tier)
        prices = self.price(storage_class).restore
        if tier not in prices:
            raise PriceSheetError(
                f"price sheet {self.name!r} has no {tier.value} restore price for "
                f"{storage_class.value}.",
                fix=f"add classes.{storage_class.value}.restore.{tier.value} to the sheet.",
            )
        return prices[tier]

    def egress_cost(self, gb: float, path: str) -> float:
        """Cost of ``gb`` of egress over ``path``, walking the cumulative tiers."""
        try:
            tiers = self.egress[path]
        except KeyError:
            known = ", ".join(sorted(self.egress))
            raise PriceSheetError(
                f"price sheet {self.name!r} has no egress path {path!r}.",
                fix=f"use one of: {known}.",
            ) from None
        cost, floor = 0.0, 0.0
        for tier in tiers:
            ceiling = tier.up_to_gb if tier.up_to_gb is not None else float("inf")
            if gb <= floor:
                break
            cost += (min(gb, ceiling) - floor) * tier.per_gb
            floor = ceiling
        return cost


def sheet_provider(sheet: PriceSheet) -> str:
    """The provider whose classes a price sheet prices (``s3`` for a sheet with none).

    ``provider:`` if the sheet gives it. Without it, a class name two providers
    spell alike reads as the first one's (GCS ``STANDARD`` as S3's, Oracle
    ``Archive`` as Azure's), so the sheet is taken to be the provider, other than
    S3, that most of its classes belong to (S3 if none).
    """
    if sheet.provider:
        return sheet.provider
    counts = Counter(c.provider for c in sheet.classes if c.provider != "s3")
    return counts.most_common(1)[0][0] if counts else "s3"


def _named(name: Any, provider: str) -> Any:
    """``name`` as ``provider``'s storage class, spelled as the provider spells it."""
    if not isinstance(name, str):
        return name
    spec = PROVIDERS[provider].find_class(name)
    if spec is None or spec.name != name:
        known = ", ".join(c.name for c in PROVIDERS[provider].classes)
        raise ValueError(f"{provider} has no storage class {name!r}; use one of: {known}")
    return StorageClass(name, provider)


def available_price_sheets() -> list[str]:
    """Names of the price sheets shipped with archivefs."""
    folder = resources.files("archivefs.pricing") / "sheets"
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def load_price_sheet(name_or_path: str | Path = DEFAULT_SHEET) -> PriceSheet:
    """Load a shipped sheet by name (``"aws-us-east-1"``) or any YAML file by path."""
    shipped = resources.files("archivefs.pricing") / "sheets"
    text, source = read_sheet_text(name_or_path, available_price_sheets(), shipped, "price sheet")
    return parse_price_sheet(text, source=source)


def parse_price_sheet(text: str, *, source: str = "<text>") -> PriceSheet:
    """Validate a YAML price sheet; errors name the file and the field."""
    return validate_sheet(
        text,
        PriceSheet,
        source=source,
        kind="price sheet",
        start="start from a shipped sheet (see docs/cost-model.md).",
        fields="docs/cost-model.md describes every field and its unit.",
    )


def read_sheet_text(
    name_or_path: str | Path, shipped: list[str], folder: Traversable, kind: str
) -> tuple[str, str]:
    """The YAML text of a shipped sheet (by name, from ``folder``) or of a file, and the
    source to name in errors."""
    source = str(name_or_path)
    if source in shipped:
        return (folder / f"{source}.yaml").read_text(encoding="utf-8"), source
    path = Path(source)
    if not path.is_file():
        raise PriceSheetError(
            f"no such {kind}.",
            path=source,
            fix=f"give a YAML file path or one of: {', '.join(shipped)}.",
        )
    try:
        return read_text(path), source
    except (OSError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise PriceSheetError(
            f"cannot read the {kind} ({error}).", path=source, fix="check the file."
        ) from error


class FieldError(ValueError):
    """A model validator's problem with one field, which :func:`validate_sheet` names
    (``placements.1.classes``) where pydantic would say the whole model."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field


def validate_sheet(
    text: str,
    model: type[SheetModel],
    *,
    source: str,
    kind: str,
    start: str,
    fields: str,
    error_type: type[ArchiveError] = PriceSheetError,
) -> SheetModel:
    """Parse YAML ``text`` into ``model`` (within the loader's bounds, yaml_files.py);
    errors (``error_type``) name the file, the field and the fix in one short line."""
    try:
        data = load_yaml(text)
    except YAMLError as error:
        raise error_type(
            f"not valid YAML, or past a bound ({problem(error)}).",
            path=source,
            fix="fix the YAML (docs/guarantees.md gives the bounds).",
        ) from None
    if not isinstance(data, dict):
        raise error_type(f"a {kind} must be a YAML mapping.", path=source, fix=start)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        cause = first.get("ctx", {}).get("error")
        field = getattr(cause, "field", None) or ".".join(str(p) for p in first["loc"])
        field = one_line(field or "(top level)")
        raise error_type(
            f"field {field}: {one_line(first['msg'])} ({error.error_count()} problem(s) in all).",
            path=source,
            fix=f"correct the field; {fields}",
        ) from None
