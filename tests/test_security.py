"""Credentials never appear in logs, errors, reprs or the journal; private files stay private."""

from __future__ import annotations

import logging
import pickle
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cloudpickle
import dask
import fsspec
import pytest

from archivefs import ObjectArchivedError
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

SECRET = "SECRETKEYdoNotLeak0123456789"


def test_credentials_never_reach_logs_errors_reprs_or_journal(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # moto accepts any credentials: a recognisable secret shows up wherever it leaks
    options = archive.storage_options()
    options["secret"] = SECRET
    journal = tmp_path / "journal.sqlite"
    archive.put_object(bucket, "cold", b"x", storage_class="GLACIER")
    archive.put_object(bucket, "hot", b"y")
    caplog.set_level(logging.DEBUG)
    fs = ArchiveFileSystem(
        target_options=options,
        journal=str(journal),
        restore_time_scale=1 / 3600,
        skip_instance_cache=True,
    )
    fs.ls(bucket)
    fs.cat_file(f"{bucket}/hot")
    with pytest.raises(ObjectArchivedError) as error:
        fs.cat_file(f"{bucket}/cold")
    fs.restore(f"{bucket}/cold", wait=True, timeout=600)
    texts = [caplog.text, str(error.value), repr(error.value), repr(fs), str(fs)]
    texts.append(repr(pickle.loads(pickle.dumps(fs))))
    for text in texts:
        assert SECRET not in text
    assert SECRET.encode() not in journal.read_bytes()
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes()


def test_journal_is_private_to_the_user(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "cold", b"x", storage_class="GLACIER")
    journal = tmp_path / "private" / "journal.sqlite"
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=str(journal), skip_instance_cache=True
    )
    fs.restore(f"{bucket}/cold")
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700


# -- every provider's credentials stay in the process that was given them ----------------


@dataclass
class KeyedStore:
    """A filesystem made with explicit credentials, a readable path and the secret values.

    ``identifiers`` are withheld from pickles too, but are not secrets: an AWS access
    key ID is in every request's ``Authorization`` header, which botocore logs.
    """

    options: dict[str, Any]
    path: str
    secrets: tuple[str, ...]
    identifiers: tuple[str, ...] = ()


def _keyed_s3(request: pytest.FixtureRequest) -> KeyedStore:
    archive = request.getfixturevalue("archive")
    bucket = request.getfixturevalue("bucket")
    archive.put_object(bucket, "k", b"payload")
    key, secret, token = "AKIAS3DONOTLEAK00001", "S3secretDoNotLeak42", "S3tokenDoNotLeak77"
    target = {**archive.storage_options(), "key": key, "secret": secret, "token": token}
    return KeyedStore({"target_protocol": "s3", "target_options": target}, f"{bucket}/k",
                      (secret, token), identifiers=(key,))  # fmt: skip


def _keyed_azure(request: pytest.FixtureRequest) -> KeyedStore:
    from archivefs.testing._azure import ACCOUNT_KEY

    archive = request.getfixturevalue("azure_archive")
    container = request.getfixturevalue("azure_container")
    archive.put_blob(container, "k", b"payload")
    target = archive.storage_options()  # a connection string holding the account key
    assert ACCOUNT_KEY in target["connection_string"]
    return KeyedStore({"target_protocol": "az", "target_options": target}, f"{container}/k",
                      (ACCOUNT_KEY, target["connection_string"]))  # fmt: skip


def _keyed_gcs(request: pytest.FixtureRequest) -> KeyedStore:
    from google.oauth2.credentials import Credentials

    archive = request.getfixturevalue("gcs_archive")
    bucket = request.getfixturevalue("gcs_bucket")
    archive.put_object(bucket, "k", b"payload")
    token = "ya29.GCSaccessTokenDoNotLeak"  # an access token: the emulator takes any
    target = {**archive.storage_options(), "token": Credentials(token)}
    return KeyedStore({"target_protocol": "gs", "target_options": target}, f"{bucket}/k",
                      (token,))  # fmt: skip


