"""What a selection needs against what it restores: files vs bundles, and a better grouping.

A plan counts cold objects (bundles or single objects); people think in files.
:func:`summarize` turns a plan into both, per restore state, with the bytes the
files need and the bytes the restores bring back. :func:`better_grouping`
names the ``--group-by prefix:DEPTH`` that would have put the selection's
files in bundles of their own, from the catalog alone (no requests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archivefs.model import RestoreState

if TYPE_CHECKING:
    from archivefs.catalog.index import Catalog
    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.plans import Plan

OVER_RESTORE_RATIO = 2.0
"""Warn when the restores bring back more than this many times the bytes needed."""


@dataclass
class StateCounts:
    """Files, cold objects (bundles among them) and bytes in one restore state."""

    files: int = 0
    objects: int = 0
    bundles: int = 0
    bytes_needed: int = 0
    bytes_in_objects: int = 0


@dataclass
class SelectionSummary:
    """A plan in files and in cold objects, per restore state."""

    states: dict[str, StateCounts] = field(
        default_factory=lambda: {s.value: StateCounts() for s in RestoreState}
    )

    @property
    def files(self) -> int:
        return sum(c.files for c in self.states.values())

    @property
    def bytes_needed_to_restore(self) -> int:
        """Bytes of the requested files that sit in objects still to be restored."""
        return sum(self.states[s].bytes_needed for s in _NOT_READABLE)

    @property
    def bytes_to_restore(self) -> int:
        """Bytes of the cold objects that must be restored to read those files."""
        return sum(self.states[s].bytes_in_objects for s in _NOT_READABLE)

    @property
    def over_restore(self) -> float:
        """Bytes restored per byte needed (1.0: nothing extra), over unreadable objects."""
        needed = self.bytes_needed_to_restore
        return self.bytes_to_restore / needed if needed else 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "files": {s: c.files for s, c in self.states.items()},
            "objects": {s: c.objects for s, c in self.states.items()},
            "bundles": {s: c.bundles for s, c in self.states.items()},
            "bytes_needed": {s: c.bytes_needed for s, c in self.states.items()},
            "bytes": {s: c.bytes_in_objects for s, c in self.states.items()},
            "bytes_to_restore": self.bytes_to_restore,
            "over_restore": round(self.over_restore, 3),
        }


_NOT_READABLE = (RestoreState.ARCHIVED.value, RestoreState.RESTORING.value)


def summarize(plan: Plan) -> SelectionSummary:
    """Count a plan's files and cold objects per restore state."""
    out = SelectionSummary()
    for group in plan.groups:
        counts = out.states[group.state.restore.value]
        counts.files += len(group.paths)
        counts.objects += 1
        counts.bundles += group.paths != (group.key,)
        counts.bytes_needed += group.read_bytes
        counts.bytes_in_objects += group.size
    return out


def better_grouping(catalog: Catalog, root: str, selected: list[str]) -> int | None:
    """The smallest ``prefix:DEPTH`` whose bundles would hold the selected members only.

    ``selected`` are member paths below ``root``. ``None`` if no directory depth
    separates them from the rest (then a key function, ``ByKey``, is needed).
    """
    prefix = root.rstrip("/") + "/"
    relative = [p[len(prefix) :] for p in selected if p.startswith(prefix)]
    if not relative:
        return None
    everything = [n[len(prefix) :] for n in catalog.find(root)]
    deepest = max(p.count("/") for p in relative)
    for depth in range(1, deepest + 1):
        keys = {_key(p, depth) for p in relative}
        if sum(1 for p in everything if _key(p, depth) in keys) == len(set(relative)):
            return depth
    return None


def grouping_advice(
    fs: ArchiveFileSystem, plan: Plan, summary: SelectionSummary
) -> dict[str, int | None] | None:
    """When the plan's restores bring back far more than its files need because they share
    bundles with files not asked for: each catalog root involved and the ``prefix:DEPTH``
    that would bundle the selection apart (None: no directory depth does; a key function,
    ``ByKey``, would). ``None`` when there is nothing to warn about.

    Only the catalogs are read (``fs.catalog_root_for``); no request per file."""
    if summary.over_restore <= OVER_RESTORE_RATIO:
        return None
    by_root: dict[str, tuple[Catalog, list[str]]] = {}
    shared = False  # some bundle holds files that were not asked for (not just zip headers)
    for group in plan.groups:
        if group.paths == (group.key,) or group.state.readable:
            continue
        found = fs.catalog_root_for(group.paths[0])
        if found is not None:
            by_root.setdefault(found[0], (found[1], []))[1].extend(group.paths)
            info = found[1].bundles.get(group.key)
            shared = shared or (info is not None and info.members > len(group.paths))
    if not shared:
        return None
    return {
        root: better_grouping(catalog, root, selected)
        for root, (catalog, selected) in by_root.items()
    }


def _key(relative: str, depth: int) -> str:
    """``ByPrefix(depth)``'s key: the first ``depth`` directories."""
    return "/".join(relative.split("/")[:-1][:depth])
