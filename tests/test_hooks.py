"""Budgets and estimate hooks on the filesystem; estimates match what the server saw."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from archivefs import BudgetExceededError, ObjectArchivedError
from archivefs.hooks import Hooks, Progress
from archivefs.model import (
    Action,
    ObjectState,
    PlannedGroup,
    RestoreState,
    RestoreTier,
    StorageClass,
)
from archivefs.plans import Plan
from archivefs.pricing import Estimate, estimate, load_price_sheet

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

MiB = 2**20


def test_budget_refuses_before_any_paid_request(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_objects(bucket, {f"b/{i}": b"x" * MiB for i in range(20)}, storage_class="GLACIER")
    fs = make_fs(max_cost=1e-6)
    with pytest.raises(BudgetExceededError) as info:
        fs.restore(f"{bucket}/b/*")
    error = info.value
    assert error.budget == 1e-6
    assert error.estimate is not None
    assert error.estimate > 1e-6
    assert "max_cost=" in str(error)
    assert "--max-cost" in str(error)
    assert archive.requests.count("RestoreObject") == 0
    # the claims were never taken: a bigger budget restores everything
    assert make_fs(max_cost=10.0).restore(f"{bucket}/b/*").requests_sent == 20


def test_on_estimate_hook_sees_and_can_veto(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "k", b"x", storage_class="DEEP_ARCHIVE")
    seen: list[Any] = []

    def refuse(plan: Any, estimate: Any) -> bool:
        seen.append((len(plan), estimate.restore_request_count))
        return False

    with pytest.raises(BudgetExceededError, match="refuse"):
        make_fs(on_estimate=refuse).restore(f"{bucket}/k")
    assert seen == [(1, 1)]
    assert archive.requests.count("RestoreObject") == 0


def test_estimate_matches_what_the_server_saw(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_objects(bucket, {f"e/{i}": b"y" * 1000 for i in range(7)}, storage_class="GLACIER")
    archive.put_objects(bucket, {f"e/h{i}": b"z" * 10 for i in range(3)})
    fs = make_fs()
    estimate = fs.estimate(f"{bucket}/e/*")
    archive.requests.clear()
    fs.restore(f"{bucket}/e/*", wait=True, timeout=600)
    for path in fs.glob(f"{bucket}/e/*"):
        fs.cat_file(path, start=0, end=None)
    assert estimate.restore_request_count == archive.requests.count("RestoreObject") == 7
    assert estimate.bytes_read == 7 * 1000 + 3 * 10
    assert estimate.get_request_count == 10
    assert archive.requests.count("GET") == 10
    assert archive.requests.bytes_sent("GET") == estimate.bytes_read


def test_archived_error_carries_the_estimate(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "k", b"x" * MiB, storage_class="GLACIER")
    with pytest.raises(ObjectArchivedError, match=r"costs about 0\.\d+ USD \(aws-us-east-1"):
        make_fs().cat_file(f"{bucket}/k")


def test_progress_hooks_never_kill_a_restore(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[Progress] = []

    def broken(progress: Progress) -> None:
        raise RuntimeError("display crashed")

    hooks = Hooks(on_progress=[broken, calls.append])
    with caplog.at_level(logging.WARNING):
        hooks.emit(Progress(archived=1))
        hooks.emit(Progress(restored=1, done=True))
    assert calls == [Progress(archived=1), Progress(restored=1, done=True)]
    assert caplog.text.count("failed; it is skipped") == 1


# -- Hooks and Progress as plain objects ----------------------------------------------------


def _plan_and_estimate(size: int = 2**30) -> tuple[Plan, Estimate]:
    state = ObjectState("b/k", size, StorageClass.GLACIER, RestoreState.ARCHIVED)
    plan = Plan(groups=(PlannedGroup(state, Action.RESTORE, ("b/k",), size, 1),))
    return plan, estimate(plan, load_price_sheet("aws-us-east-1"), egress="internet")


def test_budget_boundary_and_message() -> None:
    plan, est = _plan_and_estimate()
    total = 0.05 / 1000 + 0.01 + 0.023 * (1 + 1) / 30 + 0.0004 / 1000 + 0.09
    assert est.total == pytest.approx(total)
    Hooks(max_cost=est.total).approve(plan, lambda p: est)  # at the budget: allowed
    Hooks(max_cost=None).approve(plan, lambda p: est)
    with pytest.raises(BudgetExceededError) as info:
        Hooks(max_cost=0.05).approve(plan, lambda p: est)
    error = info.value
    assert (error.estimate, error.budget) == (est.total, 0.05)
    assert str(error) == (
        "the estimated cost 0.102 USD of restoring and reading 1 group(s) "
        "(1 restore requests) is above the budget of 0.05 USD; nothing was requested. "
        "Fix: raise the budget (max_cost= on the filesystem, --max-cost on the command line), "
        "choose a cheaper tier (Bulk), or restore fewer objects."
    )


@pytest.mark.parametrize(
    ("provider", "tier", "advice"),
    [
        ("s3", "Bulk", "or restore fewer objects."),
        ("azure", "High", "choose a cheaper rehydrate priority (Standard), or restore fewer"),
        ("azure", "Standard", "the command line), or restore fewer objects."),
        ("oracle", "Standard", "the command line), or restore fewer objects."),
    ],
)
def test_a_refused_budget_suggests_the_providers_own_cheaper_speed(
    provider: str, tier: str, advice: str
) -> None:
    """Azure refuses Bulk: each provider's advice names a speed it has, if one is cheaper."""
    plan, est = _plan_and_estimate()
    plan = plan.replace(tier=RestoreTier.parse(tier, provider))
    with pytest.raises(BudgetExceededError) as info:
        Hooks(max_cost=0.05).approve(plan, lambda p: est)
    assert advice in str(info.value)
    assert "Bulk" not in str(info.value)


