"""The batch restore engine against the emulated archive, with real restore delays."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.errors import InvalidRestoreRequestError, RestoreFailedError, RestoreTimeoutError
from archivefs.model import Action, RestoreTier, StorageClass
from archivefs.restore.journal import Journal
from archivefs.restore.notify import CallbackNotificationSource
from archivefs.restore.schedule import PollSchedule

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive


def seed(archive: EmulatedArchive, bucket: str, n: int, prefix: str = "o") -> list[str]:
    keys = {f"{prefix}/{i:05d}": f"object {i}".encode() for i in range(n)}
    archive.put_objects(bucket, keys, storage_class="GLACIER")
    return [f"{bucket}/{k}" for k in sorted(keys)]


def test_500_objects_one_request_each_and_one_wait(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(2.0)
    paths = seed(archive, bucket, 500)
    fs = make_fs()
    archive.requests.clear()
    result = fs.restore(paths, wait=True, timeout=600)
    assert sorted(result.ready) == paths
    assert archive.requests.count("RestoreObject") == 500
    assert archive.requests.count("RestoreObject", status=202) == 500
    assert archive.requests.count("HEAD") == 0
    # bulk polling: every round is one LIST for 500 keys under one prefix
    assert archive.requests.count("LIST") == fs.engine.poll_rounds + 1
    assert fs.cat_file(paths[123]) == b"object 123"


def test_threads_restoring_overlapping_paths_send_one_request_per_object(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(30)
    paths = seed(archive, bucket, 60)
    errors: list[BaseException] = []

    def run(part: list[str]) -> None:
        try:
            make_fs().restore(part)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(paths[i * 10 : i * 10 + 30],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert archive.requests.count("RestoreObject", status=202) == 60
    assert archive.requests.count("RestoreObject") == 60


def test_permanent_errors_are_reported_per_group(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    paths = seed(archive, bucket, 10)
    archive.faults.error(status=403, code="AccessDenied", count=2, ops=["RestoreObject"])
    with pytest.raises(RestoreFailedError, match="2 restore request") as info:
        make_fs().restore(paths)
    assert len(info.value.failures) == 2
    assert archive.requests.count("RestoreObject", status=202) == 8
    # running again sends only the two that failed
    again = make_fs().restore(paths)
    assert again.requests_sent == 2
    assert archive.requests.count("RestoreObject", status=202) == 10


def test_bulk_status_probe_of_5000_restoring_objects(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(600)
    paths = seed(archive, bucket, 5000)
    # in flight as if 5000 RestoreObject requests had been accepted, without sending them
    archive.start_restores(bucket, [p.split("/", 1)[1] for p in paths])
    fs = make_fs(journal=False)
    archive.requests.clear()
    states = fs.probe(paths)
    assert {s.restore.value for s in states.values() if s} == {"restoring"}
    assert archive.requests.count("LIST") == 5
    assert archive.requests.count("HEAD") == 0
    # without restore status in listings, the fallback is one HEAD per archived object
    archive.restore_status_in_listings = False
    fallback = make_fs(journal=False, restore_status_in_listings=False)
    archive.requests.clear()
    fallback.probe(paths[:300])
    assert archive.requests.count("HEAD") == 300


def test_pipelined_as_ready_yields_groups_as_they_return(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "hot", b"h")
    paths = seed(archive, bucket, 5)
    fs = make_fs(journal=False)
    plan = fs.plan([f"{bucket}/hot", *paths])
    assert {g.action for g in plan} == {Action.READ, Action.RESTORE}

    fs.submit(plan)
    order = [g.key for g in fs.as_ready(plan, timeout=600)]
    assert order[0] == f"{bucket}/hot"  # readable groups come first, at once
    assert sorted(order[1:]) == paths


def test_as_ready_polls_while_the_caller_reads(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    import threading

    archive.put_object(bucket, "hot", b"h")
    paths = seed(archive, bucket, 5)
    archive.set_restore_delay(0.5)
    fs = make_fs(journal=False)
    plan = fs.plan([f"{bucket}/hot", *paths])
    fs.submit(plan)
    polled = threading.Event()
    stream = fs.as_ready(plan, timeout=600, on_round=lambda _: polled.set())
    assert next(stream).key == f"{bucket}/hot"
    # the caller is busy with the first group and asks for nothing: polls go on anyway
    # (before: the poller ran only inside next(), so this waited out its bound)
    assert polled.wait(timeout=600)
    assert sorted(g.key for g in stream) == paths


def test_as_ready_hands_a_timeout_from_the_background_poller_to_the_caller(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    paths = seed(archive, bucket, 3)
    archive.set_restore_delay(3600)
    fs = make_fs(journal=False)
    plan = fs.plan(paths)
    fs.submit(plan)
    with pytest.raises(RestoreTimeoutError, match="3 restore"):
        next(fs.as_ready(plan, timeout=0.5))


def test_restored_copies_expiring_too_soon_are_renewed(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.seconds_per_day = 86400
    paths = seed(archive, bucket, 3)
    fs = make_fs(journal=False)
    fs.restore(paths, wait=True, timeout=600)
    soon = datetime.now(UTC) + timedelta(days=5)
    plan = fs.plan(paths, needed_until=soon)
    assert {g.action for g in plan} == {Action.RENEW}
    assert plan.to_restore == list(plan.groups)
    later = fs.plan(paths, needed_until=datetime.now(UTC) + timedelta(hours=1))
    assert {g.action for g in later} == {Action.READ}


def test_poll_schedule_is_tier_aware() -> None:
    glacier = PollSchedule.for_restore(StorageClass.GLACIER, RestoreTier.STANDARD)
    deep = PollSchedule.for_restore(StorageClass.DEEP_ARCHIVE, RestoreTier.BULK)
    assert glacier.expected_max_s == 5 * 3600
    assert deep.expected_max_s == 48 * 3600


def test_journal_records_every_request(
    archive: EmulatedArchive, bucket: str, make_fs: Any, tmp_path: Path
) -> None:
    paths = seed(archive, bucket, 4)
    make_fs().restore(paths, wait=True, timeout=600)
    with Journal(tmp_path / "journal.sqlite", namespace=archive.endpoint_url) as journal:
        records = journal.records(paths)
    assert sorted(r.key for r in records) == paths
    assert {r.state for r in records} == {"restored"}


def test_notifications_replace_waiting_for_the_poll_schedule(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(1.0)
    paths = seed(archive, bucket, 3)
    events = CallbackNotificationSource()
    # the real schedule: the first poll would come minutes after submission
    fs = make_fs(journal=False, restore_time_scale=1.0, notifications=events)

    client = archive.client()

    def restored(path: str) -> bool:
        bucket_name, key = path.split("/", 1)
        header = client.head_object(Bucket=bucket_name, Key=key).get("Restore") or ""
        return 'ongoing-request="false"' in header

    def announce() -> None:
        # like S3's s3:ObjectRestore:Completed events: sent once each restore has completed
        # (a condition, not a sleep: a busy machine may take long to submit)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not all(
            archive.requests.count("RestoreObject", status=202) == len(paths) and restored(p)
            for p in paths
        ):
            time.sleep(0.2)
        events.notify_many(paths)

    thread = threading.Thread(target=announce)
    thread.start()
    result = fs.restore(paths, wait=True, timeout=600)
    thread.join()
    assert sorted(result.ready) == paths
    assert fs.engine.poll_rounds == 1  # one bulk check, prompted by the events


def test_with_a_journal_renewals_and_early_expiry_are_restored_again(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.seconds_per_day = 86400
    paths = seed(archive, bucket, 4)
    fs = make_fs()  # with a journal that remembers the first restores as done
    fs.restore(paths, wait=True, timeout=600)
    assert archive.requests.count("RestoreObject") == 4
    plan = fs.plan(paths, needed_until=datetime.now(UTC) + timedelta(days=5))
    assert {g.action for g in plan} == {Action.RENEW}
    assert fs.submit(plan).requests_sent == 4  # renewed although the journal says "restored"
    archive.expire_restore(bucket, paths[0].split("/", 1)[1])  # gone before its recorded expiry
    again = fs.restore(paths, wait=True, timeout=600)
    assert again.requests_sent == 1
    assert archive.requests.count("RestoreObject") == 9


def test_a_restore_in_flight_can_be_upgraded_to_a_faster_tier_once(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(3600.0)
    archive.put_objects(bucket, {f"u/{i}": b"x" * 100 for i in range(4)}, storage_class="GLACIER")
    paths = [f"{bucket}/u/{i}" for i in range(4)]
    make_fs().restore(paths, tier="Bulk")
    assert archive.requests.count("RestoreObject", status=202) == 4
    fs = make_fs()
    plain = fs.plan(paths, tier="Expedited")
    assert {g.action for g in plain} == {Action.WAIT}  # without upgrade: just wait
    plan = fs.plan(paths, tier="Expedited", upgrade=True)
    assert {g.action for g in plan} == {Action.UPGRADE}
    cost = fs.estimate_plan(plan)
    assert cost.restore_request_count == 4  # the upgrade is paid, and shown before it is sent
    assert cost.components["restore_requests"] > 0
    fs.restore(paths, tier="Expedited", upgrade=True)
    assert archive.requests.count("RestoreObject", status=202) == 8  # one upgrade each
    make_fs().restore(paths, tier="Expedited", upgrade=True)  # already at that tier
    make_fs().restore(paths, tier="Standard", upgrade=True)  # slower: nothing to gain
    assert archive.requests.count("RestoreObject") == 8
    records = fs.engine.journal.records()
    assert {r.tier for r in records} == {"Expedited"}


def test_a_tier_another_provider_spells_is_refused_on_s3_where_it_enters(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    """S3 has no "High" (Azure's rehydrate priority): the constructor and ``plan`` refuse
    it with S3's tiers as the fix, not the estimate with a price the sheet lacks."""
    archive.put_object(bucket, "g", b"x", storage_class="GLACIER")
    with pytest.raises(InvalidRestoreRequestError, match="Expedited, Standard, Bulk"):
        make_fs(tier="High")
    fs = make_fs()
    for call in (fs.plan, fs.estimate, fs.restore):
        with pytest.raises(InvalidRestoreRequestError, match="Expedited, Standard, Bulk"):
            call(f"{bucket}/g", tier="High")
    assert fs.plan(f"{bucket}/g", tier="bulk").tier is RestoreTier.BULK
    assert archive.requests.count("RestoreObject") == 0


def test_expedited_upgrade_of_deep_archive_is_refused_before_sending(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(3600.0)
    archive.put_object(bucket, "d", b"x", storage_class="DEEP_ARCHIVE")
    make_fs().restore(f"{bucket}/d", tier="Bulk")
    with pytest.raises(ValueError, match="Expedited"):
        make_fs().restore(f"{bucket}/d", tier="Expedited", upgrade=True)
    assert archive.requests.count("RestoreObject") == 1


def test_outcomes_of_one_wave_are_committed_in_one_journal_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Group commit: answers that arrive together are recorded in one transaction, each
    before its submission returns, and every request is still claimed before it is sent."""
    import asyncio

    from archivefs.model import ObjectState, RestoreState
    from archivefs.restore.planner import make_plan, single_object_groups
    from archivefs.restore.submitter import Submitter
    from archivefs.stores.base import RestoreOutcome

    n = 50
    states = {
        f"b/o/{i:03d}": ObjectState(f"b/o/{i:03d}", 1, StorageClass.GLACIER, RestoreState.ARCHIVED)
        for i in range(n)
    }
    plan = make_plan(single_object_groups(states), states)
    journal = Journal(tmp_path / "journal.sqlite", namespace="test")
    writes: list[int] = []
    record_outcomes = journal.record_outcomes

    def counting(outcomes: Any) -> None:
        writes.append(len(outcomes))
        record_outcomes(outcomes)

    monkeypatch.setattr(journal, "record_outcomes", counting)

    class GatedStore:
        """Answers every restore at once, when all of them are in flight."""

        def __init__(self) -> None:
            self.sent: list[str] = []
            self.claimed_before_send: list[bool] = []
            self.release = asyncio.Event()

        async def restore(self, state: ObjectState, **kwargs: Any) -> RestoreOutcome:
            record = journal.get(state.path)
            self.claimed_before_send.append(record is not None and record.state == "claimed")
            self.sent.append(state.path)
            if len(self.sent) == n:
                self.release.set()
            await self.release.wait()
            return RestoreOutcome.ACCEPTED

    async def submit() -> Any:
        store = GatedStore()
        report = await Submitter(store, journal, concurrency=n).submit(  # type: ignore[arg-type]
            plan.to_restore, tier=RestoreTier.parse("Standard"), days=1
        )
        return store, report

    with journal:
        store, report = asyncio.run(submit())
        records = journal.records(sorted(states))
    assert sorted(store.sent) == sorted(states)
    assert all(store.claimed_before_send)
    assert len(report.sent) == n
    assert writes == [n]  # one transaction for the wave, not one per request
    assert {r.state for r in records} == {"accepted"}


def test_a_timeout_says_what_was_sent_and_what_was_not(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:

    archive.set_restore_delay(3600.0)
    archive.put_objects(bucket, {f"t/{i}": b"x" * 100 for i in range(5)}, storage_class="GLACIER")
    paths = [f"{bucket}/t/{i}" for i in range(5)]
    fs = make_fs()
    with pytest.raises(RestoreTimeoutError) as sent:
        fs.restore(paths[:3], wait=True, timeout=0.5)
    assert "Of these, this call sent 3 of their restore requests." in str(sent.value)
    assert "the 3 requested restore(s) keep running at the store" in str(sent.value)
    assert sorted(sent.value.pending) == paths[:3]
    assert archive.requests.count("RestoreObject") == 3

    with pytest.raises(RestoreTimeoutError) as waited:  # another caller, the same journal
        make_fs().restore(paths[:3], wait=True, timeout=0.5)
    assert "this call sent 0 of their restore requests; 3 were restoring already" in str(
        waited.value
    )
    assert archive.requests.count("RestoreObject") == 3

    # a claim another caller took and has not reported sending: nothing runs at the store
    assert fs.engine.journal is not None
    fs.engine.journal.claim(paths[3:], tier="Standard", days=1)
    with pytest.raises(RestoreTimeoutError) as held:
        make_fs().restore(paths[3:], wait=True, timeout=0.5)
    message = str(held.value)
    assert "this call sent 0 of their restore requests; 2 are claimed by another caller" in message
    assert "nothing was sent for them here" in message
    assert "keep running" not in message
    assert archive.requests.count("RestoreObject") == 3


def test_a_read_that_waits_too_long_says_it_sent_the_restore(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:

    archive.set_restore_delay(3600.0)
    archive.put_object(bucket, "w", b"x" * 100, storage_class="GLACIER")
    fs = make_fs(on_archived="wait", wait_timeout=0.5)
    with pytest.raises(RestoreTimeoutError, match="this call sent 1 of their restore requests"):
        fs.cat_file(f"{bucket}/w")
    assert archive.requests.count("RestoreObject") == 1


@pytest.mark.parametrize(
    ("klass", "tier", "hours"),
    [("GLACIER", "Bulk", 12), ("GLACIER", "Expedited", 5 / 60), ("DEEP_ARCHIVE", "Bulk", 48)],
)
def test_expected_ready_uses_the_restores_own_tier_and_class(
    archive: EmulatedArchive, bucket: str, make_fs: Any, tmp_path: Path,
    klass: str, tier: str, hours: float,
) -> None:  # fmt: skip
    archive.set_restore_delay(600)  # stays restoring
    archive.put_objects(bucket, {"e/a": b"a"}, storage_class=klass)
    fs = make_fs(restore_time_scale=1.0)
    before = datetime.now(UTC)
    fs.restore([f"{bucket}/e/a"], tier=tier)
    after = datetime.now(UTC)
    with Journal(tmp_path / "journal.sqlite", namespace=archive.endpoint_url) as journal:
        [record] = journal.records([f"{bucket}/e/a"])
    assert record.expected_ready_at is not None
    window = timedelta(hours=hours)
    assert before + window <= record.expected_ready_at <= after + window
