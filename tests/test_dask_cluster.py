"""A real distributed cluster (2 worker processes) reading an archived zarr dataset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import archivefs.datasets as ads
from archivefs import ObjectArchivedError
from archivefs.worker_logs import OMITTED
from tests.support.groups import DASK_WORKERS, IDLE_QUIETLY
from tests.zarr_data import make_source, upload_zarr

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

distributed = pytest.importorskip("distributed")


def options(archive: EmulatedArchive, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "storage_options": archive.storage_options(),
        "journal": str(tmp_path / "journal.sqlite"),
        "restore_status_in_listings": True,
        "restore_time_scale": 1 / 3600,
        # the emulator's keys are fakes: send them to the workers (real keys stay out of
        # pickles by default and workers use their own credentials; docs/guarantees.md)
        "pickle_credentials": True,
        **extra,
    }


def test_raise_policy_fails_the_task_with_our_error(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    url = upload_zarr(archive, bucket, tmp_path, make_source())
    ds = ads.open_zarr(url, **options(archive, tmp_path))
    with pytest.raises(ObjectArchivedError, match="must be restored"):
        dask_client.compute(ds["t"].isel(time=slice(0, 8)).sum()).result()
    assert archive.requests.count("RestoreObject") == 0


def test_prefetch_once_then_workers_read(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    ds = ads.open_zarr(url, **options(archive, tmp_path))
    selection = ds["t"].isel(time=slice(8, 24))
    plan = ads.plan_dataset(selection)
    assert len(plan.to_restore) == 8  # 4 time chunks x 2 y chunks
    ads.prefetch(selection, wait=True, timeout=600)
    total = dask_client.compute(selection.sum()).result()
    assert np.isclose(float(total), float(source["t"].isel(time=slice(8, 24)).sum()))
    assert archive.requests.count("RestoreObject") == 8


def test_wait_policy_on_workers_restores_each_chunk_once(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(1.0)
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    opts = options(archive, tmp_path, on_archived="wait", wait_timeout=600)
    ds = ads.open_zarr(url, **opts)
    other = ads.open_zarr(url, chunks={"time": 12, "y": 6, "x": 8}, **opts)
    # two graphs with different tasks reading the same 6 chunk objects, at once
    a = ds["t"].isel(time=slice(0, 12)).sum()
    b = other["t"].isel(time=slice(0, 12)).mean()
    assert not set(a.data.__dask_graph__()) & set(b.data.__dask_graph__())
    total, mean = dask_client.gather(dask_client.compute([a, b]))
    expected = source["t"].isel(time=slice(0, 12))
    assert np.isclose(float(total), float(expected.sum()))
    assert np.isclose(float(mean), float(expected.mean()))
    assert archive.requests.count("RestoreObject", status=202) == 6
    assert archive.requests.count("RestoreObject") == 6


def test_restore_aware_graph_on_the_cluster(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(1.0)
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    ds = ads.open_zarr(url, **options(archive, tmp_path))
    selection = ds["q"].isel(time=slice(20, 32))
    gated = ads.restore_aware(selection, timeout=600, poll_interval=0.2)
    total = dask_client.compute(gated.sum()).result()
    assert np.isclose(float(total), float(source["q"].isel(time=slice(20, 32)).sum()))
    assert archive.requests.count("RestoreObject", status=202) == 6
    assert archive.requests.count("RestoreObject") == 6


def test_bundled_store_on_the_cluster_one_restore_per_bundle(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    import fsspec
    import s3fs

    from archivefs.catalog import ByChunkNeighbourhood, Catalog
    from archivefs.catalog.layout import catalog_dir
    from archivefs.catalog.writer import bundle_tree

    source = make_source()
    local = tmp_path / "src.zarr"
    source.to_zarr(local, mode="w", consolidated=False)
    s3 = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    policy = ByChunkNeighbourhood(dim_index=0, window=2, hot_arrays=frozenset({"time", "x", "y"}))
    bundle_tree(
        fsspec.filesystem("file"), str(local), s3, f"{bucket}/b.zarr",
        policy=policy, storage_class="DEEP_ARCHIVE",
    )  # fmt: skip
    catalog = Catalog.load(s3, catalog_dir(f"{bucket}/b.zarr"))
    ds = ads.open_zarr(f"s3://{bucket}/b.zarr", **options(archive, tmp_path))
    assert archive.requests.count("RestoreObject") == 0  # opened lazily, nothing restored
    selection = ds["t"].isel(time=slice(8, 24))  # time chunks 2..5 -> windows 1 and 2
    plan = ads.plan_dataset(selection)
    expected = {
        m.bundle
        for m in catalog.members()
        if m.path.split("/t/c/")[-1].split("/")[0] in {"2", "3", "4", "5"} and "/t/c/" in m.path
    }
    assert {g.key for g in plan} == expected
    assert len(expected) == 2
    ads.prefetch(selection, wait=True, timeout=600)
    total = dask_client.compute(selection.sum()).result()
    assert np.isclose(float(total), float(source["t"].isel(time=slice(8, 24)).sum()))
    assert archive.requests.count("RestoreObject") == 2  # one per bundle, not per chunk


def test_workers_without_credentials_report_the_error_instead_of_dying(
    dask_client: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs.errors import MissingCredentialsError

    url = upload_zarr(archive, bucket, tmp_path, make_source())
    no_keys = options(archive, tmp_path)
    del no_keys["pickle_credentials"]  # the default: explicit keys stay out of the graph
    ds = ads.open_zarr(url, **no_keys)
    # before: raising while the task was unpickled killed each worker in turn, and an
    # error chained to itself hung Dask's error report; now the task fails with our error
    with pytest.raises(MissingCredentialsError, match="pickled without its explicit keys"):
        dask_client.compute(ds["t"].isel(time=slice(0, 8)).sum()).result(timeout=600)
    assert len(dask_client.scheduler_info()["workers"]) == DASK_WORKERS  # none died
    # each failed task is logged on its worker with its exception line, and without the
    # hundred-line traceback (the client's exception above carries it)
    failed = [
        message
        for logs in dask_client.get_worker_logs().values()
        for _, message in logs
        if "Compute Failed" in message and "MissingCredentialsError" in message
    ]
    assert failed
    assert all(OMITTED in message and 'File "' not in message for message in failed)


def test_an_archivefs_error_is_never_its_own_cause() -> None:
    from archivefs.errors import ArchiveError
    from archivefs.stores.translate import raise_translated

    original = ArchiveError("boom.", path="b/k", fix="none.")

    def reraise() -> None:
        try:
            raise original
        except ArchiveError as error:
            raise_translated(error, "b/k")

    with pytest.raises(ArchiveError) as caught:
        reraise()
    assert caught.value is original
    assert caught.value.__cause__ is not caught.value


def _idle_settings() -> dict[str, object]:
    import dask

    return {key: dask.config.get(key) for key in IDLE_QUIETLY}


def test_the_session_cluster_idles_quietly_in_every_worker_process(dask_client: Any) -> None:
    """The session's one cluster idles through most of a run: its worker processes run
    without the statistical profiler and with slow event-loop ticks (IDLE_QUIETLY)."""
    settings = dask_client.run(_idle_settings)
    assert len(settings) == DASK_WORKERS
    assert all(found == IDLE_QUIETLY for found in settings.values())
