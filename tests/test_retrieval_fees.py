"""S3 classes that read at once for a retrieval fee (STANDARD_IA, ONEZONE_IA, GLACIER_IR),
and Azure's Cool and Cold: bulk reads, plan_dataset and prefetch go through the budget
and estimate hooks first.

Against the emulated S3 archive (moto over HTTP) and Azurite; counts are the server's.
(GCS: tests/test_gcs.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from archivefs.errors import BudgetExceededError

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedArchive, EmulatedAzureArchive

GIB = 2**30
CLASSES = {"ia": "STANDARD_IA", "oz": "ONEZONE_IA", "ir": "GLACIER_IR", "std": "STANDARD"}


def data_gets(archive: EmulatedArchive, bucket: str, prefix: str) -> int:
    """GETs of objects below ``prefix`` (never of archivefs's catalog registry)."""
    return sum(
        1
        for r in archive.requests.records
        if r.op == "GET" and r.bucket == bucket and (r.key or "").startswith(prefix)
    )


def seed(archive: EmulatedArchive, bucket: str) -> dict[str, bytes]:
    data = {}
    for name, klass in CLASSES.items():
        data[f"{bucket}/run/{name}"] = body = name.encode() * 500
        archive.put_object(bucket, f"run/{name}", body, storage_class=klass)
    archive.requests.clear()
    return data


def test_a_bulk_read_of_fee_charging_objects_is_refused_before_the_first_get(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    data = seed(archive, bucket)
    paths = sorted(data)
    # three fee reads: GETs at 0.001 + 0.001 + 0.01 per 1,000 = 0.000012, plus retrieval
    fs = make_fs(max_cost=0.00001)
    with pytest.raises(BudgetExceededError, match="3 object\\(s\\) that bill a retrieval fee"):
        fs.cat(paths)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        fs.get(f"{bucket}/run/", str(tmp_path / "out"), recursive=True)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        fs.prefetch(f"{bucket}/run/")
    assert data_gets(archive, bucket, "run/") == 0
    assert archive.requests.count("RestoreObject") == 0
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.*"))

    seen: list[Any] = []
    fs = make_fs(max_cost=0.001, on_estimate=lambda plan, e: seen.append((plan, e)))
    archive.requests.clear()
    assert fs.cat(paths) == data
    assert data_gets(archive, bucket, "run/") == 4
    ((plan, estimate),) = seen
    assert sorted(g.state.storage_class.value for g in plan) == sorted(
        ["STANDARD_IA", "ONEZONE_IA", "GLACIER_IR"]
    )
    size = 1000  # "ia", "oz", "ir" x 500 ("std" reads free)
    assert estimate.bytes_read == 3 * size
    assert estimate.components["retrieval"] == pytest.approx(size / GIB * (0.01 + 0.01 + 0.03))
    assert estimate.components["requests"] == pytest.approx((0.001 + 0.001 + 0.01) / 1000)

    result = fs.prefetch(f"{bucket}/run/")  # readable for a fee: nothing to restore
    assert result.requests_sent == 0
    assert len(result.plan.fee_reads) == 3
    assert len(seen) == 1  # the same reads, approved by cat already: not shown or counted again
    assert archive.requests.count("RestoreObject") == 0


def test_plan_dataset_and_prefetch_of_glacier_ir_chunks_check_the_budget(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    pytest.importorskip("xarray")
    import archivefs.datasets as ads
    from tests.zarr_data import METADATA, make_source

    source = make_source()
    local = tmp_path / "src.zarr"
    source.to_zarr(local, mode="w", consolidated=False, zarr_format=3)
    by_class: dict[str, dict[str, bytes]] = {"STANDARD": {}, "GLACIER_IR": {}}
    for file in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = file.relative_to(local).as_posix()
        hot = file.name in METADATA or rel.split("/")[0] in ("time", "x", "y")
        by_class["STANDARD" if hot else "GLACIER_IR"][f"store.zarr/{rel}"] = file.read_bytes()
    for klass, objects in by_class.items():
        archive.put_objects(bucket, objects, storage_class=klass)
    options: dict[str, Any] = {
        "storage_options": archive.storage_options(),
        "journal": str(tmp_path / "journal.sqlite"),
        "restore_status_in_listings": True,
        "skip_instance_cache": True,
    }
    url = f"s3://{bucket}/store.zarr"
    chunks = "store.zarr/t/c/"
    tight = ads.open_zarr(url, max_cost=0.00001, **options)
    archive.requests.clear()
    selection = tight["t"].isel(time=slice(8, 24))  # 8 chunks: 8 GETs at 0.01/1,000
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        ads.plan_dataset(selection)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        ads.prefetch(selection)
    assert data_gets(archive, bucket, chunks) == 0

    ds = ads.open_zarr(url, max_cost=0.01, **options)
    selection = ds["t"].isel(time=slice(8, 24))
    plan = ads.plan_dataset(selection)
    assert len(plan.fee_reads) == 8
    assert plan.to_restore == []
    result = ads.prefetch(selection)
    assert result.requests_sent == 0
    assert archive.requests.count("RestoreObject") == 0
    np.testing.assert_array_equal(selection.values, source["t"].isel(time=slice(8, 24)).values)
    assert data_gets(archive, bucket, chunks) == 8


def test_prefetch_with_restores_shows_the_whole_job_once_and_restore_alone_reads_nothing(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem]
) -> None:
    archive.put_object(bucket, "mix/cold", b"c" * 2000, storage_class="GLACIER")
    for name in ("a", "b"):
        archive.put_object(bucket, f"mix/ia-{name}", b"i" * 1000, storage_class="STANDARD_IA")
    seen: list[Any] = []
    fs = make_fs(max_cost=1.0, on_estimate=lambda plan, e: seen.append((plan, e)))
    archive.requests.clear()
    result = fs.prefetch(f"{bucket}/mix/", wait=False)
    assert result.requests_sent == 1
    ((plan, estimate),) = seen  # one approval: the restore and the fee reads together
    assert len(plan) == 3
    assert len(plan.to_restore) == 1
    assert len(plan.fee_reads) == 2
    assert estimate.restore_request_count == 1
    assert estimate.components["retrieval"] == pytest.approx(2000 / GIB * 0.01)  # IA only
    assert archive.requests.count("RestoreObject") == 1

    # restore() reads nothing: a folder of IA objects alone is no paid plan, whatever the budget
    tight = make_fs(max_cost=0.0)
    archive.requests.clear()
    assert tight.restore(f"{bucket}/mix/ia-*").requests_sent == 0
    assert archive.requests.count("RestoreObject") == 0
    assert data_gets(archive, bucket, "mix/") == 0


def test_azure_cool_and_cold_reads_go_through_the_budget_too(
    azure_archive: EmulatedAzureArchive, azure_container: str, make_az: Callable[..., Any]
) -> None:
    c = azure_container
    azure_archive.put_blobs(c, {"f/cool": b"c" * 1000}, tier="Cool")
    azure_archive.put_blobs(c, {"f/cold": b"d" * 1000}, tier="Cold")
    azure_archive.put_blobs(c, {"f/hot": b"h" * 1000})
    paths = [f"{c}/f/{n}" for n in ("cold", "cool", "hot")]
    fs = make_az(max_cost=0.00001)  # two GETs: 0.01 + 0.001 per 1,000 = 0.000011
    azure_archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="2 object\\(s\\) that bill a retrieval fee"):
        fs.cat(paths)
    assert azure_archive.requests.counts() == {"GetBlob": 1, "ListBlobs": 1}  # no blob read
    assert azure_archive.requests.count("GetBlob", status=404) == 1  # the catalog registry
    seen: list[Any] = []
    fs = make_az(max_cost=0.001, on_estimate=lambda plan, e: seen.append(e))
    assert fs.cat(paths) == dict(zip(paths, (b"d" * 1000, b"c" * 1000, b"h" * 1000), strict=True))
    assert seen[0].components["retrieval"] == pytest.approx(1000 / GIB * (0.03 + 0.01))


def test_prefetch_to_a_directory_is_one_budgeted_job_in_python(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    data = seed(archive, bucket)
    archive.put_object(bucket, "run/cold", b"c" * 500, storage_class="GLACIER")
    data[f"{bucket}/run/cold"] = b"c" * 500
    archive.requests.clear()
    out = tmp_path / "out"
    with pytest.raises(BudgetExceededError, match="retrieval fees"):
        make_fs(max_cost=0.00001).prefetch(f"{bucket}/run/", to=out)
    assert not out.exists()
    assert data_gets(archive, bucket, "run/") == 0
    assert archive.requests.count("RestoreObject") == 0

    fs = make_fs(max_cost=0.01)
    result = fs.prefetch(f"{bucket}/run/", to=out, timeout=600)
    assert result.requests_sent == 1
    assert len(result.copied.files) == 5
    assert result.copied.bytes_written == sum(len(v) for v in data.values())
    for path, body in data.items():
        assert (out / path).read_bytes() == body
    assert data_gets(archive, bucket, "run/") == 5  # each file once
    assert fs.hooks.spent > 0


def test_single_and_ranged_reads_check_the_budget_on_every_store(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    azure_archive: EmulatedAzureArchive,
    azure_container: str,
    make_az: Callable[..., Any],
) -> None:
    # issue #30 item 13: a whole cat_file on Azure (and Oracle) and ranged reads on any
    # store paid retrieval fees without asking the budget; the first read of an object
    # now learns its state once (a HEAD) and approves its fee before any byte is read
    azure_archive.put_blob(azure_container, "f/cool", b"c" * 1000, tier="Cool")
    cool = f"{azure_container}/f/cool"
    azure_archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        make_az(max_cost=0.0000001).cat_file(cool)
    assert azure_archive.requests.count("GetBlob", status=200) == 0  # no byte of it read
    data = seed(archive, bucket)
    ia = f"{bucket}/run/ia"
    tight = make_fs(max_cost=0.0000001)
    archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        tight.cat_file(ia, start=0, end=10)
    with pytest.raises(BudgetExceededError, match="retrieval fee"), tight.open(ia) as handle:
        handle.read(10)
    assert data_gets(archive, bucket, "run/") == 0
    fs = make_fs(max_cost=1.0)
    archive.requests.clear()
    assert fs.cat_file(ia, start=0, end=10) == data[ia][:10]
    assert fs.cat_file(ia, start=10, end=20) == data[ia][10:20]
    assert archive.requests.count("HEAD") == 1  # once per object, not per read
    assert fs.hooks.spent > 0
