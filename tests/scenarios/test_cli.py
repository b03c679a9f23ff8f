"""The installed ``archivefs`` script on every provider: ls, status, estimate, restore,
prefetch and bundle with the provider's URLs, options checked per provider.

The account comes as its users give it (``tests/support/providers.py``: Azure from
the environment as adlfs reads it, the others with ``--storage-options``); counts are
the server's.
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
from tests.support.providers import (
    NO_RESTORES,
    PROVIDERS,
    cli_account,
    provider_params,
    reads,
    request_counts,
    restore_calls,
    restore_requests,
    seed,
)

if TYPE_CHECKING:
    from tests.support.providers import Provider

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"
GIB = 2**30
NOT_HERE = {"rgw": "test_rgw.py runs the CLI on radosgw, where GLACIER objects read at once"}

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def cli(provider: Provider, tmp_path: Path) -> Any:
    """``cli(*args, account=True)``: run the script with the provider's account."""
    env = {**os.environ, "ARCHIVEFS_RESTORE_TIME_SCALE": str(1 / 3600),
           # archivefs.testing set this in this process (else gcsfs probes each bucket
           # over gRPC); the script inherits it
           "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}  # fmt: skip
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AZURE_STORAGE_ACCOUNT_NAME"):
        env.pop(name, None)
    args, account_env = cli_account(provider)

    def invoke(*command: str, account: bool = True) -> subprocess.CompletedProcess[str]:
        tail = ["--journal", str(tmp_path / "j.sqlite"), *(args if account else [])]
        return subprocess.run(
            [ARCHIVEFS, *command, *tail], capture_output=True, text=True,
            env={**env, **account_env}, timeout=600, check=False,
        )  # fmt: skip

    return invoke


def _ok(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.lstrip().startswith(("{", "[")) else None


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_ls_status_estimate_restore_with_the_providers_urls(cli: Any, provider: Provider) -> None:
    spec, url = provider.spec, f"{provider.spec.protocol}://{provider.bucket}/d/"
    seed(provider, {"d/hot.bin": b"1"}, spec.hot_class)
    seed(provider, {f"d/a{i}.bin": b"12345" for i in range(3)}, spec.chunk_class)
    restores = 3 if spec.restores else 0  # else: readable at once, for a fee
    provider.server.requests.clear()

    listed = cli("ls", "-l", url)
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.splitlines()
    assert header.split() == ["SIZE", "CLASS", "STATE", "RETRIEVAL", "EXPIRES", "NAME"]
    rows = {line.rsplit("/", 1)[1]: line.split()[:4] for line in lines}
    assert rows["hot.bin"] == ["1", spec.hot_class, "hot", "-"]
    # a class that reads at once for a fee (GCS ARCHIVE) says so: it was shown as plain "hot"
    fee = "fee/GB" if spec.chunk_class in spec.fee_classes else "-"
    assert rows["a0.bin"] == (
        ["5", spec.chunk_class, "archived", "restore"]
        if restores
        else ["5", spec.chunk_class, "hot", fee]
    )
    first = provider.spec.first_look  # + registry
    assert request_counts(provider) == {
        **first,
        spec.list_op: first[spec.list_op] + spec.cli_probe_lists,
    }

    files = _ok(cli("status", "--json", url))["files"]
    assert (files.get("archived", 0), files["hot"]) == (restores, 4 - restores)
    cost = _ok(cli("estimate", "--json", url))
    assert cost["sheet"] == spec.sheet  # the provider's sheet unless --price-sheet
    assert cost["total"] > 0
    assert cost["restore_request_count"] == restores

    assert restore_calls(provider) == 0
    assert _ok(cli("restore", "--json", "--wait", url))["requests_sent"] == restores
    assert restore_calls(provider) == spec.restore_calls(restores)  # Azure: one Blob Batch
    assert restore_requests(provider, status=202) == restores
    again = _ok(cli("restore", "--json", url))  # restored (or hot): nothing sent, no error
    assert again["requests_sent"] == 0
    assert restore_requests(provider) == restores
    assert reads(provider, "d/") == 0  # listings and plans only: no object was read


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_fee_reads_are_estimated_and_prefetch_goes_through_the_budget(
    cli: Any, provider: Provider
) -> None:
    spec, url = provider.spec, f"{provider.spec.protocol}://{provider.bucket}/d/"
    assert spec.fee_class is not None
    seed(provider, {"d/hot.bin": b"1"}, spec.hot_class)
    seed(provider, {f"d/a{i}.bin": b"12345" for i in range(3)}, spec.fee_class)
    provider.server.requests.clear()
    cost = _ok(cli("estimate", "--json", url))
    assert cost["restore_request_count"] == 0
    retrieval, _ = spec.fee_classes[spec.fee_class]
    assert cost["components"]["retrieval"] == pytest.approx(15 / GIB * retrieval)
    text = cli("estimate", url)
    assert text.returncode == 0, text.stderr
    assert "3 objects read at once for a retrieval fee" in text.stdout

    refused = cli("prefetch", "--json", "--max-cost", "0.0000005", url)  # 3 GETs cost more
    assert refused.returncode == EXIT_BUDGET, refused.stderr
    assert "retrieval fee" in refused.stderr
    summary = _ok(cli("prefetch", "--json", "--max-cost", "1", url + "a0.bin"))
    assert summary["requests_sent"] == 0
    assert summary["readable_for_a_fee"] == 1
    assert reads(provider, "d/") == 0  # prefetch in place reads nothing
    assert restore_requests(provider) == 0


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_account_options_are_checked_per_provider(cli: Any, provider: Provider) -> None:
    spec, url = provider.spec, f"{provider.spec.protocol}://{provider.bucket}/"
    option, client = spec.cli_foreign_option
    bad = cli("ls", "--storage-options", json.dumps({option: "x"}), url, account=False)
    assert bad.returncode == EXIT_USAGE
    assert f"'{option}' is not a{'n' if client[0] in 'aeio' else ''} {client} option" in bad.stderr
    flag, fix = spec.cli_foreign_flag
    foreign = cli("ls", flag, "x", url)
    assert foreign.returncode == EXIT_USAGE
    assert fix in foreign.stderr
    other = "az://c/b" if spec.protocol != "az" else "s3://bucket/b"
    mixed = cli("status", url + "a", other)
    assert mixed.returncode == EXIT_USAGE
    assert "one provider's URLs per command" in mixed.stderr
    assert request_counts(provider) == {}  # all refused before any request


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_restore_of_what_reads_at_once_is_the_same_on_every_provider(
    cli: Any, provider: Provider
) -> None:
    """Named, an object that reads at once (hot, or a fee class: GCS ARCHIVE) is
    ``NotArchivedError`` (exit 1) on every provider, as docs/index.md says; a folder of
    them says "nothing to restore" (exit 0). A folder printed "0 restore requests sent"."""
    spec, root = provider.spec, f"{provider.spec.protocol}://{provider.bucket}/n/"
    seed(provider, {"n/hot.bin": b"1"}, spec.hot_class)
    if spec.fee_class:
        seed(provider, {"n/fee.bin": b"2"}, spec.fee_class)
    for name in ("hot.bin", "fee.bin") if spec.fee_class else ("hot.bin",):
        named = cli("restore", root + name)
        assert named.returncode == 1, named.stderr
        assert "which reads at once; there is nothing to restore" in named.stderr
        as_json = cli("--json", "restore", root + name)
        assert as_json.returncode == 1
        assert "nothing to restore" in json.loads(as_json.stdout)["error"]["problem"]
    folder = cli("restore", root)
    assert folder.returncode == 0, folder.stderr
    files = 2 if spec.fee_class else 1
    assert folder.stdout.startswith(f"nothing to restore: the {files} files in {files} objects")
    assert restore_requests(provider) == 0


@pytest.mark.parametrize("provider", provider_params(skip=NO_RESTORES), indirect=True)
def test_restore_and_estimate_refuse_a_speed_the_provider_lacks(
    cli: Any, provider: Provider
) -> None:
    seed(provider, {"t/a.bin": b"1"}, provider.spec.chunk_class)
    tier, words = provider.spec.cli_foreign_tier
    for command in ("restore", "estimate"):
        result = cli(command, f"{provider.spec.protocol}://{provider.bucket}/t/", "--tier", tier)
        assert result.returncode == EXIT_USAGE, (command, result.stderr)
        assert words in result.stderr, result.stderr
        assert "use one of:" in result.stderr
        assert "price sheet" not in result.stderr
    assert restore_requests(provider) == 0


@pytest.mark.parametrize("name", [n for n in PROVIDERS if PROVIDERS[n].sheet])
def test_advise_compares_the_sheets_classes_and_prices_fee_reads(name: str) -> None:
    """``advise`` on each provider's sheet (no server: prices only)."""
    spec = PROVIDERS[name]
    done = subprocess.run(
        [ARCHIVEFS, "advise", "--json", "--objects", "1000", "--size", "10MiB",
         "--price-sheet", spec.sheet],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    options = {o["name"]: o for o in _ok(done)["options"]}
    classes = {o["storage_class"] for o in options.values()}
    assert {spec.hot_class, *spec.fee_classes} - spec.not_advised <= classes
    if spec.cold_class:
        assert any(n.startswith(spec.cold_class) for n in options)
    for option in options.values():
        if option["storage_class"] in spec.fee_classes:  # no restore: its retrieval fee
            retrieval, get = spec.fee_classes[option["storage_class"]]
            assert option["per_access"] == pytest.approx(
                1000 * 10 / 1024 * retrieval + 1000 * get / 1000, rel=1e-6
            )


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_bundle_into_the_cold_class_then_list_and_estimate_members(
    cli: Any, provider: Provider, tmp_path: Path
) -> None:
    spec, root = provider.spec, f"{provider.spec.protocol}://{provider.bucket}/k"
    src = tmp_path / "src"
    for i in range(12):
        (src / f"d{i % 2}").mkdir(parents=True, exist_ok=True)
        (src / f"d{i % 2}" / f"f{i:02d}.dat").write_bytes(b"x" * 100)
    bundled = _ok(cli("bundle", "--json", str(src), root, "--group-by", "prefix:1",
                      "--storage-class", spec.chunk_class))  # fmt: skip
    assert bundled["bundles_written"] == 2
    bundles = provider.raw().find(f"{provider.bucket}/k/.archivefs/bundles/")
    assert len(bundles) == 2
    fs = provider.fs()
    assert {fs.info(b)["storage_class"] for b in bundles} == {spec.chunk_class}

    listed = cli("ls", "-l", f"{root}/d1/")
    assert listed.returncode == 0, listed.stderr
    rows = {tuple(line.split()[:2]) for line in listed.stdout.splitlines()[1:]}
    assert rows == {("100", spec.chunk_class)}
    cost = _ok(cli("estimate", "--json", f"{root}/d1/"))
    assert cost["restore_request_count"] == (1 if spec.restores else 0)  # one bundle
    assert cost["get_request_count"] == 6  # six members: read ranges of their bundle
    assert cost["bytes_read"] == 600
