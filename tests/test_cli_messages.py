"""What the `archivefs` command says and exits with when something is wrong (issue 31)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.cli import EXIT_BUDGET, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, EXIT_WAITING
from tests.support.processes import as_foreground_job

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=str(tmp_path / "aws-config"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "aws-credentials"),
               ARCHIVEFS_RESTORE_TIME_SCALE=str(1 / 3600))  # fmt: skip
    return env


@pytest.fixture
def cli(archive: EmulatedArchive, tmp_path: Path) -> Any:
    """The installed console script against the emulated archive (endpoint after the command)."""

    def invoke(*args: str, endpoint: str | None = None) -> subprocess.CompletedProcess[str]:
        tail = ["--endpoint-url", endpoint or archive.endpoint_url]
        tail += ["--journal", str(tmp_path / "j.sqlite")]
        return subprocess.run(
            [ARCHIVEFS, *args, *tail], capture_output=True, text=True, env=_env(tmp_path),
            timeout=600, check=False,
        )  # fmt: skip

    return invoke


def test_an_unknown_aws_profile_is_named_as_an_aws_profile(cli: Any, bucket: str) -> None:
    result = cli("ls", f"s3://{bucket}/", "--profile", "no-such-profile")
    assert result.returncode == EXIT_ERROR
    assert "AWS profile 'no-such-profile'" in result.stderr
    assert "OCI" not in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert result.stdout == ""


def test_an_unreachable_endpoint_is_one_line_on_every_command(
    cli: Any, bucket: str, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.nc").write_bytes(b"a" * 10)
    unreachable = "http://127.0.0.1:1"  # nothing listens on port 1
    commands = (["ls", f"s3://{bucket}/x/"],
                ["bundle", str(tmp_path / "src"), f"s3://{bucket}/x"],
                ["catalog", "show", f"s3://{bucket}/x"],
                ["catalog", "rebuild", f"s3://{bucket}/x"])  # fmt: skip
    # all at once: each spends its time in the client's back-off between connection retries
    with ThreadPoolExecutor(len(commands)) as pool:
        results = list(pool.map(lambda command: cli(*command, endpoint=unreachable), commands))
    for command, result in zip(commands, results, strict=True):
        assert result.returncode == EXIT_ERROR, (command, result.stderr)
        assert "Traceback" not in result.stderr, command
        assert result.stderr.strip().count("\n") == 0, (command, result.stderr)
        assert "http://127.0.0.1:1/" in result.stderr, command
        assert "check the endpoint" in result.stderr, command


def test_a_tier_or_days_the_store_cannot_take_is_a_usage_error(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_object(bucket, "cold", b"x", storage_class="GLACIER")
    url = f"s3://{bucket}/cold"
    for command in (["restore", url, "--tier", "Fast"], ["prefetch", url, "--tier", "Fast"],
                    ["estimate", url, "--tier", "Fast"],
                    ["estimate", "--objects", "3", "--size", "1MiB", "--storage-class",
                     "GLACIER", "--tier", "Fast"],
                    ["restore", url, "--days", "0"], ["prefetch", url, "--days", "-1"],
                    ["estimate", url, "--days", "0"]):  # fmt: skip
        result = cli(*command)
        assert result.returncode == EXIT_USAGE, (command, result.stderr)
        assert ("unknown restore tier 'Fast'. Fix: use one of: Expedited, Standard, Bulk."
                in result.stderr or "'--days': " in result.stderr), result.stderr  # fmt: skip
    azure_tier = cli("restore", "az://container/cold", "--tier", "Bulk")
    assert azure_tier.returncode == EXIT_USAGE
    assert "azure has no rehydrate priority 'Bulk'" in azure_tier.stderr
    s3_tier = cli("restore", url, "--tier", "High")  # Azure's priority, not an S3 tier
    assert s3_tier.returncode == EXIT_USAGE, s3_tier.stderr
    assert "unknown restore tier 'High'. Fix: use one of: Expedited" in s3_tier.stderr
    assert archive.requests.count("RestoreObject") == 0


def test_a_url_of_another_scheme_is_refused_not_read_as_s3(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_object(bucket, "d/a", b"a")
    assert cli("ls", f"s3://{bucket}/d/").stdout.split() == [f"{bucket}/d/a"]
    for command in (["ls", f"http://{bucket}/d/"], ["status", f"https://{bucket}/d/a"],
                    ["catalog", "show", f"http://{bucket}/d"]):  # fmt: skip
        result = cli(*command)
        assert result.returncode == EXIT_USAGE, (command, result.stderr)
        assert "archivefs does not read http" in result.stderr
        assert "--endpoint-url" in result.stderr
        assert result.stdout == ""


def test_a_reader_that_goes_away_ends_the_command_quietly_with_exit_0(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {f"many/{'n' * 80}{i:05d}": b"" for i in range(3000)})
    for flags in ([], ["-l"], ["--json"]):
        with subprocess.Popen(
            [ARCHIVEFS, "ls", *flags, f"s3://{bucket}/many/", "--endpoint-url",
             archive.endpoint_url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmp_path),
        ) as process:  # fmt: skip
            assert process.stdout is not None
            assert process.stderr is not None
            first = process.stdout.readline()  # `| head -1`: read a line, then go away
            process.stdout.close()
            errors = process.stderr.read().decode()
            assert process.wait(300) == 0, (flags, errors)
        assert first.strip(), flags
        assert errors == "", flags


def test_restore_and_prefetch_name_unmatched_paths_and_go_on_as_status_does(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_objects(bucket, {"m/a": b"a", "m/b": b"b"}, storage_class="GLACIER")
    gone = f"s3://{bucket}/m/typo"
    for command in ("status", "estimate", "restore", "prefetch"):
        url = f"s3://{bucket}/m/{'a' if command == 'restore' else 'b'}"
        timeout = ["--timeout", "600"] if command == "prefetch" else []
        result = cli(command, url, gone, *timeout)
        assert result.returncode == 0, (command, result.stderr)
        assert result.stderr.count(f"archivefs: matched nothing: {gone}") == 1, result.stderr
    assert archive.requests.count("RestoreObject") == 2  # a by restore, b by prefetch
    for command in ("status", "restore", "prefetch"):
        nothing = cli(command, gone)
        assert nothing.returncode == EXIT_ERROR, (command, nothing.stderr)
        said = f"archivefs: error: matched nothing: {gone}. Fix: check the spelling"
        assert said in nothing.stderr
    assert archive.requests.count("RestoreObject") == 2


def test_python_restore_leaves_unmatched_paths_out_when_told_of_them(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs import ArchiveFileSystem
    from archivefs.errors import ObjectNotFoundError

    archive.put_object(bucket, "p/a", b"a", storage_class="GLACIER")
    fs = ArchiveFileSystem(
        target_protocol="s3",
        target_options=archive.storage_options(),
        journal=str(tmp_path / "j.sqlite"),
        skip_instance_cache=True,
    )
    with pytest.raises(ObjectNotFoundError, match="do not exist"):
        fs.restore([f"{bucket}/p/a", f"{bucket}/p/typo"])
    assert archive.requests.count("RestoreObject") == 0
    told: list[tuple[str, ...]] = []
    result = fs.restore([f"{bucket}/p/a", f"{bucket}/p/typo"],
                        on_missing=lambda plan: told.append(plan.missing))  # fmt: skip
    assert told == [(f"{bucket}/p/typo",)]
    assert result.requests_sent == 1
    assert archive.requests.count("RestoreObject") == 1


def test_json_errors_are_a_json_object_on_stdout_with_the_exit_code(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_objects(bucket, {"j/a": b"a", "j/b": b"b"}, storage_class="GLACIER")
    archive.set_restore_delay(60)
    cases = [(["ls", f"s3://{bucket}/j/gone"], EXIT_ERROR),
             (["status", f"s3://{bucket}/j/typo*"], EXIT_ERROR),
             (["catalog", "show", f"s3://{bucket}/j"], EXIT_ERROR),
             (["restore", f"s3://{bucket}/j/a", "--tier", "Fast"], EXIT_USAGE),
             (["ls", "http://example.com/x"], EXIT_USAGE),
             (["restore", f"s3://{bucket}/j/a", "--max-cost", "0"], EXIT_BUDGET),
             (["restore", f"s3://{bucket}/j/b", "--wait", "--timeout", "0.5"],
              EXIT_WAITING)]  # fmt: skip
    for command, code in cases:
        result = cli("--json", *command)
        assert result.returncode == code, (command, result.stderr)
        error = json.loads(result.stdout)["error"]
        assert error["exit_code"] == code, command
        assert error["message"], (command, error)
        assert error["fix"], (command, error)
        assert error["problem"] in result.stderr, command  # the same words as the one line
    typo = json.loads(cli("--json", "status", f"s3://{bucket}/j/typo*").stdout)["error"]
    assert typo["problem"] == f"matched nothing: s3://{bucket}/j/typo*."
    assert typo["fix"] == "check the spelling (`archivefs ls` shows what exists)."


def _gcsfs_class_in_a_fresh_process(code: str, env_value: str | None) -> list[str]:
    """Run ``code`` in a process where gcsfs is not imported yet; the last line it prints
    is the variable's value and the class gcsfs chose."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "STORAGE_EMULATOR_HOST")}  # fmt: skip
    if env_value is not None:
        env["GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT"] = env_value
    tail = ("\nimport gcsfs\n"
            "print(os.environ.get('GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT'), "
            "gcsfs.GCSFileSystem.__name__)\n")  # fmt: skip
    completed = subprocess.run([sys.executable, "-c", "import os, sys\n" + code + tail],
                               capture_output=True, text=True, env=env, timeout=600,
                               check=False)  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.splitlines()


