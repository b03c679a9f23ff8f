"""The restore journal: a small local SQLite file that remembers every paid restore request.

Each cold object (``bucket/key``) of a store (the *namespace*) has at most one
record. A request is *claimed* before it is sent and its outcome recorded after,
all in ``BEGIN IMMEDIATE`` transactions of a WAL-mode database, so threads and
processes on one machine that share the file never send the same restore twice,
and a run that crashed knows which requests it made and which it may have made.

The namespace identifies the store and is stored in clear: it must not contain
secrets. URL namespaces are stripped of user info, query and fragment.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit, urlunsplit

from archivefs.errors import JournalError
from archivefs.lazy import lazy_names
from archivefs.paths import default_journal_path, private_dir
from archivefs.restore.journal_states import RecordState

if TYPE_CHECKING:
    from archivefs.restore.journal_record import JournalRecord

SCHEMA_VERSION = 1
FILE_MODE = 0o600
DEFAULT_TIMEOUT_S = 30.0
# A restore finishes within 48 hours (Deep Archive Bulk); its copy then lives
# ``days`` days. A request sent longer ago than that cannot still be pending.
MAX_RESTORE_WAIT = timedelta(hours=48)
# SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode & 0xFF``).
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 3, 5, 6, 8
_SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 10, 13, 14
_CHUNK = 500  # keys per ``IN (...)``: well under SQLite's bound-parameter limit

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS restores (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    tier TEXT,
    days INTEGER,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    claimed_at REAL,
    lease_until REAL,
    sent_at REAL,
    http_status INTEGER,
    code TEXT,
    expected_ready_at REAL,
    restored_at REAL,
    expiry REAL,
    last_error TEXT,
    updated_at REAL NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID
""",
    "CREATE INDEX IF NOT EXISTS restores_by_state ON restores (namespace, state)",
)
_COLUMNS = (
    "namespace, key, tier, days, state, attempts, owner, claimed_at, lease_until, sent_at, "
    "http_status, code, expected_ready_at, restored_at, expiry, last_error, updated_at"
)
_TIMES = ("claimed_at", "lease_until", "sent_at", "expected_ready_at", "restored_at", "expiry")


class Outcome(StrEnum):
    """What a restore request came back with."""

    ACCEPTED = "accepted"  # 202: the restore started
    IN_PROGRESS = "in_progress"  # 409 RestoreAlreadyInProgress: someone started it already
    RESTORED = "restored"  # 200: a restored copy exists (its expiry was extended)
    FAILED = "failed"  # a permanent error: nothing was started


@dataclass(frozen=True, slots=True)
class OutcomeRecord:
    """One request's outcome, for :meth:`Journal.record_outcomes`."""

    key: str
    outcome: Outcome
    expected_ready_at: datetime | None = None
    expiry: datetime | None = None
    error: str | None = None
    status: int | None = None
    code: str | None = None


_OUTCOME_STATUS: dict[Outcome, tuple[int | None, str | None]] = {
    Outcome.ACCEPTED: (202, None),
    Outcome.IN_PROGRESS: (409, "RestoreAlreadyInProgress"),
    Outcome.RESTORED: (200, None),
    Outcome.FAILED: (None, None),
}


def normalize_namespace(namespace: str) -> str:
    """Strip user info (credentials), query and fragment from a URL namespace."""
    text = str(namespace).strip()
    if not text:
        raise JournalError(
            "the journal namespace is empty.",
            fix="pass namespace= naming the store, e.g. its endpoint URL.",
        )
    parts = urlsplit(text)
    if not parts.scheme or not parts.netloc:
        return text
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme.lower(), host, parts.path, "", ""))


def owner_token() -> str:
    """``host:pid:thread`` of the caller: who holds a claim."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` on this machine is still running (zombies count as gone)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would signal it; rely on leases there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _owner_gone(owner: str | None, host: str, cache: dict[str, bool]) -> bool:
    """A claim's owner is known to be dead (same machine, process not running)."""
    if not owner:
        return True
    if owner not in cache:
        parts = owner.rsplit(":", 2)
        cache[owner] = (
            len(parts) == 3
            and parts[0] == host
            and parts[1].isdigit()
            and not process_alive(int(parts[1]))
        )
    return cache[owner]


