"""Secrets stay out of everything archivefs writes; private files; SSE parameters pass through."""

from __future__ import annotations

import logging
import pickle
import stat
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.errors import StoreUnavailableError
from tests.reliability._support import FAST_RETRIES, bundle, make_fs, make_tree, options, s3

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

SECRET = "RELIABILITYsecretDoNotLeak42"
TOKEN = "SESSIONtokenDoNotLeak77"


def test_secrets_absent_from_errors_logs_journal_and_catalog(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    opts = options(archive, secret=SECRET, token=TOKEN, **FAST_RETRIES)
    archive.put_object(bucket, "cold", b"c", storage_class="GLACIER")
    files = make_tree(tmp_path / "src", 10)
    bundle(tmp_path / "src", s3(archive, secret=SECRET, token=TOKEN), f"{bucket}/b")
    fs = make_fs(archive, tmp_path, target_options=opts)
    fs.restore(f"{bucket}/cold", wait=True, timeout=600)
    fs.cat_file(f"{bucket}/b/{sorted(files)[0]}")
    archive.faults.throttle(ops=["GET"])
    with pytest.raises(StoreUnavailableError) as error:
        fs.cat_file(f"{bucket}/cold")
    archive.faults.clear()
    # botocore's own DEBUG log prints the canonical request, session token included: that is
    # botocore's output, outside archivefs's control; everything else is scanned for both
    ours = "\n".join(r.getMessage() for r in caplog.records if "botocore" not in r.name)
    assert SECRET not in caplog.text
    texts = [ours, str(error.value), repr(error.value), repr(fs), str(fs)]
    texts += [repr(pickle.loads(pickle.dumps(fs))), repr(pickle.loads(pickle.dumps(error.value)))]
    texts += [repr(fs.engine.journal)]
    for text in texts:
        assert SECRET not in text
        assert TOKEN not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            assert SECRET.encode() not in raw, path
            assert TOKEN.encode() not in raw, path
    for key in [
        *s3(archive).find(f"{bucket}/b/.archivefs", withdirs=False),
        f"{bucket}/.archivefs/catalogs.json",
    ]:
        raw = s3(archive).cat_file(key)
        assert SECRET.encode() not in raw, key
        assert TOKEN.encode() not in raw, key


def test_default_cache_journal_is_user_only(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache" / "nested"
    monkeypatch.setenv("ARCHIVEFS_CACHE_DIR", str(cache))
    archive.put_object(bucket, "cold", b"x", storage_class="GLACIER")
    fs = make_fs(archive, tmp_path, journal=None)
    fs.restore(f"{bucket}/cold")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    for path in cache.iterdir():  # the journal and its WAL/SHM companions
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


SSE_C = {
    "SSECustomerAlgorithm": "AES256",
    "SSECustomerKey": "k" * 32,
    "ExpectedBucketOwner": "123456789012",
}
SSE_HEADER = "x-amz-server-side-encryption-customer-algorithm"


def _watch(fs: Any) -> list[tuple[str, str, dict[str, str]]]:
    """Record what the s3fs client puts on the wire (botocore's last hook before sending).

    The harness records no request headers, so this is where the check looks.
    """
    sync(fs.loop, fs.fs.set_session)
    seen: list[tuple[str, str, dict[str, str]]] = []

    def hook(request: Any, **kwargs: Any) -> None:
        headers = {
            k.lower(): v.decode() if isinstance(v, bytes) else str(v)
            for k, v in request.headers.items()
        }
        seen.append((request.method, request.url, headers))

    fs.fs.s3.meta.events.register("before-send.s3", hook)
    return seen


def test_sse_c_reaches_reads_and_heads_and_restores_get_what_s3_accepts(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    # S3's RestoreObject takes no SSE parameters (a restore needs no key); GET and HEAD of an
    # SSE-C object do. s3fs's s3_additional_kwargs are filtered per operation by its model.
    import botocore.session

    model = botocore.session.get_session().get_service_model("s3")
    restore_members = set(model.operation_model("RestoreObject").input_shape.members)
    assert not {m for m in restore_members if m.startswith("SSE")}
    files = make_tree(tmp_path / "src", 6)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/e", storage_class="GLACIER")
    archive.put_object(bucket, "cold", b"c" * 100, storage_class="GLACIER")
    fs = make_fs(archive, tmp_path, target_options=options(archive, s3_additional_kwargs=SSE_C))
    seen = _watch(fs)
    name = f"{bucket}/e/{sorted(files)[0]}"
    fs.restore([f"{bucket}/cold", name], wait=True, timeout=600)
    assert fs.cat_file(f"{bucket}/cold") == b"c" * 100
    assert fs.cat_file(name) == files[sorted(files)[0]]
    assert fs.info(f"{bucket}/cold")["size"] == 100
    restores = [h for m, u, h in seen if m == "POST" and u.endswith("?restore")]
    reads = [h for m, u, h in seen if m in ("GET", "HEAD") and "list-type" not in u]
    assert len(restores) == 2
    assert archive.requests.count("RestoreObject", status=202) == 2
    assert all(h.get("x-amz-expected-bucket-owner") == "123456789012" for h in restores)
    assert len(reads) >= 4
    assert all(h.get(SSE_HEADER) == "AES256" for h in reads)
    assert all("x-amz-server-side-encryption-customer-key" in h for h in reads)


def test_engine_request_extra_reaches_restore_object(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs.restore.engine import RestoreEngine

    archive.put_object(bucket, "cold", b"c", storage_class="GLACIER")
    fs = make_fs(archive, tmp_path, journal=False)
    seen = _watch(fs)
    engine = RestoreEngine(fs.store, request_extra={"RequestPayer": "requester"})
    plan = sync(fs.loop, engine.plan, [f"{bucket}/cold"])
    sync(fs.loop, engine.restore, plan)
    restores = [h for m, u, h in seen if m == "POST" and u.endswith("?restore")]
    assert [h.get("x-amz-request-payer") for h in restores] == ["requester"]
    assert archive.requests.count("RestoreObject", status=202) == 1
