"""Local copies of archived keys stay inside the target directory (issue 20.6).

Keys with ``..`` segments are legal in S3 and chosen by whoever can write the
bucket; ``archivefs prefetch --to DIR`` must refuse them before paying for a
restore or writing a byte, and never write outside DIR.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.access.copies import local_target
from archivefs.errors import InvalidPathError

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


def _prefetch(archive: EmulatedArchive, tmp_path: Path, url: str, target: Path) -> Any:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    return subprocess.run(
        [ARCHIVEFS, "--endpoint-url", archive.endpoint_url, "--journal",
         str(tmp_path / "j.sqlite"), "--restore-time-scale", str(1 / 3600),
         "prefetch", url, "--to", str(target), "--timeout", "120"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_a_key_with_dotdot_is_refused_and_nothing_is_written_outside(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    outside = tmp_path / "planted.txt"
    outside.write_bytes(b"precious")
    target = tmp_path / "scratch" / "job"
    target.mkdir(parents=True)
    hostile = f"x/{'../' * 4}planted.txt"  # DIR/<bucket>/x/../../../../planted.txt = tmp_path/…
    archive.put_object(bucket, hostile, b"overwritten!", storage_class="GLACIER")
    archive.put_object(bucket, "x/fine.nc", b"fine", storage_class="GLACIER")
    listed = archive.client().list_objects_v2(Bucket=bucket)["Contents"]
    assert hostile in {o["Key"] for o in listed}  # the server keeps the key as written
    archive.requests.clear()
    result = _prefetch(archive, tmp_path, f"s3://{bucket}/x/", target)
    assert result.returncode == 1, result.stderr
    assert "'..' part" in result.stderr
    assert hostile in result.stderr
    assert result.stderr.strip().count("\n") == 0  # one line, no traceback
    assert outside.read_bytes() == b"precious"
    assert not [p for p in target.rglob("*") if p.is_file()]
    assert archive.requests.count("RestoreObject") == 0  # refused before anything was paid
    data_gets = [r for r in archive.requests.records
                 if r.op == "GET" and not (r.key or "").startswith(".archivefs/")]  # fmt: skip
    assert data_gets == []  # only the catalog registry was read


def test_a_symlink_in_the_target_cannot_lead_out(tmp_path: Path) -> None:
    target = tmp_path / "scratch"
    (target / "b").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", target / "b" / "link")
    with pytest.raises(InvalidPathError, match="outside"):
        local_target(target, "b/link/file.nc")
    for key in ("b/../../x", "b/./x", "b//x", "/b/x", "b/x/"):
        with pytest.raises(InvalidPathError):
            local_target(target, key)
    assert local_target(target, "b/ok/file.nc") == (target / "b/ok/file.nc").resolve()


def test_prefetch_json_summary_counts_partials(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "y/a.nc", b"a" * 5, storage_class="GLACIER")
    target = tmp_path / "scratch"
    mine = target / bucket / "y"
    mine.mkdir(parents=True)
    alive = mine / f"a.nc.archivefs-partial-{os.getpid()}-00ff"  # a live writer's: kept
    alive.write_bytes(b"?")
    result = _prefetch(archive, tmp_path, f"s3://{bucket}/y/", target)
    assert result.returncode == 0, result.stderr
    assert (mine / "a.nc").read_bytes() == b"a" * 5
    assert alive.exists()
    assert "1 files (5 B) written to" in result.stdout


def test_promotion_into_a_local_hot_store_refuses_dotdot_keys(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs.errors import ArchiveError
    from tests.reliability._support import make_fs

    outside = tmp_path / "planted.txt"
    outside.write_bytes(b"precious")
    hot = tmp_path / "hot"
    hostile = f"x/{'../' * 3}planted.txt"  # <hot>/<bucket>/x/../../../planted.txt = tmp_path/…
    archive.put_objects(bucket, {hostile: b"overwritten!", "x/fine.nc": b"fine"})
    fs = make_fs(archive, tmp_path, hot=str(hot))
    with pytest.raises(InvalidPathError, match=r"'\.\.' part") as caught:
        fs.promote(f"{bucket}/x/")
    assert isinstance(caught.value, ArchiveError)
    assert outside.read_bytes() == b"precious"
    assert not hot.exists() or not [p for p in hot.rglob("*") if p.is_file()]
    assert archive.requests.count("GET", bucket=bucket) == 0