class Journal:
    """Durable record of restore requests, shared by threads and processes on one machine.

    Parameters
    ----------
    path:
        The SQLite file (default: ``journal.sqlite`` in the user cache directory).
    namespace:
        Identifies the store (e.g. its endpoint URL). Must not contain secrets.
    timeout:
        Seconds to wait for another writer before giving up.
    clock:
        Seconds since the epoch (tests pass a fake clock).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        namespace: str = "default",
        timeout: float = DEFAULT_TIMEOUT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = (
            Path(path).expanduser().absolute() if path is not None else default_journal_path()
        )
        self.namespace = normalize_namespace(namespace)
        self.timeout = timeout
        self._clock = clock
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._host = socket.gethostname()
        with self._lock:
            self._connection()

    # -- pickling: only the path and namespace travel; the file is reopened lazily --------

    def __getstate__(self) -> dict[str, Any]:
        return {"path": str(self.path), "namespace": self.namespace, "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = Path(state["path"])
        self.namespace = state["namespace"]
        self.timeout = state["timeout"]
        self._clock = time.time
        self._lock = threading.RLock()
        self._conn = None
        self._pid = os.getpid()
        self._host = socket.gethostname()

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r}, namespace={self.namespace!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database connection (the journal reopens on next use)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # -- claiming and recording ------------------------------------------------------------

    def claim(
        self,
        keys: Sequence[str],
        *,
        tier: str,
        days: int | None,
        lease_seconds: float = 300.0,
        renew_before: datetime | None = None,
        upgrade: Collection[str] = (),
    ) -> list[str]:
        """Atomically claim the keys that need a request; return those THIS caller must send.

        A key is claimable when it has no record, or its record failed or expired,
        or its claim is unresolved (lease expired, or owner process gone), or its
        request or restored copy is too old to still be live. ``renew_before`` also
        claims restored copies that expire before that time; keys in ``upgrade`` also
        claim restores in flight at a slower tier than ``tier`` (a speed upgrade).
        Everything else is another caller's job, or already done.
        """
        if lease_seconds < 0:
            raise JournalError(
                f"lease_seconds={lease_seconds!r} is negative.",
                path=str(self.path),
                fix="pass how long a claimer may take to send its requests, e.g. 300.",
            )
        wanted = list(dict.fromkeys(keys))
        renew = renew_before.timestamp() if renew_before is not None else None
        with self._write() as conn:
            now = self._clock()
            rows = self._rows(conn, wanted)
            liveness: dict[str, bool] = {}
            faster = frozenset(upgrade)
            mine = [
                k
                for k in wanted
                if k not in rows
                or self._claimable(rows[k], now, renew, liveness)
                or (k in faster and _slower_in_flight(rows[k], tier))
            ]
            owner = owner_token()
            conn.executemany(
                "INSERT INTO restores (namespace, key, tier, days, state, attempts, owner, "
                "claimed_at, lease_until, updated_at) "
                "VALUES (?, ?, ?, ?, 'claimed', 1, ?, ?, ?, ?) "
                "ON CONFLICT (namespace, key) DO UPDATE SET tier = excluded.tier, "
                "days = excluded.days, state = 'claimed', attempts = restores.attempts + 1, "
                "owner = excluded.owner, claimed_at = excluded.claimed_at, "
                "lease_until = excluded.lease_until, sent_at = NULL, http_status = NULL, "
                "code = NULL, expected_ready_at = NULL, restored_at = NULL, expiry = NULL, "
                "updated_at = excluded.updated_at",
                [
                    (self.namespace, k, tier, days, owner, now, now + lease_seconds, now)
                    for k in mine
                ],
            )
        return mine

    def record_outcome(
        self,
        key: str,
        outcome: Outcome,
        *,
        expected_ready_at: datetime | None = None,
        expiry: datetime | None = None,
        error: str | None = None,
        status: int | None = None,
        code: str | None = None,
    ) -> None:
        """Record what the request for ``key`` came back with (status/code default per outcome)."""
        self.record_outcomes(
            [
                OutcomeRecord(
                    key,
                    Outcome(outcome),
                    expected_ready_at=expected_ready_at,
                    expiry=expiry,
                    error=error,
                    status=status,
                    code=code,
                )
            ]
        )

    def record_outcomes(self, outcomes: Sequence[OutcomeRecord]) -> None:
        """Record the outcomes of many requests in one transaction (all or none).

        The submitter's group commit: outcomes that arrive while one write is
        under way go to disk together in the next, one transaction instead of one each.
        """
        if not outcomes:
            return
        with self._write() as conn:
            now = self._clock()
            conn.executemany(
                "INSERT INTO restores (namespace, key, state, attempts, sent_at, http_status, "
                "code, expected_ready_at, restored_at, expiry, last_error, updated_at) "
                "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (namespace, key) DO UPDATE SET state = excluded.state, "
                "sent_at = excluded.sent_at, http_status = excluded.http_status, "
                "code = excluded.code, expected_ready_at = excluded.expected_ready_at, "
                "restored_at = excluded.restored_at, expiry = excluded.expiry, "
                "last_error = coalesce(excluded.last_error, restores.last_error), "
                "lease_until = NULL, updated_at = excluded.updated_at",
                [self._outcome_row(o, now) for o in outcomes],
            )

    def _outcome_row(self, record: OutcomeRecord, now: float) -> tuple[Any, ...]:
        outcome = Outcome(record.outcome)
        default_status, default_code = _OUTCOME_STATUS[outcome]
        return (
            self.namespace,
            record.key,
            outcome.value,
            now,
            record.status if record.status is not None else default_status,
            record.code if record.code is not None else default_code,
            _ts(record.expected_ready_at),
            now if outcome is Outcome.RESTORED else None,
            _ts(record.expiry),
            record.error,
            now,
        )

    def record_restored(self, key: str, *, expiry: datetime | None) -> None:
        """Record that ``key`` is readable (a poll or a notification saw it done)."""
        with self._write() as conn:
            now = self._clock()
            conn.execute(
                "INSERT INTO restores (namespace, key, state, restored_at, expiry, updated_at) "
                "VALUES (?, ?, 'restored', ?, ?, ?) "
                "ON CONFLICT (namespace, key) DO UPDATE SET state = 'restored', "
                "restored_at = excluded.restored_at, expiry = excluded.expiry, "
                "lease_until = NULL, updated_at = excluded.updated_at",
                (self.namespace, key, now, _ts(expiry), now),
            )

    def record_expired(self, key: str) -> None:
        """Record that ``key``'s restored copy is gone (or a probe shows it archived again)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE restores SET state = 'expired', lease_until = NULL, updated_at = ? "
                "WHERE namespace = ? AND key = ?",
                (self._clock(), self.namespace, key),
            )

    def release(self, keys: Sequence[str]) -> None:
        """Give back this process's claims on ``keys`` that were never sent."""
        prefix = f"{self._host}:{os.getpid()}:"
        with self._write() as conn:
            for chunk in _chunks(list(keys)):
                marks = ",".join("?" * len(chunk))
                conn.execute(
                    f"DELETE FROM restores WHERE namespace = ? AND state = 'claimed' "
                    f"AND substr(owner, 1, ?) = ? AND key IN ({marks})",
                    (self.namespace, len(prefix), prefix, *chunk),
                )

    # -- reading ---------------------------------------------------------------------------

    def get(self, key: str) -> JournalRecord | None:
        """The record of ``key``, if any."""
        found = self.records([key])
        return found[0] if found else None

    def records(self, keys: Iterable[str] | None = None) -> list[JournalRecord]:
        """Records of ``keys`` (all of this namespace if ``None``), sorted by key."""
        with self._read() as conn:
            if keys is None:
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM restores WHERE namespace = ? ORDER BY key",
                    (self.namespace,),
                ).fetchall()
            else:
                found = self._rows(conn, list(dict.fromkeys(keys)))
                rows = [found[k] for k in sorted(found)]
        return [_record(row) for row in rows]

    def unresolved(self) -> list[JournalRecord]:
        """Claims whose owner died or whose lease ran out: a request may or may not be out."""
        now = self._clock()
        liveness: dict[str, bool] = {}
        return [
            _record(row)
            for row in self._by_state(RecordState.CLAIMED)
            if row["lease_until"] is None
            or row["lease_until"] <= now
            or _owner_gone(row["owner"], self._host, liveness)
        ]

    def waiting(self) -> list[JournalRecord]:
        """Restores that were accepted (or already in progress): what we are waiting for."""
        rows = self._by_state(RecordState.ACCEPTED, RecordState.IN_PROGRESS)
        return [_record(row) for row in rows]

    def forget(self, keys: Iterable[str] | None = None) -> int:
        """Delete the records of ``keys`` (all of this namespace if ``None``); return how many."""
        with self._write() as conn:
            if keys is None:
                cursor = conn.execute("DELETE FROM restores WHERE namespace = ?", (self.namespace,))
                return cursor.rowcount
            count = 0
            for chunk in _chunks(list(dict.fromkeys(keys))):
                marks = ",".join("?" * len(chunk))
                cursor = conn.execute(
                    f"DELETE FROM restores WHERE namespace = ? AND key IN ({marks})",
                    (self.namespace, *chunk),
                )
                count += cursor.rowcount
            return count

    # -- internals -------------------------------------------------------------------------

    def _claimable(
        self,
        row: sqlite3.Row,
        now: float,
        renew_before: float | None,
        liveness: dict[str, bool],
    ) -> bool:
        state = RecordState(row["state"])
        if state in (RecordState.FAILED, RecordState.EXPIRED):
            return True
        if state is RecordState.CLAIMED:
            lease = row["lease_until"]
            if lease is None or lease <= now:
                return True
            return _owner_gone(row["owner"], self._host, liveness)
        hold = timedelta(days=row["days"] or 1).total_seconds()
        if state is RecordState.RESTORED:
            expiry = row["expiry"]
            if expiry is None:
                expiry = (row["restored_at"] or row["updated_at"]) + hold
            return expiry <= now or (renew_before is not None and expiry < renew_before)
        sent = row["sent_at"] if row["sent_at"] is not None else row["updated_at"]
        return bool(sent + MAX_RESTORE_WAIT.total_seconds() + hold <= now)

    def _by_state(self, *states: RecordState) -> list[sqlite3.Row]:
        marks = ",".join("?" * len(states))
        with self._read() as conn:
            return conn.execute(
                f"SELECT {_COLUMNS} FROM restores WHERE namespace = ? AND state IN ({marks}) "
                "ORDER BY key",
                (self.namespace, *(s.value for s in states)),
            ).fetchall()

    def _rows(self, conn: sqlite3.Connection, keys: list[str]) -> dict[str, sqlite3.Row]:
        found: dict[str, sqlite3.Row] = {}
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT {_COLUMNS} FROM restores WHERE namespace = ? AND key IN ({marks})",
                (self.namespace, *chunk),
            ):
                found[row["key"]] = row
        return found

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._translate():
            yield self._connection()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._translate():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already (e.g. disk full)
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def _translate(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as error:
            raise self._classify(error) from error

    def _classify(self, error: sqlite3.DatabaseError) -> JournalError:
        """One error per cause, with the fix for that cause (never "delete" for a full disk)."""
        code = (getattr(error, "sqlite_errorcode", 0) or 0) & 0xFF
        if code in (_SQLITE_BUSY, _SQLITE_LOCKED) or "locked" in str(error):
            return JournalError(
                f"the restore journal stayed locked by another process for "
                f"{self.timeout:g} s ({error}).",
                path=str(self.path),
                fix="retry, or pass a larger timeout= to Journal.",
            )
        if code in (_SQLITE_READONLY, _SQLITE_PERM, _SQLITE_CANTOPEN):
            return JournalError(
                f"the restore journal cannot be written ({error}).",
                path=str(self.path),
                fix=_fix_for(errno.EACCES, self.path),
            )
        if code == _SQLITE_FULL:
            return JournalError(
                f"the restore journal cannot be written: the disk is full ({error}).",
                path=str(self.path),
                fix=_fix_for(errno.ENOSPC, self.path),
            )
        if code == _SQLITE_IOERR:
            return JournalError(
                f"the restore journal hit an I/O error ({error}); its records are kept.",
                path=str(self.path),
                fix="check the disk and free space, then retry; on a network filesystem "
                "(NFS, SMB) pass a journal path on a local disk.",
            )
        return JournalError(
            f"the restore journal is damaged and cannot be read ({error}).",
            path=str(self.path),
            fix=f"move it aside (mv '{self.path}' '{self.path}.damaged'; it only remembers "
            "requests, and the next run re-probes the objects' states) or pass another "
            "journal path.",
        )

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opened after unpickling, close() or fork."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if self._conn is not None:  # inherited across fork: never use or close it here
            _ABANDONED.append(self._conn)
        self._pid = os.getpid()
        self._conn = None
        with self._translate():
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        try:
            private_dir(self.path.parent)
        except OSError as error:
            raise self._unwritable(error) from error
        # Several processes opening a new journal at once race to switch it to WAL; SQLite
        # answers the losers "database is locked" (without waiting: the busy handler does not
        # cover a journal-mode change) or "disk I/O error". Retry, within the timeout.
        deadline = time.monotonic() + self.timeout
        delay = 0.005
        while True:
            conn: sqlite3.Connection | None = None
            try:
                with _creation_lock(self.path):
                    self._create_private()
                    conn = sqlite3.connect(
                        self.path,
                        timeout=self.timeout,
                        isolation_level=None,
                        check_same_thread=False,
                    )
                    self._initialise(conn)
            except sqlite3.OperationalError as error:
                if conn is not None:
                    conn.close()
                if not _racing_open(error) or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
                continue
            except OSError as error:
                if conn is not None:
                    conn.close()
                raise self._unwritable(error) from error
            except BaseException:
                if conn is not None:
                    conn.close()
                raise
            return conn

    def _create_private(self) -> None:
        """Create the journal file with mode 0600 if missing; make it and its companions 0600.

        Never open and close a file descriptor of an *existing* database: POSIX drops every
        lock a process holds on a file when any descriptor of it is closed, so another
        thread's SQLite connection would silently lose its locks ("disk I/O error", lost
        claims). The file is only created here, under the creation lock, with ``O_EXCL``.
        """
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            pass
        else:
            os.close(fd)  # a new, empty file: no connection can hold locks on it yet
        # SQLite gives the -wal and -shm files the database file's mode; fix older files too.
        for companion in ("", "-wal", "-shm", ".lock"):
            target = Path(f"{self.path}{companion}")
            with contextlib.suppress(FileNotFoundError):
                if target.stat().st_mode & 0o777 != FILE_MODE:
                    os.chmod(target, FILE_MODE)

    def _unwritable(self, error: OSError) -> JournalError:
        """The journal's directory or file cannot be written: say which fix fits the cause."""
        return JournalError(
            f"the restore journal cannot be created or written ({error.strerror or error}).",
            path=str(self.path),
            fix=_fix_for(error.errno, self.path),
        )

    def _initialise(self, conn: sqlite3.Connection) -> None:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")  # a claim is durable before we pay
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise JournalError(
                f"the restore journal was written by a newer archivefs "
                f"(schema {version}, this one reads {SCHEMA_VERSION}).",
                path=str(self.path),
                fix="upgrade archivefs, or pass another journal path.",
            )
        if version < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        conn.execute("SELECT count(*) FROM restores WHERE namespace = ''").fetchone()


@contextlib.contextmanager
def _creation_lock(path: Path) -> Iterator[None]:
    """Serialise journal initialisation across processes and threads (``<journal>.lock``).

    Without it, a process that opens the new, still empty file while another has already
    switched it to WAL and committed claims (which live in the ``-wal`` file until a
    checkpoint) sees an empty rollback-mode database, switches it to WAL itself and resets
    the WAL: the other process's claims are lost and restores could be paid twice.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no flock; rely on SQLite alone
        yield
        return
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


# Restore speeds from fastest to slowest (a faster one upgrades a restore in flight):
# S3's tiers, and Azure's rehydrate priorities (High over Standard).
_TIER_SPEED = {"Expedited": 0, "High": 0, "Standard": 1, "Bulk": 2}


def _slower_in_flight(row: sqlite3.Row, tier: str) -> bool:
    """The record is a request in flight at a slower (or unknown) tier than ``tier``."""
    if row["state"] not in (RecordState.ACCEPTED.value, RecordState.IN_PROGRESS.value):
        return False
    held = _TIER_SPEED.get(row["tier"] or "", len(_TIER_SPEED))
    return _TIER_SPEED.get(tier, len(_TIER_SPEED)) < held


def _fix_for(code: int | None, path: Path) -> str:
    """The fix for an OS-level journal error, by cause; records are never thrown away."""
    if code == errno.ENOSPC or code == errno.EDQUOT:
        return f"free space on the disk holding {path.parent}, or pass a journal path elsewhere."
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            f"make {path.parent} writable for this user, or pass a journal path in a writable "
            "directory (journal=... / --journal, or set ARCHIVEFS_CACHE_DIR)."
        )
    return "pass a journal path in a writable directory, or set ARCHIVEFS_CACHE_DIR."


def _racing_open(error: sqlite3.OperationalError) -> bool:
    """An error another process's concurrent first open causes (worth retrying)."""
    text = str(error)
    return "locked" in text or "busy" in text or "disk I/O error" in text


_ABANDONED: list[sqlite3.Connection] = []  # connections inherited across fork


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), _CHUNK):
        yield keys[start : start + _CHUNK]


def _ts(value: datetime | None) -> float | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise JournalError(
            f"time {value.isoformat()} has no time zone.",
            fix="pass an aware datetime, e.g. datetime.now(UTC).",
        )
    return value.timestamp()


def _dt(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _record(row: sqlite3.Row) -> JournalRecord:
    from archivefs.restore.journal_record import JournalRecord  # pydantic: when records are read

    data = dict(zip(row.keys(), tuple(row), strict=True))
    for name in _TIMES:
        data[name] = _dt(data[name])
    data["updated_at"] = _dt(data["updated_at"])
    return JournalRecord.model_validate(data)


# ``JournalRecord`` from here too, as before it had a module of its own (importing it
# imports pydantic: a command that reads no record does not)
__getattr__, _ = lazy_names(__name__, {"JournalRecord": "archivefs.restore.journal_record"}, ())
