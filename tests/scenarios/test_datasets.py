"""xarray on every provider: open a zarr store lazily, plan a selection, prefetch, read.

Chunks are in the provider's cold class: one that needs a restore (S3, Azure, Oracle),
or one that reads at once for a retrieval fee (GCS), where the plan reads instead of
restoring and prefetch sends nothing; and in a fee-charging class on every provider,
where plans and prefetches go through the budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import fsspec
import numpy as np
import pytest

from archivefs.errors import BudgetExceededError
from tests.support.providers import NO_FEES, provider_params, reads, restore_calls, restore_requests

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.providers import Provider

xr = pytest.importorskip("xarray")
ads = pytest.importorskip("archivefs.datasets")

from tests.zarr_data import make_source, upload_zarr_to  # noqa: E402  (needs xarray)

NOT_HERE = {"rgw": "radosgw stores no class that needs a restore or bills a read"}
GIB = 2**30
CHUNKS = "store.zarr/t/c/"
pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_prefetch_then_xarray_reads_an_archived_zarr_store(
    provider: Provider, tmp_path: Path
) -> None:
    source = make_source()
    url = upload_zarr_to(provider, tmp_path, source)
    provider.server.requests.clear()
    ds = ads.open_zarr(
        url,
        storage_options=provider.storage_options(),
        skip_instance_cache=True,
        **provider.open_options(),
    )
    assert restore_calls(provider) == 0
    selection = ds["t"].isel(time=slice(8, 24))
    plan = ads.plan_dataset(selection)
    assert len(plan) == 8  # 4 time chunks x 2 y chunks
    restores = 8 if provider.spec.restores else 0  # else: readable at once, for a fee
    assert (len(plan.to_restore), len(plan.fee_reads)) == (restores, 8 - restores)

    result = ads.prefetch(selection, wait=True, timeout=600)
    assert result.requests_sent == restores
    assert restore_calls(provider) == provider.spec.restore_calls(restores)
    assert restore_requests(provider, status=202) == restores
    assert reads(provider, CHUNKS) == 0  # prefetch reads nothing itself
    np.testing.assert_array_equal(selection.values, source["t"].isel(time=slice(8, 24)).values)
    assert reads(provider, CHUNKS) == 8  # one read per chunk: none too early, none again
    assert restore_requests(provider) == restores


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_archive_url_and_xarray_storage_options(provider: Provider, tmp_path: Path) -> None:
    """``xr.open_zarr("archive::<protocol>://...", storage_options={<protocol>: ...,
    "archive": ...})``, and the same URL through ``fsspec.open``."""
    source = make_source()
    url = upload_zarr_to(provider, tmp_path, source)
    storage = {
        provider.spec.protocol: provider.storage_options(),
        "archive": provider.open_options(),
    }
    with fsspec.open(f"archive::{url}/zarr.json", **storage) as f:
        assert b"zarr_format" in f.read()
    ds = xr.open_zarr("archive::" + url, storage_options=storage, consolidated=False)
    selection = ds["t"].isel(time=slice(5, 11), y=slice(0, 2))
    provider.server.requests.clear()
    plan = ads.plan_dataset(selection)
    # time 5..10 -> time chunks 1 and 2; y 0..1 -> y chunk 0; x -> chunk 0
    assert sorted(g.key for g in plan) == [
        f"{provider.bucket}/{CHUNKS}1/0/0",
        f"{provider.bucket}/{CHUNKS}2/0/0",
    ]
    assert {g.state.storage_class.value for g in plan} == {provider.spec.chunk_class}
    restores = 2 if provider.spec.restores else 0
    assert (len(plan.to_restore), len(plan.fee_reads)) == (restores, 2 - restores)
    assert restore_calls(provider) == 0  # planning sends no restore

    result = ads.prefetch(selection, wait=True, timeout=600)
    assert result.requests_sent == restores
    assert restore_calls(provider) == provider.spec.restore_calls(restores)
    expected = source["t"].isel(time=slice(5, 11), y=slice(0, 2)).values
    np.testing.assert_array_equal(selection.values, expected)
    assert reads(provider, CHUNKS) == 2


@pytest.mark.parametrize("provider", provider_params(skip=NO_FEES), indirect=True)
def test_plan_and_prefetch_of_fee_charging_chunks_go_through_the_budget(
    provider: Provider, tmp_path: Path
) -> None:
    source = make_source()
    url = upload_zarr_to(provider, tmp_path, source, chunks=provider.spec.fee_class)
    options = {"storage_options": provider.storage_options(), "skip_instance_cache": True}
    tight = ads.open_zarr(url, **options, **provider.open_options(max_cost=0.0))
    selection = tight["t"].isel(time=slice(8, 24))  # 8 chunks
    provider.server.requests.clear()
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        ads.plan_dataset(selection)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        ads.prefetch(selection)
    assert reads(provider, CHUNKS) == 0

    seen: list[Any] = []
    ds = ads.open_zarr(url, **options, **provider.open_options(max_cost=1.0))
    selection = ds["t"].isel(time=slice(8, 24))
    (fs,) = ads.chunk_paths(selection)  # hooks are callables: added to the opened filesystem
    fs.hooks.on_estimate.append(lambda plan, e: seen.append(e))
    plan = ads.plan_dataset(selection)
    assert len(plan) == len(plan.fee_reads) == 8  # 4 time chunks x 2 y chunks
    assert plan.to_restore == []  # readable, for a fee: nothing to restore
    chunk_bytes = sum(g.size for g in plan)
    assert provider.spec.fee_class is not None
    retrieval, _ = provider.spec.fee_classes[provider.spec.fee_class]
    assert seen[-1].bytes_read == chunk_bytes
    assert seen[-1].components["retrieval"] == pytest.approx(chunk_bytes / GIB * retrieval)
    result = ads.prefetch(selection)
    assert result.requests_sent == 0
    assert restore_calls(provider) == 0
    assert len(seen) == 1  # plan_dataset approved these reads: prefetch counts them once
    assert reads(provider, CHUNKS) == 0  # prefetch reads nothing itself
    np.testing.assert_array_equal(selection.values, source["t"].isel(time=slice(8, 24)).values)
    assert reads(provider, CHUNKS) == 8  # one read per chunk
