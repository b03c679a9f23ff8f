"""Files archivefs hands to h5py are closed while Python still runs.

h5py reads a Python file object (the bytes of a small file, or an archivefs file)
through its ``fileobj`` driver. An HDF5 file still open when the interpreter ends is
closed by HDF5's own C exit handler (``H5_term_library``), after Python has
finalised: the driver's close callback asks for the GIL of an interpreter that is
gone (``PyGILState_Ensure`` -> ``PyThreadState_New(interp=NULL)``) and the process
dies with SIGSEGV, exit 139, after all its output and with nothing from
faulthandler (issue 47 item 7: a ``LocalCluster`` job over bundled netCDF files).
Any dataset still alive at exit (held by a reference cycle, a client's state, a
module global that outlives the collection) reaches that point.

Not only the files archivefs opened: xarray's file manager for a file object opens
the file again when it is unpickled, and a ``LocalCluster``'s scheduler runs in the
client's process and unpickles the graph it is sent, so copies of each file are
open there that nobody but the scheduler's task state holds (a gdb backtrace of the
cluster job's core showed one of them closed by ``H5_term_library``).

So each dataset archivefs opens from a file object is tracked, weakly, through what
holds its HDF5 file open (xarray's file manager, which the dataset's lazy arrays and
any dataset combined from it keep alive; the dataset itself where xarray has none),
with that file object; one ``atexit`` handler, registered once h5py is imported
(``atexit`` runs the last-registered first, so this runs while everything is
alive), closes each that is still open: the HDF5 file first, then the file object
archivefs opened for it; then every HDF5 file still open on a Python file object
(h5py's ``fileobj`` driver: the copies above, or any other), its objects first, as
``h5py.File.close`` does. Files on disk are left to HDF5, which closes them safely.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
import weakref
from typing import Any

_lock = threading.Lock()
_tracked: dict[int, tuple[weakref.ref[Any], weakref.ref[Any] | None]] = {}
_registered = False


def close_at_exit(ds: Any, source: Any) -> None:
    """Close ``ds`` (then ``source``, the file object it was opened from) at interpreter
    exit if they are still open then; nothing is kept alive by this."""
    global _registered
    holder = _holder(ds)
    key = id(holder)

    def forget(_: weakref.ref[Any], key: int = key) -> None:
        with _lock:
            _tracked.pop(key, None)

    try:
        held: weakref.ref[Any] | None = weakref.ref(source)
    except TypeError:  # a file object without weak references: its dataset closes it
        held = None
    with _lock:
        if not _registered:
            atexit.register(close_tracked)
            _registered = True
        _tracked[key] = (weakref.ref(holder, forget), held)


def _holder(ds: Any) -> Any:
    """What keeps ``ds``'s file open: its backend's file manager (alive as long as any
    lazy array read from it), else the dataset itself; either has ``close()``."""
    owner = getattr(getattr(ds, "_close", None), "__self__", None)
    manager = getattr(owner, "_manager", None)
    return manager if callable(getattr(manager, "close", None)) else ds


def close_tracked() -> int:
    """Close every tracked file still open, then its file object; how many were closed.

    Errors are ignored: the process is ending, and a file that cannot be closed here
    would only fail again later."""
    with _lock:
        items = list(_tracked.values())
        _tracked.clear()
    closed = 0
    for holder_ref, source_ref in items:
        holder = holder_ref()
        if holder is not None:
            with contextlib.suppress(Exception):
                holder.close()
                closed += 1
        source = source_ref() if source_ref is not None else None
        if source is not None:
            with contextlib.suppress(Exception):
                source.close()
    return closed + close_file_object_files()


def close_file_object_files() -> int:
    """Close every HDF5 file this process has open through a Python file object; how many."""
    if "h5py" not in sys.modules:
        return 0
    from h5py import h5f, h5fd  # type: ignore[import-untyped]

    closed = 0
    with contextlib.suppress(Exception):
        for file_id in h5f.get_obj_ids(h5f.OBJ_ALL, h5f.OBJ_FILE):
            with contextlib.suppress(Exception):
                if file_id.get_access_plist().get_driver() != h5fd.fileobj_driver:
                    continue
                file_id._close_open_objects(h5f.OBJ_LOCAL | ~h5f.OBJ_FILE)
                file_id._close_open_objects(h5f.OBJ_LOCAL | h5f.OBJ_FILE)
                file_id.close()
                closed += 1
    return closed
