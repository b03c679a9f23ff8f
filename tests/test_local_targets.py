"""Local names of keys (``prefetch --to DIR``, promotion into a local hot store): a key is
chosen by whoever can write the bucket, so none may lead out of the target directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from archivefs.access.copies import local_target, local_targets
from archivefs.errors import InvalidPathError


@pytest.mark.parametrize(
    "key", ["b/../../etc/passwd", "b/./x", "b//x", "b/x/", "b/..", "b/x\0y", "b/a\\..\\x"]
)
def test_a_key_with_an_unsafe_part_is_refused_naming_it(tmp_path: Path, key: str) -> None:
    with pytest.raises(InvalidPathError, match="no safe local name") as caught:
        local_targets(tmp_path, ["b/fine", key])
    assert caught.value.path == key
    assert not any(tmp_path.iterdir())  # nothing written, no folder made


def test_a_symbolic_link_that_leads_out_is_refused(tmp_path: Path) -> None:
    base, outside = tmp_path / "base", tmp_path / "outside"
    (base / "b").mkdir(parents=True)
    outside.mkdir()
    (base / "b" / "out").symlink_to(outside)  # a folder that is a link out
    (base / "b" / "file").symlink_to(outside / "file")  # a file that is a link out
    for key in ("b/out/x", "b/file"):
        with pytest.raises(InvalidPathError, match="outside") as caught:
            local_target(base, key)
        assert caught.value.path == key


def test_links_that_stay_inside_are_followed_and_plain_keys_keep_their_names(
    tmp_path: Path,
) -> None:
    base = tmp_path / "base"
    (base / "b" / "real").mkdir(parents=True)
    (base / "b" / "alias").symlink_to(base / "b" / "real")
    found = local_targets(base, ["b/x/1.nc", "b/alias/2.nc", "c/3.nc"])
    assert found == {
        "b/x/1.nc": base.resolve() / "b" / "x" / "1.nc",
        "b/alias/2.nc": base.resolve() / "b" / "real" / "2.nc",
        "c/3.nc": base.resolve() / "c" / "3.nc",
    }


def test_many_keys_resolve_each_folder_once_not_each_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resolving walks every component of a path (an lstat each): 10,000 files of a
    prefetch spent seconds there when each was resolved twice."""
    resolved: list[Path] = []
    resolve = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return resolve(self, strict=strict)

    monkeypatch.setattr(Path, "resolve", counted)
    keys = [f"bucket/d{i % 3}/f{i}.dat" for i in range(300)]
    found = local_targets(tmp_path, keys)
    assert len(found) == 300
    assert len(resolved) == 1 + 3  # the directory, then each folder
