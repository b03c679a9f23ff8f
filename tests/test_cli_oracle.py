"""The installed ``archivefs`` script with oci:// URLs, against the emulated Oracle archive.

ocifs's options (the OCI config of the fake's throwaway key and its endpoint) go in
``--storage-options``; counts are the fake's, server side.
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
    from archivefs.testing import EmulatedOracleArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def cli(oracle_archive: EmulatedOracleArchive, tmp_path: Path) -> Any:
    env = {**os.environ, "ARCHIVEFS_RESTORE_TIME_SCALE": str(1 / 3600)}
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AZURE_STORAGE_ACCOUNT_NAME"):
        env.pop(name, None)
    options = json.dumps(oracle_archive.storage_options())

    def invoke(*args: str, storage_options: str = options) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ARCHIVEFS, *args, "--journal", str(tmp_path / "j.sqlite"),
             "--storage-options", storage_options],
            capture_output=True, text=True, env=env, timeout=600, check=False,
        )  # fmt: skip

    return invoke


def test_ls_status_estimate_restore_with_oci_urls(
    cli: Any, oracle_archive: EmulatedOracleArchive, oracle_bucket: str
) -> None:
    b = oracle_bucket
    oracle_archive.put_object(b, "d/hot.bin", b"1")
    oracle_archive.put_objects(b, {f"d/a{i}.bin": b"12345" for i in range(3)}, tier="Archive")
    oracle_archive.requests.clear()

    listed = cli("ls", "-l", f"oci://{b}/d/")
    assert listed.returncode == 0, listed.stderr
    rows = {line.rsplit("/", 1)[1]: line.split()[:3] for line in listed.stdout.splitlines()}
    assert rows["hot.bin"] == ["1", "Standard", "hot"]
    assert rows["a0.bin"] == ["5", "Archive", "archived"]
    assert oracle_archive.requests.counts() == {"GetObject": 1, "ListObjects": 1}  # + registry

    status = cli("status", "--json", f"oci://{b}/d/")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["files"]["archived"] == 3

    estimate = cli("estimate", "--json", f"oci://{b}/d/")
    assert estimate.returncode == 0, estimate.stderr
    cost = json.loads(estimate.stdout)
    assert cost["sheet"] == "oci-us-ashburn-1"  # the provider's sheet unless --price-sheet
    assert cost["total"] > 0

    assert oracle_archive.requests.count("RestoreObjects") == 0
    restored = cli("restore", "--json", "--wait", f"oci://{b}/d/")
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["requests_sent"] == 3
    assert oracle_archive.requests.count("RestoreObjects", status=202) == 3

    again = cli("restore", "--json", f"oci://{b}/d/")  # restored now: nothing sent
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["requests_sent"] == 0
    assert oracle_archive.requests.count("RestoreObjects") == 3


def test_options_are_checked_for_oci_urls(cli: Any, oracle_bucket: str) -> None:
    bad = cli("ls", f"oci://{oracle_bucket}/", storage_options='{"account_name": "x"}')
    assert bad.returncode == EXIT_USAGE
    assert "'account_name' is not an ocifs option" in bad.stderr
    account = cli("ls", "--account-name", "acct", f"oci://{oracle_bucket}/")
    assert account.returncode == EXIT_USAGE
    assert "--profile" in account.stderr


def test_estimate_refuses_a_restore_tier_oracle_lacks_as_restore_does(
    cli: Any, oracle_archive: EmulatedOracleArchive, oracle_bucket: str
) -> None:
    oracle_archive.put_objects(oracle_bucket, {"t/a.bin": b"1"}, tier="Archive")
    for command in ("restore", "estimate"):
        result = cli(command, f"oci://{oracle_bucket}/t/", "--tier", "Bulk")
        assert result.returncode == EXIT_USAGE, (command, result.stderr)
        assert "has no restore speed (Oracle has one) 'Bulk'" in result.stderr, result.stderr
        assert "use one of: Standard" in result.stderr
        assert "price sheet" not in result.stderr
    assert oracle_archive.requests.count("RestoreObjects") == 0
