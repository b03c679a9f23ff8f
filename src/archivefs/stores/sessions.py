"""Exit-time clean-up of the client libraries' sessions that archivefs opens."""

from __future__ import annotations

import weakref
from typing import Any


def drop_unrunnable_finalizers(fs: Any) -> int:
    """Detach the exit finalizers of ``fs`` that can only raise; how many were detached.

    adlfs registers ``weakref.finalize(fs, fsspec.asyn.sync, fs.loop, close_..., fs)``. An
    instance made with ``asynchronous=True`` (as zarr re-creates every filesystem it is
    given) has no loop of its own, so at interpreter exit each such finalizer raises
    ``RuntimeError("Loop is not running")`` and prints a traceback after the user's last
    line. Detaching them loses nothing: they could never run.
    """
    if not getattr(fs, "asynchronous", False) or getattr(fs, "_loop", None) is not None:
        return 0
    from fsspec.asyn import sync

    detached = 0
    registry: dict[weakref.finalize[Any, Any], Any] = weakref.finalize._registry  # type: ignore[attr-defined]
    for finalizer in list(registry):
        info = finalizer.peek()
        if info is None:
            continue
        obj, func, args, _ = info
        if obj is fs and func is sync and args and args[0] is None:
            finalizer.detach()
            detached += 1
    return detached
