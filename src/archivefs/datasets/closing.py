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

So each dataset archivefs opens from a file object is tracked, weakly, through what
holds its HDF5 file open (xarray's file manager, which the dataset's lazy arrays and
any dataset combined from it keep alive; the dataset itself where xarray has none),
with that file object; one ``atexit`` handler, registered once h5py is imported
(``atexit`` runs the last-registered first, so this runs while everything is
alive), closes each that is still open: the HDF5 file first, then the file object
archivefs opened for it.
"""

from __future__ import annotations

import atexit
import contextlib
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
    return closed