def _keyed_oracle(request: pytest.FixtureRequest) -> KeyedStore:
    from pathlib import Path

    from cryptography.hazmat.primitives import serialization

    archive = request.getfixturevalue("oracle_archive")
    bucket = request.getfixturevalue("oracle_bucket")
    archive.put_object(bucket, "k", b"payload")
    phrase = "OCIpassPhraseDoNotLeak"
    key = serialization.load_pem_private_key(Path(archive.key_file).read_bytes(), None)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(phrase.encode()),
    ).decode()
    target = archive.storage_options()
    config = {k: v for k, v in target["config"].items() if k != "key_file"}
    target["config"] = {**config, "key_content": pem, "pass_phrase": phrase}
    body = pem.splitlines()[2]  # a line of the encrypted key itself
    return KeyedStore({"target_protocol": "oci", "target_options": target}, f"{bucket}/k",
                      (phrase, body))  # fmt: skip


KEYED = {"s3": _keyed_s3, "azure": _keyed_azure, "gcs": _keyed_gcs, "oracle": _keyed_oracle}


@pytest.mark.parametrize("provider", list(KEYED))
def test_no_provider_credential_leaves_the_process(
    provider: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Pickles, cloudpickles, Dask graphs, to_json(), reprs, errors and DEBUG logs hold none
    of a provider's secrets, and what they rebuild still reads in the same process."""
    caplog.set_level(logging.DEBUG)
    keyed = KEYED[provider](request)
    fs = ArchiveFileSystem(
        **keyed.options, journal=str(tmp_path / "j.sqlite"), skip_instance_cache=True
    )
    assert fs.cat_file(keyed.path) == b"payload"
    blob, text = pickle.dumps(fs), fs.to_json()
    graph = dask.delayed(fs.cat_file)(keyed.path)
    graph_blob = cloudpickle.dumps(graph)
    shipped = [blob, text.encode(), cloudpickle.dumps(fs), graph_blob]
    shipped += [repr(fs).encode(), str(fs).encode(), str(dask.base.tokenize(graph)).encode()]
    clone = pickle.loads(blob)
    assert clone.cat_file(keyed.path) == b"payload"
    with pytest.raises(FileNotFoundError) as error:  # an error of the rebuilt filesystem
        clone.cat_file(keyed.path.rsplit("/", 1)[0] + "/missing")
    shipped += [str(error.value).encode(), repr(error.value).encode(), repr(clone).encode()]
    assert fsspec.AbstractFileSystem.from_json(text).cat_file(keyed.path) == b"payload"
    assert cloudpickle.loads(graph_blob).compute(scheduler="sync") == b"payload"
    for value in keyed.secrets + keyed.identifiers:
        for data in shipped:
            assert value.encode() not in data
    logged = [caplog.text] + [r.getMessage() for r in caplog.records]
    for secret in keyed.secrets:
        assert not [text for text in logged if secret in text]


READ_IN_OTHER_PROCESS = """
import pickle, sys
fs = pickle.loads(sys.stdin.buffer.read())
sys.stdout.write(fs.cat_file(sys.argv[1]).decode())
"""


def test_an_azure_worker_uses_its_own_credentials_or_says_it_has_none(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A Dask worker gets the pickle without the connection string: adlfs finds the
    worker's own (``AZURE_STORAGE_CONNECTION_STRING``), or the error says what to do."""
    import os
    import subprocess
    import sys

    keyed = _keyed_azure(request)
    fs = ArchiveFileSystem(**keyed.options, journal=False, skip_instance_cache=True)
    blob = pickle.dumps(fs)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_STORAGE_")}

    def run(env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-c", READ_IN_OTHER_PROCESS, keyed.path],
            input=blob, capture_output=True, env={**clean, **env}, timeout=300, check=False,
        )  # fmt: skip

    own = run(
        {"AZURE_STORAGE_CONNECTION_STRING": keyed.options["target_options"]["connection_string"]}
    )
    assert own.returncode == 0, own.stderr.decode()
    assert own.stdout == b"payload"
    none = run({})
    assert none.returncode != 0
    last = none.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("archivefs.errors.MissingCredentialsError: az://: this filesystem was")
    assert "pickle_credentials=True" in last
