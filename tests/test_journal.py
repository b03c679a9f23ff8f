"""The restore journal: claims, outcomes, resume, concurrency, permissions, corruption."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from archivefs.errors import JournalError
from archivefs.restore.journal import (
    Journal,
    JournalRecord,
    Outcome,
    RecordState,
    normalize_namespace,
)

KEYS = [f"bucket/obj-{i:04d}" for i in range(1000)]
EPOCH = 1_700_000_000.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = EPOCH

    def __call__(self) -> float:
        return self.now

    def at(self, seconds: float) -> datetime:
        return datetime.fromtimestamp(EPOCH + seconds, UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def journal(tmp_path: Path, clock: Clock) -> Any:
    with Journal(tmp_path / "journal.sqlite", namespace="http://s3.test", clock=clock) as j:
        yield j


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- claiming and recording ------------------------------------------------------------------


def test_claim_gives_each_key_once(journal: Journal) -> None:
    assert journal.claim(["b/1", "b/2", "b/1"], tier="Standard", days=3) == ["b/1", "b/2"]
    assert journal.claim(["b/1", "b/2", "b/3"], tier="Standard", days=3) == ["b/3"]
    record = journal.get("b/1")
    assert record is not None
    assert record.state is RecordState.CLAIMED
    assert (record.tier, record.days, record.attempts) == ("Standard", 3, 1)
    assert record.owner == f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
    assert record.claimed_at == datetime.fromtimestamp(EPOCH, UTC)
    assert record.lease_until == datetime.fromtimestamp(EPOCH + 300, UTC)
    assert record.sent_at is None
    assert journal.unresolved() == []  # our own live claim, lease running


def test_outcomes_are_recorded_with_status(journal: Journal, clock: Clock) -> None:
    journal.claim(["b/a", "b/i", "b/r"], tier="Bulk", days=1)
    clock.now += 2
    journal.record_outcome("b/a", Outcome.ACCEPTED, expected_ready_at=clock.at(3600))
    journal.record_outcome("b/i", Outcome.IN_PROGRESS)
    journal.record_outcome("b/r", Outcome.RESTORED, expiry=clock.at(86_400))
    accepted, in_progress, restored = journal.records(["b/r", "b/a", "b/i"])
    assert (accepted.state, accepted.http_status, accepted.code) == ("accepted", 202, None)
    assert accepted.sent_at == clock.at(2)
    assert accepted.expected_ready_at == clock.at(3600)
    assert (in_progress.http_status, in_progress.code) == (409, "RestoreAlreadyInProgress")
    assert (restored.state, restored.http_status) == ("restored", 200)
    assert restored.restored_at == clock.at(2)
    assert restored.expiry == clock.at(86_400)
    assert [r.key for r in journal.waiting()] == ["b/a", "b/i"]
    assert journal.claim(["b/a", "b/i", "b/r"], tier="Bulk", days=1) == []


def test_failed_requests_can_be_claimed_again(journal: Journal) -> None:
    journal.claim(["b/x"], tier="Standard", days=1)
    journal.record_outcome("b/x", Outcome.FAILED, error="AccessDenied", status=403, code="Denied")
    failed = journal.get("b/x")
    assert failed is not None
    assert (failed.state, failed.http_status, failed.code) == ("failed", 403, "Denied")
    assert failed.last_error == "AccessDenied"
    assert journal.claim(["b/x"], tier="Standard", days=1) == ["b/x"]
    again = journal.get("b/x")
    assert again is not None
    assert (again.state, again.attempts, again.last_error) == ("claimed", 2, "AccessDenied")


def test_restored_copies_are_claimable_after_expiry(journal: Journal, clock: Clock) -> None:
    journal.claim(["b/r"], tier="Standard", days=1)
    journal.record_restored("b/r", expiry=clock.at(1000))
    assert journal.claim(["b/r"], tier="Standard", days=1) == []
    assert journal.claim(["b/r"], tier="Standard", days=1, renew_before=clock.at(999)) == []
    assert journal.claim(["b/r"], tier="Standard", days=1, renew_before=clock.at(1001)) == ["b/r"]
    journal.record_restored("b/r", expiry=clock.at(1000))
    clock.now += 1000
    assert journal.claim(["b/r"], tier="Standard", days=1) == ["b/r"]


def test_record_restored_creates_a_record_for_unclaimed_keys(journal: Journal) -> None:
    journal.record_restored("b/seen", expiry=None)
    record = journal.get("b/seen")
    assert record is not None
    assert (record.state, record.attempts, record.tier) == ("restored", 0, None)


def test_expired_records_are_claimable(journal: Journal) -> None:
    journal.claim(["b/e"], tier="Standard", days=1)
    journal.record_outcome("b/e", Outcome.ACCEPTED)
    journal.record_expired("b/e")
    journal.record_expired("b/never-seen")  # nothing to mark: no record is made
    assert journal.get("b/never-seen") is None
    assert journal.claim(["b/e"], tier="Standard", days=1) == ["b/e"]


def test_requests_older_than_any_restore_are_stale(journal: Journal, clock: Clock) -> None:
    journal.claim(["b/old"], tier="Bulk", days=2)
    journal.record_outcome("b/old", Outcome.ACCEPTED)
    clock.now += (48 + 2 * 24) * 3600 - 1
    assert journal.claim(["b/old"], tier="Bulk", days=2) == []
    clock.now += 1
    assert journal.claim(["b/old"], tier="Bulk", days=2) == ["b/old"]


def test_expired_lease_makes_a_claim_unresolved(journal: Journal, clock: Clock) -> None:
    assert journal.claim(["b/1", "b/2"], tier="Standard", days=1, lease_seconds=10) == [
        "b/1",
        "b/2",
    ]
    clock.now += 9
    assert journal.unresolved() == []
    assert journal.claim(["b/1"], tier="Standard", days=1) == []
    clock.now += 1
    assert [r.key for r in journal.unresolved()] == ["b/1", "b/2"]
    assert journal.claim(["b/1"], tier="Standard", days=1) == ["b/1"]
    assert [r.key for r in journal.unresolved()] == ["b/2"]


def test_claims_of_other_hosts_are_judged_by_lease(
    journal: Journal, clock: Clock, tmp_path: Path
) -> None:
    journal.claim(["b/h"], tier="Standard", days=1, lease_seconds=60)
    with sqlite3.connect(tmp_path / "journal.sqlite") as raw:  # as if written elsewhere
        raw.execute("UPDATE restores SET owner = 'elsewhere:1:1'")
    raw.close()
    assert journal.claim(["b/h"], tier="Standard", days=1) == []
    journal.release(["b/h"])  # not ours to release
    assert journal.get("b/h") is not None
    clock.now += 60
    assert journal.claim(["b/h"], tier="Standard", days=1) == ["b/h"]


def test_release_gives_back_unsent_claims(journal: Journal) -> None:
    journal.claim(["b/1", "b/2"], tier="Standard", days=1)
    journal.record_outcome("b/2", Outcome.ACCEPTED)
    journal.release(["b/1", "b/2"])
    assert journal.get("b/1") is None
    assert journal.get("b/2") is not None  # sent: no longer a claim to give back
    assert journal.claim(["b/1", "b/2"], tier="Standard", days=1) == ["b/1"]


def test_forget_and_namespaces(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal(path, namespace="one") as one, Journal(path, namespace="two") as two:
        assert one.claim(["b/1", "b/2", "b/3"], tier="Standard", days=1) == ["b/1", "b/2", "b/3"]
        assert two.claim(["b/1"], tier="Standard", days=1) == ["b/1"]
        assert one.forget(["b/1", "b/missing"]) == 1
        assert [r.key for r in one.records()] == ["b/2", "b/3"]
        assert one.forget() == 2
        assert one.records() == []
        assert [r.key for r in two.records()] == ["b/1"]


def test_large_batches_cross_the_parameter_chunking(journal: Journal) -> None:
    keys = [f"b/{i:05d}" for i in range(1234)]
    assert journal.claim(keys, tier="Bulk", days=1) == keys
    assert len(journal.records(keys)) == 1234
    assert journal.claim(keys, tier="Bulk", days=1) == []
    journal.release(keys)
    assert journal.records() == []


def test_naive_datetimes_are_refused(journal: Journal) -> None:
    journal.claim(["b/n"], tier="Standard", days=1)
    with pytest.raises(JournalError, match="no time zone"):
        journal.record_restored("b/n", expiry=datetime(2030, 1, 1))
    record = journal.get("b/n")
    assert record is not None
    assert record.state == "claimed"  # the failed write was rolled back


def test_records_are_frozen_and_serialize(journal: Journal) -> None:
    journal.claim(["b/j"], tier="Expedited", days=1)
    record = journal.get("b/j")
    assert record is not None
    with pytest.raises(ValueError, match="frozen"):
        record.tier = "Bulk"  # type: ignore[misc]
    assert JournalRecord.model_validate_json(record.model_dump_json()) == record


# -- where it lives, and what it keeps -----------------------------------------------------


def test_default_path_is_in_the_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCHIVEFS_CACHE_DIR", str(tmp_path / "cache"))
    with Journal() as journal:
        assert journal.path == tmp_path / "cache" / "journal.sqlite"
        assert journal.namespace == "default"


def test_file_and_directory_permissions(tmp_path: Path) -> None:
    path = tmp_path / "private" / "nested" / "journal.sqlite"
    with Journal(path) as journal:
        journal.claim(["b/1"], tier="Standard", days=1)
        assert _mode(tmp_path / "private") == 0o700
        assert _mode(path.parent) == 0o700
        for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
            assert _mode(path.parent / name) == 0o600, name


def test_namespaces_never_keep_credentials(tmp_path: Path) -> None:
    url = "https://AKIAEXAMPLE:s3cr3tKey@S3.example.com:9000/base?X-Amz-Security-Token=t0ken#f"
    assert normalize_namespace(url) == "https://S3.example.com:9000/base"
    assert normalize_namespace("my-store") == "my-store"
    path = tmp_path / "journal.sqlite"
    with Journal(path, namespace=url) as journal:
        journal.claim(["b/1"], tier="Standard", days=1)
        journal.record_outcome("b/1", Outcome.ACCEPTED)
        assert journal.namespace == "https://S3.example.com:9000/base"
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"S3.example.com" in stored
    for secret in (b"AKIAEXAMPLE", b"s3cr3tKey", b"t0ken"):
        assert secret not in stored


def test_empty_namespace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="namespace is empty"):
        Journal(tmp_path / "j.sqlite", namespace=" ")


def test_corrupt_file_says_where_and_how_to_clear(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    path.write_bytes(b"this is not a database, it is a text file\n" * 100)
    with pytest.raises(JournalError) as caught:
        Journal(path)
    message = str(caught.value)
    assert caught.value.path == str(path)
    assert message.startswith(f"{path}: the restore journal is damaged and cannot be read")
    assert f"mv '{path}' '{path}.damaged'" in message
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    Journal(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(JournalError, match="newer archivefs"):
        Journal(path)


def test_unwritable_location_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(JournalError, match="cannot be created") as caught:
        Journal(blocker / "journal.sqlite")
    assert caught.value.path == str(blocker / "journal.sqlite")


def test_pickles_as_path_and_namespace(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.sqlite", namespace="http://s3.test") as journal:
        journal.claim(["b/p"], tier="Standard", days=1)
        data = pickle.dumps(journal)
    assert len(data) < 300
    with pickle.loads(data) as clone:
        assert (clone.path, clone.namespace) == (journal.path, "http://s3.test")
        assert clone._conn is None  # reopened on first use
        assert clone.claim(["b/p", "b/q"], tier="Standard", days=1) == ["b/q"]


def test_reopens_after_close(journal: Journal) -> None:
    journal.claim(["b/1"], tier="Standard", days=1)
    journal.close()
    assert [r.key for r in journal.records()] == ["b/1"]


# -- concurrency -----------------------------------------------------------------------------


def _overlapping(worker: int) -> list[list[str]]:
    """Many small batches, each overlapping its neighbours; worker 1 goes the other way."""
    keys = KEYS if worker == 0 else KEYS[::-1]
    return [keys[i : i + 4] + keys[i + 500 : i + 502] for i in range(0, len(keys), 2)]


@pytest.mark.parametrize("shared", [True, False], ids=["one-journal", "journal-per-thread"])
def test_threads_get_disjoint_claims(tmp_path: Path, shared: bool) -> None:
    path = tmp_path / "journal.sqlite"
    common = Journal(path)
    barrier = threading.Barrier(2)
    results: dict[int, list[str]] = {}

    def run(worker: int) -> None:
        journal = common if shared else Journal(path)
        barrier.wait()
        got: list[str] = []
        for batch in _overlapping(worker):
            got += journal.claim(batch, tier="Standard", days=1)
        results[worker] = got
        if not shared:
            journal.close()

    threads = [threading.Thread(target=run, args=(w,)) for w in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    common.close()
    assert set(results[0]).isdisjoint(results[1])
    assert sorted(results[0] + results[1]) == KEYS


def _claim_in_process(path: str, worker: int, barrier: Any, out: Any) -> None:
    barrier.wait()  # both create the new journal file at once, too
    with Journal(path) as journal:
        got: list[str] = []
        for batch in _overlapping(worker):
            got += journal.claim(batch, tier="Standard", days=1)
        # Stay alive until both are done: a dead owner's claims are free to take.
        barrier.wait()
    out.put((worker, os.getpid(), got))


def test_processes_get_disjoint_claims(tmp_path: Path) -> None:
    path = str(tmp_path / "new-dir" / "journal.sqlite")
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    procs = [ctx.Process(target=_claim_in_process, args=(path, w, barrier, out)) for w in (0, 1)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    got = {worker: (pid, keys) for worker, pid, keys in results}
    assert set(got[0][1]).isdisjoint(got[1][1])
    assert sorted(got[0][1] + got[1][1]) == KEYS
    with Journal(path) as journal:
        owners = {r.key: int(r.owner.split(":")[1]) for r in journal.records() if r.owner}
    for pid, keys in got.values():
        assert {owners[k] for k in keys} <= {pid}


def _claim_then_hang(path: str, keys: list[str], claimed: Any, never: Any) -> None:
    journal = Journal(path, namespace="http://s3.test")
    journal.claim(keys, tier="Standard", days=1)
    claimed.set()
    never.wait(120)  # killed before this returns


def test_killed_claimer_leaves_unresolved_records(tmp_path: Path) -> None:
    path = str(tmp_path / "journal.sqlite")
    keys = KEYS[:5]
    ctx = multiprocessing.get_context("spawn")
    claimed, never = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_claim_then_hang, args=(path, keys, claimed, never))
    proc.start()
    try:
        assert claimed.wait(60)
        with Journal(path, namespace="http://s3.test") as journal:
            assert journal.claim(keys, tier="Standard", days=1) == []  # alive: its job
            assert journal.unresolved() == []
            proc.kill()  # SIGKILL: no cleanup runs
            proc.join(timeout=60)
            unresolved = journal.unresolved()
            assert [r.key for r in unresolved] == keys
            assert {r.owner.split(":")[1] for r in unresolved if r.owner} == {str(proc.pid)}
            assert journal.claim([*keys, "bucket/new"], tier="Standard", days=1) == [
                *keys,
                "bucket/new",
            ]
            assert {r.attempts for r in journal.records(keys)} == {2}
            assert journal.unresolved() == []
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()


def test_lock_held_too_long_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    Journal(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Journal(path, timeout=0.05) as journal:
            with pytest.raises(JournalError, match="stayed locked") as caught:
                journal.claim(["b/1"], tier="Standard", days=1)
            assert caught.value.path == str(path)
            assert journal.records() == []  # readers are never blocked by a writer
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_opening_a_journal_keeps_the_locks_of_other_connections_in_the_process(
    tmp_path: Path,
) -> None:
    # POSIX drops all of a process's locks on a file when any descriptor of it is closed.
    # If opening a second Journal did that, another process closing its connection would
    # think itself the last user, checkpoint and delete the -wal/-shm files under the first
    # connection, and the first connection's next claims would be lost or fail.
    path = tmp_path / "journal.sqlite"
    first = Journal(path, namespace="ns")
    first.claim(["before"], tier="Bulk", days=1)
    Journal(path, namespace="ns").close()
    reader = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('SELECT count(*) FROM restores').fetchone(); c.close()"
    )
    subprocess.run([sys.executable, "-c", reader, str(path)], check=True, timeout=120)
    first.claim(["after"], tier="Bulk", days=1)
    counter = reader.replace("fetchone()", "fetchone()[0]; print(n)").replace(
        "c.execute(", "n = c.execute("
    )
    seen = subprocess.run(
        [sys.executable, "-c", counter, str(path)],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    first.close()
    assert seen.stdout.strip() == "2"  # another process sees both claims while first is open


def test_existing_world_readable_journal_and_its_companions_become_private(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    Journal(path, namespace="ns").claim(["k"], tier="Bulk", days=1)
    for suffix in ("", "-wal", "-shm", ".lock"):
        target = Path(f"{path}{suffix}")
        if not target.exists():
            target.write_bytes(b"") if suffix == ".lock" else None
        if target.exists():
            os.chmod(target, 0o666)
    journal = Journal(path, namespace="ns")
    journal.claim(["k2"], tier="Bulk", days=1)
    modes = {
        suffix: stat.S_IMODE(Path(f"{path}{suffix}").stat().st_mode)
        for suffix in ("", "-wal", "-shm", ".lock")
        if Path(f"{path}{suffix}").exists()
    }
    assert "" in modes
    assert "-wal" in modes
    assert set(modes.values()) == {0o600}, modes
    journal.close()


def test_a_read_only_journal_says_choose_a_writable_path_not_delete(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite", namespace="ns")
    journal._connection().execute("PRAGMA query_only = ON")  # SQLite's own read-only state
    with pytest.raises(JournalError) as caught:
        journal.claim(["k"], tier="Bulk", days=1)
    message = str(caught.value)
    assert "cannot be written" in message
    assert "writable" in message
    assert "rm " not in message
    assert "delete" not in message
    journal.close()


def test_a_full_disk_says_free_space_and_keeps_the_records(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite", namespace="ns")
    journal.claim(["kept"], tier="Bulk", days=1)
    conn = journal._connection()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite answers SQLITE_FULL past it
    with pytest.raises(JournalError) as caught:
        journal.claim([f"k{i:05d}-{'x' * 200}" for i in range(2000)], tier="Bulk", days=1)
    message = str(caught.value)
    assert "disk is full" in message
    assert "free space" in message
    assert "rm " not in message
    assert "delete" not in message
    journal.close()
    assert [r.key for r in Journal(tmp_path / "journal.sqlite", namespace="ns").records()] == [
        "kept"
    ]


# -- the namespace names the store: provider, account or tenancy, endpoint ----------------


def test_one_journal_file_keeps_stores_of_different_providers_apart(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """An Oracle job holding ``data/x.nc`` must not stop an Azure restore of its own
    ``data/x.nc`` (before: both were namespace ``"s3"``, and Azure sent nothing), while a
    second filesystem on the same Azure account sees the first one's restore."""
    import uuid

    from archivefs.filesystem import ArchiveFileSystem
    from archivefs.testing._azure import ACCOUNT, ACCOUNT_KEY

    azure = request.getfixturevalue("azure_archive")
    oracle = request.getfixturevalue("oracle_archive")
    name = f"data-{uuid.uuid4().hex[:12]}"
    azure.create_container(name)
    oracle.create_bucket(name)
    azure.rehydrate_delay.update(Standard=3600.0, High=3600.0)  # stays pending
    azure.put_blob(name, "x.nc", b"azure", tier="Archive")
    oracle.put_object(name, "x.nc", b"oracle", tier="Archive")
    shared = str(tmp_path / "shared.sqlite")

    def make(protocol: str, options: dict[str, Any]) -> ArchiveFileSystem:
        return ArchiveFileSystem(
            target_protocol=protocol, target_options=options, journal=shared,
            restore_time_scale=1 / 3600, skip_instance_cache=True,
        )  # fmt: skip

    az = make("az", azure.storage_options())
    oci = make("oci", oracle.storage_options())
    assert az.engine.journal is not None
    assert oci.engine.journal is not None
    az_ns, oci_ns = az.engine.journal.namespace, oci.engine.journal.namespace

    # the Oracle job is sending its restore of data/x.nc: it holds the key's claim
    with Journal(shared, namespace=oci_ns) as oracle_job:
        assert oracle_job.claim([f"{name}/x.nc"], tier="Standard", days=1) == [f"{name}/x.nc"]
    azure.requests.clear()
    az.restore(f"{name}/x.nc")
    assert azure.requests.count("SetBlobTier") == 1  # before: 0, taken for Oracle's
    assert len(azure.pending()) == 1
    assert az_ns == f"azure:{ACCOUNT}:{azure.blob_endpoint}"
    assert oci_ns.startswith("oracle:ocid1.tenancy.")
    assert oci_ns.endswith(oracle.endpoint)
    assert ACCOUNT_KEY not in az_ns

    # a second filesystem on the same account finds the first one's record: the same store
    again = make("az", azure.storage_options())
    assert again.engine.journal is not None
    assert again.engine.journal.namespace == az_ns
    with Journal(shared, namespace=az_ns) as journal:
        record = journal.get(f"{name}/x.nc")
    assert record is not None
    assert record.state is RecordState.ACCEPTED
    with Journal(shared, namespace=oci_ns) as journal:  # Oracle's record untouched
        record = journal.get(f"{name}/x.nc")
    assert record is not None
    assert record.state is RecordState.CLAIMED


def test_s3_namespaces_keep_their_old_form(request: pytest.FixtureRequest) -> None:
    """Journals written before keep resuming: S3's namespace is still the endpoint URL, or
    ``"s3"`` on AWS's default endpoint."""
    from archivefs.filesystem import ArchiveFileSystem

    archive = request.getfixturevalue("archive")
    moto = ArchiveFileSystem(target_options=archive.storage_options(), journal=False,
                             skip_instance_cache=True)  # fmt: skip
    endpoint = archive.storage_options()["client_kwargs"]["endpoint_url"]
    assert moto.engine.journal is None  # journal=False: the namespace is the store's
    assert moto.store.namespace == endpoint
    aws = ArchiveFileSystem(target_options={"anon": True}, journal=False, skip_instance_cache=True)
    assert aws.store.namespace == "s3"
