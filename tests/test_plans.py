"""Plans in columns: memory per object, lazily made groups, and planning in batches."""

from __future__ import annotations

import gc
import pickle
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from fsspec.asyn import sync

from archivefs.model import (
    Action,
    ArchiveAccessTier,
    ObjectState,
    PlannedGroup,
    RestoreState,
    RestoreTier,
    StorageClass,
)
from archivefs.plans import Plan
from archivefs.pricing import estimate, estimate_batches, load_price_sheet
from archivefs.restore.planner import (
    PathInGroup,
    PathsInGroup,
    decide,
    make_plan,
    plan_objects,
    single_object_groups,
)

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SC = StorageClass
RS = RestoreState
NOW = datetime(2026, 1, 1, tzinfo=UTC)
SHEET = load_price_sheet("aws-us-east-1")


def listing(n: int) -> dict[str, ObjectState]:
    """``n`` archived objects, as a listing knows them (paths, sizes, class, state)."""
    return {
        f"bucket/obs/{i:07d}.fits": ObjectState(
            f"bucket/obs/{i:07d}.fits", 40 << 20, SC.DEEP_ARCHIVE, RS.ARCHIVED
        )
        for i in range(n)
    }


def traced(build: Any) -> tuple[Any, int, int]:
    """``build()``'s result, and the bytes it allocated at peak and kept (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        made = build()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return made, peak - base, kept - base


def test_a_plan_of_100k_objects_costs_under_100_bytes_each_beyond_the_paths() -> None:
    n = 100_000
    states = listing(n)
    plan, peak, kept = traced(lambda: plan_objects(states, tier=RestoreTier.BULK, now=NOW))
    assert len(plan) == n
    assert len(plan.to_restore[:10]) == 10
    assert peak <= 100 * n, f"{peak / n:.0f} B per object at peak"
    assert kept <= 100 * n, f"{kept / n:.0f} B per object kept"
    states.clear()  # the plan stands alone: paths are shared strings, the rest columns
    assert plan.group("bucket/obs/0000042.fits").state == ObjectState(
        "bucket/obs/0000042.fits", 40 << 20, SC.DEEP_ARCHIVE, RS.ARCHIVED
    )


def test_a_plan_of_100k_bundle_members_costs_under_100_bytes_each_beyond_the_paths() -> None:
    n, per_bundle = 100_000, 1000
    paths = [f"b/root/d{i // per_bundle:03d}/f{i:06d}" for i in range(n)]
    bundles = {
        f"b/root/.archivefs/bundles/{j:03d}.zip": ObjectState(
            f"b/root/.archivefs/bundles/{j:03d}.zip", per_bundle * 4096, SC.GLACIER, RS.ARCHIVED
        )
        for j in range(n // per_bundle)
    }
    keys = list(bundles)
    placements = [
        PathsInGroup(tuple(paths[j * per_bundle : (j + 1) * per_bundle]), key, 4096_000, 1000)
        for j, key in enumerate(keys)
    ]
    plan, peak, kept = traced(lambda: make_plan(placements, bundles, now=NOW))
    assert len(plan) == n // per_bundle
    assert plan.paths == paths
    assert peak <= 100 * n, f"{peak / n:.0f} B per member at peak"
    assert kept <= 100 * n, f"{kept / n:.0f} B per member kept"


def mixed_states() -> dict[str, ObjectState | None]:
    """Every class/state/action the estimate distinguishes, below and above minimums."""
    soon, later = NOW + timedelta(hours=1), NOW + timedelta(days=9)
    states: dict[str, ObjectState | None] = {
        "b/deep": ObjectState("b/deep", 5 << 30, SC.DEEP_ARCHIVE, RS.ARCHIVED),
        "b/tiny": ObjectState("b/tiny", 10, SC.GLACIER, RS.ARCHIVED),
        "b/flight": ObjectState("b/flight", 7 << 20, SC.GLACIER, RS.RESTORING),
        "b/expiring": ObjectState("b/expiring", 3 << 20, SC.GLACIER, RS.RESTORED, soon),
        "b/lasting": ObjectState("b/lasting", 3 << 20, SC.GLACIER, RS.RESTORED, later),
        "b/ia": ObjectState("b/ia", 2 << 20, SC.STANDARD_IA, RS.HOT),
        "b/ia-small": ObjectState("b/ia-small", 100, SC.STANDARD_IA, RS.HOT),
        "b/hot": ObjectState("b/hot", 1 << 20, SC.STANDARD, RS.HOT, etag='"abc"'),
        "b/it": ObjectState(
            "b/it",
            9 << 20,
            SC.INTELLIGENT_TIERING,
            RS.ARCHIVED,
            archive_access=ArchiveAccessTier.ARCHIVE_ACCESS,
        ),
        "b/gone": None,
    }
    for i in range(40):
        states[f"b/many/{i:02d}"] = ObjectState(
            f"b/many/{i:02d}", i * 1000, SC.GLACIER, RS.ARCHIVED
        )
    return states


@pytest.mark.parametrize("upgrade", [False, True])
def test_columns_give_the_groups_the_per_group_planner_gave(upgrade: bool) -> None:
    states = mixed_states()
    until = NOW + timedelta(days=2)
    plan = plan_objects(states, needed_until=until, upgrade=upgrade, now=NOW)
    by_placement = make_plan(
        single_object_groups(states),
        states,
        needed_until=until,
        missing=["b/gone"],
        upgrade=upgrade,
        now=NOW,
    )
    expected = tuple(
        PlannedGroup(s, decide(s, needed_until=until, upgrade=upgrade), (p,), s.size, 1)
        for p, s in states.items()
        if s is not None
    )
    assert plan.groups == expected
    assert by_placement.groups == expected
    assert plan == by_placement == Plan(expected, created=NOW, missing=("b/gone",))
    assert plan.missing == ("b/gone",)
    assert plan.group("b/hot").state is states["b/hot"]  # richer states are kept as given
    assert plan.groups[-1] == expected[-1]
    assert plan.groups[2:4] == expected[2:4]
    with pytest.raises(IndexError):
        plan.groups[len(expected)]
    assert [g.key for g in plan.to_restore] == [g.key for g in expected if g.needs_request]
    assert plan.with_action(Action.WAIT, Action.UPGRADE) == [
        g for g in expected if g.action in (Action.WAIT, Action.UPGRADE)
    ]
    assert [g.key for g in plan.fee_reads] == ["b/ia", "b/ia-small"]
    assert plan.counts() == {"hot": 3, "archived": 43, "restoring": 1, "restored": 2}
    sizes = {s: sum(g.size for g in expected if g.state.restore is s) for s in RS}
    assert plan.bytes_by_state() == {s.value: v for s, v in sizes.items()}
    assert plan.paths == [g.key for g in expected]
    assert pickle.loads(pickle.dumps(plan)) == plan


def test_paths_other_than_the_keys_and_plans_made_from_groups() -> None:
    state = ObjectState("b/bundle.zip", 4 << 20, SC.GLACIER, RS.ARCHIVED)
    placements = [
        PathInGroup("b/x/1", "b/bundle.zip", 10),
        PathInGroup("b/x/2", "b/bundle.zip", 20),
    ]
    plan = make_plan(placements, {"b/bundle.zip": state}, now=NOW)
    (group,) = plan.groups
    assert group == PlannedGroup(state, Action.RESTORE, ("b/x/1", "b/x/2"), 30, 2)
    assert Plan(plan.groups, created=NOW) == plan
    assert plan.only([]).groups == ()
    assert len(plan.take([0, 0])) == 2
    assert plan.replace(missing=("b/y",)).missing == ("b/y",)


def test_read_whole_survives_every_derived_plan_restricted_to_its_files() -> None:
    """A dataset plan's ``read_whole`` (files read whole, per variable) is kept by
    ``only``, ``take``, ``batches``, ``replace`` and pickling, each keeping the files its
    groups still hold: the bundle holding a.nc and b.nc, the object c.nc."""
    bundle = ObjectState("b/bundle.zip", 4 << 20, SC.GLACIER, RS.ARCHIVED)
    single = ObjectState("b/c.nc", 1 << 20, SC.GLACIER, RS.ARCHIVED)
    placements = [
        PathInGroup("b/a.nc", "b/bundle.zip", 10),
        PathInGroup("b/b.nc", "b/bundle.zip", 20),
        PathInGroup("b/c.nc", "b/c.nc", 1 << 20),
    ]
    whole = {"q": ("b/c.nc",), "t": ("b/a.nc", "b/c.nc"), "lat": ("b/b.nc",)}
    plan = make_plan(placements, {"b/bundle.zip": bundle, "b/c.nc": single}, now=NOW)
    plan = plan.replace(read_whole=whole)
    assert [g.key for g in plan] == ["b/bundle.zip", "b/c.nc"]
    assert plan.take([0, 1]).read_whole == whole
    assert plan.take([0]).read_whole == {"t": ("b/a.nc",), "lat": ("b/b.nc",)}
    assert plan.take([1]).read_whole == {"q": ("b/c.nc",), "t": ("b/c.nc",)}
    assert plan.only([plan.group("b/c.nc")]).read_whole == {"q": ("b/c.nc",), "t": ("b/c.nc",)}
    assert plan.only(plan.to_restore).read_whole == whole
    assert plan.only([]).read_whole == {}
    first, second = plan.batches(1)
    assert (first.read_whole, second.read_whole) == (plan.take([0]).read_whole, {
        "q": ("b/c.nc",), "t": ("b/c.nc",)
    })  # fmt: skip
    assert plan.replace(days=3).read_whole == whole
    assert pickle.loads(pickle.dumps(plan)).read_whole == whole
    assert plan != plan.replace(read_whole={})  # it is part of what the plan says
    assert "3 files read whole, not chunk by chunk, for lat, q, t: b/a.nc, b/b.nc, b/c.nc" in (
        repr(plan)
    )


def test_estimate_over_batches_equals_the_estimate_of_one_plan() -> None:
    states = mixed_states()
    plan = plan_objects(states, needed_until=NOW + timedelta(days=2), now=NOW)
    whole = estimate(plan, SHEET, tier="Bulk", reads=2, read_amplification=1.5)
    for size in (1, 7, 50):
        pieces = list(plan.batches(size))
        assert sum(len(p) for p in pieces) == len(plan)
        assert [g for p in pieces for g in p] == list(plan)
        batched = estimate_batches(pieces, SHEET, tier="Bulk", reads=2, read_amplification=1.5)
        assert batched == whole
    assert whole.restore_request_count == 44  # 43 archived (IT included) + 1 to renew
    assert estimate_batches([], SHEET) == estimate(Plan(), SHEET)


def test_planning_in_batches_sends_the_same_requests_as_one_plan(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.set_restore_delay(30)
    keys = {f"o/{i:03d}": b"x" * (i + 1) for i in range(30)}
    archive.put_objects(bucket, keys, storage_class="GLACIER")
    paths = [f"{bucket}/{k}" for k in sorted(keys)]
    fs = make_fs(journal=False)
    states = sync(fs.loop, fs.engine.store.probe, paths)
    whole = fs.engine.plan_known(states, tier=RestoreTier.BULK)
    batches = [dict(list(states.items())[i : i + 7]) for i in range(0, 30, 7)]
    plans = list(fs.engine.plan_batches(batches, tier=RestoreTier.BULK))
    assert [len(p) for p in plans] == [7, 7, 7, 7, 2]
    assert estimate_batches(plans, SHEET) == estimate(whole, SHEET)
    archive.requests.clear()
    report = sync(fs.loop, fs.engine.submit_batches, plans)
    restores = [r for r in archive.requests.records if r.op == "RestoreObject"]
    assert report.requests_sent == 30
    assert sorted(report.sent) == paths
    assert len(restores) == 30
    assert sorted(f"{r.bucket}/{r.key}" for r in restores) == paths
    assert len(archive.requests.records) == 30  # nothing but the restores


def test_a_plan_of_plain_objects_through_the_filesystem_is_the_per_object_plan(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    # plain objects alone are planned in columns; the plan must be the one the
    # per-placement planner makes: same groups, actions, bytes, and missing paths
    archive.set_restore_delay(30)
    archive.put_objects(
        bucket, {f"cold/{i}": b"x" * (i + 1) for i in range(5)}, storage_class="GLACIER"
    )
    archive.put_objects(bucket, {"hot/a": b"abc"}, storage_class="STANDARD")
    fs = make_fs(journal=False)
    fs.restore(f"{bucket}/cold/0", wait=False)
    asked = [f"{bucket}/cold", f"{bucket}/hot/a", f"{bucket}/nothing-here"]
    plan = fs.plan(asked, tier="Bulk")
    states = sync(fs.loop, fs._expand_states, asked[:2])
    expected = make_plan(
        [PathInGroup(p, p, s.size) for p, s in states.items() if s is not None],
        states,
        tier=RestoreTier.parse("Bulk"),
        days=fs.days,
        missing=[f"{bucket}/nothing-here"],
    )
    assert plan.missing == (f"{bucket}/nothing-here",)
    assert plan.groups == expected.groups
    assert plan.paths == expected.paths
    assert plan.counts() == expected.counts()
    assert {g.key: g.action for g in plan} == {
        f"{bucket}/cold/0": Action.WAIT,
        **{f"{bucket}/cold/{i}": Action.RESTORE for i in range(1, 5)},
        f"{bucket}/hot/a": Action.READ,
    }