def test_estimate_hooks_run_in_order_and_veto_names_the_hook() -> None:
    plan, est = _plan_and_estimate()
    seen: list[str] = []

    def looks(p: Plan, e: Estimate) -> None:
        seen.append(f"looks {len(p)} {e.restore_request_count}")

    def agrees(p: Plan, e: Estimate) -> bool:
        seen.append("agrees")
        return True

    def refuses(p: Plan, e: Estimate) -> bool:
        seen.append("refuses")
        return False

    Hooks(on_estimate=[looks, agrees]).approve(plan, lambda p: est)
    assert seen == ["looks 1 1", "agrees"]
    seen.clear()
    hooks = Hooks(on_estimate=[looks, refuses, agrees])
    with pytest.raises(BudgetExceededError, match=r"on_estimate hook .*refuses refused") as info:
        hooks.approve(plan, lambda p: est)
    assert seen == ["looks 1 1", "refuses"]
    assert info.value.estimate == est.total
    assert info.value.budget is None


def test_budget_is_checked_before_hooks_and_hook_errors_propagate() -> None:
    plan, est = _plan_and_estimate()
    called: list[bool] = []
    with pytest.raises(BudgetExceededError, match="budget"):
        Hooks(on_estimate=[lambda p, e: called.append(True)], max_cost=0.0).approve(
            plan, lambda p: est
        )
    assert called == []

    def broken(p: Plan, e: Estimate) -> bool:
        raise KeyError("ask the user")

    with pytest.raises(KeyError, match="ask the user"):
        Hooks(on_estimate=[broken]).approve(plan, lambda p: est)


@pytest.mark.parametrize("budget", [-1.0, float("nan"), float("inf")])
def test_bad_budgets_are_refused(budget: float) -> None:
    with pytest.raises(ValueError, match="max_cost must be a finite amount >= 0"):
        Hooks(max_cost=budget)


def test_wants_estimate() -> None:
    assert not Hooks().wants_estimate
    assert Hooks(max_cost=0.0).wants_estimate
    assert Hooks(on_estimate=[lambda p, e: None]).wants_estimate