def test_gcs_against_another_endpoint_skips_gcsfs_grpc_bucket_probe(
    gcs_archive: Any, gcs_bucket: str
) -> None:
    gcs_archive.put_object(gcs_bucket, "d/a.bin", b"1")
    options = json.dumps(gcs_archive.storage_options())
    cli = ("from archivefs.cli import main\n"
           f"main(['ls', 'gs://{gcs_bucket}/d/', '--storage-options', {options!r}],"
           " standalone_mode=False)")  # fmt: skip
    lines = _gcsfs_class_in_a_fresh_process(cli, None)
    assert lines == [f"{gcs_bucket}/d/a.bin", "false GCSFileSystem"]
    python = ("from archivefs import ArchiveFileSystem\n"
              f"fs = ArchiveFileSystem(target_protocol='gs', target_options={options})\n"
              f"print(fs.ls('{gcs_bucket}/d/', detail=False))")  # fmt: skip
    assert _gcsfs_class_in_a_fresh_process(python, None) == [
        f"['{gcs_bucket}/d/a.bin']", "false GCSFileSystem"]  # fmt: skip
    # a value the user set is theirs (not probed here: nothing is listed)
    construct = python.rsplit("\n", 1)[0]
    assert _gcsfs_class_in_a_fresh_process(construct, "true") == ["true ExtendedGcsFileSystem"]


