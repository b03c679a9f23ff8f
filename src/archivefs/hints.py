"""What this process knows reads now: one GET, no HEAD, for objects seen readable.

Shared by every filesystem of the process that talks to the same store (its
protocol and endpoint), because the instance that learns a group is back is
often not the one that reads it: on a Dask worker, the task that waited for the
coordinator's event and the zarr store that reads the chunk each rebuild their
own filesystem. A hint may go stale (a restored copy expires); that costs a
refused GET and the read policy's HEAD, never wrong bytes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from typing import TYPE_CHECKING

from archivefs.model import RestoreState

if TYPE_CHECKING:
    from archivefs.model import ObjectState

LIMIT = 100_000  # objects remembered per process; the oldest are forgotten first

_lock = threading.Lock()
_hints: OrderedDict[tuple[str, str], ObjectState] = OrderedDict()


def note_readable(scope: str, state: ObjectState) -> None:
    """Remember that ``state.path`` reads now, in the store ``scope`` names.

    ``state`` may be from before its restore: only its size and identity are kept.
    """
    if not state.readable:
        state = replace(state, restore=RestoreState.RESTORED)
    with _lock:
        _hints.pop((scope, state.path), None)
        _hints[(scope, state.path)] = state
        while len(_hints) > LIMIT:
            _hints.popitem(last=False)


def readable_state(scope: str, path: str) -> ObjectState | None:
    """The readable state remembered for ``path``, if any."""
    with _lock:
        return _hints.get((scope, path))


def forget_readable(scope: str, path: str | None = None) -> None:
    """Forget ``path`` (or everything in ``scope``)."""
    with _lock:
        if path is not None:
            _hints.pop((scope, path), None)
            return
        for key in [k for k in _hints if k[0] == scope]:
            del _hints[key]
