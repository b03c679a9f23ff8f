"""A server's abilities are asked once per filesystem, not once per object (issue 35, item 5).

On an endpoint other than AWS's, whether listings carry ``RestoreStatus`` is learned with
one LIST (the probe); a server that answers it lists restore states in bulk, and plans and
restores of N archived groups cost ceil(N/1000) LIST and no HEAD beyond that probe. A
server whose listings lack it (Ceph RGW, MinIO) is still described right, by HEAD.
"""

from __future__ import annotations

import math
import pickle
from typing import TYPE_CHECKING, Any

import fsspec
import s3fs

from archivefs.catalog.grouping import ByPrefix
from archivefs.catalog.writer import bundle_tree
from archivefs.model import Action, RestoreState
from tests.support.counts import s3_restores

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

PROBES = 1  # the one LIST that asks the server whether its listings carry restore states


def seed(archive: EmulatedArchive, bucket: str, n: int) -> list[str]:
    keys = {f"o/{i:05d}": f"object {i}".encode() for i in range(n)}
    archive.put_objects(bucket, keys, storage_class="GLACIER")
    return [f"{bucket}/{k}" for k in sorted(keys)]


def test_plan_and_restore_of_objects_list_in_bulk_after_one_probe(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    n = 1001  # two listing pages
    paths = seed(archive, bucket, n)
    archive.set_restore_delay(600)
    fs = make_fs(restore_status_in_listings=None)  # not AWS: nothing assumed
    archive.requests.clear()
    plan = fs.plan(paths)
    assert {g.action for g in plan} == {Action.RESTORE}
    assert archive.requests.count("HEAD") == 0
    assert archive.requests.count("LIST") == math.ceil(n / 1000) + PROBES
    archive.requests.clear()
    outcome = fs.restore(paths)
    assert outcome.requests_sent == n
    assert sum(s3_restores(archive).values()) == n
    assert archive.requests.count("HEAD") == 0
    assert archive.requests.count("LIST") <= math.ceil(n / 1000)  # asked once: not again
    archive.requests.clear()
    states = fs.probe(paths)  # the listings say which restores are in flight
    assert {s.restore for s in states.values() if s} == {RestoreState.RESTORING}
    assert archive.requests.count("HEAD") == 0


def test_plan_and_restore_of_bundles_list_in_bulk_after_one_probe(
    archive: EmulatedArchive, bucket: str, make_fs: Any, tmp_path: Path
) -> None:
    n = 24
    for i in range(n):
        (tmp_path / "src" / f"g{i:02d}").mkdir(parents=True)
        (tmp_path / "src" / f"g{i:02d}" / "f.dat").write_bytes(b"member %d" % i)
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    root = f"{bucket}/root"
    bundle_tree(fsspec.filesystem("file"), str(tmp_path / "src"), raw, root,
                policy=ByPrefix(depth=1), storage_class="GLACIER")  # fmt: skip
    archive.set_restore_delay(600)
    fs = make_fs(restore_status_in_listings=None)
    plan = fs.plan(f"{root}/**")  # the catalog read (pointer, shards): not counted below
    archive.requests.clear()
    plan = make_fs(restore_status_in_listings=None).plan(f"{root}/**")
    assert len(plan.groups) == n
    assert {g.action for g in plan} == {Action.RESTORE}
    assert archive.requests.count("HEAD") == 0
    assert archive.requests.count("LIST") == math.ceil(n / 1000) + PROBES
    archive.requests.clear()
    assert fs.restore(f"{root}/**").requests_sent == n
    assert archive.requests.count("HEAD") == 0
    assert archive.requests.count("LIST") <= math.ceil(n / 1000)


def test_listings_without_restore_status_are_completed_by_head(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    """The probe finds a server that ignores the attribute (as Ceph RGW and MinIO do):
    archived objects are asked with HEAD, so a restore in flight is never read as archived."""
    paths = seed(archive, bucket, 6)
    archive.set_restore_delay(600)
    make_fs().restore(paths[:2])
    archive.restore_status_in_listings = False
    fs = make_fs(restore_status_in_listings=None)
    archive.requests.clear()
    plan = fs.plan(paths)
    actions = {g.key: g.action for g in plan}
    assert actions == {p: Action.WAIT if p in paths[:2] else Action.RESTORE for p in paths}
    assert archive.requests.count("LIST") == 1 + PROBES
    assert archive.requests.count("HEAD") == 6
    archive.requests.clear()
    fs.plan(paths)  # asked once per filesystem: no second probe
    assert archive.requests.count("LIST") == 1


def test_what_the_filesystem_learned_travels_in_its_pickle(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    """A Dask worker's copy asks the server nothing the client already asked."""
    paths = seed(archive, bucket, 3)
    fs = make_fs(restore_status_in_listings=None)
    fresh = pickle.dumps(fs)  # nothing learned yet: the copy will ask
    fs.plan(paths)
    archive.requests.clear()
    copy = pickle.loads(pickle.dumps(fs))
    assert copy is not fs
    assert {g.action for g in copy.plan(paths)} == {Action.RESTORE}
    assert (archive.requests.count("LIST"), archive.requests.count("HEAD")) == (1, 0)
    archive.requests.clear()
    pickle.loads(fresh).plan(paths)
    assert (archive.requests.count("LIST"), archive.requests.count("HEAD")) == (1 + PROBES, 0)
