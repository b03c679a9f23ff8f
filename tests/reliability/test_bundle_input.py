"""Hostile input to `bundle`: links out of SRC, and storage options that try template execution."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from click.testing import CliRunner

from archivefs.catalog import Catalog
from archivefs.catalog.layout import catalog_dir
from archivefs.cli import EXIT_USAGE, main
from tests.reliability._support import bundle, make_tree, s3

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

SECRET = b"id_rsa: -----BEGIN PRIVATE KEY----- do not archive"


def _tree_with_links(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    make_tree(src, 8)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_bytes(SECRET)
    (src / "d0" / "key").symlink_to(home / ".ssh" / "id_rsa")  # a file link leaving SRC
    (src / "d1" / "dotssh").symlink_to(home / ".ssh")  # a directory link leaving SRC
    (src / "d2" / "alias.dat").symlink_to(src / "d0" / "f0000.dat")  # stays inside SRC
    return src


def test_links_leaving_src_are_skipped_and_reported(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    src = _tree_with_links(tmp_path)
    report = bundle(src, s3(archive), f"{bucket}/l")
    assert sorted(report.skipped_links) == ["d0/key", "d1/dotssh"]
    catalog = Catalog.load(s3(archive), catalog_dir(f"{bucket}/l"))
    names = {m.path.split("/l/", 1)[1] for m in catalog.members()}
    assert names == {*(p.relative_to(src).as_posix() for p in src.rglob("f*.dat")), "d2/alias.dat"}
    for key in catalog.bundles:
        assert SECRET not in s3(archive).cat_file(key)


def test_follow_symlinks_bundles_link_targets(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    src = _tree_with_links(tmp_path)
    report = bundle(src, s3(archive), f"{bucket}/f", follow_symlinks=True)
    assert report.skipped_links == []
    catalog = Catalog.load(s3(archive), catalog_dir(f"{bucket}/f"))
    assert f"{bucket}/f/d0/key" in catalog
    assert f"{bucket}/f/d1/dotssh/id_rsa" in catalog


def test_cli_says_what_it_skipped(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> None:
    src = _tree_with_links(tmp_path)
    options = json.dumps(archive.storage_options())
    base = ["--storage-options", options, "bundle", str(src)]
    result = CliRunner().invoke(main, [*base, f"s3://{bucket}/c", "--storage-class", "STANDARD"])
    assert result.exit_code == 0, result.output
    assert "skipped: d0/key (a link leaving SRC; --follow-symlinks to bundle it)" in result.output
    assert "skipped: d1/dotssh" in result.output


def test_storage_options_with_templates_fail_in_one_line(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    make_tree(tmp_path / "src", 3)
    template = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
    hostile = [
        {"fo": {"version": 1, "templates": {"u": template}, "refs": {"a": ["{{u}}"]}}},
        {"target_protocol": "reference", "fo": "x.json"},
        {"client_kwargs": {"endpoint_url": template}},
    ]
    for options in hostile:
        for command in (
            ["bundle", str(tmp_path / "src"), f"s3://{bucket}/x"],
            ["catalog", "rebuild", f"s3://{bucket}/x"],
            ["ls", f"s3://{bucket}/"],
        ):
            result = CliRunner().invoke(main, ["--storage-options", json.dumps(options), *command])
            assert result.exit_code == EXIT_USAGE, (options, command, result.output)
            assert "Traceback" not in result.output
            lines = [line for line in result.output.splitlines() if line.startswith("Error")]
            assert len(lines) == 1, result.output
            assert "--storage-options" in lines[0]
    assert archive.requests.counts() == {}
