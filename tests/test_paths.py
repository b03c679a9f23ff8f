"""User cache locations."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from archivefs.paths import cache_dir, default_journal_path, private_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCHIVEFS_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_explicit_cache_dir_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCHIVEFS_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "mine"
    assert _mode(tmp_path / "mine") == 0o700
    assert not (tmp_path / "xdg").exists()


def test_xdg_cache_home_is_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "archivefs"
    assert _mode(tmp_path / "xdg") == 0o700
    assert _mode(tmp_path / "xdg" / "archivefs") == 0o700


def test_relative_xdg_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache_dir() == tmp_path / "home" / ".cache" / "archivefs"


def test_home_cache_is_the_default(tmp_path: Path) -> None:
    assert cache_dir() == tmp_path / "home" / ".cache" / "archivefs"
    assert _mode(tmp_path / "home" / ".cache" / "archivefs") == 0o700
    assert default_journal_path() == tmp_path / "home" / ".cache" / "archivefs" / "journal.sqlite"


def test_existing_directories_are_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    assert private_dir(shared / "a" / "b") == shared / "a" / "b"
    assert _mode(shared) == 0o755
    assert _mode(shared / "a") == 0o700
    assert _mode(shared / "a" / "b") == 0o700
    assert private_dir(shared / "a" / "b") == shared / "a" / "b"  # idempotent
