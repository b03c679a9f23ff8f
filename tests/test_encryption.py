"""Encrypted objects: SSE-S3, SSE-KMS and SSE-C list, probe, restore and read.

On the emulated archive (moto 5.2.5 stores SSE-S3/SSE-KMS objects and reports their
headers, but ignores customer keys; ``archivefs.testing``'s shim refuses a GET or HEAD
of an SSE-C object without its key as S3 does, see docs/testing.md), and on radosgw
(skipped without Ceph, as tests/test_rgw.py is).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import pickle
from typing import TYPE_CHECKING, Any

import fsspec
import pytest
import s3fs
from click.testing import CliRunner

from archivefs.catalog.writer import bundle_tree
from archivefs.cli import main
from archivefs.errors import AccessDeniedError
from archivefs.filesystem import ArchiveFileSystem
from archivefs.model import RestoreState

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from archivefs.testing import EmulatedArchive, LocalRGW

CUSTOMER_KEY = hashlib.sha256(b"archivefs test customer key").digest()  # 32 bytes
SSE_C = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": CUSTOMER_KEY}
SSE_S3 = {"ServerSideEncryption": "AES256"}
SSE_KMS = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "alias/archivefs-test"}
MISSING_KEY = r"encrypted with a customer key \(SSE-C\).*SSECustomerKey.*--storage-options"


def with_key(make: Callable[..., ArchiveFileSystem], options: dict[str, Any]) -> ArchiveFileSystem:
    """The filesystem with the customer key given once, in the cold store's options."""
    return make(target_options={**options, "s3_additional_kwargs": SSE_C})


def put(archive: EmulatedArchive, bucket: str, key: str, data: bytes, **kwargs: Any) -> None:
    archive.client().put_object(Bucket=bucket, Key=key, Body=data, **kwargs)


def test_the_emulator_refuses_sse_c_reads_without_the_key(
    archive: EmulatedArchive, bucket: str
) -> None:
    """What the other tests rely on: S3's answers to a read of an SSE-C object."""
    put(archive, bucket, "c.bin", b"secret", **SSE_C)
    client = archive.client()
    with pytest.raises(client.exceptions.ClientError, match="InvalidRequest"):
        client.get_object(Bucket=bucket, Key="c.bin")
    with pytest.raises(client.exceptions.ClientError, match=r"\(400\)"):
        client.head_object(Bucket=bucket, Key="c.bin")
    other = {**SSE_C, "SSECustomerKey": bytes(32)}
    with pytest.raises(client.exceptions.ClientError, match="AccessDenied"):
        client.get_object(Bucket=bucket, Key="c.bin", **other)
    assert client.get_object(Bucket=bucket, Key="c.bin", **SSE_C)["Body"].read() == b"secret"
    put(archive, bucket, "c.bin", b"plain")  # overwritten without a key: readable by anyone
    assert client.get_object(Bucket=bucket, Key="c.bin")["Body"].read() == b"plain"


def test_sse_c_objects_list_probe_restore_and_read_with_the_key_given_once(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    s3_storage_options: dict[str, Any],
    tmp_path: Path,
) -> None:
    """Every HEAD and GET carries the key (the server refuses any that does not)."""
    put(archive, bucket, "d/hot.bin", b"hot and encrypted", **SSE_C)
    put(archive, bucket, "d/cold.bin", b"cold and encrypted", StorageClass="GLACIER", **SSE_C)
    fs = with_key(make_fs, s3_storage_options)
    assert fs.ls(f"{bucket}/d", detail=False) == [f"{bucket}/d/cold.bin", f"{bucket}/d/hot.bin"]
    assert fs.info(f"{bucket}/d/hot.bin")["size"] == len(b"hot and encrypted")
    assert fs.cat(f"{bucket}/d/hot.bin") == b"hot and encrypted"
    with fs.open(f"{bucket}/d/hot.bin", "rb") as f:
        f.seek(4)
        assert f.read(3) == b"and"
    assert fs.info(f"{bucket}/d/cold.bin")["restore"] == RestoreState.ARCHIVED.value
    archive.requests.clear()
    fs.restore([f"{bucket}/d/cold.bin"])
    assert archive.requests.count("RestoreObject") == 1
    assert fs.cat(f"{bucket}/d/cold.bin") == b"cold and encrypted"
    fs.get(f"{bucket}/d/", str(tmp_path / "got"), recursive=True)
    assert (tmp_path / "got" / "hot.bin").read_bytes() == b"hot and encrypted"
    assert (tmp_path / "got" / "cold.bin").read_bytes() == b"cold and encrypted"
    assert CUSTOMER_KEY not in pickle.dumps(fs)  # withheld from pickles (stores/credentials.py)
    assert "SSECustomerKey" not in fs.to_json()  # and from JSON


