"""The installed ``archivefs`` script with gs:// URLs, against the emulated GCS server.

gcsfs options (the emulator's endpoint, anonymous) come with ``--storage-options``;
counts are the server's.
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

from archivefs.cli import EXIT_BUDGET, EXIT_USAGE

if TYPE_CHECKING:
    from archivefs.testing import EmulatedGcsArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"
GIB = 2**30

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def cli(gcs_archive: EmulatedGcsArchive, tmp_path: Path) -> Any:
    # archivefs.testing set GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false in this process: the
    # script inherits it (else gcsfs probes each bucket over gRPC, 60 s per bucket)
    env = {**os.environ, "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
    options = json.dumps(gcs_archive.storage_options())

    def invoke(*args: str, storage: str = options) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ARCHIVEFS, *args, "--storage-options", storage, "--journal", str(tmp_path / "j")],
            capture_output=True, text=True, env=env, timeout=600, check=False,
        )  # fmt: skip

    return invoke


def downloads(archive: EmulatedGcsArchive) -> int:
    return sum(
        1
        for r in archive.requests.records
        if r.op == "objects.download" and (r.name or "").startswith("d/")
    )


def test_ls_status_estimate_prefetch_with_gs_urls(
    cli: Any, gcs_archive: EmulatedGcsArchive, gcs_bucket: str
) -> None:
    b = gcs_bucket
    gcs_archive.put_object(b, "d/hot.bin", b"1")
    for i in range(3):
        gcs_archive.put_object(b, f"d/a{i}.bin", b"12345", storage_class="ARCHIVE")
    gcs_archive.requests.clear()

    listed = cli("ls", "-l", f"gs://{b}/d/")
    assert listed.returncode == 0, listed.stderr
    rows = {line.rsplit("/", 1)[1]: line.split()[:3] for line in listed.stdout.splitlines()}
    assert rows["hot.bin"] == ["1", "STANDARD", "hot"]
    assert rows["a0.bin"] == ["5", "ARCHIVE", "hot"]  # reads at once (for a fee)
    assert gcs_archive.requests.by_op() == {"objects.download": 1, "objects.list": 1}  # + registry

    status = cli("status", "--json", f"gs://{b}/d/")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["files"]["hot"] == 4

    estimate = cli("estimate", "--json", f"gs://{b}/d/")
    assert estimate.returncode == 0, estimate.stderr
    cost = json.loads(estimate.stdout)
    assert cost["sheet"] == "gcs-us-central1"  # the provider's sheet unless --price-sheet
    assert cost["restore_request_count"] == 0
    assert cost["components"]["retrieval"] == pytest.approx(15 / GIB * 0.05)

    text = cli("estimate", f"gs://{b}/d/")
    assert text.returncode == 0, text.stderr
    assert "3 objects read at once for a retrieval fee" in text.stdout

    refused = cli("prefetch", "--json", "--max-cost", "0.00001", f"gs://{b}/d/")
    assert refused.returncode == EXIT_BUDGET, refused.stderr
    assert "retrieval fee" in refused.stderr
    prefetched = cli("prefetch", "--json", "--max-cost", "1", f"gs://{b}/d/a0.bin")
    assert prefetched.returncode == 0, prefetched.stderr
    summary = json.loads(prefetched.stdout)
    assert summary["requests_sent"] == 0
    assert summary["readable_for_a_fee"] == 1
    assert downloads(gcs_archive) == 0  # listings and plans only: no object was read


def test_options_are_checked_for_gcsfs(cli: Any, gcs_bucket: str) -> None:
    bad = cli("ls", f"gs://{gcs_bucket}/", storage='{"account_name": "x"}')
    assert bad.returncode == EXIT_USAGE
    assert "'account_name' is not a gcsfs option" in bad.stderr
    profile = cli("ls", "--profile", "research", f"gs://{gcs_bucket}/")
    assert profile.returncode == EXIT_USAGE
    assert "--storage-options" in profile.stderr


def test_bundle_into_archive_then_list_and_estimate_members(
    cli: Any, gcs_archive: EmulatedGcsArchive, gcs_bucket: str, tmp_path: Path
) -> None:
    src = tmp_path / "src"
    for i in range(12):
        (src / f"d{i % 2}").mkdir(parents=True, exist_ok=True)
        (src / f"d{i % 2}" / f"f{i:02d}.dat").write_bytes(b"x" * 100)
    bundled = cli(
        "bundle", "--json", str(src), f"gs://{gcs_bucket}/k",
        "--group-by", "prefix:1", "--storage-class", "ARCHIVE",
    )  # fmt: skip
    assert bundled.returncode == 0, bundled.stderr
    assert json.loads(bundled.stdout)["bundles_written"] == 2
    bundles = gcs_archive.objects(gcs_bucket, "k/.archivefs/bundles/")
    assert len(bundles) == 2
    assert {gcs_archive.storage_class(gcs_bucket, b) for b in bundles} == {"ARCHIVE"}

    listed = cli("ls", "-l", f"gs://{gcs_bucket}/k/d1/")
    assert listed.returncode == 0, listed.stderr
    assert {tuple(line.split()[:2]) for line in listed.stdout.splitlines()} == {("100", "ARCHIVE")}
    estimate = cli("estimate", "--json", f"gs://{gcs_bucket}/k/d1/")
    assert estimate.returncode == 0, estimate.stderr
    cost = json.loads(estimate.stdout)
    assert cost["get_request_count"] == 6  # six members (one bundle: read ranges of it)
    assert cost["bytes_read"] == 600


def test_advise_compares_the_gcs_sheets_classes(cli: Any) -> None:
    advised = cli(
        "advise", "--json", "--objects", "1000", "--size", "10MiB",
        "--price-sheet", "gcs-us-central1",
    )  # fmt: skip
    assert advised.returncode == 0, advised.stderr
    options = json.loads(advised.stdout)["options"]
    assert [o["storage_class"] for o in options] == ["STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"]
    # no restores on GCS: reading 1000 x 10 MiB of ARCHIVE costs its retrieval fee
    archive = options[-1]
    assert archive["per_access"] == pytest.approx(
        1000 * 10 / 1024 * 0.05 + 1000 * 0.05 / 1000, rel=1e-6
    )
