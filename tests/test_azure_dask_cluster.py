"""A real distributed cluster (2 worker processes) reading an archived zarr store on Azure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import archivefs.datasets as ads
from tests.zarr_data import make_source, upload_zarr_azure

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedAzureArchive

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(900)


def options(archive: EmulatedAzureArchive, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "storage_options": archive.storage_options(),
        "journal": str(tmp_path / "journal.sqlite"),
        "restore_time_scale": 1 / 3600,
        "price_sheet": "azure-eastus",
        "skip_instance_cache": True,
        # Azurite's well-known key is no secret: send it to the workers
        "pickle_credentials": True,
        **extra,
    }


def test_prefetch_once_then_workers_read(
    dask_client: Any, azure_archive: EmulatedAzureArchive, azure_container: str, tmp_path: Path
) -> None:
    source = make_source()
    url = upload_zarr_azure(azure_archive, azure_container, tmp_path, source)
    ds = ads.open_zarr(url, **options(azure_archive, tmp_path))
    selection = ds["t"].isel(time=slice(8, 24))
    assert len(ads.plan_dataset(selection).to_restore) == 8
    azure_archive.requests.clear()
    ads.prefetch(selection, wait=True, timeout=600)
    total = dask_client.compute(selection.sum()).result()
    assert np.isclose(float(total), float(source["t"].isel(time=slice(8, 24)).sum()))
    assert azure_archive.requests.count("BlobBatch") == 1  # 8 chunks in one request
    assert azure_archive.requests.count("SetBlobTier", batched=None) == 8
    assert set(azure_archive.rehydrations.values()) == {1}


def test_restore_aware_graph_on_the_cluster(
    dask_client: Any, azure_archive: EmulatedAzureArchive, azure_container: str, tmp_path: Path
) -> None:
    azure_archive.rehydrate_delay["Standard"] = 1.0
    source = make_source()
    url = upload_zarr_azure(azure_archive, azure_container, tmp_path, source)
    ds = ads.open_zarr(url, **options(azure_archive, tmp_path))
    selection = ds["q"].isel(time=slice(20, 32))
    azure_archive.requests.clear()
    gated = ads.restore_aware(selection, timeout=600, poll_interval=0.2)
    total = dask_client.compute(gated.sum()).result()
    assert np.isclose(float(total), float(source["q"].isel(time=slice(20, 32)).sum()))
    assert azure_archive.requests.count("SetBlobTier", batched=None, status=202) == 6
    assert azure_archive.requests.count("SetBlobTier", batched=None) == 6
    assert len(azure_archive.rehydrations) == 6
    assert azure_archive.requests.count("GetBlobProperties") == 0  # workers never poll
