"""Google Cloud Storage through gcsfs, against gcp-storage-emulator: classes from listings,
reads in every class, retrieval fees through the budget, claims with preconditions.

Counts are the server's (``archivefs.testing.EmulatedGcsArchive``), by JSON API operation.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from fsspec.asyn import sync

from archivefs.errors import BudgetExceededError, NotArchivedError
from archivefs.stores.gcs import GcsStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedGcsArchive

GIB = 2**30
CLASSES = {"a": "STANDARD", "b": "NEARLINE", "c": "COLDLINE", "d": "ARCHIVE"}
CHUNKS = "store.zarr/t/c/"
ACCESS = {"STANDARD": "immediate", "NEARLINE": "retrieval_fee", "COLDLINE": "retrieval_fee"}


def data_downloads(archive: EmulatedGcsArchive, prefix: str = "") -> int:
    """Downloads of data objects below ``prefix`` (never of archivefs's catalog registry)."""
    return sum(
        1
        for r in archive.requests.records
        if r.op == "objects.download"
        and (r.name or "").startswith(prefix)
        and not (r.name or "").startswith(".archivefs/")
    )


def seed(archive: EmulatedGcsArchive, bucket: str) -> dict[str, bytes]:
    data = {}
    for name, klass in CLASSES.items():
        data[f"{bucket}/run/{name}"] = body = name.encode() * 100
        archive.put_object(bucket, f"run/{name}", body, storage_class=klass)
    archive.put_object(bucket, "run/sub/e", b"e" * 10)
    archive.requests.clear()
    return data


def test_ls_info_and_plans_take_classes_from_one_listing(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    seed(gcs_archive, gcs_bucket)
    fs = make_gs()
    entries = {e["name"].rsplit("/", 1)[1]: e for e in fs.ls(f"{gcs_bucket}/run", detail=True)}
    assert {n: e.get("storage_class") for n, e in entries.items()} == {**CLASSES, "sub": None}
    for name, klass in CLASSES.items():
        assert entries[name]["access"] == ACCESS.get(klass, "retrieval_fee")
        assert entries[name]["restore"] == "hot"  # nothing on GCS needs a restore
        assert entries[name]["size"] == 100
    assert entries["sub"]["type"] == "directory"
    # one listing (and one look for archivefs's catalog registry, absent: 404)
    assert gcs_archive.requests.by_op() == {"objects.list": 1, "objects.download": 1}
    assert fs.info(f"{gcs_bucket}/run/d")["storage_class"] == "ARCHIVE"  # from the listing
    assert gcs_archive.requests.by_op() == {"objects.list": 1, "objects.download": 1}

    fresh = make_gs()
    gcs_archive.requests.clear()
    assert fresh.info(f"{gcs_bucket}/run/c")["access"] == "retrieval_fee"
    assert gcs_archive.requests.by_op() == {"objects.get": 1, "objects.download": 1}
    gcs_archive.requests.clear()
    plan = fresh.plan([f"{gcs_bucket}/run/{n}" for n in CLASSES])  # 4 states: one listing
    assert gcs_archive.requests.by_op() == {"objects.list": 1}
    assert {g.action.value for g in plan} == {"read"}
    assert plan.to_restore == []
    assert sorted(g.key.rsplit("/", 1)[1] for g in plan.fee_reads) == ["b", "c", "d"]


def test_every_read_policy_reads_every_class_at_once(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    data = seed(gcs_archive, gcs_bucket)
    for policy in ("raise", "restore", "wait"):
        fs = make_gs(on_archived=policy)
        assert fs.cat_file(f"{gcs_bucket}/run/d") == data[f"{gcs_bucket}/run/d"]
        assert fs.cat_file(f"{gcs_bucket}/run/c", start=10, end=20) == b"c" * 10
        with fs.open(f"{gcs_bucket}/run/b") as f:
            assert f.read() == data[f"{gcs_bucket}/run/b"]
    assert data_downloads(gcs_archive) == 9  # 3 reads x 3 policies, one request each
    assert gcs_archive.requests.bytes_sent("objects.download") >= 3 * (100 + 10 + 100)
    ops = set(gcs_archive.requests.by_op())
    assert ops <= {"objects.download", "objects.get", "objects.list"}  # nothing else sent


def test_restore_of_a_gcs_object_is_refused_and_a_glob_restores_nothing(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    seed(gcs_archive, gcs_bucket)
    fs = make_gs()
    with pytest.raises(NotArchivedError, match="ARCHIVE, which reads at once"):
        fs.restore(f"{gcs_bucket}/run/d")
    result = fs.restore(f"{gcs_bucket}/run/*")
    assert result.requests_sent == 0
    assert {g.action.value for g in result.plan} == {"read"}
    store = fs.store
    assert isinstance(store, GcsStore)
    state = sync(fs.loop, store.head, f"{gcs_bucket}/run/d")
    with pytest.raises(NotArchivedError, match="nothing to restore"):
        sync(fs.loop, store.restore, state, tier=fs.tier, days=1)
    assert set(gcs_archive.requests.by_op()) <= {"objects.download", "objects.get", "objects.list"}


def test_budget_refuses_a_bulk_read_of_fee_charging_objects_before_the_first_byte(
    gcs_archive: EmulatedGcsArchive,
    gcs_bucket: str,
    make_gs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    data = seed(gcs_archive, gcs_bucket)
    paths = sorted(data)
    seen: list[Any] = []
    # 3 fee-charging reads: 3 GETs (0.001, 0.01, 0.05 per 1,000) and 300 bytes of retrieval
    fs = make_gs(max_cost=0.00005, on_estimate=lambda plan, e: seen.append((plan, e)))
    with pytest.raises(BudgetExceededError, match="3 object\\(s\\) that bill a retrieval fee"):
        fs.cat(paths)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        fs.get(f"{gcs_bucket}/run/", str(tmp_path / "out"), recursive=True)
    assert data_downloads(gcs_archive) == 0  # refused before the first byte
    assert not list((tmp_path).rglob("out/**/*.*"))
    assert seen == []  # the budget refuses first; no hook is asked to approve it

    fs = make_gs(max_cost=0.01, on_estimate=lambda plan, e: seen.append((plan, e)))
    gcs_archive.requests.clear()
    assert fs.cat(paths) == data
    assert data_downloads(gcs_archive) == 4
    ((plan, estimate),) = seen
    assert sorted(g.key for g in plan) == [f"{gcs_bucket}/run/{n}" for n in "bcd"]
    assert estimate.bytes_read == 300
    assert estimate.get_request_count == 3
    assert estimate.components["retrieval"] == pytest.approx(100 / GIB * (0.01 + 0.02 + 0.05))
    assert estimate.components["requests"] == pytest.approx((0.001 + 0.01 + 0.05) / 1000)
    assert estimate.total == pytest.approx(
        estimate.components["retrieval"] + estimate.components["requests"]
    )

    vetoing = make_gs(on_estimate=lambda plan, e: False)
    gcs_archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="refused the plan"):
        vetoing.get([f"{gcs_bucket}/run/c", f"{gcs_bucket}/run/d"], str(tmp_path / "v") + "/")
    assert data_downloads(gcs_archive) == 0

    # a single whole read: its fee goes through the budget too, from the state the read
    # asks for anyway (docs/cost-model.md); refused before the download
    tight = make_gs(max_cost=0.0, on_estimate=lambda plan, e: seen.append((plan, e)))
    gcs_archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="1 object\\(s\\) that bill a retrieval fee"):
        tight.cat_file(f"{gcs_bucket}/run/d")
    assert len(seen) == 1
    assert data_downloads(gcs_archive) == 0


def test_prefetch_and_xarray_read_of_a_coldline_zarr_store(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, tmp_path: Path
) -> None:
    pytest.importorskip("xarray")
    import archivefs.datasets as ads
    from tests.zarr_data import make_source, upload_zarr_gcs

    source = make_source()
    url = upload_zarr_gcs(gcs_archive, gcs_bucket, tmp_path, source, chunks="COLDLINE")
    options: dict[str, Any] = {
        "storage_options": gcs_archive.storage_options(),
        "journal": str(tmp_path / "journal.sqlite"),
        "price_sheet": "gcs-us-central1",
        "skip_instance_cache": True,
    }
    tight = ads.open_zarr(url, max_cost=0.00001, **options)
    selection = tight["t"].isel(time=slice(8, 24))
    gcs_archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        ads.plan_dataset(selection)
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        ads.prefetch(selection)
    assert data_downloads(gcs_archive, CHUNKS) == 0

    seen: list[Any] = []
    ds = ads.open_zarr(url, max_cost=1.0, **options)
    selection = ds["t"].isel(time=slice(8, 24))
    (fs,) = ads.chunk_paths(selection)  # hooks are callables: added to the opened filesystem
    fs.hooks.on_estimate.append(lambda plan, e: seen.append(e))
    plan = ads.plan_dataset(selection)
    assert len(plan) == 8  # 4 time chunks x 2 y chunks
    assert len(plan.fee_reads) == 8
    assert plan.to_restore == []  # readable, for a fee: nothing to restore
    chunk_bytes = sum(g.size for g in plan)
    assert seen[-1].bytes_read == chunk_bytes
    assert seen[-1].components["retrieval"] == pytest.approx(chunk_bytes / GIB * 0.02)
    gcs_archive.requests.clear()
    result = ads.prefetch(selection)
    assert result.requests_sent == 0
    assert len(seen) == 1  # plan_dataset approved these reads: prefetch counts them once
    assert data_downloads(gcs_archive, CHUNKS) == 0  # prefetch reads nothing itself
    np.testing.assert_array_equal(selection.values, source["t"].isel(time=slice(8, 24)).values)
    assert data_downloads(gcs_archive, CHUNKS) == 8  # one download per chunk


def test_claims_use_generation_preconditions(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    fs = make_gs()
    store = fs.store
    assert isinstance(store, GcsStore)
    path = f"{gcs_bucket}/.archivefs/claims/k"

    def run(method: Any, *args: Any) -> Any:
        return sync(fs.loop, method, *args)

    assert run(store.create_exclusive, path, b"first") is True
    assert run(store.create_exclusive, path, b"second") is False  # ifGenerationMatch=0
    found = run(store.read_tagged, path)
    body, generation = found.data, found.etag
    assert body == b"first"
    assert found.age is not None
    assert 0 <= found.age < 600
    assert generation == gcs_archive.generation(gcs_bucket, ".archivefs/claims/k")
    assert run(store.replace_if_unchanged, path, b"third", generation) is True
    assert run(store.replace_if_unchanged, path, b"fourth", generation) is False  # stale
    assert run(store.read_tagged, path).data == b"third"
    assert run(store.read_tagged, f"{gcs_bucket}/.archivefs/claims/none") is None
    assert gcs_archive.requests.count("objects.insert", status=200) == 2
    assert gcs_archive.requests.count("objects.insert", status=412) == 2
    gcs_archive.put_object(gcs_bucket, ".archivefs/claims/big", b"{}" + b" " * 2**20)
    gcs_archive.requests.clear()
    big = run(store.read_tagged, f"{gcs_bucket}/.archivefs/claims/big")
    assert big.size == 2 + 2**20
    assert big.data == b""  # larger than a claim can be: not downloaded
    assert not big.whole
    assert gcs_archive.requests.count("objects.download") == 0


def test_a_failed_listing_is_retried_by_gcsfs_and_counted(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    seed(gcs_archive, gcs_bucket)
    fs = make_gs()
    gcs_archive.fail_next(1, status=503, ops={"objects.list"})
    assert len(fs.ls(f"{gcs_bucket}/run")) == 5
    assert gcs_archive.requests.count("objects.list", status=503) == 1
    assert gcs_archive.requests.count("objects.list", status=200) == 1


def test_bucket_claims_on_gcs_create_with_if_generation_match_zero(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    from archivefs.model import Action, ObjectState, PlannedGroup
    from archivefs.restore.claims import BucketClaims, Claim, claim_path

    fs = make_gs()
    claims = BucketClaims(fs.store)
    mine, theirs = (
        PlannedGroup(ObjectState(f"{gcs_bucket}/run/{n}", 5), Action.RESTORE, (), 5, 1)
        for n in ("mine", "theirs")
    )
    other = Claim(theirs.key, "Standard", 1, "another-host:1", 0.0, None)
    name = claim_path(theirs.key).partition("/")[2]
    gcs_archive.put_object(gcs_bucket, name, other.to_bytes())
    gcs_archive.requests.clear()
    outcome = sync(fs.loop, lambda: claims.claim([mine, theirs], tier="Standard", days=1))
    assert (outcome.won, outcome.lost, outcome.failed) == ([mine.key], [theirs.key], {})
    assert gcs_archive.requests.count("objects.insert", status=200) == 1  # ours: the ledger
    assert gcs_archive.requests.count("objects.insert") == 1  # theirs (per group, older
    # versions' layout) was read, found live and kept
    found = sync(fs.loop, claims.read, theirs.key)
    assert found is not None
    assert found.requester == "another-host:1"


def test_a_ranged_read_at_a_stale_generation_is_refused_as_on_s3(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    from archivefs.errors import ArchiveError
    from archivefs.stores.translate import s3_error_code

    gcs_archive.put_object(gcs_bucket, "bundle.zip", b"0123456789")
    fs = make_gs()
    store = fs.store
    generation = gcs_archive.generation(gcs_bucket, "bundle.zip")
    assert generation is not None
    read = sync(
        fs.loop, lambda: store.get_range(f"{gcs_bucket}/bundle.zip", 2, 5, if_match=generation)
    )
    assert (read.data, read.total_size) == (b"234", 10)
    gcs_archive.put_object(gcs_bucket, "bundle.zip", b"0123456789")  # a new generation
    with pytest.raises(ArchiveError) as caught:
        sync(
            fs.loop, lambda: store.get_range(f"{gcs_bucket}/bundle.zip", 2, 5, if_match=generation)
        )
    assert s3_error_code(caught.value) == "PreconditionFailed"  # what _read_bundle acts on
    assert gcs_archive.requests.count("objects.download", status=412) == 1
    assert gcs_archive.requests.count("objects.download", status=206) == 1


def test_store_options_the_adapter_does_not_take_are_refused_by_name(
    gcs_archive: EmulatedGcsArchive, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    sent = gcs_archive.requests.count()
    with pytest.raises(
        ValueError,
        match=r"store_options 'batch_size', 'retry' are not options of the gcs adapter.*"
        r"Fix: pass no store_options",
    ):
        make_gs(store_options={"retry": {"attempts": 2}, "batch_size": 5})
    assert gcs_archive.requests.count() == sent  # refused before any request


def test_archive_url_and_xarray_storage_options(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, tmp_path: Path
) -> None:
    """``xr.open_zarr("archive::gs://...", storage_options={"gs": ..., "archive": ...})``."""
    xr = pytest.importorskip("xarray")
    import fsspec

    import archivefs.datasets as ads
    from tests.zarr_data import make_source, upload_zarr_gcs

    source = make_source()
    url = upload_zarr_gcs(gcs_archive, gcs_bucket, tmp_path, source, chunks="NEARLINE")
    storage = {
        "gs": gcs_archive.storage_options(),
        "archive": {"journal": str(tmp_path / "j.sqlite"), "price_sheet": "gcs-us-central1"},
    }
    with fsspec.open(f"archive::{url}/zarr.json", **storage) as f:
        assert b"zarr_format" in f.read()
    ds = xr.open_zarr("archive::" + url, storage_options=storage, consolidated=False)
    selection = ds["t"].isel(time=slice(5, 11), y=slice(0, 2))
    plan = ads.plan_dataset(selection)
    assert sorted(g.key for g in plan.fee_reads) == [
        f"{gcs_bucket}/store.zarr/t/c/1/0/0",
        f"{gcs_bucket}/store.zarr/t/c/2/0/0",
    ]
    assert {g.state.storage_class.value for g in plan} == {"NEARLINE"}
    gcs_archive.requests.clear()
    expected = source["t"].isel(time=slice(5, 11), y=slice(0, 2)).values
    np.testing.assert_array_equal(selection.values, expected)
    assert data_downloads(gcs_archive, CHUNKS) == 2


def test_bundles_upload_into_a_gcs_class_and_members_read_for_a_fee(
    gcs_archive: EmulatedGcsArchive,
    gcs_bucket: str,
    make_gs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    import fsspec

    from archivefs.catalog import ByPrefix, Catalog
    from archivefs.catalog.layout import catalog_dir
    from archivefs.catalog.writer import bundle_tree

    src = tmp_path / "src"
    files = {f"d{i % 3}/f{i:03d}.dat": f"member {i} ".encode() * 40 for i in range(30)}
    for name, body in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(body)
    gs = fsspec.filesystem("gs", skip_instance_cache=True, **gcs_archive.storage_options())
    dest = f"{gcs_bucket}/k"
    bundle_tree(
        fsspec.filesystem("file"), str(src), gs, dest,
        policy=ByPrefix(depth=1), storage_class="ARCHIVE",
    )  # fmt: skip
    catalog = Catalog.load(gs, catalog_dir(dest))
    assert len(catalog.bundles) == 3  # one per directory, each uploaded in ARCHIVE
    for key, bundle in catalog.bundles.items():
        assert gcs_archive.storage_class(gcs_bucket, key.partition("/")[2]) == "ARCHIVE"
        assert bundle.etag == gcs_archive.generation(gcs_bucket, key.partition("/")[2])

    wanted = sorted(f"{dest}/{n}" for n in files if n.startswith("d1/"))
    tight = make_gs(max_cost=0.0000001)
    gcs_archive.requests.clear()
    with pytest.raises(BudgetExceededError, match="1 object\\(s\\) that bill a retrieval fee"):
        tight.cat(wanted)  # 10 members, one bundle: one fee-charging read
    bundle_downloads = [
        r
        for r in gcs_archive.requests.records
        if r.op == "objects.download" and "/.archivefs/bundles/" in f"/{r.name}"
    ]
    assert bundle_downloads == []

    fs = make_gs(max_cost=0.01)
    gcs_archive.requests.clear()
    got = fs.cat(wanted)
    assert got == {p: files[p.split("/k/", 1)[1]] for p in wanted}
    bundle_reads = [
        r
        for r in gcs_archive.requests.records
        if r.op == "objects.download" and "/.archivefs/bundles/" in f"/{r.name}"
    ]
    assert [r.status for r in bundle_reads] == [206]  # adjacent members: one ranged read


def test_pickles_keep_gcsfs_token_modes_but_never_a_credential(
    gcs_archive: EmulatedGcsArchive, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    import pickle

    fs = make_gs()
    assert fs.to_dict()["target_options"]["token"] == "anon"  # a mode, not a secret
    clone = pickle.loads(pickle.dumps(fs))
    assert clone.fs.storage_options["token"] == "anon"
    secret = {
        "type": "authorized_user",
        "client_id": "id",
        "client_secret": "do-not-ship",
        "refresh_token": "do-not-ship",
    }
    keyed = make_gs(target_options={**gcs_archive.storage_options(), "token": secret})
    assert "token" not in keyed.to_dict()["target_options"]
    assert "do-not-ship" not in str(keyed.to_dict())


def test_a_pickled_filesystem_reads_in_another_process(
    gcs_archive: EmulatedGcsArchive,
    gcs_bucket: str,
    make_gs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
) -> None:
    """What a Dask worker does: unpickle (no credential vault there) and read."""
    import os
    import pickle
    import subprocess
    import sys

    gcs_archive.put_object(gcs_bucket, "w/x", b"from a worker", storage_class="COLDLINE")
    (tmp_path / "fs.pickle").write_bytes(pickle.dumps(make_gs()))
    code = (
        "import pickle, sys; fs = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "sys.stdout.write(fs.cat_file(sys.argv[2]).decode())"
    )
    env = {**os.environ, "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "fs.pickle"), f"{gcs_bucket}/w/x"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from a worker"


def test_refused_access_is_an_archivefs_error_with_a_fix(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    from archivefs.errors import AccessDeniedError

    gcs_archive.put_object(gcs_bucket, "private", b"x")
    fs = make_gs()
    fs.ls(gcs_bucket)  # the registry lookup and listing succeed
    gcs_archive.fail_next(1, status=403, ops={"objects.download"})
    with pytest.raises(AccessDeniedError, match=r"refused to read this object \(403") as caught:
        fs.cat_file(f"{gcs_bucket}/private")
    assert "GOOGLE_APPLICATION_CREDENTIALS" in str(caught.value)
    assert gcs_archive.requests.count("objects.download", status=403) == 1  # not retried


def test_listings_and_probes_page_by_1000_as_gcs_does(
    gcs_archive: EmulatedGcsArchive, gcs_bucket: str, make_gs: Callable[..., ArchiveFileSystem]
) -> None:
    for i in range(2500):
        gcs_archive.put_object(gcs_bucket, f"many/{i:05d}", b"x", storage_class="NEARLINE")
    gcs_archive.put_object(gcs_bucket, "many/sub/y", b"y")
    fs = make_gs()
    gcs_archive.requests.clear()
    assert len(fs.ls(f"{gcs_bucket}/many")) == 2501  # 2,500 objects and one folder
    assert gcs_archive.requests.count("objects.list") == 3  # 1,000 + 1,000 + 501 entries
    gcs_archive.requests.clear()
    assert len(fs.find(f"{gcs_bucket}/many")) == 2501
    assert gcs_archive.requests.count("objects.list") == 3
    gcs_archive.requests.clear()
    wanted = [f"{gcs_bucket}/many/{i:05d}" for i in range(0, 1500, 3)]  # 500 of the first 1,500
    plan = fs.plan(wanted)
    assert len(plan.fee_reads) == 500
    assert gcs_archive.requests.count("objects.list") == 2  # stops once past the last one
    assert gcs_archive.requests.count("objects.get") == 0
