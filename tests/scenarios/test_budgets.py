"""Budgets on every path that spends money, once for every provider.

Fee-charging reads (a class that reads at once and bills per GB read) and restores
are each refused on every spending path — ``restore``, ``prefetch``, ``prefetch(to=)``,
``get``, ``cat``, ``cat_file`` (whole and ranged), ``open``, and reads under
``on_archived="wait"``/``"restore"`` — before the first byte or restore request, and
approved in the provider's own prices. (``prefetch --to`` of the CLI and xarray's
plan/prefetch go through the same calls: ``test_cli.py``, ``test_datasets.py``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from archivefs.errors import BudgetExceededError
from tests.support.providers import (
    NO_FEES,
    NO_RESTORES,
    provider_params,
    reads,
    request_counts,
    restore_requests,
    seed,
    seed_cold,
)

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.providers import Provider

GIB = 2**30
SIZE = 500


def seed_fee_classes(provider: Provider) -> dict[str, bytes]:
    """One object per fee-charging class and one hot, below ``run/``: path -> bytes."""
    data: dict[str, bytes] = {}
    for i, klass in enumerate(provider.spec.fee_classes):
        seed(provider, {f"run/f{i}": klass.encode()[:1] * SIZE}, klass)
        data[f"{provider.bucket}/run/f{i}"] = klass.encode()[:1] * SIZE
    seed(provider, {"run/hot": b"h" * SIZE}, provider.spec.hot_class)
    data[f"{provider.bucket}/run/hot"] = b"h" * SIZE
    provider.server.requests.clear()
    return data


@pytest.mark.parametrize("provider", provider_params(skip=NO_FEES), indirect=True)
def test_fee_reads_are_refused_before_the_first_byte_on_every_path(
    provider: Provider, tmp_path: Path
) -> None:
    data = seed_fee_classes(provider)
    paths, run = sorted(data), f"{provider.bucket}/run/"
    fees = len(provider.spec.fee_classes)
    seen: list[Any] = []
    tight = provider.fs(max_cost=0.0, on_estimate=lambda plan, e: seen.append(e))
    with pytest.raises(BudgetExceededError, match=rf"{fees} object\(s\) that bill a retrieval"):
        tight.cat(paths)
    assert request_counts(provider) == provider.spec.first_look  # a listing, no object read
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        tight.get(run, str(tmp_path / "out"), recursive=True)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        tight.prefetch(run)
    with pytest.raises(BudgetExceededError, match="retrieval fees"):
        tight.prefetch(run, to=tmp_path / "to")
    for one in paths[:fees]:
        with pytest.raises(BudgetExceededError, match=r"1 object\(s\) that bill a retrieval"):
            tight.cat_file(one)
        with pytest.raises(BudgetExceededError, match="retrieval fee"):
            tight.cat_file(one, start=0, end=10)
        with pytest.raises(BudgetExceededError, match="retrieval fee"), tight.open(one) as f:
            f.read(10)
    for policy in ("wait", "restore"):
        with pytest.raises(BudgetExceededError, match="retrieval fee"):
            provider.fs(max_cost=0.0, on_archived=policy).cat_file(paths[0])
    vetoing = provider.fs(on_estimate=lambda plan, e: False)
    with pytest.raises(BudgetExceededError, match="refused the plan"):
        vetoing.get(paths[:fees], str(tmp_path / "v") + "/")
    assert reads(provider, "run/") == 0  # every refusal came before the first byte
    assert restore_requests(provider) == 0
    assert not (tmp_path / "to").exists()
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and "journal" not in p.name]
    assert seen == []  # the budget refuses first; no hook is asked to approve

    fs = provider.fs(max_cost=1.0, on_estimate=lambda plan, e: seen.append((plan, e)))
    assert fs.cat(paths) == data
    assert reads(provider, "run/") == len(paths)  # one read each
    ((plan, estimate),) = seen
    assert sorted(g.state.storage_class.value for g in plan) == sorted(provider.spec.fee_classes)
    prices = provider.spec.fee_classes.values()
    assert estimate.sheet == provider.spec.sheet
    assert estimate.bytes_read == fees * SIZE
    assert estimate.get_request_count == fees
    assert estimate.components["retrieval"] == pytest.approx(sum(SIZE / GIB * r for r, _ in prices))
    assert estimate.components["requests"] == pytest.approx(sum(g / 1000 for _, g in prices))
    assert estimate.total == pytest.approx(
        estimate.components["retrieval"] + estimate.components["requests"]
    )
    result = fs.prefetch(run)  # readable for a fee: nothing to restore, nothing read
    assert result.requests_sent == 0
    assert len(result.plan.fee_reads) == fees
    assert len(seen) == 1  # the reads cat approved are not shown or counted again
    assert reads(provider, "run/") == len(paths)

    copied = provider.fs(max_cost=1.0).prefetch(run, to=tmp_path / "to", timeout=600)
    assert len(copied.copied.files) == len(paths)
    for path, body in data.items():
        assert (tmp_path / "to" / path).read_bytes() == body
    assert reads(provider, "run/") == 2 * len(paths)  # each file once

    for policy in ("raise", "restore", "wait"):  # a fee class reads at once under each
        reader = provider.fs(max_cost=1.0, on_archived=policy)
        assert [reader.cat_file(p) for p in paths] == [data[p] for p in paths]
        assert reader.hooks.spent > 0
    assert restore_requests(provider) == 0


@pytest.mark.parametrize("provider", provider_params(skip=NO_FEES), indirect=True)
def test_ranged_fee_reads_learn_the_state_once_and_read_the_range(provider: Provider) -> None:
    data = seed_fee_classes(provider)
    one = sorted(data)[0]
    fs = provider.fs(max_cost=1.0)
    provider.server.requests.clear()
    assert fs.cat_file(one, start=0, end=10) == data[one][:10]
    assert fs.cat_file(one, start=10, end=20) == data[one][10:20]
    assert fs.hooks.spent > 0
    assert provider.server.requests.count(provider.spec.head_op) == 1  # once per object
    assert reads(provider, "run/") == 2


@pytest.mark.parametrize("provider", provider_params(skip=NO_RESTORES), indirect=True)
def test_restores_are_refused_on_every_path_in_the_providers_prices(
    provider: Provider, tmp_path: Path
) -> None:
    paths = seed_cold(provider, 3)
    prefix = f"{provider.bucket}/o/"
    plan = provider.fs().plan(paths)
    assert len(plan.to_restore) == 3
    default_sheet = provider.fs(price_sheet=None)  # no sheet given: the provider's own
    estimate = default_sheet.estimate_plan(plan)
    assert estimate.sheet == provider.spec.sheet
    cost = estimate.total
    assert cost > 0
    provider.server.requests.clear()

    tight = provider.fs(price_sheet=None, max_cost=cost * 0.99)
    refused = r"estimated cost [0-9.]+ USD of restoring .* nothing was requested"
    with pytest.raises(BudgetExceededError, match=refused):
        tight.restore(paths)
    with pytest.raises(BudgetExceededError):
        tight.prefetch(prefix)
    with pytest.raises(BudgetExceededError):
        tight.prefetch(prefix, to=tmp_path / "to")
    for policy in ("wait", "restore"):
        with pytest.raises(BudgetExceededError):
            provider.fs(max_cost=0.0, on_archived=policy).cat_file(paths[0])
    assert restore_requests(provider) == 0
    assert reads(provider, "o/") == 0
    assert not (tmp_path / "to").exists()

    tight.hooks.set_budget(cost)  # exactly the estimate: approved
    assert tight.restore(paths).requests_sent == 3
    assert restore_requests(provider, status=202) == 3
