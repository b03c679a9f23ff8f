"""Bytes fetched / bytes needed for typical xarray reads, archivefs vs s3fs defaults."""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

import fsspec.asyn
import numpy as np
import pytest
import s3fs

import archivefs.datasets as ads
from archivefs.filesystem import ArchiveFileSystem
from tests.zarr_data import make_source, upload_zarr

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")


def netcdf_bytes(tmp_path: Path) -> bytes:
    data = np.random.default_rng(1).normal(size=(60, 100, 100)).astype("f4")
    ds = xr.Dataset({"t": (("time", "y", "x"), data)})
    path = tmp_path / "a.nc"
    ds.to_netcdf(path, engine="h5netcdf", encoding={"t": {"chunksizes": (1, 100, 100)}})
    return path.read_bytes()


def amplification(archive: EmulatedArchive, fs: object, path: str, needed: int) -> float:
    archive.requests.clear()
    with fs.open(path) as f:  # type: ignore[attr-defined]
        values = xr.open_dataset(f, engine="h5netcdf")["t"].isel(time=30).values
    assert values.nbytes == needed
    return archive.requests.bytes_sent("GET") / needed


def test_netcdf_one_time_step_reads_far_less_than_s3fs_defaults(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.nc", netcdf_bytes(tmp_path))
    path = f"{bucket}/a.nc"
    ours = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    raw = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    needed = 100 * 100 * 4
    ours_amp = amplification(archive, ours, path, needed)
    raw_amp = amplification(archive, raw, path, needed)
    # the 64 KiB first block (HDF5 headers) dominates for a 40 kB chunk
    assert ours_amp < 3.0
    assert raw_amp > 50  # s3fs's 50 MiB readahead fetches the whole 2.4 MB file
    assert raw_amp / ours_amp > 20


def test_zarr_selection_fetches_only_the_chunks_it_needs(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    source = make_source()
    url = upload_zarr(archive, bucket, tmp_path, source)
    ds = ads.open_zarr(
        url,
        storage_options=archive.storage_options(),
        journal=False,
        restore_status_in_listings=True,
        restore_time_scale=1 / 3600,
        skip_instance_cache=True,
    )
    selection = ds["t"].isel(time=slice(4, 12))
    ads.prefetch(selection, wait=True, timeout=600)  # chunks are in DEEP_ARCHIVE
    plan = ads.plan_dataset(selection)
    chunk_bytes = sum(g.size for g in plan)
    archive.requests.clear()
    selection.values  # noqa: B018
    assert archive.requests.bytes_sent("GET") / chunk_bytes <= 1.1
    assert archive.requests.count("GET") == len(plan)


def test_measured_amplification_feeds_the_estimate(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_object(bucket, "a.nc", netcdf_bytes(tmp_path))
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(),
        journal=False,
        egress="internet",
        skip_instance_cache=True,
    )
    assert fs.read_stats.amplification is None
    fsspec.asyn.sync(fs.loop, fs.catalogs.catalogs, bucket)  # the one-off catalog lookup
    archive.requests.clear()
    with fs.open(f"{bucket}/a.nc") as f:
        xr.open_dataset(f, engine="h5netcdf")["t"].isel(time=30).values  # noqa: B018
    stats = fs.read_stats
    assert stats.bytes_fetched == archive.requests.bytes_sent("GET")  # counted like the server
    assert stats.requests == archive.requests.count("GET")
    measured = stats.amplification
    assert measured is not None
    assert measured > 1.0
    plan = fs.plan(f"{bucket}/a.nc")
    estimate = fs.estimate_plan(plan)
    assert estimate.bytes_read == round(plan.groups[0].read_bytes * measured)  # as estimate()
    assert any("read amplification" in w for w in estimate.warnings)
    exact = fs.estimate_plan(plan, read_amplification=1.0)
    assert exact.components["egress"] < estimate.components["egress"]


def test_netcdf_runs_of_chunks_take_a_few_gets_not_one_per_chunk(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """A whole variable and a point time series read every chunk in order: readahead that
    grows along the run (archivefs.readahead) instead of one GET per chunk (60 chunks)."""
    data = netcdf_bytes(tmp_path)
    archive.put_object(bucket, "a.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)  # the catalog lookup and the file's size, outside the measurement
    for selection in ({}, {"y": 50, "x": 50}):
        archive.requests.clear()
        with fs.open(f"{bucket}/a.nc") as f:
            xr.open_dataset(f, engine="h5netcdf")["t"].isel(**selection).load()
        # the header block (the chunk index's node inside it), then the rest of the file
        # (under RUN_TO_END: the first chunk runs on from the header block) in 2 parts;
        # "first" cache: 60 GETs
        assert archive.requests.counts() == {"GET": 3}
        assert archive.requests.bytes_sent("GET") <= len(data) * 1.01
    archive.requests.clear()
    with fs.open(f"{bucket}/a.nc") as f:
        xr.open_dataset(f, engine="h5netcdf")["t"].isel(time=30).load()
    assert archive.requests.bytes_sent("GET") <= 1.5 * 100 * 100 * 4


def test_a_whole_file_block_reads_a_netcdf_file_in_one_get(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """The docs' advice for a reader who knows it reads a whole file: s3fs's 50 MiB block."""
    data = netcdf_bytes(tmp_path)
    archive.put_object(bucket, "a.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)
    archive.requests.clear()
    with fs.open(f"{bucket}/a.nc", block_size=50 * 2**20) as f:
        loaded = xr.open_dataset(f, engine="h5netcdf")["t"].load()
    assert archive.requests.counts() == {"GET": 1}
    assert archive.requests.bytes_sent("GET") == len(data)
    assert loaded.shape[0] == 60


def _netcdf(tmp_path: Path, steps: int, side: int) -> tuple[bytes, list[int]]:
    """A netCDF file of ``steps`` chunks of ``side``² float32, and where each chunk lies."""
    import h5py

    data = np.random.default_rng(2).normal(size=(steps, side, side)).astype("f4")
    path = tmp_path / f"{steps}x{side}.nc"
    xr.Dataset({"t": (("time", "y", "x"), data)}).to_netcdf(
        path, engine="h5netcdf", encoding={"t": {"chunksizes": (1, side, side)}}
    )
    with h5py.File(path) as f:
        dataset = f["t"]
        offsets = [dataset.id.get_chunk_info(i).byte_offset for i in range(steps)]
    return path.read_bytes(), offsets


def _read_netcdf(
    archive: EmulatedArchive, fs: ArchiveFileSystem, path: str, selection: dict[str, int]
) -> tuple[dict[str, int], int, int]:
    """GETs by type, bytes sent by the server, and the bytes of the values read."""
    archive.requests.clear()
    with fs.open(path) as f:
        values = xr.open_dataset(f, engine="h5netcdf")["t"].isel(**selection).values
    return archive.requests.counts(), archive.requests.bytes_sent("GET"), values.nbytes


def test_a_netcdf_file_of_at_most_1_mib_is_read_whole_in_one_get(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """A round trip over a wide-area link carries about as much: one GET, not four."""
    from archivefs.readahead import WHOLE_FILE

    data, _ = _netcdf(tmp_path, 24, 64)
    assert len(data) <= WHOLE_FILE
    archive.put_object(bucket, "small.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)
    for selection in ({}, {"time": 12}):
        counts, sent, _ = _read_netcdf(archive, fs, f"{bucket}/small.nc", selection)
        assert counts == {"GET": 1}
        assert sent == len(data)


def test_one_time_step_of_a_large_netcdf_file_reads_at_most_1_5x_its_bytes(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """The 16 KiB header block, the chunk index's node, the chunk: 3 GETs (a 64 KiB
    header block made one 64 KiB chunk cost 2.05x its bytes)."""
    for steps, side in ((80, 200), (200, 128)):  # chunks of 160 kB and of 64 KiB
        data, _ = _netcdf(tmp_path, steps, side)  # 12.8 and 13.1 MB
        archive.put_object(bucket, "large.nc", data)
        fs = ArchiveFileSystem(
            target_options=archive.storage_options(), journal=False, skip_instance_cache=True
        )
        fs.ls(bucket)
        selection = {"time": steps // 2}
        counts, sent, needed = _read_netcdf(archive, fs, f"{bucket}/large.nc", selection)
        assert counts == {"GET": 3}
        assert sent <= 1.5 * needed


def test_a_whole_netcdf_variable_reads_ahead_in_parts_at_once(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """The run's readaheads of 2 MiB or more go out as parts (one GET each, at once), and
    in a file over 8 MiB the run streams: the next parts are in flight while it reads."""
    from archivefs.readahead import GROWTH, PART

    data, offsets = _netcdf(tmp_path, 80, 200)
    archive.put_object(bucket, "large.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)
    counts, sent, needed = _read_netcdf(archive, fs, f"{bucket}/large.nc", {})
    # the header block, a node of the chunk index, the first chunk (exact), then the run
    # streams: its window is 16 x that (2.56 MB: a 1 MiB part and the rest), and once the
    # first part is read, 16 x what the run has read (19.3 MB), cut at the file's end
    # (10.2 MB, in parts of a tenth of the window, 1.93 MB: 5, the tail under a PART
    # joined to the last); the node is fetched again inside the run's parts
    assert counts == {"GET": 1 + 1 + 1 + 2 + 5}
    assert needed < sent <= len(data) + 2**16
    run = sorted(_span(r.range) for r in archive.requests.records if r.op == "GET")
    first = offsets[1]  # the run starts at the second chunk
    parts = [span for span in run if span[0] >= first and span[1] - span[0] >= PART]
    assert len(parts) == 2 + 5
    chunk = offsets[1] - offsets[0]
    assert parts[0][1] - parts[0][0] == PART  # the first window: 16 x the run's fetch
    assert PART < parts[1][1] - parts[0][0] <= GROWTH * chunk
    assert parts[0][0] == first
    assert parts[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))  # contiguous


def _span(header: str | None) -> tuple[int, int]:
    """``bytes=A-B`` as ``(A, B + 1)``."""
    assert header is not None
    first, _, last = header.removeprefix("bytes=").partition("-")
    return int(first), int(last) + 1


def test_a_whole_variable_of_a_small_netcdf_file_read_the_simple_way(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """Issue 49.4: ``fs.open`` then xarray, no listing first, on a 7.9 MB file (under
    RUN_TO_END): the header block, the chunk index's node, then the rest of the file from
    the header block's end in parts at once (the first chunk runs on from the header
    block: no round trip of its own). Before: 10 ranged GETs in 4 rounds."""
    from archivefs.readahead import PART, PARTS, RUN_TO_END

    data, offsets = _netcdf(tmp_path, 120, 128)
    assert 2**20 < len(data) <= RUN_TO_END
    archive.put_object(bucket, "small.nc", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    archive.requests.clear()
    with fs.open(f"{bucket}/small.nc") as f:
        loaded = xr.open_dataset(f, engine="h5netcdf")["t"].load()
    assert loaded.shape == (120, 128, 128)
    ranged = [
        _span(r.range)
        for r in archive.requests.records
        if r.op == "GET" and r.range and r.key == "small.nc"  # not the registry's ranged GET
    ]
    block = fs.read_block_size
    parts = min(PARTS, (len(data) - block) // PART)
    assert len(ranged) == 1 + 1 + parts == 9  # s3fs's defaults: 1 (one 50 MiB block)
    assert ranged[0] == (0, block)
    node = ranged[1]
    assert node[1] - node[0] < 2**16  # the chunk index's node, read before any chunk
    assert node[0] > offsets[0]  # it lies among the chunks, not in the header block
    run = sorted(ranged[2:])
    assert run[0][0] == block
    assert run[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(run))  # contiguous, no byte twice
    fetched = sum(end - start for start, end in ranged)
    assert fetched == len(data) + node[1] - node[0]
    # the HEAD (the size) and the catalog lookup are the same for every file: not reads
    assert archive.requests.count("HEAD") == 1
    assert archive.requests.count("GET") == len(ranged) + 1


FUSE_READ = 128 * 1024  # what FUSE asks per read (the mount reads through fs.open too)


def test_a_sequential_read_in_fuse_sized_pieces_fetches_each_byte_once_in_few_gets(
    archive: EmulatedArchive, bucket: str
) -> None:
    """A 24 MiB object read in 128 KiB pieces (``cat`` through the mount, which opens by
    size, so no state and no target block: tests/test_files.py): the first read,
    then the run's parts (1 MiB, 1 MiB, nine of 1.8 MiB, 3.4 MiB, the rest: parts of a
    tenth of the window, so the window's bytes come on as many connections as ``get``
    uses): 14 GETs, each byte once (in quarters of the window: 7 GETs; before the run
    streamed: 11 GETs in 4 rounds, each waited for)."""
    size = 24 * 2**20
    data = np.random.default_rng(3).bytes(size)
    archive.put_object(bucket, "big.bin", data)
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)  # the catalog lookup and the size, outside the measurement
    archive.requests.clear()
    with fs.open(f"{bucket}/big.bin", size=size) as f:  # by size, as the mount opens
        pieces = [f.read(FUSE_READ) for _ in range(size // FUSE_READ)]
        assert f.read(FUSE_READ) == b""
    assert b"".join(pieces) == data
    assert archive.requests.counts() == {"GET": 1 + 2 + 9 + 2}
    assert archive.requests.bytes_sent("GET") == size
    spans = sorted(_span(r.range) for r in archive.requests.records if r.op == "GET")
    assert spans[0] == (0, FUSE_READ)
    assert spans[-1][1] == size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_a_sequential_read_has_its_next_parts_in_flight_before_it_asks(
    archive: EmulatedArchive, bucket: str
) -> None:
    """After 1.25 MiB read, with no further read, the server is sent the run's window
    (to 31.6 MiB): the next bytes are fetched while the reader works on the current ones.
    Random reads in the same file still fetch exactly what they ask."""
    from archivefs.readahead import PART, PARTS

    mib = 2**20
    size = 64 * mib
    archive.put_object(bucket, "big.bin", np.random.default_rng(4).bytes(size))
    fs = ArchiveFileSystem(
        target_options=archive.storage_options(), journal=False, skip_instance_cache=True
    )
    fs.ls(bucket)
    archive.requests.clear()
    with fs.open(f"{bucket}/big.bin", size=size) as f:  # by size, as the mount opens
        for _ in range(10):
            f.read(FUSE_READ)
        # read 1: one GET; read 2 starts the run's stream, two 1 MiB parts, and once it has
        # the first, 16 x the 1.125 MiB taken in flight (nine more parts of a tenth of
        # 18 MiB); read 10 takes the second: 16 x 2.125 MiB, five parts of 3.4 MiB
        expected = FUSE_READ + 2 * PART + 9 * (18 * mib // PARTS) + 5 * (34 * mib // PARTS)
        deadline = time.monotonic() + 60
        while archive.requests.bytes_sent("GET") < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert archive.requests.bytes_sent("GET") == expected
        assert archive.requests.count("GET") == 1 + 2 + 9 + 5
        spans = sorted(_span(r.range) for r in archive.requests.records if r.op == "GET")
        assert spans[-1][1] == expected
        archive.requests.clear()
        f.seek(40 * 2**20)
        f.read(65_536)  # a jump: exact
        assert [_span(r.range) for r in archive.requests.records if r.op == "GET"] == [
            (40 * 2**20, 40 * 2**20 + 65_536)
        ]