def test_an_sse_c_object_read_without_its_key_says_so(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    s3_storage_options: dict[str, Any],
) -> None:
    """Not a raw 400 (nor a bad restore request, nor a missing file): the object, the
    cause and the fix, for the HEAD of ``info`` and for the ranged GET of a read."""
    put(archive, bucket, "c.bin", b"secret", **SSE_C)
    fs = make_fs()
    for read in (lambda: fs.info(f"{bucket}/c.bin"), lambda: fs.cat(f"{bucket}/c.bin")):
        with pytest.raises(AccessDeniedError, match=MISSING_KEY) as refused:
            read()
        assert not isinstance(refused.value, FileNotFoundError)
        assert refused.value.path == f"{bucket}/c.bin"
    listed = make_fs()
    assert listed.ls(bucket, detail=False) == [f"{bucket}/c.bin"]  # LIST needs no key
    archive.requests.clear()
    with pytest.raises(AccessDeniedError, match=MISSING_KEY):
        listed.cat(f"{bucket}/c.bin")
    assert archive.requests.counts() == {"GET": 1}  # the GET alone, no HEAD before it


def test_bundles_written_with_the_key_are_encrypted_and_read_with_it(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    s3_storage_options: dict[str, Any],
    tmp_path: Path,
) -> None:
    """Bundling through an s3fs that holds the key writes the bundle and the catalog
    with it (a reader without the key is refused); members list, restore and read
    through the filesystem given the same key once."""
    (tmp_path / "src" / "a").mkdir(parents=True)
    for i in range(3):
        (tmp_path / "src" / "a" / f"f{i}").write_bytes(bytes([i]) * 100)
    keyed = s3fs.S3FileSystem(
        skip_instance_cache=True, s3_additional_kwargs=SSE_C, **s3_storage_options
    )
    local = fsspec.filesystem("file")
    bundle_tree(local, str(tmp_path / "src"), keyed, f"{bucket}/packed", storage_class="GLACIER")
    (bundle,) = keyed.find(f"{bucket}/packed/.archivefs/bundles")
    with pytest.raises(AccessDeniedError, match=MISSING_KEY):
        make_fs().info(bundle)
    fs = with_key(make_fs, s3_storage_options)
    members = [f"{bucket}/packed/a/f{i}" for i in range(3)]
    assert fs.ls(f"{bucket}/packed/a", detail=False) == members
    archive.requests.clear()
    fs.restore([members[1]])
    assert archive.requests.count("RestoreObject") == 1  # the one bundle
    assert fs.cat(members[1]) == bytes([1]) * 100


