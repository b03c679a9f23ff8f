"""The `archivefs` command: argument handling with click's runner, end to end on the archive."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from archivefs.cli import EXIT_ERROR, EXIT_USAGE, EXIT_WAITING, main

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


@pytest.fixture
def run(archive: EmulatedArchive, tmp_path: Path) -> Any:
    options = json.dumps(archive.storage_options())

    def invoke(*args: str, input: str | None = None) -> Any:
        base = ["--storage-options", options, "--journal", str(tmp_path / "j.sqlite")]
        base += ["--restore-time-scale", str(1 / 3600)]
        return CliRunner().invoke(main, [*base, *args], input=input)

    return invoke


def test_help_has_examples() -> None:
    for command in ([], ["ls"], ["status"], ["restore"], ["demo"]):
        result = CliRunner().invoke(main, [*command, "--help"])
        assert result.exit_code == 0
        assert "Example" in result.output


def test_ls_long_shows_class_state_and_expiry(
    run: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_object(bucket, "d/cold", b"12345", storage_class="GLACIER")
    archive.put_object(bucket, "d/hot", b"1")
    result = run("ls", "-l", f"s3://{bucket}/d/")
    assert result.exit_code == 0, result.output
    lines = sorted(result.output.splitlines(), key=lambda line: line.rsplit("/", 1)[1])
    assert lines[0].split()[1:3] == ["GLACIER", "archived"]
    assert lines[0].endswith("d/cold")
    assert lines[1].split()[1:3] == ["STANDARD", "hot"]
    as_json = run("--json", "ls", f"s3://{bucket}/d/")
    assert {e["restore"] for e in json.loads(as_json.output)} == {"archived", "hot"}


def test_status_counts_by_state(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"s/{i}": b"ab" for i in range(3)}, storage_class="DEEP_ARCHIVE")
    archive.put_object(bucket, "s/hot", b"abc")
    result = run("--json", "status", f"s3://{bucket}/s/*")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["objects"]["archived"] == 3
    assert out["objects"]["hot"] == 1
    assert out["bytes"]["archived"] == 6


def test_restore_from_stdin_list_and_wait(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"r/{i}": b"x" for i in range(5)}, storage_class="GLACIER")
    listing = "".join(f"s3://{bucket}/r/{i}\n" for i in range(5))
    result = run(
        "--json", "restore", "--from-file", "-", "--wait", "--timeout", "60", input=listing
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "groups": 5,
        "requests_sent": 5,
        "already_in_progress_elsewhere": 0,
        "ready": 5,
    }
    assert archive.requests.count("RestoreObject") == 5


def test_restore_timeout_exits_4(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.set_restore_delay(60)
    archive.put_object(bucket, "slow", b"x", storage_class="GLACIER")
    result = run("restore", f"s3://{bucket}/slow", "--wait", "--timeout", "0.5")
    assert result.exit_code == EXIT_WAITING
    assert "not finished" in result.output


def test_errors_are_one_line_with_exit_codes(
    run: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "cold", b"x", storage_class="DEEP_ARCHIVE")
    typo = run("restore", f"s3://{bucket}/cold", "--tier", "Bluk")
    assert typo.exit_code == EXIT_ERROR
    assert typo.output.strip().count("\n") == 0
    assert "unknown restore tier 'Bluk'" in typo.output
    missing = run("ls", f"s3://{bucket}/nothing-here")
    assert missing.exit_code == EXIT_ERROR
    assert "Traceback" not in missing.output
    bad_options = CliRunner().invoke(main, ["--storage-options", "{not json", "ls", "s3://x/y"])
    assert bad_options.exit_code == EXIT_USAGE
    listing = tmp_path / "paths.txt"
    listing.write_text(f"s3://{bucket}/cold\nbad\0line\n")
    bad_line = run("restore", "--from-file", str(listing))
    assert bad_line.exit_code == EXIT_USAGE
    assert "paths.txt:2" in bad_line.output
    no_paths = run("restore")
    assert no_paths.exit_code == EXIT_USAGE
