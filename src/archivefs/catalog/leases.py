"""Bundles a running, unsaved bundling run is using: in-use markers ("leases") in the bucket.

A run that is about to check, reuse or upload a bundle first writes an empty
object ``<root>/.archivefs/leases/<bundle name>.<run id>.lease`` (one per
bundle, named by the run's own random id, so no two runs ever write the same
lease). It removes its leases once the catalog it saved names those bundles
and it has seen them still there. Orphan deletion (``orphans="delete"``) lists
the leases right before it deletes and spares every bundle a live lease names.

A lease older than the orphan age by the store's clock (its ``Last-Modified``)
no longer protects: it is a killed run's. A lease listing that fails, or a name
in the lease folder that is not a lease, means nothing may be deleted: a lease
that cannot be read is not a lease that is absent.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from dataclasses import dataclass
from typing import Any

from archivefs.catalog import layout
from archivefs.catalog.index import modified_time
from archivefs.stores import forget_listings, listed_key, remove_object
from archivefs.stores.conditional import is_local

LEASE_FILE = re.compile(r"(b-[0-9a-f]{32})\.([0-9a-f]{32})\.lease")
_BODY = b"archivefs: a bundling run is using this bundle\n"


def lease_dir(root: str) -> str:
    """The folder of ``root``'s leases."""
    return f"{root.rstrip('/')}/{layout.RESERVED}/leases"


class RunLeases:
    """The leases one bundling run holds on bundles under one destination root."""

    def __init__(self, fs: Any, root: str) -> None:
        self.fs, self.root = fs, root
        self.run_id = uuid.uuid4().hex
        self.held: set[str] = set()  # lease paths written and not yet removed

    def take(self, bundle_key: str) -> None:
        """Mark ``bundle_key`` in use by this run (one PUT), before it is checked or sent."""
        name = bundle_key.rstrip("/").rsplit("/", 1)[-1].removesuffix(".zip")
        path = f"{lease_dir(self.root)}/{name}.{self.run_id}.lease"
        if is_local(self.fs):
            self.fs.makedirs(lease_dir(self.root), exist_ok=True)
        self.fs.pipe_file(path, _BODY)
        self.held.add(path)

    def release(self) -> None:
        """Remove every lease this run holds (its bundles are saved and checked)."""
        for path in sorted(self.held):
            with contextlib.suppress(FileNotFoundError):
                remove_object(self.fs, path)
        self.held.clear()


@dataclass(frozen=True)
class LeaseScan:
    """The leases under a root, read at once: bundles that live ones protect, stale ones."""

    protected: frozenset[str]  # bundle keys (as the catalog records them)
    stale: tuple[str, ...]  # lease paths older than the orphan age


def scan_leases(fs: Any, root: str, now: float, max_age: float) -> LeaseScan | None:
    """The live and stale leases under ``root`` (one fresh listing; never a cached one).

    ``None`` when they cannot all be read: the listing failed, or the folder holds a
    name that is not a lease, or a lease has no time. Then nothing may be deleted.
    """
    directory = lease_dir(root)
    forget_listings(fs, directory)
    try:
        listed = fs.find(directory, detail=True)
    except FileNotFoundError:
        return LeaseScan(frozenset(), ())
    except OSError:
        return None
    base = listed_key(fs, root)
    protected, stale = set(), []
    for path, info in listed.items():
        match = LEASE_FILE.fullmatch(str(path).rstrip("/").rsplit("/", 1)[-1])
        written = modified_time(info)
        if match is None or written is None:
            return None
        if now - written >= max_age:
            stale.append(listed_key(fs, path))
        else:
            protected.add(layout.bundle_path(base, match.group(1)))
    return LeaseScan(frozenset(protected), tuple(stale))