def test_every_emulated_archive_start_returns_the_archive() -> None:
    from archivefs.testing import EmulatedGcsArchive

    archive = EmulatedGcsArchive()
    try:
        assert archive.start() is archive
        assert archive.start() is archive  # already running
    finally:
        archive.stop()


def test_amounts_show_their_significant_digits(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    from archivefs.pricing.amounts import format_amount

    assert format_amount(0.0000123456, "USD") == "0.0000123 USD"
    assert format_amount(0.05, "USD") == "0.05 USD"
    assert format_amount(0.0, "USD") == "0.00 USD"
    assert format_amount(1234.5678) == "1234.57"
    archive.put_object(bucket, "tiny", b"x", storage_class="GLACIER")
    refused = cli("restore", f"s3://{bucket}/tiny", "--tier", "Bulk", "--max-cost", "0")
    assert refused.returncode == EXIT_BUDGET
    assert "0.0000 " not in refused.stderr
    assert "above the budget of 0.00 USD" in refused.stderr
    assert re.search(r"the estimated cost 0\.0*[1-9]\d{0,2} USD", refused.stderr), refused.stderr
    table = cli("estimate", f"s3://{bucket}/tiny", "--tier", "Bulk")
    assert table.returncode == 0, table.stderr
    assert "0.000000 " not in table.stdout
    total = next(line for line in table.stdout.splitlines() if line.startswith("total"))
    assert re.fullmatch(r"total\s+0\.0*[1-9]\d{0,2} USD", total), total


def test_every_entry_has_the_same_info_keys_members_and_objects_alike(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    from archivefs import ArchiveFileSystem
    from tests.reliability._support import bundle, make_tree, s3

    archive.put_object(bucket, "plain/cold.nc", b"c", storage_class="GLACIER")
    make_tree(tmp_path / "src", 4, dirs=1)
    bundle(tmp_path / "src", s3(archive), f"{bucket}/packed", storage_class="GLACIER")
    fs = ArchiveFileSystem(target_protocol="s3", target_options=archive.storage_options(),
                           skip_instance_cache=True)  # fmt: skip
    plain = fs.info(f"{bucket}/plain/cold.nc")
    keys = {"name", "size", "type", "StorageClass", "storage_class", "provider", "access",
            "restore", "restore_expiry", "archive_access"}  # fmt: skip
    assert keys <= set(plain)
    members = fs.ls(f"{bucket}/packed/d0", detail=True)
    found = list(fs.find(f"{bucket}/packed", detail=True).values())
    one = fs.info(members[0]["name"])
    assert len(members) == 4
    for entry in [*members, *found, one]:
        assert keys <= set(entry), sorted(keys - set(entry))
        assert entry["provider"] == plain["provider"] == "s3"


def _signal_masks(pid: int) -> dict[str, str]:
    """Each thread's blocked signals, and the process's ignored and caught ones (hex masks
    from /proc; SIGINT is 0x2): what a SIGINT that never became KeyboardInterrupt met."""
    masks: dict[str, str] = {}
    try:
        for task in sorted(Path(f"/proc/{pid}/task").iterdir()):
            status = dict(
                line.split(":\t", 1) for line in (task / "status").read_text().splitlines()
                if ":\t" in line
            )  # fmt: skip
            masks[f"{status['Name'].strip()} {task.name} SigBlk"] = status["SigBlk"].strip()
            masks.setdefault("SigIgn", status["SigIgn"].strip())
            masks.setdefault("SigCgt", status["SigCgt"].strip())
    except OSError as error:  # no /proc, or the process is gone
        masks["unreadable"] = str(error)
    return masks


def test_ctrl_c_while_waiting_says_the_restores_go_on_and_how_to_resume(
    cli: Any, archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    import signal

    archive.set_restore_delay(600)
    archive.put_objects(bucket, {"w/a": b"a", "w/b": b"b"}, storage_class="GLACIER")
    command = [ARCHIVEFS, "restore", f"s3://{bucket}/w/", "--wait", "--endpoint-url",
               archive.endpoint_url, "--journal", str(tmp_path / "j.sqlite")]  # fmt: skip
    inherited = tmp_path / "inherited.json"
    with subprocess.Popen(as_foreground_job(command, inherited), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=_env(tmp_path)) as process:  # fmt: skip
        assert process.stderr is not None
        first = process.stderr.readline()  # the first progress line: the requests are sent
        assert first.startswith("restore: 0/2 ready"), first
        masks = _signal_masks(process.pid)  # if it fails: whether SIGINT reached Python at all
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        assert process.wait(300) == EXIT_INTERRUPTED, (
            f"{rest}\nbefore SIGINT: {masks}; from this process: {inherited.read_text()}"
        )
    assert "Aborted!" not in rest
    assert "the restore requests already sent keep going at the store" in rest
    assert "run the same command again to resume" in rest
    assert archive.requests.count("RestoreObject") == 2
    again = cli("restore", f"s3://{bucket}/w/")
    assert again.returncode == 0, again.stderr
    assert archive.requests.count("RestoreObject") == 2  # resumed: nothing sent twice


def test_estimate_and_restore_refuse_a_tier_the_class_lacks_with_the_same_fix(
    cli: Any, archive: EmulatedArchive, bucket: str
) -> None:
    archive.put_object(bucket, "deep", b"x", storage_class="DEEP_ARCHIVE")
    url = f"s3://{bucket}/deep"
    said, codes = set(), set()
    for command in (["restore", url], ["estimate", url],
                    ["estimate", "--objects", "3", "--size", "1MiB",
                     "--storage-class", "DEEP_ARCHIVE"]):  # fmt: skip
        result = cli(*command, "--tier", "Expedited")
        codes.add(result.returncode)
        assert "the Expedited tier is not available for DEEP_ARCHIVE objects" in result.stderr
        assert "use tier='Standard' (within 12 hours) or tier='Bulk'" in result.stderr
        assert "price sheet" not in result.stderr, result.stderr
        said.add(result.stderr[result.stderr.index("the Expedited") :])
    assert len(said) == 1, said  # one check, one message, one exit code
    assert len(codes) == 1, codes
    assert 0 not in codes
    assert archive.requests.count("RestoreObject") == 0


def test_advise_tables_show_small_amounts_with_their_digits(tmp_path: Path) -> None:
    def advise(*args: str) -> str:
        result = subprocess.run(
            [ARCHIVEFS, "advise", "--objects", "1", "--size", "1MiB", *args],
            capture_output=True, text=True, env=_env(tmp_path), timeout=300, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return result.stdout

    for text in (advise(), advise("--price-sheet", "aws-us-east-1", "--price-sheet",
                                  "azure-eastus", "--reads-per-month", "1")):  # fmt: skip
        rows = [line.split() for line in text.splitlines() if "STANDARD_IA" in line]
        assert rows, text
        amounts = [cell for row in rows for cell in row if re.fullmatch(r"[\d.,]+", cell)]
        assert not [a for a in amounts if re.fullmatch(r"0\.0+", a)], text  # never 0.0000
        assert any(re.fullmatch(r"0\.0+[1-9]\d{0,2}", a) for a in amounts), text
