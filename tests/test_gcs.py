"""Google Cloud Storage through gcsfs, against gcp-storage-emulator: classes from listings,
reads in every class, retrieval fees through the budget, claims with preconditions.

Counts are the server's (``archivefs.testing.EmulatedGcsArchive``), by JSON API operation.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.errors import NotArchivedError
from archivefs.stores.gcs import GcsStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing import EmulatedGcsArchive

CLASSES = {"a": "STANDARD", "b": "NEARLINE", "c": "COLDLINE", "d": "ARCHIVE"}


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
