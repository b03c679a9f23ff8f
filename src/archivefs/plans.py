"""Plans in columns: one row per restorable group, numbers in numpy arrays.

A :class:`Plan` of 10^6 single objects used to hold 10^6 :class:`PlannedGroup`
objects, each with its :class:`~archivefs.model.ObjectState` and a tuple of
paths (~500 bytes per object at peak). Here a plan keeps a :class:`PlanTable`:
the group keys and requested paths as lists of the caller's own strings, sizes,
read bytes and request counts as ``int64`` arrays, storage class, restore state
and action as ``uint8`` codes (about 45 bytes per object beyond the paths).
An object state carrying more than path, size, class and restore state (an
expiry, an ETag, an Intelligent-Tiering archive tier, a pending rehydration) is
kept as given, in a side table. ``plan.groups`` materialises
:class:`PlannedGroup` objects lazily, one at a time, so callers that iterate
groups (the CLI, hooks, the submitter, the Dask helpers) work unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any, overload

from archivefs.lazy import lazy_module
from archivefs.model import (
    Action,
    ObjectState,
    PlannedGroup,
    RestoreState,
    RestoreTier,
    StorageClass,
)
from archivefs.providers import Access

if TYPE_CHECKING:
    import numpy as np

    Int64Array = np.ndarray[Any, np.dtype[np.int64]]
    CodeArray = np.ndarray[Any, np.dtype[np.uint8]]
else:  # numpy on first use: reading a plain object never needs it
    np = lazy_module("numpy", globals(), "np")


ACTIONS: tuple[Action, ...] = tuple(Action)
"""``PlanTable.action`` codes: ``ACTIONS[code]``."""
RESTORE_STATES: tuple[RestoreState, ...] = tuple(RestoreState)
"""``PlanTable.restore`` codes: ``RESTORE_STATES[code]``."""
ACTION_CODE = {a: i for i, a in enumerate(ACTIONS)}
RESTORE_CODE = {s: i for i, s in enumerate(RESTORE_STATES)}


@cache
def _requests() -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Per action code: whether the action sends a restore request."""
    return np.array([a in (Action.RESTORE, Action.RENEW, Action.UPGRADE) for a in ACTIONS])


def is_plain(state: ObjectState) -> bool:
    """``state`` is its path, size, class and restore state only (rebuilt from columns)."""
    return (
        state.restore_expiry is None
        and state.etag is None
        and state.last_modified is None
        and state.archive_access is None
        and state.pending_tier is None
        and state.pending_target is None
    )


