"""Pickles, Dask graphs and to_json() carry no explicit keys; workers still rebuild the fs."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import cloudpickle
import fsspec
import pytest

from archivefs.filesystem import ArchiveFileSystem
from tests.reliability._support import options

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

KEY_ID = "AKIAPICKLEDONOTLEAK01"
SECRET = "PICKLEsecretDoNotLeak42"
TOKEN = "PICKLEtokenDoNotLeak77"
SSE_KEY = "k" * 31 + "Z"

READ_IN_OTHER_PROCESS = """
import pickle, sys
fs = pickle.loads(sys.stdin.buffer.read())
sys.stdout.write(fs.cat_file(sys.argv[1]).decode())
"""


def _fs(archive: EmulatedArchive, tmp_path: Path, **kwargs: Any) -> ArchiveFileSystem:
    target = options(archive, key=KEY_ID, secret=SECRET, token=TOKEN)
    return ArchiveFileSystem(
        target_options=target,
        journal=str(tmp_path / "j.sqlite"),
        skip_instance_cache=True,
        **kwargs,
    )


def _other_process(blob: bytes, path: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    clean.update(
        AWS_EC2_METADATA_DISABLED="true",  # no instance role on this machine: do not wait for one
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_CONFIG_FILE=os.devnull,
        **env,
    )
    return subprocess.run(
        [sys.executable, "-c", READ_IN_OTHER_PROCESS, path],
        input=blob.decode("latin-1"),
        capture_output=True,
        text=True,
        encoding="latin-1",
        env=clean,
        timeout=300,
        check=False,
    )


def _assert_clean(blob: bytes | str) -> None:
    raw = blob.encode() if isinstance(blob, str) else blob
    for secret in (KEY_ID, SECRET, TOKEN):
        assert secret.encode() not in raw


def test_pickle_and_json_carry_no_keys_and_rebuild_in_the_same_process(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.txt", b"payload")
    fs = _fs(archive, tmp_path)
    blob = pickle.dumps(fs)
    text = fs.to_json()
    _assert_clean(blob)
    _assert_clean(text)
    _assert_clean(cloudpickle.dumps(fs))
    assert pickle.loads(blob).cat_file(f"{bucket}/a.txt") == b"payload"
    rebuilt = fsspec.AbstractFileSystem.from_json(text)  # zarr's way to an async copy
    assert rebuilt.cat_file(f"{bucket}/a.txt") == b"payload"
    _assert_clean(pickle.dumps(rebuilt))  # and it pickles clean again


def test_a_worker_uses_its_own_credentials(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.txt", b"payload")
    blob = pickle.dumps(_fs(archive, tmp_path))
    env = {"AWS_ACCESS_KEY_ID": "worker", "AWS_SECRET_ACCESS_KEY": "worker-secret"}
    done = _other_process(blob, f"{bucket}/a.txt", env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "payload"


def test_a_worker_without_credentials_gets_one_clear_error(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.txt", b"payload")
    archive.requests.clear()
    done = _other_process(pickle.dumps(_fs(archive, tmp_path)), f"{bucket}/a.txt", {})
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("archivefs.errors.MissingCredentialsError")
    assert "pickled without its explicit keys" in last
    assert "pickle_credentials=True" in last
    assert archive.requests.counts() == {}  # refused before any request


def test_pickle_credentials_opts_in_to_keys_in_clear(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.txt", b"payload")
    blob = pickle.dumps(_fs(archive, tmp_path, pickle_credentials=True))
    assert SECRET.encode() in blob
    done = _other_process(blob, f"{bucket}/a.txt", {})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "payload"


def test_dask_graph_of_open_zarr_carries_no_keys(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    import archivefs.datasets as ads
    from tests.zarr_data import make_source, upload_zarr

    url = upload_zarr(archive, bucket, tmp_path, make_source())
    sse = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": SSE_KEY}
    ds = ads.open_zarr(
        url,
        storage_options=options(
            archive, key=KEY_ID, secret=SECRET, token=TOKEN, s3_additional_kwargs=sse
        ),
        journal=str(tmp_path / "j.sqlite"),
    )
    graph = dict(ds["t"].data.__dask_graph__())
    blob = cloudpickle.dumps(graph)
    assert b"ArchiveFileSystem" in blob  # the graph does carry the filesystem
    _assert_clean(blob)
    assert SSE_KEY.encode() not in blob


@pytest.mark.parametrize("where", ["client_kwargs", "hot_options"])
def test_nested_keys_are_withheld_too(archive: EmulatedArchive, tmp_path: Path, where: str) -> None:
    target = options(archive)
    extra: dict[str, Any] = {}
    if where == "client_kwargs":
        target["client_kwargs"] = {**target["client_kwargs"], "aws_secret_access_key": SECRET}
    else:
        extra = {"hot": "s3://hot-bucket", "hot_options": {"secret": SECRET, "key": KEY_ID}}
    fs = ArchiveFileSystem(target_options=target, journal=False, skip_instance_cache=True, **extra)
    _assert_clean(pickle.dumps(fs))
    _assert_clean(fs.to_json())
