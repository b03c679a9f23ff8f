"""A second ``prefetch(to=DIR)`` fetches only what changed, as ``aws s3 sync`` would: files an
earlier run wrote, unchanged locally, of objects with the same ETag, are left out before
anything is priced, restored or read; ``force=True`` (``--force``) fetches them all again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


def _object_gets(archive: EmulatedArchive, bucket: str) -> int:
    return sum(archive.requests.count("GET", bucket=bucket, key=f"s/{i}") for i in range(3))


def test_a_second_prefetch_to_skips_unchanged_files(
    make_fs: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(
        bucket, {f"s/{i}": bytes([i]) * 1000 for i in range(3)}, storage_class="GLACIER"
    )
    target = tmp_path / "out"
    first = make_fs().prefetch(f"{bucket}/s/", to=target, timeout=600)
    assert len(first.copied.files) == 3
    assert first.copied.skipped == []
    assert archive.requests.count("RestoreObject") == 3
    assert _object_gets(archive, bucket) == 3

    archive.requests.clear()
    again = make_fs().prefetch(f"{bucket}/s/", to=target, timeout=600)
    assert again.copied.files == []
    assert again.copied.skipped == sorted(target / bucket / "s" / str(i) for i in range(3))
    assert len(again.plan) == 0  # nothing priced, restored or read
    assert archive.requests.count("RestoreObject") == 0
    assert _object_gets(archive, bucket) == 0

    # a local file changed, and an object replaced (a new ETag): those two only
    (target / bucket / "s" / "0").write_bytes(b"edited")
    archive.put_object(bucket, "s/1", b"new" * 100, storage_class="GLACIER")
    archive.requests.clear()
    third = make_fs().prefetch(f"{bucket}/s/", to=target, timeout=600)
    assert [p.name for p in third.copied.files] == ["0", "1"]
    assert [p.name for p in third.copied.skipped] == ["2"]
    assert (target / bucket / "s" / "0").read_bytes() == bytes([0]) * 1000
    assert (target / bucket / "s" / "1").read_bytes() == b"new" * 100
    assert _object_gets(archive, bucket) == 2

    archive.requests.clear()
    forced = make_fs().prefetch(f"{bucket}/s/", to=target, timeout=600, force=True)
    assert len(forced.copied.files) == 3
    assert forced.copied.skipped == []
    assert _object_gets(archive, bucket) == 3


def test_prefetch_to_twice_through_the_command_and_force(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {f"s/{i}": bytes([i]) * 100 for i in range(3)})
    target = tmp_path / "out"

    def prefetch(*flags: str) -> dict[str, Any]:
        done = subprocess.run(
            [ARCHIVEFS, "prefetch", f"s3://{bucket}/s/", "--to", str(target), *flags,
             "--storage-options", json.dumps(archive.storage_options()),
             "--journal", str(tmp_path / "j.sqlite"), "--timeout", "600"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return {"text": done.stdout, **(json.loads(done.stdout) if "--json" in flags else {})}

    assert prefetch("--json")["files_written"] == 3
    archive.requests.clear()
    second = prefetch("--json")
    assert (second["files_written"], second["files_skipped"]) == (0, 3)
    assert _object_gets(archive, bucket) == 0
    text = prefetch()["text"]
    assert "3 already there (unchanged; --force fetches them again)" in text
    forced = prefetch("--json", "--force")
    assert (forced["files_written"], forced["files_skipped"]) == (3, 0)
    assert _object_gets(archive, bucket) == 3
