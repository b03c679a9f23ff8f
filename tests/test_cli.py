"""The `archivefs` command: argument handling with click's runner, end to end on the archive."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import pytest
import s3fs
from click.testing import CliRunner

from archivefs.cli import EXIT_BUDGET, EXIT_ERROR, EXIT_USAGE, EXIT_WAITING, main

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

# The installed console script, as users run it.
ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


@pytest.fixture
def run(archive: EmulatedArchive, tmp_path: Path) -> Any:
    options = json.dumps(archive.storage_options())

    def invoke(*args: str, input: str | None = None) -> Any:
        base = ["--storage-options", options, "--journal", str(tmp_path / "j.sqlite")]
        base += ["--restore-time-scale", str(1 / 3600)]
        return CliRunner().invoke(main, [*base, *args], input=input)

    return invoke


def test_help_has_examples() -> None:
    commands = ["ls", "status", "restore", "prefetch", "estimate", "advise", "bundle", "demo"]
    for command in ([], *([c] for c in commands), ["catalog"], ["catalog", "show"],
                    ["catalog", "rebuild"]):  # fmt: skip
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
    assert out["restoring_expected_by"] is None
    archive.set_restore_delay(60)
    run("restore", f"s3://{bucket}/s/0")
    after = json.loads(run("--json", "status", f"s3://{bucket}/s/*").output)
    assert after["objects"]["restoring"] == 1
    assert after["restoring_expected_by"] is not None  # from the journal
    text = run("status", f"s3://{bucket}/s/*").output
    assert "restores in flight expected by" in text


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


def test_prefetch_to_a_directory(
    run: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(
        bucket, {f"p/{i}": bytes([i]) * 10 for i in range(4)}, storage_class="GLACIER"
    )
    target = tmp_path / "cache"
    target.mkdir()
    result = run("--json", "prefetch", f"s3://{bucket}/p/", "--to", str(target), "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.splitlines()[-1])["ready"] == 4
    assert (target / bucket / "p" / "3").read_bytes() == bytes([3]) * 10
    assert archive.requests.count("RestoreObject") == 4


def _restore_command(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> list[str]:
    return [
        sys.executable, "-m", "archivefs.cli",
        "--storage-options", json.dumps(archive.storage_options()),
        "--journal", str(tmp_path / "j.sqlite"),
        "--restore-time-scale", str(1 / 3600),
        "restore", f"s3://{bucket}/bar/*", "--wait", "--timeout", "60",
    ]  # fmt: skip


def test_progress_is_a_bar_on_a_terminal(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.set_restore_delay(1.0)
    archive.put_objects(bucket, {f"bar/{i}": b"x" for i in range(6)}, storage_class="GLACIER")
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    with subprocess.Popen(
        _restore_command(archive, bucket, tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
    ) as process:
        os.close(terminal)
        output = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            output += chunk
        assert process.wait(60) == 0
    os.close(controller)
    text = output.decode(errors="replace")
    assert "restored:" in text
    assert "6/6" in text
    assert "\r" in text  # the bar redraws in place
    assert "6 objects; 6 restore requests sent; 6 ready" in text


def test_progress_is_log_lines_without_a_terminal(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {f"bar/{i}": b"x" for i in range(3)}, storage_class="GLACIER")
    completed = subprocess.run(
        _restore_command(archive, bucket, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "restore: 3/3 ready" in completed.stderr
    assert "\r" not in completed.stderr


def test_estimate_paths_and_what_if(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"e/{i}": b"x" * 100 for i in range(4)}, storage_class="GLACIER")
    result = run("--json", "estimate", f"s3://{bucket}/e/*", "--tier", "Bulk")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["restore_request_count"] == 4
    assert set(out["components"]) >= {"restore_requests", "egress", "storage_per_month"}
    what_if = run(
        "estimate", "--objects", "1000", "--size", "40MiB", "--storage-class", "DEEP_ARCHIVE",
        "--tier", "Bulk",
    )  # fmt: skip
    assert what_if.exit_code == 0, what_if.output
    assert "restore_requests" in what_if.output
    assert "1000 restore requests" in what_if.output
    bad_size = run("estimate", "--objects", "3", "--size", "lots", "--storage-class", "GLACIER")
    assert bad_size.exit_code == EXIT_USAGE
    missing_sheet = run("estimate", f"s3://{bucket}/e/*", "--price-sheet", "nowhere.yaml")
    assert missing_sheet.exit_code == EXIT_ERROR
    assert "no such price sheet" in missing_sheet.output


def test_advise_prints_break_evens(run: Any) -> None:
    result = run(
        "advise", "--objects", "1", "--size", "633GiB", "--classes", "STANDARD,STANDARD_IA"
    )
    assert result.exit_code == 0, result.output
    assert "STANDARD_IA is cheaper below" in result.output


def test_budget_refusal_exits_3(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"m/{i}": b"x" for i in range(3)}, storage_class="GLACIER")
    result = run("restore", f"s3://{bucket}/m/*", "--max-cost", "0")
    assert result.exit_code == EXIT_BUDGET
    assert "above the budget" in result.output
    assert archive.requests.count("RestoreObject") == 0


def test_bundle_then_catalog_show_and_rebuild(
    run: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    source = tmp_path / "data"
    for i in range(30):
        (source / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (source / f"d{i % 3}" / f"f{i}.txt").write_bytes(b"x" * (100 + i))
    dest = f"s3://{bucket}/arch"
    result = run("--json", "bundle", str(source), dest, "--target-size", "1KiB",
                 "--storage-class", "GLACIER")  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["members"] == 30
    assert summary["bundles_written"] > 3
    again = run("--json", "bundle", str(source), dest, "--target-size", "1KiB")
    assert json.loads(again.output)["bundles_written"] == 0  # resumable: nothing redone
    shown = run("--json", "catalog", "show", dest)
    assert json.loads(shown.output)["members"] == 30
    listing = run("ls", "-l", f"{dest}/d1")
    assert listing.exit_code == 0, listing.output
    assert len(listing.output.splitlines()) == 10
    assert all("GLACIER" in line for line in listing.output.splitlines())
    archived = run("catalog", "rebuild", dest)  # GLACIER bundles: their directories are cold
    assert archived.exit_code == EXIT_ERROR
    assert "restore the bundles first" in archived.output
    assert run("restore", f"{dest}/.archivefs/bundles/", "--wait").exit_code == 0
    rebuilt = run("catalog", "rebuild", dest)
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "rebuilt: 30 members" in rebuilt.output
    bad = run("bundle", str(source), dest, "--group-by", "colour")
    assert bad.exit_code == EXIT_USAGE


def test_missing_credentials_is_one_line(archive: EmulatedArchive, bucket: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_CONFIG_FILE="/nonexistent",
               AWS_EC2_METADATA_DISABLED="true")  # fmt: skip
    completed = subprocess.run(
        [sys.executable, "-m", "archivefs.cli", "--endpoint-url", archive.endpoint_url,
         "ls", f"s3://{bucket}/"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == EXIT_ERROR, completed.stderr
    assert "no usable AWS credentials" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert completed.stderr.strip().count("\n") == 0


def test_prefetch_promote_in_place(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"pp/{i}": b"z" * 10 for i in range(3)}, storage_class="GLACIER")
    result = run("--json", "prefetch", f"s3://{bucket}/pp/", "--promote", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.splitlines()[-1])["promoted_in_place"] == 3
    assert archive.requests.count("COPY") == 3
    listing = json.loads(run("--json", "ls", f"s3://{bucket}/pp/").output)
    assert {e["storage_class"] for e in listing} == {"STANDARD"}
    assert {e["restore"] for e in listing} == {"hot"}  # permanent: no restored copy to expire
    both = run("prefetch", f"s3://{bucket}/pp/", "--promote", "--to", "/tmp")
    assert both.exit_code == EXIT_USAGE


@pytest.fixture
def cli(archive: EmulatedArchive, tmp_path: Path) -> Any:
    """Run the installed ``archivefs`` script against the emulated archive.

    The endpoint and journal go after the command (as AWS CLI users write them);
    credentials and the time scale come from the environment `archivefs serve` prints.
    """
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1",
           "ARCHIVEFS_RESTORE_TIME_SCALE": str(1 / 3600)}  # fmt: skip

    def invoke(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        tail = ["--endpoint-url", archive.endpoint_url, "--journal", str(tmp_path / "j.sqlite")]
        return subprocess.run(
            [ARCHIVEFS, *args, *tail], input=input, capture_output=True, text=True, env=env,
            timeout=600, check=False,
        )  # fmt: skip

    return invoke


def _bundled_tree(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> dict[str, bytes]:
    """Three instruments x two days, bundled one bundle per day (prefix:1) into GLACIER."""
    from archivefs.catalog import ByPrefix
    from archivefs.catalog.writer import bundle_tree

    files = {}
    for day in ("d01", "d02"):
        for instrument in ("mag", "rad", "sonde"):
            for i in range(4):
                data = f"{day}/{instrument}/{i}".encode() * (50 + i)
                files[f"{day}/{instrument}/obs{i}.nc"] = data
                (tmp_path / "src" / day / instrument).mkdir(parents=True, exist_ok=True)
                (tmp_path / "src" / day / instrument / f"obs{i}.nc").write_bytes(data)
    s3 = s3fs.S3FileSystem(**archive.storage_options(), skip_instance_cache=True)
    bundle_tree(
        fsspec.filesystem("file"), str(tmp_path / "src"), s3, f"{bucket}/arch",
        policy=ByPrefix(depth=1), storage_class="GLACIER",
    )  # fmt: skip
    archive.requests.clear()
    return files


def test_global_options_go_before_or_after_every_command(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "g/cold", b"12345", storage_class="GLACIER")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_bytes(b"a" * 10)
    listing = cli("ls", f"s3://{bucket}/g/", "--json", "--debug")
    assert listing.returncode == 0, listing.stderr
    assert [e["restore"] for e in json.loads(listing.stdout)] == ["archived"]
    status = cli("status", f"s3://{bucket}/g/", "--json")
    assert json.loads(status.stdout)["objects"]["archived"] == 1, status.stderr
    bundled = cli("bundle", str(tmp_path / "src"), f"s3://{bucket}/b", "--json",
                  "--storage-options", '{"default_block_size": 5242880}')  # fmt: skip
    assert json.loads(bundled.stdout)["members"] == 1, bundled.stderr
    shown = cli("catalog", "show", f"s3://{bucket}/b", "--json")
    assert json.loads(shown.stdout)["members"] == 1, shown.stderr
    # Every command and subcommand takes each global option after its name (checked
    # in-process: a bad endpoint is refused while parsing, before any request).
    commands = [["ls", "s3://x/"], ["status", "s3://x/"], ["estimate", "s3://x/"],
                ["restore", "s3://x/"], ["prefetch", "s3://x/"], ["bundle", "a", "s3://x/"],
                ["catalog", "show", "s3://x/"], ["catalog", "rebuild", "s3://x/"],
                ["advise", "--objects", "1", "--size", "1"], ["demo"]]  # fmt: skip
    for command in commands:
        result = CliRunner().invoke(main, [*command, "--endpoint-url", "localhost:1"])
        assert result.exit_code == EXIT_USAGE, (command, result.output)
        assert "has no http:// or https:// scheme" in result.output
        for option in (["--profile", "p"], ["--storage-options", "{}"], ["--journal", "j"],
                       ["--json"], ["--debug"], ["--restore-time-scale", "1"]):  # fmt: skip
            parsed = CliRunner().invoke(main, [*command, *option, "--help"])
            assert parsed.exit_code == 0, (command, option, parsed.output)
    assert archive.requests.count("RestoreObject") == 0


def test_prefetch_to_writes_the_requested_files_each_byte_once(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = _bundled_tree(archive, bucket, tmp_path)
    target = tmp_path / "scratch"
    # A run killed earlier left a partial file (its writer's pid is gone).
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    leftover = target / bucket / "arch" / "d02" / "rad"
    leftover.mkdir(parents=True)
    (leftover / f"obs1.nc.archivefs-partial-{dead.stdout.strip()}-0123abcd").write_bytes(b"x")
    result = cli("prefetch", f"s3://{bucket}/arch/d02/rad/", "--to", str(target), "--json",
                 "--timeout", "120")  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["files_written"] == 4
    assert summary["partials_removed"] == 1
    written = sorted(p for p in target.rglob("*") if p.is_file())
    wanted = sorted(k for k in files if k.startswith("d02/rad/"))
    assert [p.relative_to(target / bucket / "arch").as_posix() for p in written] == wanted
    for name in wanted:
        assert (target / bucket / "arch" / name).read_bytes() == files[name]
    assert not list(target.rglob("*.zip"))
    assert archive.requests.count("RestoreObject") == 1  # one bundle: d02
    needed = sum(len(files[k]) for k in wanted)
    assert archive.requests.count("GET", bucket=bucket) - _catalog_gets(archive, bucket) == 4
    assert archive.requests.bytes_sent("GET", bucket=bucket) - _catalog_bytes(archive, bucket) \
        == needed  # fmt: skip


def _catalog_gets(archive: EmulatedArchive, bucket: str) -> int:
    return sum(1 for r in archive.requests.records
               if r.op == "GET" and r.bucket == bucket and ".archivefs/" in (r.key or "")
               and "/bundles/" not in (r.key or ""))  # fmt: skip


def _catalog_bytes(archive: EmulatedArchive, bucket: str) -> int:
    return sum(r.bytes_sent for r in archive.requests.records
               if r.op == "GET" and r.bucket == bucket and ".archivefs/" in (r.key or "")
               and "/bundles/" not in (r.key or ""))  # fmt: skip


def test_globs_and_prefixes_ending_in_slash_select_the_files_below(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = _bundled_tree(archive, bucket, tmp_path)
    archive.put_objects(bucket, {f"plain/d0{i}/mag/x.nc": b"p" * 7 for i in (1, 2)},
                        storage_class="GLACIER")  # fmt: skip
    status = cli("status", f"s3://{bucket}/arch/*/mag/", "--json")
    assert status.returncode == 0, status.stderr
    out = json.loads(status.stdout)
    assert out["files"]["archived"] == 8
    assert out["objects"]["archived"] == 2  # both day bundles
    assert out["bytes_needed"]["archived"] == sum(len(v) for k, v in files.items() if "/mag/" in k)
    plain = json.loads(cli("status", f"s3://{bucket}/plain/*/mag/", "--json").stdout)
    assert plain["files"]["archived"] == 2
    estimate = cli("estimate", f"s3://{bucket}/plain/*/mag/", "--json")
    assert json.loads(estimate.stdout)["restore_request_count"] == 2, estimate.stderr
    restore = cli("restore", f"s3://{bucket}/arch/*/mag/", "--json")
    assert restore.returncode == 0, restore.stderr
    assert archive.requests.count("RestoreObject") == 2


def test_paths_that_match_nothing_are_named_and_fail(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    import unicodedata

    archive.put_objects(bucket, {"u/caf\u00e9.nc": b"c" * 3, "u/[draft] v2.json": b"d" * 4},
                        storage_class="GLACIER")  # fmt: skip
    typo = cli("status", f"s3://{bucket}/u/typo*.nc")
    assert typo.returncode == EXIT_ERROR
    assert f"matched nothing: s3://{bucket}/u/typo*.nc" in typo.stderr
    typo_estimate = cli("estimate", f"s3://{bucket}/u/nothing.nc")
    assert typo_estimate.returncode == EXIT_ERROR
    assert "matched nothing" in typo_estimate.stderr
    nfd = unicodedata.normalize("NFD", f"s3://{bucket}/u/caf\u00e9.nc")
    literal = f"s3://{bucket}/u/[draft] v2.json"
    found = cli("status", nfd, literal, f"s3://{bucket}/u/gone.nc", "--json")
    assert found.returncode == 0, found.stderr
    out = json.loads(found.stdout)
    assert out["files"]["archived"] == 2
    assert out["missing"] == [f"s3://{bucket}/u/gone.nc"]
    assert f"matched nothing: s3://{bucket}/u/gone.nc" in found.stderr
