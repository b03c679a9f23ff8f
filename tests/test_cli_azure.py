"""The installed ``archivefs`` script with az:// URLs, against the emulated Azure archive.

The account comes from the environment, as adlfs reads it
(``AZURE_STORAGE_CONNECTION_STRING``); counts are the proxy's, server side.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.cli import EXIT_USAGE

if TYPE_CHECKING:
    from archivefs.testing import EmulatedAzureArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def cli(azure_archive: EmulatedAzureArchive, tmp_path: Path) -> Any:
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azure_archive.connection_string,
           "ARCHIVEFS_RESTORE_TIME_SCALE": str(1 / 3600)}  # fmt: skip
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AZURE_STORAGE_ACCOUNT_NAME"):
        env.pop(name, None)

    def invoke(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ARCHIVEFS, *args, "--journal", str(tmp_path / "j.sqlite")],
            capture_output=True, text=True, env=env, timeout=600, check=False,
        )  # fmt: skip

    return invoke


def test_ls_status_estimate_restore_with_az_urls(
    cli: Any, azure_archive: EmulatedAzureArchive, azure_container: str
) -> None:
    azure_archive.rehydrate_delay["High"] = 1.0
    c = azure_container
    azure_archive.put_blob(c, "d/hot.bin", b"1")
    azure_archive.put_blobs(c, {f"d/a{i}.bin": b"12345" for i in range(3)}, tier="Archive")
    azure_archive.requests.clear()

    listed = cli("ls", "-l", f"az://{c}/d/")
    assert listed.returncode == 0, listed.stderr
    rows = {line.rsplit("/", 1)[1]: line.split()[:3] for line in listed.stdout.splitlines()}
    assert rows["hot.bin"] == ["1", "Hot", "hot"]
    assert rows["a0.bin"] == ["5", "Archive", "archived"]
    assert azure_archive.requests.counts() == {"GetBlob": 1, "ListBlobs": 1}  # + registry

    status = cli("status", "--json", f"az://{c}/d/")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["files"]["archived"] == 3

    estimate = cli("estimate", "--json", "--tier", "High", f"az://{c}/d/")
    assert estimate.returncode == 0, estimate.stderr
    cost = json.loads(estimate.stdout)
    assert cost["sheet"] == "azure-eastus"  # the provider's sheet unless --price-sheet
    assert cost["total"] > 0

    assert azure_archive.requests.count("SetBlobTier", batched=None) == 0
    restored = cli("restore", "--json", "--tier", "High", "--wait", f"az://{c}/d/")
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["requests_sent"] == 3
    assert azure_archive.requests.count("BlobBatch") == 1  # 3 blobs, one request
    assert azure_archive.requests.count("SetBlobTier", batched=True, status=202) == 3

    again = cli("restore", "--json", f"az://{c}/d/")  # all Hot now: nothing sent, no error
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["requests_sent"] == 0
    assert azure_archive.requests.count("SetBlobTier", batched=None) == 3


def test_account_options_are_checked_per_provider(cli: Any, azure_container: str) -> None:
    bad = cli("ls", "--storage-options", '{"endpoint_url": "x"}', f"az://{azure_container}/")
    assert bad.returncode == EXIT_USAGE
    assert "'endpoint_url' is not an adlfs option" in bad.stderr
    mixed = cli("status", f"az://{azure_container}/a", "s3://bucket/b")
    assert mixed.returncode == EXIT_USAGE
    assert "one provider's URLs per command" in mixed.stderr
    profile = cli("ls", "--profile", "research", f"az://{azure_container}/")
    assert profile.returncode == EXIT_USAGE
    assert "--account-name" in profile.stderr


def test_advise_compares_the_azure_sheets_classes(cli: Any) -> None:
    advised = cli(
        "advise", "--json", "--objects", "100", "--size", "1GiB", "--tier", "High",
        "--price-sheet", "azure-eastus",
    )  # fmt: skip
    assert advised.returncode == 0, advised.stderr
    names = {o["name"] for o in json.loads(advised.stdout)["options"]}
    assert {"Hot", "Cool", "Cold"} <= names
    assert any(n.startswith("Archive") for n in names)
