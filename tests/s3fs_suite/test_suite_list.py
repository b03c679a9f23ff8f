"""The exceptions list of s3fs's suite (``suite.toml``) names tests that exist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.s3fs_suite.conftest import (
    SUITE_FILE,
    TEST_MODULES,
    FetchError,
    s3fs_version,
    suite_dir,
)


def test_every_listed_test_exists_with_a_reason() -> None:
    listed = tomllib.loads((Path(__file__).parent / SUITE_FILE).read_text())
    tests = suite_dir(s3fs_version())
    sources = {name: (tests / name).read_text() for name in TEST_MODULES}
    for section in ("internals", "s3fs_fails"):
        for key, reason in listed.get(section, {}).items():
            module, *names = key.split("[", 1)[0].split("::")
            assert module in sources, f"{SUITE_FILE} [{section}] {key}: no module {module}"
            assert re.search(rf"def {re.escape(names[-1])}\(", sources[module]), (
                f"{SUITE_FILE} [{section}] {key}: no such test in s3fs {s3fs_version()}"
            )
            assert len(reason) > 10, f"{SUITE_FILE} [{section}] {key}: give the reason"


def test_an_unreachable_index_fails_with_the_command_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline, the suite is not skipped: collection fails saying what to do."""
    monkeypatch.setenv("ARCHIVEFS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    with pytest.raises(FetchError) as raised:
        suite_dir(s3fs_version())
    message = str(raised.value)
    assert f"s3fs=={s3fs_version()}" in message
    assert "Fix: make the package index reachable" in message
    assert not (tmp_path / "s3fs-suite" / s3fs_version() / "s3fs" / "tests").exists()
