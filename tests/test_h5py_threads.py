"""h5py holds a global lock while it calls a file object's ``read`` and while kerchunk's
translation (inside h5py's ``visititems``) waits for zarr's thread. A cyclic collection on
the thread waited on that frees an h5py object (a dataset a notebook left open) needs
that lock: both threads hang (h5py's documentation on file-like objects and threads;
dask/dask#7547). archivefs pauses the collector while it waits so, with
:func:`archivefs.bulk.gc_paused`, which must hold across threads.

Whether a hang happens is a race (one in CI, and within 60 translations in two of three
runs of a script that kept leaving h5netcdf datasets in cycles from another thread), so
the tests check its precondition instead: no collection starts on the thread waited on.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

import h5py
import numpy as np
import xarray as xr
from fsspec.asyn import sync

from archivefs.bulk import gc_paused
from archivefs.catalog.references import make_references
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from archivefs.testing import EmulatedArchive


@contextmanager
def collections_by_thread() -> Iterator[list[str]]:
    """The names of the threads that start a cyclic collection meanwhile; collections fall
    due every 50 allocations, so any thread doing work makes them."""
    started: list[str] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(threading.current_thread().name)

    threshold = gc.get_threshold()
    gc.set_threshold(50, 1, 1)
    gc.callbacks.append(note)
    try:
        yield started
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*threshold)


def write_netcdf(path: Path, count: int = 20) -> None:
    """A netCDF4 file of ``count`` chunked variables: many h5py objects per open."""
    variables = {f"v{i}": (("time", "y"), np.full((100, 40), float(i))) for i in range(count)}
    dataset = xr.Dataset(variables, coords={"time": np.arange(100)})
    encoding = {name: {"chunksizes": (2, 4)} for name in variables}
    dataset.to_netcdf(path, engine="h5netcdf", encoding=encoding)


def test_no_collection_runs_on_zarrs_thread_while_kerchunk_translates(tmp_path: Path) -> None:
    """Kerchunk creates each array through zarr's thread from inside h5py's visititems."""
    source = tmp_path / "a.nc"
    write_netcdf(source)
    with collections_by_thread() as started, source.open("rb") as f:
        refs = make_references(f, "memory://a.nc")
    assert (
        len([k for k in refs["refs"] if k.endswith("/.zarray")]) == 21
    )  # it translated (20 and time)
    assert "zarr_io" not in started


def test_no_collection_runs_on_the_io_thread_while_h5py_reads_a_file(
    tmp_path: Path, archive: EmulatedArchive, bucket: str
) -> None:
    """Every loop-thread step here serves a read h5py waits for (no readahead in flight:
    ``cache_type="none"``)."""
    source = tmp_path / "a.nc"
    write_netcdf(source, count=2)  # each of h5py's small reads is a GET here
    archive.put_object(bucket, "a.nc", source.read_bytes())
    fs = ArchiveFileSystem(target_protocol="s3", target_options=archive.storage_options())
    f = fs.open(f"{bucket}/a.nc", "rb", cache_type="none")
    io_thread = sync(fs.loop, _thread_name)
    with collections_by_thread() as started, f, h5py.File(f) as h5:
        values = [h5[f"v{i}"][...] for i in range(2)]
    assert [float(v.mean()) for v in values] == [0.0, 1.0]
    assert io_thread not in started


async def _thread_name() -> str:
    return threading.current_thread().name


def test_the_collector_is_on_again_only_when_every_pause_in_every_thread_ended() -> None:
    assert gc.isenabled()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            second_in.wait(30)
        first_out.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(30)
    with gc_paused():
        second_in.set()
        first_out.wait(30)
        seen.append(gc.isenabled())  # the other thread's pause ended, this one runs
    thread.join(30)
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
