"""Orphan bundles (issue 47): deletion never takes a bundle a running, unsaved run uses,
a re-run repairs a catalog naming a missing bundle, and on Oracle only real orphans
are reported. Runs are separate processes, as users start them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs.catalog import ByPrefix, Catalog
from archivefs.catalog.layout import bundle_dir, catalog_dir, registry_path
from archivefs.catalog.leases import RunLeases, lease_dir
from archivefs.catalog.writer import bundle_tree
from archivefs.stores import listed_key, remove_object
from tests.reliability._support import make_tree
from tests.support.providers import provider_params

if TYPE_CHECKING:
    from tests.support.providers import Provider

pytestmark = pytest.mark.timeout(900)
WORKER = Path(__file__).parent.parent / "_orphan_race_worker.py"
TWO_HOURS = 7200.0  # older than the orphan age (1 h) by the store's clock


def _config(provider: Provider, src: Path, root: str, **extra: Any) -> dict[str, Any]:
    return {
        "protocol": provider.spec.protocol,
        "storage_options": provider.storage_options(),
        "src": str(src),
        "dest": root,
        "storage_class": provider.spec.hot_class,
        **extra,
    }


def _start(config: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _finish(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err.decode()
    report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return report


def _killed_before_its_save(provider: Provider, root: str) -> None:
    """What a run killed after its uploads and before its catalog save leaves: bundles only."""
    raw = provider.raw()
    raw.rm(catalog_dir(root), recursive=True)
    remove_object(raw, registry_path(provider.bucket))


def _read_back(provider: Provider, root: str, files: dict[str, bytes]) -> None:
    fs = provider.fs()
    got = fs.cat([f"{root}/{name}" for name in files])
    assert got == {f"{root}/{name}": data for name, data in files.items()}


@pytest.mark.parametrize("provider", provider_params("s3", "oracle"), indirect=True)
def test_orphan_deletion_spares_the_bundles_a_resumed_unsaved_run_reuses(
    provider: Provider, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "a", 40)  # d0..d3: one bundle each
    root = f"{provider.bucket}/r"
    _finish(_start(_config(provider, tmp_path / "a", root)))
    raw = provider.raw()
    first = Catalog.load(raw, catalog_dir(root))
    old_d3 = first.lookup(f"{root}/d3/f0003.dat").bundle  # type: ignore[union-attr]
    _killed_before_its_save(provider, root)
    assert provider.server.backdate(provider.bucket, "r/.archivefs/bundles/", TWO_HOURS) == 4
    changed = tmp_path / "a" / "d3" / "f0003.dat"
    files["d3/f0003.dat"] = b"changed since the killed run " * 9
    changed.write_bytes(files["d3/f0003.dat"])

    # run A again: it reuses d0..d2 by content (old objects) and stops before d3
    gate = {
        "folder": "/d3/",
        "reached": str(tmp_path / "reached"),
        "release": str(tmp_path / "release"),
    }
    resumed = _start(_config(provider, tmp_path / "a", root, gate=gate))
    deadline = time.monotonic() + 600
    while not Path(gate["reached"]).exists():
        assert resumed.poll() is None, resumed.communicate()[1].decode()
        assert time.monotonic() < deadline
        time.sleep(0.05)

    # meanwhile run C bundles other files into the same root and deletes orphans
    others = make_tree(tmp_path / "c", 8, seed=1, dirs=1)
    others = {f"x{name}": data for name, data in others.items()}
    (tmp_path / "c" / "d0").rename(tmp_path / "c" / "xd0")
    deleting = _finish(_start(_config(provider, tmp_path / "c", root, orphans="delete")))
    # only the superseded d3 bundle is an orphan it may delete: A leased d0..d2
    assert [key for key, deleted in deleting["orphans"] if deleted] == [old_d3]

    Path(gate["release"]).touch()
    resumed_report = _finish(resumed)
    assert len(resumed_report["reused"]) == 3
    assert len(resumed_report["written"]) == 1
    catalog = Catalog.load(raw, catalog_dir(root))
    raw.invalidate_cache()
    listed = sorted(listed_key(raw, k) for k in raw.find(bundle_dir(root)))
    assert sorted(catalog.bundles) == listed  # every bundle there is recorded, none missing
    _read_back(provider, root, {**files, **others})  # 0 members lost
    assert raw.find(lease_dir(root)) == []  # both runs released their leases


@pytest.mark.parametrize("provider", provider_params("s3", "oracle"), indirect=True)
def test_a_rerun_repairs_a_catalog_that_names_a_missing_bundle(
    provider: Provider, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "a", 24, dirs=3)
    root = f"{provider.bucket}/m"
    raw = provider.raw()

    def run() -> Any:
        klass = provider.spec.hot_class
        local = fsspec.filesystem("file")
        return bundle_tree(local, str(tmp_path / "a"), raw, root, policy=ByPrefix(depth=1),
                           storage_class=klass)  # fmt: skip

    run()
    catalog = Catalog.load(raw, catalog_dir(root))
    gone = catalog.lookup(f"{root}/d1/f0001.dat").bundle  # type: ignore[union-attr]
    remove_object(raw, gone)  # an operator, a lifecycle rule, an orphan deletion race
    report = run()
    assert report.bundles_written == [gone]  # the same bytes, the same name, uploaded again
    assert len(report.bundles_reused) == 2
    _read_back(provider, root, files)


# Oracle: ocifs lists bucket@namespace/key and times as timeModified; neither may make
# every earlier bundle an orphan, hide a real one's age, or defeat a resumed run's reuse
@pytest.mark.parametrize("provider", provider_params("s3", "oracle"), indirect=True)
def test_only_real_orphans_are_reported_deleted_when_old_and_uploads_reused(
    provider: Provider, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "a", 30, dirs=3)
    root = f"{provider.bucket}/o"
    raw = provider.raw()

    def run(**kwargs: Any) -> Any:
        klass = provider.spec.hot_class
        local = fsspec.filesystem("file")
        return bundle_tree(local, str(tmp_path / "a"), raw, root, policy=ByPrefix(depth=1),
                           storage_class=klass, **kwargs)  # fmt: skip

    assert len(run().bundles_written) == 3
    again = run(orphans="delete", orphan_age=0)
    assert again.orphans == []  # every bundle is recorded: 0 false orphans
    assert (len(again.bundles_reused), again.bundles_written) == (3, [])

    old = Catalog.load(raw, catalog_dir(root)).lookup(f"{root}/d1/f0001.dat").bundle  # type: ignore[union-attr]
    files["d1/f0001.dat"] = b"rewritten " * 30
    (tmp_path / "a" / "d1" / "f0001.dat").write_bytes(files["d1/f0001.dat"])
    changed = run(orphans="delete")
    assert [(o.key, o.deleted) for o in changed.orphans] == [(old, False)]  # young: kept
    assert provider.server.backdate(provider.bucket, "o/.archivefs/bundles/", TWO_HOURS) == 4
    swept = run(orphans="delete")
    assert [(o.key, o.deleted) for o in swept.orphans] == [(old, True)]  # a real, old orphan
    raw.invalidate_cache()
    assert not raw.exists(old)
    _read_back(provider, root, files)

    _killed_before_its_save(provider, root)
    resumed = run()
    assert (len(resumed.bundles_reused), resumed.bundles_written) == (3, [])  # by content
    assert resumed.orphans == []
    _read_back(provider, root, files)


@pytest.mark.parametrize("provider", provider_params("s3"), indirect=True)
def test_a_live_lease_protects_a_stale_one_does_not_and_an_unreadable_one_stops_deletion(
    provider: Provider, tmp_path: Path
) -> None:
    files = make_tree(tmp_path / "a", 12, dirs=2)
    root = f"{provider.bucket}/l"
    raw = provider.raw()

    def run() -> Any:
        klass = provider.spec.hot_class
        local = fsspec.filesystem("file")
        return bundle_tree(local, str(tmp_path / "a"), raw, root, policy=ByPrefix(depth=1),
                           storage_class=klass, orphans="delete")  # fmt: skip

    run()
    old = Catalog.load(raw, catalog_dir(root)).lookup(f"{root}/d0/f0000.dat").bundle  # type: ignore[union-attr]
    files["d0/f0000.dat"] = b"new bytes " * 20
    (tmp_path / "a" / "d0" / "f0000.dat").write_bytes(files["d0/f0000.dat"])
    run()  # the old d0 bundle is now an orphan
    provider.server.backdate(provider.bucket, "l/.archivefs/bundles/", TWO_HOURS)
    RunLeases(raw, root).take(old)  # another run, running: it is about to reuse it
    assert [(o.key, o.deleted) for o in run().orphans] == [(old, False)]

    junk = f"{lease_dir(root)}/notes.txt"
    raw.pipe_file(junk, b"?")  # a name that is not a lease: what it protects is unknown
    provider.server.backdate(provider.bucket, "l/.archivefs/leases/", TWO_HOURS)
    assert [(o.key, o.deleted) for o in run().orphans] == [(old, False)]

    remove_object(raw, junk)  # the lease alone, stale (a killed run's): protects nothing
    assert [(o.key, o.deleted) for o in run().orphans] == [(old, True)]
    raw.invalidate_cache()
    assert raw.find(lease_dir(root)) == []  # the stale lease was removed too
    _read_back(provider, root, files)
