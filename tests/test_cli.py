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
    commands = ["ls", "status", "restore", "prefetch", "estimate", "advise", "bundle", "demo",
                "serve"]  # fmt: skip
    for command in ([], *([c] for c in commands), ["catalog"], ["catalog", "show"],
                    ["catalog", "rebuild"], ["sheet"], ["sheet", "list"],
                    ["sheet", "show"]):  # fmt: skip
        result = CliRunner().invoke(main, [*command, "--help"])
        assert result.exit_code == 0
        assert "Example" in result.output


def test_ls_long_shows_class_state_and_expiry(
    run: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_object(bucket, "d/cold", b"12345", storage_class="GLACIER")
    archive.put_object(bucket, "d/hot", b"1")
    archive.put_object(bucket, "d/thawed", b"123", storage_class="GLACIER")
    assert run("restore", f"s3://{bucket}/d/thawed", "--wait").exit_code == 0
    result = run("ls", "-l", f"s3://{bucket}/d/")
    assert result.exit_code == 0, result.output
    header, *rows = result.output.splitlines()
    assert header.split() == ["SIZE", "CLASS", "STATE", "RETRIEVAL", "EXPIRES", "NAME"]
    lines = sorted(rows, key=lambda line: line.rsplit("/", 1)[1])
    assert lines[0].split()[1:4] == ["GLACIER", "archived", "restore"]
    assert lines[0].endswith("d/cold")
    assert lines[1].split()[1:4] == ["STANDARD", "hot", "-"]
    # a restored copy's expiry says its time zone
    assert lines[2].split()[1:4] == ["GLACIER", "restored", "restore"]
    assert lines[2].split()[6:8] == ["UTC", f"{bucket}/d/thawed"]
    as_json = run("--json", "ls", f"s3://{bucket}/d/")
    assert {e["restore"] for e in json.loads(as_json.output)} == {"archived", "hot", "restored"}


def test_ls_of_a_glob_lists_what_it_matches_with_their_states(
    run: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from tests.reliability._support import bundle, make_tree, s3

    archive.put_objects(bucket, {f"g/{d}/{i}.nc": b"x" * i for d in "ab" for i in range(1, 4)},
                        storage_class="GLACIER")  # fmt: skip
    archive.put_object(bucket, "g/a/notes.txt", b"n")
    result = run("ls", "-l", f"s3://{bucket}/g/*/[12].nc")
    assert result.exit_code == 0, result.output
    rows = result.output.splitlines()[1:]  # under the header
    names = [line.split()[-1] for line in rows]
    assert names == [f"{bucket}/g/{d}/{i}.nc" for d in "ab" for i in (1, 2)]
    assert {tuple(line.split()[1:3]) for line in rows} == {("GLACIER", "archived")}
    recursive = json.loads(run("--json", "ls", "--recursive", f"s3://{bucket}/g/?").output)
    assert [e["name"] for e in recursive] == sorted(
        [f"{bucket}/g/{d}/{i}.nc" for d in "ab" for i in range(1, 4)] + [f"{bucket}/g/a/notes.txt"]
    )
    # the same entries, states included, as the recursive listing of their folder
    assert recursive == json.loads(run("--json", "ls", "--recursive", f"s3://{bucket}/g/").output)
    # members of a bundled tree, with their bundle's state (one probe per folder listed)
    files = make_tree(tmp_path / "src", 6)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/packed")
    top = sorted({name.split("/", 1)[0] for name in files if "/" in name})
    members = json.loads(run("--json", "ls", f"s3://{bucket}/packed/{top[0]}/*").output)
    assert members
    assert all(e["name"].startswith(f"{bucket}/packed/{top[0]}/") for e in members)
    nothing = run("ls", f"s3://{bucket}/g/*/typo*")
    assert nothing.exit_code == EXIT_ERROR
    assert f"matched nothing: s3://{bucket}/g/*/typo*" in nothing.output
    literal = "g/[x].nc"  # a name that holds a wildcard lists as itself
    archive.put_object(bucket, literal, b"l")
    assert run("ls", f"s3://{bucket}/{literal}").output.split() == [f"{bucket}/{literal}"]


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


def test_status_claims_say_who_restored_what(
    run: Any, archive: EmulatedArchive, bucket: str
) -> None:
    import socket

    archive.put_objects(bucket, {f"c/{i}": b"ab" for i in range(3)}, storage_class="GLACIER")
    archive.set_restore_delay(600)
    claimed = run("--bucket-claims", "restore", f"s3://{bucket}/c/0", f"s3://{bucket}/c/1")
    assert claimed.exit_code in (0, 3), claimed.output
    run("restore", f"s3://{bucket}/c/2")  # restored without claims
    assert archive.requests.count("PUT") == 1  # one ledger write for both claimed groups
    archive.requests.clear()

    out = json.loads(run("--json", "status", "--claims", f"s3://{bucket}/c/*").output)
    [mine] = out["claims"]["by_requester"]
    assert mine["requester"].startswith(socket.gethostname() + ":")
    assert (mine["tier"], mine["groups"]) == ("Standard", 2)
    assert mine["expected_ready"] is not None
    assert out["claims"]["unclaimed"] == [f"{bucket}/c/2"]
    assert _claim_gets(archive) == 1  # the bucket's ledger, read once for every group

    text = run("status", "--claims", f"s3://{bucket}/c/*").output
    assert f"claimed by {mine['requester']}: 2 groups at Standard" in text
    assert "1 restoring group with no claim in the bucket" in text
    archive.requests.clear()
    plain = json.loads(run("--json", "status", f"s3://{bucket}/c/*").output)
    assert "claims" not in plain
    assert _claim_gets(archive) == 0  # claims are read only when asked


def _claim_gets(archive: EmulatedArchive) -> int:
    return sum(1 for r in archive.requests.records
               if r.op == "GET" and "/claims/" in (r.key or ""))  # fmt: skip


def test_restore_from_stdin_list_and_wait(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"r/{i}": b"x" for i in range(5)}, storage_class="GLACIER")
    listing = "".join(f"s3://{bucket}/r/{i}\n" for i in range(5))
    result = run(
        "--json", "restore", "--from-file", "-", "--wait", "--timeout", "600", input=listing
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
    assert typo.exit_code == EXIT_USAGE  # a usage error, refused before any request
    assert "unknown restore tier 'Bluk'" in typo.output
    assert archive.requests.count("RestoreObject") == 0
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
    result = run("--json", "prefetch", f"s3://{bucket}/p/", "--to", str(target), "--timeout", "600")
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
        "restore", f"s3://{bucket}/bar/*", "--wait", "--timeout", "600",
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
    assert "6 files in 6 objects; 6 restore requests sent; 6 ready" in text


def test_progress_is_log_lines_without_a_terminal(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {f"bar/{i}": b"x" for i in range(3)}, storage_class="GLACIER")
    completed = subprocess.run(
        _restore_command(archive, bucket, tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
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
    assert missing_sheet.exit_code == EXIT_USAGE  # a file the user named: wrong usage
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
    assert len(listing.output.splitlines()) == 1 + 10  # a header, then the members
    assert all("GLACIER" in line for line in listing.output.splitlines()[1:])
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
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == EXIT_ERROR, completed.stderr
    assert "no usable AWS credentials" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert completed.stderr.strip().count("\n") == 0


def test_prefetch_promote_in_place(run: Any, archive: EmulatedArchive, bucket: str) -> None:
    archive.put_objects(bucket, {f"pp/{i}": b"z" * 10 for i in range(3)}, storage_class="GLACIER")
    result = run("--json", "prefetch", f"s3://{bucket}/pp/", "--promote", "--timeout", "600")
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
    written = sorted(p for p in target.rglob("*") if p.is_file() and p.parent != target)
    assert (target / ".archivefs-prefetch.json").is_file()  # what the next run may skip
    wanted = sorted(k for k in files if k.startswith("d02/rad/"))
    assert [p.relative_to(target / bucket / "arch").as_posix() for p in written] == wanted
    for name in wanted:
        assert (target / bucket / "arch" / name).read_bytes() == files[name]
    assert not list(target.rglob("*.zip"))
    assert archive.requests.count("RestoreObject") == 1  # one bundle: d02
    needed = sum(len(files[k]) for k in wanted)
    # the 4 adjacent members coalesced into one ranged GET: their bytes and 3 zip headers
    assert archive.requests.count("GET", bucket=bucket) - _catalog_gets(archive, bucket) == 1
    sent = archive.requests.bytes_sent("GET", bucket=bucket) - _catalog_bytes(archive, bucket)
    assert needed <= sent < needed + 3 * 200


def test_prefetch_to_a_directory_goes_through_the_budget(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {f"ia/{i}": b"i" * 1000 for i in range(3)},
                        storage_class="STANDARD_IA")  # fmt: skip
    archive.put_object(bucket, "cold", b"c" * 1000, storage_class="GLACIER")
    target = tmp_path / "scratch"
    archive.requests.clear()
    refused = cli("prefetch", f"s3://{bucket}/ia/", "--to", str(target), "--max-cost",
                  "0.000001", "--timeout", "120")  # fmt: skip
    assert refused.returncode == EXIT_BUDGET, refused.stderr
    assert "reading 3 object(s) that bill a retrieval fee" in refused.stderr
    assert not target.exists() or not any(target.rglob("*"))
    assert archive.requests.count("RestoreObject") == 0
    assert [r for r in archive.requests.records if r.op == "GET" and
            (r.key or "").startswith("ia/")] == []  # fmt: skip

    done = cli("prefetch", f"s3://{bucket}/ia/", f"s3://{bucket}/cold", "--to", str(target),
               "--max-cost", "1", "--timeout", "120", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert (summary["files_written"], summary["readable_for_a_fee"]) == (4, 3)
    assert summary["requests_sent"] == 1
    assert (target / bucket / "ia" / "2").read_bytes() == b"i" * 1000
    assert (target / bucket / "cold").read_bytes() == b"c" * 1000
    assert archive.requests.count("RestoreObject") == 1


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
    assert typo.stderr.count("matched nothing") == 1  # said once, as the error
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


def test_each_call_loads_only_the_catalogs_under_its_path(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs.catalog.writer import bundle_tree

    s3 = s3fs.S3FileSystem(**archive.storage_options(), skip_instance_cache=True)
    for name in ("a", "b", "c", "d"):
        (tmp_path / name / "x").mkdir(parents=True)
        (tmp_path / name / "x" / "f.nc").write_bytes(name.encode() * 10)
        bundle_tree(fsspec.filesystem("file"), str(tmp_path / name), s3, f"{bucket}/{name}",
                    storage_class="GLACIER")  # fmt: skip
    archive.requests.clear()
    listing = cli("ls", f"s3://{bucket}/b/x/")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.split() == [f"{bucket}/b/x/f.nc"]
    # The registry, then the one catalog asked about: its pointer and its file.
    assert archive.requests.count("GET", bucket=bucket) == 3
    archive.requests.clear()
    status = cli("status", f"s3://{bucket}/c/x/f.nc", "--json")
    assert json.loads(status.stdout)["files"]["archived"] == 1, status.stderr
    assert archive.requests.count("GET", bucket=bucket) == 3
    archive.requests.clear()
    everything = cli("ls", "-r", f"s3://{bucket}/")  # a listing above every root loads them all
    assert len(everything.stdout.split()) == 4, everything.stderr
    assert archive.requests.count("GET", bucket=bucket) == 1 + 2 * 4


def test_catalog_rebuild_json_and_a_closed_pipe(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    (tmp_path / "src" / "x").mkdir(parents=True)
    for i in range(3):
        (tmp_path / "src" / "x" / f"{i}.nc").write_bytes(b"z" * 10)
    assert cli("bundle", str(tmp_path / "src"), f"s3://{bucket}/r", "--storage-class",
               "STANDARD").returncode == 0  # fmt: skip
    rebuilt = cli("catalog", "rebuild", f"s3://{bucket}/r", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout) == {"members": 3, "bundles": 1}
    archive.put_objects(bucket, {f"many/{'n' * 80}{i:05d}": b"" for i in range(3000)})
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    with subprocess.Popen(
        [ARCHIVEFS, "ls", f"s3://{bucket}/many/", "--endpoint-url", archive.endpoint_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    ) as process:  # fmt: skip
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()  # like `| head -1`: read a line, then go away
        process.stdout.close()
        errors = process.stderr.read().decode()
        process.wait(300)
    assert first.startswith(f"{bucket}/many/".encode())
    assert errors == ""


def test_endpoint_url_is_checked_up_front_and_fixes_match_causes(cli: Any, tmp_path: Path) -> None:
    import http.server
    import threading

    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    for url, problem in [("127.0.0.1:42577", "has no http:// or https:// scheme"),
                         ("http://:9000", "names no host"),
                         ("http://127.0.0.1:99999", "is not a URL")]:  # fmt: skip
        completed = subprocess.run([ARCHIVEFS, "ls", "s3://b/", "--endpoint-url", url],
                                   capture_output=True, text=True, env=env, timeout=300,
                                   check=False)  # fmt: skip
        assert completed.returncode == EXIT_USAGE, completed.stderr
        assert problem in completed.stderr
        assert completed.stderr.strip().count("\n") == 0

    class NotS3(http.server.BaseHTTPRequestHandler):  # a web server, not an S3 endpoint
        def do_GET(self) -> None:
            body = b"<html>welcome</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotS3)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        completed = subprocess.run([ARCHIVEFS, "ls", "s3://b/x/", "--endpoint-url", endpoint],
                                   capture_output=True, text=True, env=env, timeout=300,
                                   check=False)  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert completed.returncode == EXIT_ERROR, completed.stderr
    assert "check that --endpoint-url" in completed.stderr
    assert "delete" not in completed.stderr.lower()


def test_restore_wait_shows_time_passing_the_window_and_the_next_check(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.set_restore_delay(3.0)
    archive.put_object(bucket, "w/deep", b"x" * 10, storage_class="DEEP_ARCHIVE")
    result = cli("restore", f"s3://{bucket}/w/deep", "--tier", "Bulk", "--wait",
                 "--timeout", "300")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("restore:")]
    # Deep Archive Bulk: "within 48 hours", scaled by the 1/3600 time scale to 48 s.
    assert all("expected within 48 s" in line for line in lines), lines
    waiting = [line for line in lines if "next check in" in line]
    assert waiting, lines  # one line per planned check, at least
    assert "0/1 ready" in waiting[0]
    assert "elapsed" in waiting[0]
    assert "1/1 ready" in lines[-1]
    assert "next check" not in lines[-1]


def test_counts_say_files_and_bundles_and_warn_about_over_restoring(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    files = _bundled_tree(archive, bucket, tmp_path)  # one bundle per day, 12 files each
    mag = sum(len(v) for k, v in files.items() if "/mag/" in k)
    restored = archive_bytes(archive, bucket)  # both day bundles, zip headers included
    status = cli("status", f"s3://{bucket}/arch/*/mag/")
    assert status.returncode == 0, status.stderr
    archived = next(line for line in status.stdout.splitlines() if line.startswith("archived"))
    assert archived.split()[1:3] == ["8", "files"]
    assert "in 2 bundles" in archived
    estimate = cli("estimate", f"s3://{bucket}/arch/*/mag/")
    assert estimate.returncode == 0, estimate.stderr
    assert "8 files;" in estimate.stdout
    assert "(2 restore requests)" in estimate.stdout
    warning = estimate.stderr
    assert f"({(restored / mag):.1f}x)" in warning
    assert f"Bundling s3://{bucket}/arch with --group-by prefix:2 would restore only them" \
        in warning  # fmt: skip
    as_json = json.loads(cli("estimate", f"s3://{bucket}/arch/*/mag/", "--json").stdout)
    assert as_json["selection"]["bytes_to_restore"] == restored
    assert as_json["selection"]["bytes_needed"]["archived"] == mag
    one_day = cli("status", f"s3://{bucket}/arch/d01/")  # a whole bundle: no warning
    assert "warning" not in one_day.stderr, one_day.stderr


def archive_bytes(archive: EmulatedArchive, bucket: str) -> int:
    """Total size of the bundles in ``bucket``."""
    listed = archive.client().list_objects_v2(Bucket=bucket, Prefix="arch/.archivefs/bundles/")
    return sum(o["Size"] for o in listed["Contents"])


def test_serve_runs_an_emulator_every_command_can_use(tmp_path: Path) -> None:
    import signal

    with subprocess.Popen(
        [ARCHIVEFS, "serve", "--bucket", "data", "--delay", "2", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as server:  # fmt: skip
        assert server.stdout is not None
        assert server.stderr is not None
        try:
            served = json.loads(server.stdout.readline())
            env = {**os.environ, **served["environment"]}
            assert served["endpoint_url"].startswith("http://127.0.0.1:")
            assert env["AWS_ENDPOINT_URL"] == served["endpoint_url"]
            assert float(env["ARCHIVEFS_RESTORE_TIME_SCALE"]) == pytest.approx(2 / 43200)

            def run(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([ARCHIVEFS, *args], capture_output=True, text=True,
                                      env=env, timeout=600, check=False)  # fmt: skip

            (tmp_path / "src" / "day1").mkdir(parents=True)
            for i in range(3):
                (tmp_path / "src" / "day1" / f"{i}.nc").write_bytes(bytes([i]) * 100)
            bundled = run("bundle", str(tmp_path / "src"), "s3://data/obs",
                          "--storage-class", "DEEP_ARCHIVE")  # fmt: skip
            assert bundled.returncode == 0, bundled.stderr
            status = run("status", "s3://data/obs/day1/", "--json")
            assert json.loads(status.stdout)["files"]["archived"] == 3, status.stderr
            prefetch = run("prefetch", "s3://data/obs/day1/", "--to", str(tmp_path / "out"),
                           "--timeout", "300")  # fmt: skip
            assert prefetch.returncode == 0, prefetch.stderr
            assert "expected within 2 s" in prefetch.stderr  # the scale matches the delay
            got = tmp_path / "out" / "data" / "obs" / "day1" / "2.nc"
            assert got.read_bytes() == bytes([2]) * 100
            listing = run("ls", "-l", "s3://data/obs/day1/")
            assert listing.returncode == 0, listing.stderr
            assert len(listing.stdout.splitlines()) == 1 + 3  # a header, then the files
            assert all("DEEP_ARCHIVE" in line for line in listing.stdout.splitlines()[1:])
        finally:
            server.send_signal(signal.SIGINT)
            assert server.wait(120) == 0, server.stderr.read()


def test_small_calls_import_only_what_they_use(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_object(bucket, "i/a.nc", b"a", storage_class="GLACIER")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "PYTHONPROFILEIMPORTTIME": "1"}  # fmt: skip
    completed = subprocess.run(
        [ARCHIVEFS, "ls", "-l", f"s3://{bucket}/i/", "--endpoint-url", archive.endpoint_url],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in completed.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}  # fmt: skip
    assert "archivefs.filesystem" in imported
    heavy = {"xarray", "dask", "zarr", "moto", "tenacity", "tornado", "yaml", "archivefs.pricing"}
    assert heavy & imported == set()


def test_s3a_urls_take_the_s3_options(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """s3a:// names S3 (providers/s3.py): --endpoint-url and --profile apply to it as to
    s3://. The options were chosen by the scheme's spelling, so s3a:// was taken for
    Azure: --profile was refused with Azure's advice and --endpoint-url dropped."""
    archive.put_object(bucket, "a/x.nc", b"12345", storage_class="GLACIER")
    credentials = tmp_path / "credentials"
    credentials.write_text("[emu]\naws_access_key_id = testing\naws_secret_access_key = testing\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_SHARED_CREDENTIALS_FILE=str(credentials), AWS_DEFAULT_REGION="us-east-1",
               AWS_CONFIG_FILE=str(tmp_path / "no-config"))  # fmt: skip
    completed = subprocess.run(
        [ARCHIVEFS, "ls", "-l", f"s3a://{bucket}/a/", "--endpoint-url", archive.endpoint_url,
         "--profile", "emu", "--journal", str(tmp_path / "j.sqlite")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    row = completed.stdout.splitlines()[1].split()  # under the header
    assert row[1:3] == ["GLACIER", "archived"]
    assert row[-1] == f"{bucket}/a/x.nc"


def test_prefetch_to_a_hot_bucket_takes_what_reads_at_once_within_the_budget(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    """``prefetch --to s3://HOT`` is ``prefetch`` then a copy: objects that read at once for
    a retrieval fee are part of the job and their fees are within --max-cost. It ran
    ``restore(promote=True)`` instead, which refused a selection with nothing to restore
    (only STANDARD_IA) as "nothing to restore" (exit 1), where ``prefetch`` without --to
    takes it."""
    archive.create_bucket("hot-copies")
    archive.put_object(bucket, "ia/a.nc", b"a" * 1000, storage_class="STANDARD_IA")
    refused = cli("prefetch", f"s3://{bucket}/ia/", "--to", "s3://hot-copies/c", "--max-cost",
                  "0", "--timeout", "300", "--json")  # fmt: skip
    assert refused.returncode == 3, refused.stderr
    assert json.loads(refused.stdout)["error"]["exit_code"] == 3
    assert archive.client().list_objects_v2(Bucket="hot-copies")["KeyCount"] == 0
    done = cli("prefetch", f"s3://{bucket}/ia/", "--to", "s3://hot-copies/c", "--timeout", "300",
               "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["groups"], summary["requests_sent"], summary["ready"]) == (1, 0, 1)
    assert summary["readable_for_a_fee"] == 1
    listed = archive.client().list_objects_v2(Bucket="hot-copies")
    assert listed["KeyCount"] == 1, listed
    archive.put_object(bucket, "gl/b.nc", b"b" * 10, storage_class="GLACIER")
    restored = cli("prefetch", f"s3://{bucket}/gl/", "--to", "s3://hot-copies/c", "--timeout",
                   "300", "--json")  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    summary = json.loads(restored.stdout)
    assert (summary["groups"], summary["requests_sent"], summary["ready"]) == (1, 1, 1)
    assert archive.client().list_objects_v2(Bucket="hot-copies")["KeyCount"] == 2