def test_progress_from_plan_counts_groups_and_bytes_by_state() -> None:
    def g(key: str, size: int, state: RestoreState, action: Action) -> PlannedGroup:
        klass = StorageClass.STANDARD if state is RestoreState.HOT else StorageClass.GLACIER
        return PlannedGroup(ObjectState(key, size, klass, state), action, (key,), size, 1)

    plan = Plan(
        groups=(
            g("b/a", 1, RestoreState.ARCHIVED, Action.RESTORE),
            g("b/f", 2, RestoreState.ARCHIVED, Action.RESTORE),
            g("b/r", 4, RestoreState.RESTORING, Action.WAIT),
            g("b/d", 8, RestoreState.RESTORED, Action.READ),
            g("b/h", 16, RestoreState.HOT, Action.READ),
            g("b/h2", 32, RestoreState.HOT, Action.READ),
        )
    )
    progress = Progress.from_plan(
        plan, requests_sent=2, failed=frozenset({"b/f"}), eta_seconds=90.0
    )
    assert progress == Progress(
        archived=1,
        restoring=1,
        restored=1,
        hot=2,
        failed=1,
        archived_bytes=1,
        restoring_bytes=4,
        restored_bytes=8,
        hot_bytes=48,
        failed_bytes=2,
        requests_sent=2,
        eta_seconds=90.0,
        done=False,
    )
    assert (progress.groups, progress.ready) == (6, 3)
    finished = Progress.from_plan(Plan(groups=plan.groups[3:]))
    assert finished.done
    assert finished.eta_seconds is None
    with pytest.raises(AttributeError):
        finished.done = False  # type: ignore[misc]


def test_every_failing_progress_hook_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    received: list[Progress] = []

    def first(progress: Progress) -> None:
        raise ValueError("bar closed")

    def second(progress: Progress) -> None:
        raise OSError("pipe closed")

    hooks = Hooks(on_progress=[first, received.append, second])
    updates = [Progress(archived=2), Progress(restored=2, done=True)]
    with caplog.at_level(logging.DEBUG, logger="archivefs.hooks"):
        for update in updates:
            hooks.emit(update)
    assert received == updates
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage().split(" at 0x")[0] for r in warnings] == [
        "progress hook <function test_every_failing_progress_hook_warns_once.<locals>.first",
        "progress hook <function test_every_failing_progress_hook_warns_once.<locals>.second",
    ]
    assert len([r for r in caplog.records if r.levelno == logging.DEBUG]) == 2


# -- one running total per filesystem, on every path that spends ------------------------------


def _glacier(archive: EmulatedArchive, bucket: str, n: int, prefix: str = "r") -> list[str]:
    archive.put_objects(
        bucket, {f"{prefix}/{i:02d}": b"x" * MiB for i in range(n)}, storage_class="GLACIER"
    )
    archive.requests.clear()
    return [f"{bucket}/{prefix}/{i:02d}" for i in range(n)]


@pytest.mark.parametrize("policy", ["wait", "restore"])
def test_a_read_of_many_archived_paths_is_approved_as_one_job(
    archive: EmulatedArchive, bucket: str, make_fs: Any, tmp_path: Any, policy: str
) -> None:
    paths = _glacier(archive, bucket, 40)
    one = make_fs().estimate(paths[0]).total  # restoring and reading one object
    fs = make_fs(max_cost=3 * one, on_archived=policy)  # each object alone fits
    with pytest.raises(BudgetExceededError, match="40 group\\(s\\) \\(40 restore requests\\)"):
        fs.cat(paths)
    with pytest.raises(BudgetExceededError, match="40 restore requests"):
        fs.get(f"{bucket}/r/*", str(tmp_path / "out"))
    assert archive.requests.count("RestoreObject") == 0
    assert fs.hooks.spent == 0.0
    fs.hooks.set_budget(41 * one)
    if policy == "wait":
        assert fs.cat(paths) == dict.fromkeys(paths, b"x" * MiB)
    else:
        assert all(isinstance(v, Exception) for v in fs.cat(paths, on_error="return").values())
    assert archive.requests.count("RestoreObject") == 40
    assert fs.hooks.spent == pytest.approx(40 * one)


