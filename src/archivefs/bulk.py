"""Building many small objects at once: millions of info dicts, plan rows, bundle groups."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many acyclic objects.

    Each collection that falls due while they are made walks every container the
    process holds, a catalog's list of 10^7 paths included. The objects are
    acyclic, so nothing is freed later than it would be.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
