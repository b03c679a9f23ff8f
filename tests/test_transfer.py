"""Downloads in ranged parts (archivefs.access.transfer): request counts, the memory bound, and
no partial file left under the final name when a part fails."""

from __future__ import annotations

import hashlib
import math
import os
import tracemalloc
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.callbacks import Callback

from archivefs import ArchiveFileSystem
from archivefs.access.transfer import CHUNK, PART_CONCURRENCY, PART_SIZE
from archivefs.errors import ArchiveError, InvalidOptionsError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from archivefs.testing import EmulatedArchive, RemoteArchive

MiB = 2**20


@pytest.fixture(scope="module")
def remote() -> Iterator[RemoteArchive]:
    """The emulated archive in its own process: this process's traced memory is the client's."""
    from archivefs.testing import RemoteArchive

    with RemoteArchive() as archive:
        yield archive


def _fs(archive: Any, tmp_path: Path, **kwargs: Any) -> ArchiveFileSystem:
    return ArchiveFileSystem(
        target_protocol="s3",
        target_options=archive.storage_options(),
        journal=str(tmp_path / "journal.sqlite"),
        restore_status_in_listings=True,
        skip_instance_cache=True,
        **kwargs,
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while piece := file.read(MiB):
            digest.update(piece)
    return digest.hexdigest()


@pytest.mark.parametrize("verb", ["get", "prefetch_to"])
def test_a_300_mib_object_is_38_ranged_gets_in_bounded_memory(
    remote: RemoteArchive, tmp_path: Path, verb: str
) -> None:
    bucket = f"big-{verb.replace('_', '-')}"
    remote.create_bucket(bucket)
    size = 300 * MiB + 12345
    data = os.urandom(size)
    expected = hashlib.sha256(data).hexdigest()
    remote.put_object(bucket, "large.bin", data)
    del data
    afs = _fs(remote, tmp_path)
    remote.requests.clear()
    out = tmp_path / "out"
    tracemalloc.start()
    try:
        if verb == "get":
            out.mkdir()
            afs.get(f"{bucket}/large.bin", str(out / "large.bin"))
            written = out / "large.bin"
        else:
            afs.prefetch(f"{bucket}/large.bin", to=out)
            written = out / bucket / "large.bin"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 256 * MiB  # issue 35's bound
    # each part's body goes to disk as it arrives, a chunk at a time: per part in flight,
    # one chunk and the connection's read buffer (aiobotocore's: 2 MiB at most)
    assert peak <= PART_CONCURRENCY * (CHUNK + 2 * MiB) + 4 * MiB, peak / MiB
    assert _sha256(written) == expected
    gets = remote.requests.count("GET", key="large.bin")
    assert gets == math.ceil(size / PART_SIZE)  # 38: one per 8 MiB part
    # the one HEAD is the path's expansion (get) or the plan's probe (prefetch), not the download's
    assert remote.requests.count("HEAD", bucket=bucket) == 1
    records = remote.requests.records
    assert sum(r.bytes_sent for r in records if r.op == "GET" and r.key == "large.bin") == size
    assert sorted(p.name for p in written.parent.iterdir()) == ["large.bin"]


def test_many_large_objects_share_one_bound_on_parts_in_flight(
    remote: RemoteArchive, tmp_path: Path
) -> None:
    bucket = "big-many"
    remote.create_bucket(bucket)
    sizes = {f"f{i}.bin": 40 * MiB + i for i in range(8)}
    remote.put_objects(bucket, {k: os.urandom(n) for k, n in sizes.items()})
    afs = _fs(remote, tmp_path, part_size=4 * MiB, part_concurrency=4)
    remote.requests.clear()
    tracemalloc.start()
    try:
        afs.get(f"{bucket}/", str(tmp_path / "out") + "/", recursive=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 64 * MiB  # 4 parts of 4 MiB in flight, whatever the file count
    for key, n in sizes.items():
        assert (tmp_path / "out" / key).stat().st_size == n
    for key, n in sizes.items():
        assert remote.requests.count("GET", key=key) == math.ceil(n / (4 * MiB))


def test_many_small_bundled_files_are_written_block_by_block_in_bounded_memory(
    remote: RemoteArchive, tmp_path: Path
) -> None:
    from archivefs.catalog import ByPrefix, Catalog
    from archivefs.catalog.layout import catalog_dir
    from archivefs.member_reads import BLOCK
    from tests.reliability._support import bundle, s3

    bucket = "small-bundled"
    remote.create_bucket(bucket)
    files = {f"d0/f{i:04d}.dat": os.urandom(64 * 1024) for i in range(1200)}  # 75 MiB
    for name, data in files.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_bytes(data)
    root = f"{bucket}/packed"
    bundle(tmp_path / "src", s3(remote), root, policy=ByPrefix(depth=1, target_size=2**40))
    (key,) = Catalog.load(s3(remote), catalog_dir(root)).bundles
    afs = _fs(remote, tmp_path, part_concurrency=2)
    afs.info(f"{root}/d0/f0000.dat")  # the catalog is read before the measurement
    remote.requests.clear()
    out = tmp_path / "out"
    tracemalloc.start()
    try:
        afs.get(f"{root}/", str(out) + "/", recursive=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # two blocks in flight (part_concurrency), each held with its members until written
    assert peak <= 2 * 2 * BLOCK + 8 * MiB, peak / MiB
    assert {n: (out / n).read_bytes() for n in files} == files
    gets = remote.requests.count("GET", key=key.split("/", 1)[1])
    assert gets == math.ceil(sum(map(len, files.values())) / BLOCK)  # 10, one per 8 MiB


def test_small_and_empty_objects_are_one_get_each(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    archive.put_object(bucket, "small", b"x" * 1000)
    archive.put_object(bucket, "empty", b"")
    afs = make_fs()
    archive.requests.clear()
    afs.get([f"{bucket}/small", f"{bucket}/empty"], str(tmp_path) + "/")
    assert (tmp_path / "small").read_bytes() == b"x" * 1000
    assert (tmp_path / "empty").read_bytes() == b""
    assert archive.requests.count("GET", key="small") == 1
    assert archive.requests.count("GET", key="empty") == 1
    assert archive.requests.count("HEAD") == 0


def test_a_failing_part_leaves_no_file_under_the_final_name(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    data = os.urandom(5 * MiB)
    archive.put_object(bucket, "obj", data)
    afs = make_fs(part_size=MiB, part_concurrency=2)
    target = tmp_path / "obj"
    afs.get(f"{bucket}/obj", str(target))
    assert target.read_bytes() == data
    target.unlink()
    # every GET drops its connection after 1,000 bytes of its body (retries too)
    archive.faults.reset_connection(fraction=1.0, ops=["GET"], after_bytes=1000)
    with pytest.raises(OSError, match=f"{bucket}/obj"):
        afs.get(f"{bucket}/obj", str(target))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("obj")]


def test_a_dropped_connection_resumes_its_part_where_it_stopped(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    data = os.urandom(3 * MiB)
    archive.put_object(bucket, "obj", data)
    afs = make_fs(part_size=MiB, part_concurrency=1)
    afs.info(f"{bucket}/obj")  # the catalog is read now, so the fault meets the first part
    archive.requests.clear()
    archive.faults.reset_connection(count=1, ops=["GET"], after_bytes=1000)
    afs.get(f"{bucket}/obj", str(tmp_path / "obj"))
    assert (tmp_path / "obj").read_bytes() == data
    gets = [r for r in archive.requests.records if r.op == "GET" and r.key == "obj"]
    assert len(gets) == 3 + 1  # one per part, and the rest of the dropped one
    dropped, resumed = gets[0], gets[1]
    assert dropped.range == f"bytes=0-{MiB - 1}"
    assert resumed.range is not None
    assert resumed.range.endswith(f"-{MiB - 1}")
    resumed_from = int(resumed.range.removeprefix("bytes=").split("-")[0])
    assert 0 < resumed_from <= 1000  # what arrived before the drop is not fetched again


def test_an_object_changed_between_parts_is_an_error_naming_it(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    archive.put_object(bucket, "obj", os.urandom(3 * MiB))
    afs = make_fs(part_size=MiB, part_concurrency=1)

    class ReplacedAfterFirstPart(Callback):
        def call(self, *args: Any, **kwargs: Any) -> None:
            if self.value == MiB:  # another writer replaces the object between the parts
                archive.put_object(bucket, "obj", os.urandom(3 * MiB))

    target = tmp_path / "obj"
    with pytest.raises(ArchiveError, match="changed while it was downloaded") as excinfo:
        afs.get_file(f"{bucket}/obj", str(target), callback=ReplacedAfterFirstPart())
    assert "download it again" in str(excinfo.value)
    assert f"{bucket}/obj" in str(excinfo.value)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("obj")]


@pytest.mark.parametrize("options", [{"part_size": 0}, {"part_concurrency": "10"}])
def test_part_options_are_checked(
    make_fs: Callable[..., ArchiveFileSystem], options: dict[str, Any]
) -> None:
    with pytest.raises(InvalidOptionsError, match="positive whole number"):
        make_fs(**options)


def _served(
    request: pytest.FixtureRequest, provider: str, **options: Any
) -> tuple[ArchiveFileSystem, str, Callable[[dict[str, bytes]], None]]:
    """A filesystem on ``provider``'s emulator, a new bucket there, and how to put objects."""
    if provider == "gcs":
        gcs = request.getfixturevalue("gcs_archive")
        bucket = gcs.create_bucket()

        def put(objects: dict[str, bytes]) -> None:
            for name, data in objects.items():
                gcs.put_object(bucket, name, data)

        return request.getfixturevalue("make_gs")(**options), bucket, put
    if provider == "azure":
        azure = request.getfixturevalue("azure_archive")
        container = azure.create_container()
        afs = request.getfixturevalue("make_az")(**options)
        return afs, container, lambda objects: azure.put_blobs(container, objects)
    oracle = request.getfixturevalue("oracle_archive")
    bucket = oracle.create_bucket()

    def put_oci(objects: dict[str, bytes]) -> None:
        for name, data in objects.items():
            oracle.put_object(bucket, name, data)

    return request.getfixturevalue("make_oci")(**options), bucket, put_oci


@pytest.mark.parametrize("provider", ["gcs", "azure", "oracle"])
def test_every_provider_downloads_empty_small_and_many_part_objects(
    request: pytest.FixtureRequest, tmp_path: Path, provider: str
) -> None:
    objects = {"empty": b"", "small": b"s" * 1000, "parts": os.urandom(3 * MiB + 5)}
    afs, bucket, put = _served(request, provider, part_size=MiB)
    put(objects)
    out = tmp_path / "out"
    out.mkdir()
    afs.get([f"{bucket}/{name}" for name in objects], str(out) + "/")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == objects


@pytest.mark.parametrize("provider", ["gcs", "azure", "oracle"])
def test_every_provider_refuses_an_object_changed_between_parts(
    request: pytest.FixtureRequest, tmp_path: Path, provider: str
) -> None:
    """The later parts are pinned to the first part's ETag (GCS: generation); the store's
    412 is the same error on every provider."""
    afs, bucket, put = _served(request, provider, part_size=MiB, part_concurrency=1)
    put({"obj": os.urandom(3 * MiB)})

    class ReplacedAfterFirstPart(Callback):
        def call(self, *args: Any, **kwargs: Any) -> None:
            if self.value == MiB:  # another writer replaces the object between the parts
                put({"obj": os.urandom(3 * MiB)})

    target = tmp_path / "obj"
    with pytest.raises(ArchiveError, match="changed while it was downloaded"):
        afs.get_file(f"{bucket}/obj", str(target), callback=ReplacedAfterFirstPart())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("obj")]


def test_prefetch_to_reports_every_byte_of_large_members_downloaded_at_once(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    """Issue 48: members over one part are downloaded concurrently, and each one's bytes are
    added to the report (they once overwrote one running total: one file's size reported)."""
    from archivefs.catalog import ByPrefix
    from archivefs.member_reads import BLOCK
    from tests.reliability._support import bundle, s3

    files = {f"d/big{i}.bin": os.urandom(BLOCK + MiB + i) for i in range(3)}
    files["d/small.bin"] = b"s" * 1000
    for name, data in files.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_bytes(data)
    root = f"{bucket}/packed"
    bundle(tmp_path / "src", s3(archive), root, policy=ByPrefix(depth=1, target_size=2**40))
    archive.put_object(bucket, "plain.bin", os.urandom(2 * MiB + 7))
    afs = make_fs()
    paths = [f"{root}/{name}" for name in files] + [f"{bucket}/plain.bin"]
    result = afs.prefetch(paths, to=tmp_path / "out")
    assert result.copied is not None
    written = {p: (tmp_path / "out" / p).stat().st_size for p in paths}
    assert written == {f"{root}/{n}": len(d) for n, d in files.items()} | {
        f"{bucket}/plain.bin": 2 * MiB + 7
    }
    assert result.copied.bytes_written == sum(written.values())
    assert len(result.copied.files) == 5


@pytest.mark.parametrize("known_by", ["listing", "head", "prefetch_plan"])
def test_parts_of_an_object_a_listing_or_head_described_all_start_at_once(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
    known_by: str,
) -> None:
    """Issue 49: with the size and ETag known, no part waits for the first part's headers:
    every part reaches the server before the first part's answer can have left it."""
    data = os.urandom(3 * MiB + 5)
    archive.put_object(bucket, "d/obj", data)
    afs = make_fs(part_size=MiB)
    out = tmp_path / "out"
    if known_by == "listing":
        afs.ls(f"{bucket}/d")
    elif known_by == "head":
        afs.info(f"{bucket}/d/obj")
    archive.requests.clear()
    archive.set_latency(1.0)
    try:
        if known_by == "prefetch_plan":
            afs.prefetch(f"{bucket}/d/obj", to=out)
            written = out / bucket / "d" / "obj"
        else:
            afs.get(f"{bucket}/d/obj", str(out / "obj"))
            written = out / "obj"
    finally:
        archive.set_latency(0.0)
    assert written.read_bytes() == data
    gets = [r for r in archive.requests.records if r.op == "GET" and r.key == "d/obj"]
    assert len(gets) == 4  # one per MiB part, none sent twice
    first_answered = min(r.time for r in gets) + 1.0  # the server held every answer 1 s
    assert all(r.time < first_answered for r in gets), [r.time - gets[0].time for r in gets]
    heads = 0 if known_by == "listing" else 1  # the one HEAD is the path's check, not the part's
    assert archive.requests.count("HEAD", key="d/obj") == heads


def test_parts_of_an_object_changed_since_it_was_listed_are_read_again_from_the_new_one(
    archive: EmulatedArchive, bucket: str, make_fs: Callable[..., ArchiveFileSystem], tmp_path: Path
) -> None:
    """A listing's ETag that no longer holds: the pinned parts are refused (412), and the
    object is downloaded again as an unknown one, its first part saying size and ETag."""
    archive.put_object(bucket, "d/obj", os.urandom(3 * MiB + 5))
    afs = make_fs(part_size=MiB)
    afs.ls(f"{bucket}/d")  # size and ETag of the first version, cached
    new = os.urandom(3 * MiB + 9)
    archive.put_object(bucket, "d/obj", new)
    archive.requests.clear()
    afs.get(f"{bucket}/d/obj", str(tmp_path / "obj"))
    assert (tmp_path / "obj").read_bytes() == new
    gets = [r for r in archive.requests.records if r.op == "GET" and r.key == "d/obj"]
    assert sorted(r.status for r in gets) == [206] * 4 + [412] * 4


@pytest.mark.parametrize("verb", ["get_folder", "get_key", "prefetch_to"])
def test_a_one_object_get_sends_the_registry_get_one_listing_and_one_get_per_part(
    archive: EmulatedArchive,
    bucket: str,
    make_fs: Callable[..., ArchiveFileSystem],
    tmp_path: Path,
    verb: str,
) -> None:
    """Issue 49, counted at the server: the bucket's catalog registry (one GET, as
    docs/bundles.md states), the one request that finds the object (a LIST of the folder,
    or the HEAD of a key that fsspec's get checks is not a folder), then one GET per part;
    no second listing, no HEAD of the folder, no GET twice."""
    data = os.urandom(3 * MiB + 5)
    archive.put_object(bucket, "one/object-0", data)
    afs = make_fs(part_size=MiB)
    out = tmp_path / "out"
    archive.requests.clear()
    if verb == "get_folder":
        afs.get(f"{bucket}/one/", str(out) + "/", recursive=True)
        written = out / "object-0"
    elif verb == "get_key":
        afs.get(f"{bucket}/one/object-0", str(tmp_path / "object-0"))
        written = tmp_path / "object-0"
    else:
        afs.prefetch(f"s3://{bucket}/one/", to=out)
        written = out / bucket / "one" / "object-0"
    assert written.read_bytes() == data
    sent = [(r.op, r.key) for r in archive.requests.records]
    finds = [("HEAD", "one/object-0")] if verb == "get_key" else [("LIST", None)]
    assert sorted(sent, key=str) == sorted(
        [("GET", ".archivefs/catalogs.json"), *finds, *[("GET", "one/object-0")] * 4], key=str
    )