def test_the_budget_bounds_restores_prefetches_and_reads_one_by_one_together(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    paths = _glacier(archive, bucket, 10)
    one = make_fs().estimate(paths[0]).total
    fs = make_fs(max_cost=5.5 * one, on_archived="wait")
    assert fs.restore(paths[:2]).requests_sent == 2
    assert fs.prefetch(paths[:3], wait=False).requests_sent == 1  # the first two: not again
    assert fs.hooks.spent == pytest.approx(3 * one)
    # a zarr compute reads chunk by chunk: each read restores its own object
    for path in paths[:5]:
        assert fs.cat_file(path) == b"x" * MiB
    with pytest.raises(BudgetExceededError, match=r"1 restore requests.*above what is left"):
        fs.cat_file(paths[5])
    assert archive.requests.count("RestoreObject") == 5
    with pytest.raises(BudgetExceededError):
        fs.restore(paths[5:])
    assert archive.requests.count("RestoreObject") == 5
    fs.hooks.set_budget(5.5 * one, reset=True)  # a new job: the running total starts again
    assert fs.restore(paths[5:]).requests_sent == 5
    assert archive.requests.count("RestoreObject") == 10


def test_a_tier_upgrade_counts_against_the_same_budget(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(3600.0)
    paths = _glacier(archive, bucket, 4, prefix="u")
    fs = make_fs(max_cost=1.0)
    assert fs.restore(paths, tier="Bulk").requests_sent == 4
    bulk = fs.hooks.spent
    other = make_fs()
    expedited = other.estimate_plan(other.plan(paths, tier="Expedited", upgrade=True)).total
    assert expedited > 0
    fs.hooks.set_budget(expedited + 0.5 * bulk)  # the upgrade alone fits; with the Bulk, not
    with pytest.raises(BudgetExceededError, match="4 restore requests"):
        fs.restore(paths, tier="Expedited", upgrade=True)
    assert archive.requests.count("RestoreObject") == 4


def test_a_single_read_of_a_fee_charging_object_goes_through_the_budget(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_object(bucket, "ia/a", b"i" * MiB, storage_class="STANDARD_IA")
    archive.put_object(bucket, "ia/b", b"j" * MiB, storage_class="STANDARD_IA")
    fee = make_fs().estimate_plan(make_fs().plan(f"{bucket}/ia/a")).total
    fs = make_fs(max_cost=1.5 * fee)
    archive.requests.clear()
    assert fs.cat(f"{bucket}/ia/a") == b"i" * MiB  # approved as a job, then its GET draws it
    assert fs.hooks.held == 0.0
    # the provider bills a re-read again: so does the budget (the old code let it through)
    with pytest.raises(BudgetExceededError, match=r"GET of 1048576 bytes.*re-reads too"):
        fs.cat_file(f"{bucket}/ia/a")
    with pytest.raises(BudgetExceededError, match="1 object\\(s\\) that bill a retrieval fee"):
        fs.cat(f"{bucket}/ia/b")
    with pytest.raises(BudgetExceededError, match="retrieval fee"):
        fs.cat_file(f"{bucket}/ia/b")
    gets = [r.key for r in archive.requests.records if r.op == "GET" and r.bucket == bucket]
    assert [k for k in gets if k.startswith("ia/")] == ["ia/a"]  # ia/b never, ia/a once
    assert fs.hooks.spent == pytest.approx(fee)
    fs.hooks.set_budget(2.5 * fee)  # room for one more GET of 1 MiB and a ranged one
    assert fs.cat_file(f"{bucket}/ia/a") == b"i" * MiB
    assert fs.cat_file(f"{bucket}/ia/a", start=0, end=1000) == b"i" * 1000
    ranged = make_fs().estimate_plan(
        make_fs().engine.plan_known(
            {"k": ObjectState("k", 1000, StorageClass.STANDARD_IA, RestoreState.HOT)}
        )
    ).total
    assert fs.hooks.spent == pytest.approx(2 * fee + ranged)
    gets = [r.key for r in archive.requests.records if r.op == "GET" and r.bucket == bucket]
    assert [k for k in gets if k.startswith("ia/")] == ["ia/a"] * 3


def test_threads_re_reading_a_fee_charging_object_never_overspend_as_billed(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    import threading

    archive.put_object(bucket, "ia/hot", b"h" * MiB, storage_class="STANDARD_IA")
    fee = make_fs().estimate_plan(make_fs().plan(f"{bucket}/ia/hot")).total
    fs = make_fs(max_cost=5.5 * fee)  # five GETs as billed
    fs.info(f"{bucket}/ia/hot")
    archive.requests.clear()
    read: list[int] = []
    refused: list[int] = []
    start = threading.Barrier(16)

    def reader(i: int) -> None:
        start.wait()
        for _ in range(4):  # 16 threads x 4 re-reads of the same object
            try:
                assert fs.cat_file(f"{bucket}/ia/hot") == b"h" * MiB
            except BudgetExceededError:
                refused.append(i)
            else:
                read.append(i)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    gets = archive.requests.count("GET", key="ia/hot")
    assert (len(read), len(refused), gets) == (5, 59, 5)  # every GET billed, none over
    assert fs.hooks.spent == pytest.approx(5 * fee)
    assert fs.hooks.spent <= fs.hooks.max_cost


def test_approvals_from_many_threads_never_overspend() -> None:
    import threading

    sheet = load_price_sheet("aws-us-east-1")

    def one(i: int) -> Plan:
        state = ObjectState(f"b/{i}", 2**30, StorageClass.GLACIER, RestoreState.ARCHIVED)
        return Plan(groups=(PlannedGroup(state, Action.RESTORE, (f"b/{i}",), 2**30, 1),))

    def price(plan: Plan) -> Estimate:
        return estimate(plan, sheet, egress="internet")

    each = price(one(0)).total
    hooks = Hooks(max_cost=5.5 * each)
    approved: list[int] = []
    refused: list[int] = []
    start = threading.Barrier(32)

    def approve(i: int) -> None:
        start.wait()
        try:
            hooks.approve(one(i), price)
        except BudgetExceededError:
            refused.append(i)
        else:
            approved.append(i)

    threads = [threading.Thread(target=approve, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (len(approved), len(refused)) == (5, 27)
    assert hooks.spent == pytest.approx(5 * each)
    hooks.approve(one(approved[0]), price)  # approved before: free, whatever the budget
    assert hooks.spent == pytest.approx(5 * each)


def test_a_vetoed_approval_gives_its_reservation_back_and_reads_draw_what_was_held() -> None:
    sheet = load_price_sheet("aws-us-east-1")
    state = ObjectState("b/ia", 2**30, StorageClass.STANDARD_IA, RestoreState.HOT)
    plan = Plan(groups=(PlannedGroup(state, Action.READ, ("b/ia",), 2**30, 1),))

    def price(plan: Plan) -> Estimate:
        return estimate(plan, sheet)

    fee = price(plan).total
    vetoing = Hooks(max_cost=10 * fee, on_estimate=[lambda plan, e: False])
    with pytest.raises(BudgetExceededError, match="refused the plan"):
        vetoing.approve(plan, price)
    assert (vetoing.spent, vetoing.held) == (0.0, 0.0)  # reserved, then given back
    hooks = Hooks(max_cost=2.5 * fee)
    hooks.approve(plan, price)  # e.g. plan_dataset: the read is held, not yet sent
    assert (hooks.spent, hooks.held) == (pytest.approx(fee), pytest.approx(fee))
    hooks.charge(fee, "a GET", "b/ia")  # its GET draws what was held
    assert (hooks.spent, hooks.held) == (pytest.approx(fee), 0.0)
    hooks.charge(fee, "a GET", "b/ia")  # a re-read is counted anew
    hooks.refund(0.25 * fee)  # a short read gives back what it did not fetch
    assert hooks.spent == pytest.approx(1.75 * fee)
    with pytest.raises(BudgetExceededError, match="a GET, billed"):
        hooks.charge(fee, "a GET", "b/ia")
    assert hooks.spent == pytest.approx(1.75 * fee)  # refused: nothing counted


def test_a_copy_made_from_to_json_counts_against_the_same_budget(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    import fsspec

    archive.put_object(bucket, "ia/z", b"z" * MiB, storage_class="STANDARD_IA")
    fee = make_fs().estimate_plan(make_fs().plan(f"{bucket}/ia/z")).total
    fs = make_fs(max_cost=1.5 * fee)
    # zarr re-creates the filesystem it is given from its JSON form, asynchronous
    copy = fsspec.AbstractFileSystem.from_json(fs.to_json())
    assert copy is not fs
    assert copy.cat_file(f"{bucket}/ia/z") == b"z" * MiB
    assert fs.hooks.spent == pytest.approx(fee)  # the copy's GET, in the one total
    with pytest.raises(BudgetExceededError, match="re-reads too"):
        fs.cat_file(f"{bucket}/ia/z")
    assert archive.requests.count("GET", key="ia/z") == 1