def test_the_key_never_reaches_the_debug_logs(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    s3_storage_options: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """botocore logs each request's headers at DEBUG: the key's header is scrubbed
    (its MD5, which S3 sends back in every answer, is not a secret)."""
    put(archive, bucket, "c.bin", b"secret", **SSE_C)
    with caplog.at_level(logging.DEBUG):
        assert with_key(make_fs, s3_storage_options).cat(f"{bucket}/c.bin") == b"secret"
    assert "x-amz-server-side-encryption-customer-key': '***'" in caplog.text  # it was logged
    for shown in (base64.b64encode(CUSTOMER_KEY).decode(), repr(CUSTOMER_KEY)[2:-1]):
        assert shown not in caplog.text


def test_the_command_line_takes_the_key_in_storage_options_and_never_prints_it(
    archive: EmulatedArchive, bucket: str, s3_storage_options: dict[str, Any], tmp_path: Path
) -> None:
    """``prefetch --to`` reads with the key from ``--storage-options``; without it, the
    command fails with the same words (exit 1), and neither run prints the key."""
    key = "archivefs-test-key-of-32-bytes!!"  # a str key: botocore encodes it
    put(archive, bucket, "c/x.bin", b"secret", **{**SSE_C, "SSECustomerKey": key.encode()})
    keyed = {**s3_storage_options, "s3_additional_kwargs": {**SSE_C, "SSECustomerKey": key}}

    def run(options: dict[str, Any], target: Path) -> Any:
        args = ["--storage-options", json.dumps(options), "--journal", str(tmp_path / "j")]
        args += ["prefetch", f"s3://{bucket}/c/", "--to", str(target)]
        return CliRunner().invoke(main, args)

    done = run(keyed, tmp_path / "keyed")
    assert done.exit_code == 0, done.output
    assert (tmp_path / "keyed" / bucket / "c" / "x.bin").read_bytes() == b"secret"
    refused = run(s3_storage_options, tmp_path / "bare")
    assert refused.exit_code == 1, refused.output
    assert "encrypted with a customer key (SSE-C)" in refused.output
    assert key not in done.output + refused.output


@pytest.mark.parametrize("encryption", [SSE_S3, SSE_KMS], ids=["sse-s3", "sse-kms"])
def test_server_managed_keys_need_nothing_from_the_reader(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    encryption: dict[str, str],
) -> None:
    """SSE-S3 and SSE-KMS: the server decrypts; listing, probing, restoring and reading
    work with no option at all."""
    put(archive, bucket, "d/hot.bin", b"hot", **encryption)
    put(archive, bucket, "d/cold.bin", b"cold", StorageClass="DEEP_ARCHIVE", **encryption)
    head = archive.client().head_object(Bucket=bucket, Key="d/hot.bin")
    assert head["ServerSideEncryption"] == encryption["ServerSideEncryption"]
    fs = make_fs()
    assert fs.ls(f"{bucket}/d", detail=False) == [f"{bucket}/d/cold.bin", f"{bucket}/d/hot.bin"]
    assert fs.cat(f"{bucket}/d/hot.bin") == b"hot"
    assert fs.info(f"{bucket}/d/cold.bin")["restore"] == RestoreState.ARCHIVED.value
    fs.restore([f"{bucket}/d/cold.bin"])
    assert fs.cat(f"{bucket}/d/cold.bin") == b"cold"


def test_radosgw_reads_sse_c_objects_with_the_key_and_refuses_without(
    local_rgw: LocalRGW, rgw_bucket: str, tmp_path: Path
) -> None:
    """radosgw (Ceph) implements SSE-C itself (``rgw crypt require ssl = false``: the
    test cluster speaks plain HTTP): the same options read, the same error without them."""
    local_rgw.client().put_object(Bucket=rgw_bucket, Key="c.bin", Body=b"secret", **SSE_C)
    options = local_rgw.storage_options()

    def make(target_options: dict[str, Any]) -> ArchiveFileSystem:
        return ArchiveFileSystem(
            target_protocol="s3",
            target_options=target_options,
            journal=str(tmp_path / "journal.sqlite"),
            skip_instance_cache=True,
        )

    keyed = make({**options, "s3_additional_kwargs": SSE_C})
    assert keyed.ls(rgw_bucket, detail=False) == [f"{rgw_bucket}/c.bin"]
    assert keyed.cat(f"{rgw_bucket}/c.bin") == b"secret"
    with pytest.raises(AccessDeniedError, match=MISSING_KEY):
        make(options).cat(f"{rgw_bucket}/c.bin")