class PlanTable:
    """A plan's groups as columns, row ``i`` for group ``i``.

    ``keys[i]`` is the group's cold object; its requested paths are
    ``paths[starts[i]:starts[i + 1]]``, or just ``(keys[i],)`` when ``paths`` is
    ``None`` (a plan of single objects asked for by their own names). Both are tuples,
    which the cyclic GC stops walking (it walks every item of a list at every full
    collection in the process).
    ``classes[klass[i]]`` is its storage class; ``extra`` holds, by row, the
    states that carry more than path, size, class and restore state.
    """

    __slots__ = (
        "action",
        "classes",
        "extra",
        "keys",
        "klass",
        "paths",
        "read_bytes",
        "read_requests",
        "restore",
        "size",
        "starts",
    )

    def __init__(
        self,
        keys: Sequence[str],
        size: Int64Array,
        klass: CodeArray,
        classes: list[StorageClass],
        restore: CodeArray,
        action: CodeArray,
        read_bytes: Int64Array,
        read_requests: Int64Array,
        extra: dict[int, ObjectState] | None = None,
        paths: Sequence[str] | None = None,
        starts: Int64Array | None = None,
    ) -> None:
        self.keys = keys
        self.size = size
        self.klass = klass
        self.classes = classes
        self.restore = restore
        self.action = action
        self.read_bytes = read_bytes
        self.read_requests = read_requests
        self.extra = extra or {}
        self.paths = paths
        self.starts = starts

    def __len__(self) -> int:
        return len(self.keys)

    @classmethod
    def from_groups(cls, groups: Iterable[PlannedGroup]) -> PlanTable:
        """Columns of ready-made groups (the per-group form of :class:`Plan`)."""
        listed = list(groups)
        states = [g.state for g in listed]
        table = cls.from_states(
            states,
            np.fromiter((ACTION_CODE[g.action] for g in listed), np.uint8, len(listed)),
            np.fromiter((g.read_bytes for g in listed), np.int64, len(listed)),
            np.fromiter((g.read_requests for g in listed), np.int64, len(listed)),
        )
        if any(g.paths != (g.key,) for g in listed):
            table.paths = tuple(chain.from_iterable(g.paths for g in listed))
            table.starts = np.cumsum([0] + [len(g.paths) for g in listed], dtype=np.int64)
        return table

    @classmethod
    def from_states(
        cls,
        states: Sequence[ObjectState],
        action: CodeArray,
        read_bytes: Int64Array,
        read_requests: Int64Array,
    ) -> PlanTable:
        """Columns of ``states``, one group each (paths: the states' own)."""
        n = len(states)
        class_code: dict[StorageClass, int] = {}
        klass = np.fromiter(
            (class_code.setdefault(s.storage_class, len(class_code)) for s in states), np.uint8, n
        )
        return cls(
            keys=tuple(map(attrgetter("path"), states)),
            size=np.fromiter((s.size for s in states), np.int64, n),
            klass=klass,
            classes=list(class_code),
            restore=np.fromiter((RESTORE_CODE[s.restore] for s in states), np.uint8, n),
            action=action,
            read_bytes=read_bytes,
            read_requests=read_requests,
            extra={i: s for i, s in enumerate(states) if not is_plain(s)},
        )

    def state(self, i: int) -> ObjectState:
        """Group ``i``'s object state (the one given, or rebuilt from the columns)."""
        kept = self.extra.get(i)
        if kept is not None:
            return kept
        return ObjectState(
            self.keys[i],
            int(self.size[i]),
            self.classes[self.klass[i]],
            RESTORE_STATES[self.restore[i]],
        )

    def group_paths(self, i: int) -> tuple[str, ...]:
        if self.paths is None or self.starts is None:
            return (self.keys[i],)
        return tuple(self.paths[self.starts[i] : self.starts[i + 1]])

    def group(self, i: int) -> PlannedGroup:
        return PlannedGroup(
            self.state(i),
            ACTIONS[self.action[i]],
            self.group_paths(i),
            int(self.read_bytes[i]),
            int(self.read_requests[i]),
        )

    def take(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> PlanTable:
        """The table of groups ``rows`` only, in that order."""
        index = np.asarray(rows, dtype=np.int64)
        listed = index.tolist()
        paths: Sequence[str] | None = None
        starts: Int64Array | None = None
        if self.paths is not None and self.starts is not None:
            cut = self.starts
            paths = tuple(chain.from_iterable(self.paths[cut[i] : cut[i + 1]] for i in listed))
            lengths = (cut[1:] - cut[:-1])[index]
            starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        return PlanTable(
            keys=tuple(map(self.keys.__getitem__, listed)),
            size=self.size[index],
            klass=self.klass[index],
            classes=self.classes,
            restore=self.restore[index],
            action=self.action[index],
            read_bytes=self.read_bytes[index],
            read_requests=self.read_requests[index],
            extra={new: self.extra[old] for new, old in enumerate(listed) if old in self.extra},
            paths=paths,
            starts=starts,
        )

    def needs_request(self) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Rows whose group needs a paid restore request."""
        flags: np.ndarray[Any, np.dtype[np.bool_]] = _requests()[self.action]
        return flags

    def access(self) -> list[Access]:
        """Each row's provider-neutral access (as :attr:`ObjectState.access` says)."""
        by_class = [c.access for c in self.classes]
        out = [by_class[k] for k in self.klass.tolist()]
        needs = [c.needs_restore for c in self.classes]
        hot = RESTORE_CODE[RestoreState.HOT]
        for i in np.flatnonzero(self.restore == hot).tolist():
            if needs[self.klass[i]]:
                out[i] = Access.IMMEDIATE
        for i, state in self.extra.items():
            out[i] = state.access
        return out


class PlannedGroups(Sequence[PlannedGroup]):
    """A plan's groups, made one at a time from its columns as they are read."""

    __slots__ = ("_table",)

    def __init__(self, table: PlanTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    @overload
    def __getitem__(self, index: int) -> PlannedGroup: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[PlannedGroup, ...]: ...

    def __getitem__(self, index: int | slice) -> PlannedGroup | tuple[PlannedGroup, ...]:
        n = len(self._table)
        if isinstance(index, slice):
            return tuple(self._table.group(i) for i in range(*index.indices(n)))
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"plan group {index} out of range (the plan has {n})")
        return self._table.group(index)

    def __iter__(self) -> Iterator[PlannedGroup]:
        table = self._table
        return (table.group(i) for i in range(len(table)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlannedGroups | tuple | list):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PlannedGroups({len(self)} groups)"


WHOLE_FILE_WHY = (
    "no references: `archivefs index URL` makes them while a file reads (hot or "
    "restored), `archivefs bundle` as it packs it; kerchunk cannot describe every file"
)
"""Why a dataset selection reads some files whole (one wording: repr, CLI, JSON)."""


def whole_file_text(read_whole: Mapping[str, Sequence[str]], shown: int = 3) -> str:
    """A plan's ``read_whole`` in one line: which files, for which variables, and why.

    Example::

        whole_file_text({"t": ["b/qc.nc"]})
        # '1 file read whole, not chunk by chunk, for t: b/qc.nc (no references: ...)'
    """
    files = _whole_files(read_whole)
    listed = ", ".join(files[:shown]) + (
        f" and {len(files) - shown} more" if len(files) > shown else ""
    )
    return (
        f"{len(files)} file{'s' * (len(files) != 1)} read whole, not chunk by chunk, for "
        f"{', '.join(sorted(read_whole))}: {listed} ({WHOLE_FILE_WHY})"
    )


def _whole_files(read_whole: Mapping[str, Sequence[str]]) -> list[str]:
    """The files ``read_whole`` names for any variable, sorted."""
    return sorted({f for paths in read_whole.values() for f in paths})


def whole_file_json(read_whole: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A plan's ``read_whole`` for JSON output: the files, per variable, and why (``None``
    when no file is read whole)."""
    return {
        "files": _whole_files(read_whole),
        "variables": {name: list(paths) for name, paths in sorted(read_whole.items())},
        "why": WHOLE_FILE_WHY if read_whole else None,
    }


class Plan:
    """What a job needs: every group, its state, and what will be done about it.

    Built by the planner from columns (:class:`PlanTable`), or from ready-made
    groups: ``Plan(groups=(PlannedGroup(...), ...))``.
    """

    __slots__ = ("_index", "created", "days", "missing", "read_whole", "table", "tier")

    def __init__(
        self,
        groups: Iterable[PlannedGroup] = (),
        tier: RestoreTier = RestoreTier.STANDARD,
        days: int = 1,
        created: datetime | None = None,
        missing: tuple[str, ...] = (),
        *,
        table: PlanTable | None = None,
        read_whole: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.table = table if table is not None else PlanTable.from_groups(groups)
        self.tier = tier
        self.days = days
        self.created = created
        self.missing = tuple(missing)
        # a dataset selection's variables read from whole files (no references), each
        # with those files: restored and read whole, not chunk by chunk
        self.read_whole = {k: tuple(v) for k, v in (read_whole or {}).items()}
        self._index: dict[str, int] | None = None

    def __getstate__(self) -> dict[str, Any]:
        keys = ("table", "tier", "days", "created", "missing", "read_whole")
        return {k: getattr(self, k) for k in keys}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.read_whole = {}
        for key, value in data.items():
            setattr(self, key, value)
        self._index = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Plan):
            return NotImplemented
        return (self.tier, self.days, self.created, self.missing, self.read_whole) == (
            other.tier,
            other.days,
            other.created,
            other.missing,
            other.read_whole,
        ) and self.groups == other.groups

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        whole = f"; {whole_file_text(self.read_whole)}" if self.read_whole else ""
        return (
            f"Plan({len(self)} groups, {len(self.table.paths or self.table.keys)} paths, "
            f"tier={self.tier!r}, days={self.days}, missing={len(self.missing)}{whole})"
        )

    @property
    def groups(self) -> PlannedGroups:
        """The groups, made from the columns as they are read (a sequence)."""
        return PlannedGroups(self.table)

    def __iter__(self) -> Iterator[PlannedGroup]:
        return iter(self.groups)

    def __len__(self) -> int:
        return len(self.table)

    def group(self, key: str) -> PlannedGroup:
        """The planned group whose cold object is ``key``."""
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.table.keys)}
        return self.table.group(self._index[key])

    def _rows(self, rows: np.ndarray[Any, Any]) -> list[PlannedGroup]:
        table = self.table
        return [table.group(i) for i in rows.tolist()]

    def with_action(self, *actions: Action) -> list[PlannedGroup]:
        codes = [ACTION_CODE[a] for a in actions]
        return self._rows(np.flatnonzero(np.isin(self.table.action, codes)))

    @property
    def to_restore(self) -> list[PlannedGroup]:
        """Groups that need a paid restore request."""
        return self._rows(np.flatnonzero(self.table.needs_request()))

    @property
    def fee_reads(self) -> list[PlannedGroup]:
        """Groups that read at once but bill a retrieval fee per GB read (S3 STANDARD_IA,
        ONEZONE_IA, GLACIER_IR; GCS NEARLINE, COLDLINE, ARCHIVE; Azure Cool, Cold)."""
        read = ACTION_CODE[Action.READ]
        access = self.table.access()
        rows = [
            i
            for i in np.flatnonzero(self.table.action == read).tolist()
            if access[i] is Access.RETRIEVAL_FEE
        ]
        return self._rows(np.asarray(rows, dtype=np.int64))

    def only(self, groups: Iterable[PlannedGroup]) -> Plan:
        """The same plan with only ``groups`` (e.g. ``plan.only(plan.fee_reads)``); its
        ``read_whole`` keeps the files those groups hold."""
        kept = tuple(groups)
        return Plan(
            groups=kept,
            tier=self.tier,
            days=self.days,
            created=self.created,
            read_whole=self._whole_within(chain.from_iterable(g.paths for g in kept)),
        )

    def _whole_within(self, paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """``read_whole`` restricted to the files among ``paths`` (variables left with
        none are dropped)."""
        if not self.read_whole:
            return {}
        held = set(paths)
        out = {}
        for name, files in self.read_whole.items():
            kept = tuple(f for f in files if f in held)
            if kept:
                out[name] = kept
        return out

    def replace(self, **changes: Any) -> Plan:
        """The same groups with other ``tier``, ``days``, ``created``, ``missing`` or
        ``read_whole``."""
        keys = ("tier", "days", "created", "missing", "read_whole")
        fields = {k: getattr(self, k) for k in keys}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Plan.replace() got unexpected fields: {', '.join(sorted(unknown))}")
        return Plan(table=self.table, **{**fields, **changes})

    def take(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> Plan:
        """The same plan with only the groups at ``rows`` (column by column); its
        ``read_whole`` keeps the files those groups hold."""
        table = self.table.take(rows)
        return Plan(
            tier=self.tier,
            days=self.days,
            created=self.created,
            table=table,
            read_whole=self._whole_within(table.paths if table.paths is not None else table.keys),
        )

    def batches(self, size: int) -> Iterator[Plan]:
        """This plan in consecutive pieces of at most ``size`` groups (``missing`` goes
        with the first), e.g. to submit a very large plan a slice at a time."""
        if size < 1:
            raise ValueError(f"batch size must be at least 1, got {size}")
        n = len(self)
        for start in range(0, max(n, 1), size):
            piece = self.take(np.arange(start, min(start + size, n)))
            if start == 0:
                piece.missing = self.missing
            yield piece

    @property
    def paths(self) -> list[str]:
        table = self.table
        return list(table.paths if table.paths is not None else table.keys)

    def counts(self) -> dict[str, int]:
        """Number of groups per restore state."""
        counts = np.bincount(self.table.restore, minlength=len(RESTORE_STATES))
        return {s.value: int(c) for s, c in zip(RESTORE_STATES, counts.tolist(), strict=True)}

    def bytes_by_state(self) -> dict[str, int]:
        out = {state.value: 0 for state in RestoreState}
        table = self.table
        for code in np.unique(table.restore).tolist():
            total = int(table.size[table.restore == code].sum())
            out[RESTORE_STATES[code].value] = total
        return out
