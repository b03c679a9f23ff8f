"""The pure planner and the S3 restore-field parsing it relies on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from archivefs.errors import InvalidRestoreRequestError, NotArchivedError, UnknownStorageClassError
from archivefs.model import (
    Action,
    ArchiveAccessTier,
    ObjectState,
    RestoreState,
    RestoreTier,
    StorageClass,
    check_restore_request,
)
from archivefs.restore.planner import PathInGroup, make_plan, single_object_groups
from archivefs.stores.keyspace import just_before
from archivefs.stores.s3 import parse_restore_header, state_from_restore

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def state(path: str, restore: RestoreState, expiry: datetime | None = None) -> ObjectState:
    return ObjectState(path, 100, StorageClass.GLACIER, restore, restore_expiry=expiry)


def test_actions_follow_states() -> None:
    states = {
        "b/hot": ObjectState("b/hot", 1),
        "b/arch": state("b/arch", RestoreState.ARCHIVED),
        "b/ing": state("b/ing", RestoreState.RESTORING),
        "b/done": state("b/done", RestoreState.RESTORED, NOW + timedelta(days=2)),
        "b/soon": state("b/soon", RestoreState.RESTORED, NOW + timedelta(hours=1)),
    }
    plan = make_plan(
        single_object_groups(states), states, needed_until=NOW + timedelta(days=1), now=NOW
    )
    actions = {g.key: g.action for g in plan}
    assert actions == {
        "b/hot": Action.READ,
        "b/arch": Action.RESTORE,
        "b/ing": Action.WAIT,
        "b/done": Action.READ,
        "b/soon": Action.RENEW,
    }
    assert [g.key for g in plan.to_restore] == ["b/arch", "b/soon"]
    assert plan.counts() == {"hot": 1, "archived": 1, "restoring": 1, "restored": 2}


def test_paths_sharing_a_group_make_one_group() -> None:
    bundle = state("b/bundle.zip", RestoreState.ARCHIVED)
    placements = [PathInGroup(f"b/m/{i}", "b/bundle.zip", 10) for i in range(50)]
    plan = make_plan(placements, {"b/bundle.zip": bundle}, now=NOW)
    assert len(plan) == 1
    (group,) = plan.groups
    assert (group.read_bytes, group.read_requests, len(group.paths)) == (500, 50, 50)


def test_missing_objects_are_listed_not_planned() -> None:
    states: dict[str, ObjectState | None] = {"b/a": ObjectState("b/a", 1), "b/gone": None}
    plan = make_plan(single_object_groups(states), states, missing=["b/gone"], now=NOW)
    assert [g.key for g in plan] == ["b/a"]
    assert plan.missing == ("b/gone",)


def test_planning_100k_objects_is_a_dictionary_pass() -> None:
    states = {f"b/{i}": state(f"b/{i}", RestoreState.ARCHIVED) for i in range(100_000)}
    plan = make_plan(single_object_groups(states), states, now=NOW)
    assert len(plan.to_restore) == 100_000


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, (None, None)),
        ('ongoing-request="true"', (True, None)),
        (
            'ongoing-request="false", expiry-date="Fri, 21 Dec 2012 00:00:00 GMT"',
            (False, datetime(2012, 12, 21, tzinfo=UTC)),
        ),
    ],
)
def test_parse_restore_header(header: str | None, expected: tuple[object, object]) -> None:
    assert parse_restore_header(header) == expected


def test_state_from_restore_fields() -> None:
    g = StorageClass.GLACIER
    assert state_from_restore(StorageClass.STANDARD, None, None)[0] is RestoreState.HOT
    assert state_from_restore(g, None, None)[0] is RestoreState.ARCHIVED
    assert state_from_restore(g, True, None)[0] is RestoreState.RESTORING
    later = NOW + timedelta(days=1)
    assert state_from_restore(g, False, later, now=NOW) == (RestoreState.RESTORED, later)
    earlier = NOW - timedelta(days=1)
    assert state_from_restore(g, False, earlier, now=NOW) == (RestoreState.ARCHIVED, None)
    it = StorageClass.INTELLIGENT_TIERING
    assert state_from_restore(it, None, None)[0] is RestoreState.HOT
    access = ArchiveAccessTier.ARCHIVE_ACCESS
    assert state_from_restore(it, None, None, access)[0] is RestoreState.ARCHIVED


def test_just_before_sorts_between() -> None:
    for key in ["a", "dir/00017", "x/é", "k0"]:
        before = just_before(key)
        assert before is not None
        assert before < key


def test_restore_rules() -> None:
    assert check_restore_request(StorageClass.GLACIER, RestoreTier.EXPEDITED, 1) == 1
    with pytest.raises(InvalidRestoreRequestError, match="Expedited tier is not available"):
        check_restore_request(StorageClass.DEEP_ARCHIVE, RestoreTier.EXPEDITED, 1)
    with pytest.raises(NotArchivedError, match="STANDARD_IA, which reads at once"):
        check_restore_request(StorageClass.STANDARD_IA, RestoreTier.BULK, 1, path="b/k")
    with pytest.raises(InvalidRestoreRequestError, match="whole number"):
        check_restore_request(StorageClass.GLACIER, RestoreTier.BULK, 1.5)  # type: ignore[arg-type]
    it = StorageClass.INTELLIGENT_TIERING
    deep = ArchiveAccessTier.DEEP_ARCHIVE_ACCESS
    assert check_restore_request(it, RestoreTier.BULK, 5, archive_access=deep) is None
    with pytest.raises(UnknownStorageClassError, match="unknown storage class 'COLD'"):
        StorageClass.parse("COLD")
    assert StorageClass.parse(None) is StorageClass.STANDARD
    assert RestoreTier.parse("bulk") is RestoreTier.BULK
