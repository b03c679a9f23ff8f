"""Estimates of plans and workloads: every component against hand-computed values."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from archivefs.errors import InvalidRestoreRequestError, PriceSheetError
from archivefs.model import Action, ObjectState, PlannedGroup, RestoreState, RestoreTier
from archivefs.model import StorageClass as SC
from archivefs.plans import Plan
from archivefs.pricing import (
    COMPONENTS,
    Estimate,
    Workload,
    estimate,
    estimate_batches,
    load_price_sheet,
)

GiB = 2**30
MiB = 2**20
US = load_price_sheet("aws-us-east-1")


def glacier_month(size: int) -> float:
    """GLACIER's monthly storage of one object: data + 32 KiB at GLACIER, 8 KiB at STANDARD."""
    return ((size + 32768) * 0.0036 + 8192 * 0.023) / GiB


def group(
    key: str,
    klass: SC,
    action: Action,
    size: int,
    *,
    read_bytes: int | None = None,
    gets: int = 1,
) -> PlannedGroup:
    state = {
        Action.READ: RestoreState.HOT if not klass.needs_restore else RestoreState.RESTORED,
        Action.RESTORE: RestoreState.ARCHIVED,
        Action.WAIT: RestoreState.RESTORING,
        Action.RENEW: RestoreState.RESTORED,
    }[action]
    return PlannedGroup(
        ObjectState(key, size, klass, state),
        action,
        (key,),
        size if read_bytes is None else read_bytes,
        gets,
    )


def only(result: Estimate, **expected: float) -> None:
    """Every component named is as expected; every other one is zero."""
    for name in COMPONENTS:
        if name != "storage_per_month":
            assert result.components[name] == pytest.approx(expected.get(name, 0.0)), name


def test_components_are_exactly_the_documented_keys() -> None:
    result = estimate(Plan(groups=()), US)
    assert list(result.components) == list(COMPONENTS)
    assert COMPONENTS == (
        "requests",
        "retrieval",
        "restore_requests",
        "restore_data",
        "restored_copy_storage",
        "egress",
        "early_deletion",
        "storage_per_month",
    )
    assert result.total == 0.0
    assert result.restore_hours == (0.0, 0.0)
    assert result.warnings == []


def test_restore_pays_request_data_and_copy_storage() -> None:
    plan = Plan(groups=(group("b/a", SC.GLACIER, Action.RESTORE, 3 * GiB, read_bytes=0, gets=0),))
    result = estimate(plan, US, days=3)
    only(
        result,
        restore_requests=0.05 / 1000,
        restore_data=3 * 0.01,
        restored_copy_storage=3 * 0.023 * (3 + 1) / 30,
    )
    assert result.components["storage_per_month"] == pytest.approx(glacier_month(3 * GiB))
    assert result.total == pytest.approx(0.05 / 1000 + 0.03 + 3 * 0.023 * (3 + 1) / 30)
    assert (result.restore_request_count, result.bytes_restored) == (1, 3 * GiB)
    assert result.tier is RestoreTier.STANDARD
    assert result.restore_hours == (3, 5)


def test_tier_and_days_come_from_the_plan_unless_given() -> None:
    plan = Plan(
        groups=(group("b/d", SC.DEEP_ARCHIVE, Action.RESTORE, 4 * GiB, read_bytes=0, gets=0),),
        tier=RestoreTier.BULK,
        days=7,
    )
    bulk = estimate(plan, US)
    only(
        bulk,
        restore_requests=0.025 / 1000,
        restore_data=4 * 0.0025,
        restored_copy_storage=4 * 0.023 * (7 + 1) / 30,
    )
    assert bulk.restore_hours == (0, 48)
    standard = estimate(plan, US, tier="standard", days=1)
    only(
        standard,
        restore_requests=0.10 / 1000,
        restore_data=4 * 0.02,
        restored_copy_storage=4 * 0.023 * (1 + 1) / 30,
    )
    assert standard.tier is RestoreTier.STANDARD
    assert standard.restore_hours == (0, 12)


def test_renew_pays_like_a_restore_wait_and_read_pay_nothing_to_restore() -> None:
    plan = Plan(
        groups=(
            group("b/renew", SC.GLACIER, Action.RENEW, GiB, read_bytes=0, gets=0),
            group("b/wait", SC.GLACIER, Action.WAIT, 5 * GiB, read_bytes=0, gets=0),
            group("b/read", SC.GLACIER, Action.READ, 7 * GiB, read_bytes=0, gets=0),
        )
    )
    result = estimate(plan, US)
    only(
        result,
        restore_requests=0.05 / 1000,
        restore_data=0.01,
        restored_copy_storage=0.023 * (1 + 1) / 30,
    )
    assert result.restore_request_count == 1
    assert result.bytes_restored == GiB


def test_gets_are_the_plans_read_requests_times_reads() -> None:
    plan = Plan(
        groups=(
            group("b/s", SC.STANDARD, Action.READ, MiB, gets=3),
            group("b/ia", SC.STANDARD_IA, Action.READ, MiB, gets=2),
        )
    )
    result = estimate(plan, US, reads=2)
    assert result.get_request_count == 10
    only(
        result,
        requests=(6 * 0.0004 + 4 * 0.001) / 1000,
        retrieval=2 * MiB / GiB * 0.01,
    )
    assert result.bytes_read == 4 * MiB


def test_retrieval_only_for_classes_that_read_at_once() -> None:
    plan = Plan(
        groups=(
            group("b/gir", SC.GLACIER_IR, Action.READ, GiB, read_bytes=GiB // 2, gets=0),
            group("b/oz", SC.ONEZONE_IA, Action.READ, GiB, gets=0),
            group("b/restored", SC.GLACIER, Action.READ, GiB, gets=0),
            group("b/std", SC.STANDARD, Action.READ, GiB, gets=0),
        )
    )
    result = estimate(plan, US, read_amplification=2.0)
    only(result, retrieval=2 * 0.5 * 0.03 + 2 * 1 * 0.01)
    assert result.bytes_read == 7 * GiB
    assert any("read amplification 2 multiplies egress and retrieval" in w for w in result.warnings)


def test_egress_tiers_are_cumulative_over_the_whole_estimate() -> None:
    sheet = US.model_copy(
        update={
            "egress": {
                "wan": [
                    US.egress["internet"][0].model_copy(update={"up_to_gb": 1.0, "per_gb": 0.1}),
                    US.egress["internet"][-1].model_copy(update={"per_gb": 0.05}),
                ]
            }
        }
    )
    plan = Plan(
        groups=(
            group("b/1", SC.STANDARD, Action.READ, GiB + GiB // 2, gets=0),
            group("b/2", SC.STANDARD, Action.READ, GiB + GiB // 2, gets=0),
        )
    )
    only(estimate(plan, sheet, egress="wan"), egress=1 * 0.1 + 2 * 0.05)
    only(estimate(plan, sheet, egress="wan", reads=2), egress=1 * 0.1 + 5 * 0.05)
    with pytest.raises(PriceSheetError, match="no egress path 'internet'"):
        estimate(plan, sheet, egress="internet")


def test_amplification_multiplies_egress_and_transfer_time() -> None:
    plan = Plan(groups=(group("b/x", SC.STANDARD, Action.READ, 10 * MiB, gets=0),))
    exact = estimate(plan, US, egress="internet", throughput_bytes_per_s=MiB)
    assert exact.transfer_seconds == 10.0
    assert exact.warnings == []
    only(exact, egress=10 * MiB / GiB * 0.09)
    fourfold = estimate(
        plan, US, egress="internet", read_amplification=4.0, throughput_bytes_per_s=MiB
    )
    assert fourfold.transfer_seconds == 40.0
    assert fourfold.bytes_read == 40 * MiB
    only(fourfold, egress=40 * MiB / GiB * 0.09)
    assert fourfold.warnings == [
        "read amplification 4 multiplies egress and retrieval: 0.010 GB needed, 0.039 GB fetched."
    ]
    # free egress and no retrieval: amplification costs time, not money, so no warning
    assert estimate(plan, US, read_amplification=4.0).warnings == []


def test_restore_latency_is_the_slowest_window() -> None:
    mixed = Plan(
        groups=(
            group("b/g", SC.GLACIER, Action.RESTORE, 1),
            group("b/d", SC.DEEP_ARCHIVE, Action.RESTORE, 1),
        ),
        tier=RestoreTier.BULK,
    )
    assert estimate(mixed, US).restore_hours == (5, 48)
    waiting = Plan(groups=(group("b/w", SC.GLACIER, Action.WAIT, 1),))
    result = estimate(waiting, US)
    assert result.restore_hours == (0, 5)  # under way: may finish any moment, at most 5 h
    assert result.tier is None
    assert result.restore_request_count == 0


def test_storage_per_month_bills_minimum_size_and_overhead() -> None:
    plan = Plan(
        groups=(
            group("b/small", SC.STANDARD_IA, Action.READ, 1000, gets=0),
            group("b/big", SC.STANDARD_IA, Action.READ, GiB, gets=0),
            group("b/g", SC.GLACIER, Action.RESTORE, 10 * MiB, gets=0),
        )
    )
    result = estimate(plan, US)
    expected = (131072 + GiB) * 0.0125 / GiB + glacier_month(10 * MiB)
    assert result.components["storage_per_month"] == pytest.approx(expected)
    assert result.total == pytest.approx(
        sum(v for k, v in result.components.items() if k != "storage_per_month")
    )
    assert result.warnings == [
        "1 object(s) in STANDARD_IA are below its 131072-byte minimum billable size and are "
        "billed as that size; bundling them would cut storage and requests."
    ]


def test_days_below_one_are_refused_not_priced_as_a_negative_copy() -> None:
    work = Workload(storage_class=SC.GLACIER, objects=10, total_bytes=10 * GiB)
    plan = Plan(groups=(group("b/g", SC.GLACIER, Action.RESTORE, GiB),))
    for days in (0, -3):
        with pytest.raises(InvalidRestoreRequestError, match="days must be a whole number"):
            estimate(work, US, days=days)
        with pytest.raises(InvalidRestoreRequestError, match="days must be a whole number"):
            estimate_batches([plan], US, days=days)
    assert estimate(work, US, days=2).components["restored_copy_storage"] > 0


def test_a_tier_name_is_read_in_the_sheets_providers_names() -> None:
    glacier = Plan(groups=(group("b/g", SC.GLACIER, Action.RESTORE, GiB),))
    work = Workload(storage_class=SC.GLACIER, objects=10, total_bytes=10 * GiB)
    for call in (estimate, estimate_batches):
        subject = glacier if call is estimate else [glacier]
        with pytest.raises(InvalidRestoreRequestError, match="High"):
            call(subject, US, tier="High")  # Azure's priority is no S3 tier
        assert call(subject, US, tier="bulk").tier is RestoreTier.BULK
    with pytest.raises(InvalidRestoreRequestError, match="High"):
        estimate(work, US, tier="High")
    azure = load_price_sheet("azure-eastus")
    archive = SC.parse("Archive", provider="azure")
    rehydrate = Plan(groups=(group("c/a", archive, Action.RESTORE, GiB),))
    assert estimate(rehydrate, azure, tier="high").tier.provider == "azure"


def test_unavailable_tier_and_unpriced_class_are_clear_errors() -> None:
    deep = Plan(groups=(group("b/d", SC.DEEP_ARCHIVE, Action.RESTORE, 1),))
    with pytest.raises(InvalidRestoreRequestError, match="Expedited tier is not available") as e:
        estimate(deep, US, tier="Expedited")  # as a restore says it: the class lacks the tier
    assert "tier='Bulk'" in str(e.value.fix)
    oracle = SC.parse("Archive", provider="oracle")
    bulk = Plan(groups=(group("b/o", oracle, Action.RESTORE, 1),))
    with pytest.raises(
        InvalidRestoreRequestError, match=r"has one restore speed, 'Standard'; not 'Bulk'"
    ) as e:
        estimate(bulk, load_price_sheet("oci-us-ashburn-1"), tier="Bulk")  # Oracle's names
    assert "Standard" in str(e.value.fix)
    glacier = Plan(groups=(group("b/g", SC.GLACIER, Action.RESTORE, 1),))
    unpriced = US.model_copy(deep=True)
    del unpriced.classes[SC.GLACIER].restore[RestoreTier.EXPEDITED]
    with pytest.raises(PriceSheetError, match="no Expedited restore price for GLACIER"):
        estimate(glacier, unpriced, tier="Expedited")  # offered, not priced: the sheet's fix
    outposts = Plan(groups=(group("b/o", SC.OUTPOSTS, Action.READ, 1),))
    with pytest.raises(PriceSheetError, match="b/o: price sheet 'aws-us-east-1' has no prices"):
        estimate(outposts, US)


@pytest.mark.parametrize(
    "kwargs",
    [{"reads": -1}, {"read_amplification": 0.5}, {"throughput_bytes_per_s": 0.0}],
)
def test_bad_parameters_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(PriceSheetError, match="cannot estimate with"):
        estimate(Plan(groups=()), US, **kwargs)  # type: ignore[arg-type]


def test_estimate_crosses_the_json_boundary_with_its_total() -> None:
    plan = Plan(groups=(group("b/a", SC.GLACIER, Action.RESTORE, GiB),))
    result = estimate(plan, US, egress="internet")
    data = json.loads(result.model_dump_json())
    assert data["total"] == pytest.approx(result.total)
    assert data["tier"] == "Standard"
    assert data["restore_hours"] == [3.0, 5.0]
    assert Estimate.model_validate({k: v for k, v in data.items() if k != "total"}) == result
    assert result.table()[-1] == ("total", result.total)


# -- workloads -----------------------------------------------------------------------------


def test_workload_sizes_three_ways() -> None:
    even = Workload(objects=3, total_bytes=10, storage_class=SC.STANDARD)
    assert even.size_counts() == [(4, 1), (3, 2)]
    assert even.sizes() == [4, 3, 3]
    each = Workload(objects=4, object_size=MiB, storage_class="GLACIER")
    assert (each.total_bytes, each.storage_class) == (4 * MiB, SC.GLACIER)
    cycled = Workload(objects=5, size_distribution=[100, 200], storage_class=SC.STANDARD)
    assert cycled.total_bytes == 700
    assert sorted(cycled.size_counts()) == [(100, 3), (200, 2)]
    assert Workload(objects=0, total_bytes=0, storage_class=SC.STANDARD).size_counts() == []


@pytest.mark.parametrize(
    "fields",
    [
        {"objects": 5, "total_bytes": 1, "size_distribution": [100, 200]},
        {"objects": 2, "size_distribution": []},
        {"objects": 0, "total_bytes": 10},
        {"objects": 2},
        {"objects": 2, "object_size": 3, "total_bytes": 5},
        {"objects": -1, "total_bytes": 0},
    ],
)
def test_inconsistent_workloads_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Workload.model_validate({"storage_class": "STANDARD", **fields})


def test_workload_each_read_restores_again() -> None:
    work = Workload(objects=10, object_size=100 * MiB, storage_class=SC.GLACIER)
    result = estimate(work, US, tier="Bulk", reads=2, days=2, egress="internet")
    gb = 10 * 100 * MiB / GiB
    only(
        result,
        restore_requests=0.0,  # Bulk requests are free for GLACIER
        restore_data=0.0,
        restored_copy_storage=2 * gb * 0.023 * (2 + 1) / 30,
        requests=20 * 0.0004 / 1000,
        egress=2 * gb * 0.09,
    )
    assert (result.restore_request_count, result.get_request_count) == (20, 20)
    assert result.bytes_restored == result.bytes_read == 2 * 10 * 100 * MiB
    assert result.components["storage_per_month"] == pytest.approx(10 * glacier_month(100 * MiB))
    assert result.warnings == []  # a tier was given


def test_workload_without_tier_warns_and_uses_standard() -> None:
    work = Workload(objects=1, total_bytes=GiB, storage_class=SC.DEEP_ARCHIVE)
    result = estimate(work, US)
    only(
        result,
        restore_requests=0.10 / 1000,
        restore_data=0.02,
        restored_copy_storage=0.023 * (1 + 1) / 30,
        requests=0.0004 / 1000,
    )
    assert result.warnings == [
        "DEEP_ARCHIVE needs a restore and no tier was given; estimated with the Standard tier "
        "(pass tier='Bulk' or 'Expedited' to compare)."
    ]
    hot = estimate(Workload(objects=1, total_bytes=GiB, storage_class=SC.STANDARD), US)
    assert hot.warnings == []
    assert hot.tier is None


@pytest.mark.parametrize(
    ("age", "charged_days"), [(0.0, 90.0), (30.0, 60.0), (89.5, 0.5), (90.0, 0.0), (400.0, 0.0)]
)
def test_early_deletion_charges_the_remaining_minimum_days(age: float, charged_days: float) -> None:
    work = Workload(
        objects=2,
        object_size=GiB,
        storage_class=SC.GLACIER,
        age_days=age,
        delete_after_read=True,
    )
    result = estimate(work, US, tier="Bulk")
    assert result.components["early_deletion"] == pytest.approx(
        2 * glacier_month(GiB) * charged_days / 30
    )


def test_early_deletion_needs_the_flag_and_assumes_new_objects_without_an_age() -> None:
    kept = Workload(objects=1, object_size=GiB, storage_class=SC.STANDARD_IA, age_days=1)
    assert estimate(kept, US).components["early_deletion"] == 0.0
    unknown = Workload(
        objects=1, object_size=GiB, storage_class=SC.STANDARD_IA, delete_after_read=True
    )
    result = estimate(unknown, US)
    assert result.components["early_deletion"] == pytest.approx(0.0125 * 30 / 30)
    assert any("delete_after_read without age_days" in w for w in result.warnings)


def test_small_workload_objects_warn() -> None:
    work = Workload(objects=4, size_distribution=[1000, GiB], storage_class=SC.GLACIER_IR)
    result = estimate(work, US)
    assert result.components["storage_per_month"] == pytest.approx(2 * (131072 + GiB) * 0.004 / GiB)
    assert result.warnings[0].startswith("2 object(s) in GLACIER_IR are below its 131072-byte")


def test_a_plan_and_the_equivalent_workload_agree() -> None:
    sizes = [10 * MiB, 20 * MiB, 30 * MiB]
    plan = Plan(
        groups=tuple(
            group(f"b/{i}", SC.DEEP_ARCHIVE, Action.RESTORE, s) for i, s in enumerate(sizes)
        )
    )
    work = Workload(objects=3, size_distribution=sizes, storage_class=SC.DEEP_ARCHIVE)
    from_plan = estimate(plan, US, tier="Bulk", egress="internet")
    from_work = estimate(work, US, tier="Bulk", egress="internet")
    for name in COMPONENTS:
        assert from_plan.components[name] == pytest.approx(from_work.components[name]), name
    assert from_plan.restore_request_count == from_work.restore_request_count == 3


@given(
    objects=st.integers(0, 10**6),
    size=st.integers(0, 10**10),
    klass=st.sampled_from([SC.STANDARD, SC.STANDARD_IA, SC.GLACIER_IR, SC.GLACIER]),
    tier=st.sampled_from(list(RestoreTier)),
    reads=st.integers(0, 5),
    amplification=st.floats(1.0, 8.0),
    egress=st.sampled_from(["internet", "same_region", "inter_region"]),
)
def test_totals_add_up_and_nothing_is_negative(
    objects: int,
    size: int,
    klass: SC,
    tier: RestoreTier,
    reads: int,
    amplification: float,
    egress: str,
) -> None:
    work = Workload(objects=objects, object_size=size, storage_class=klass)
    result = estimate(
        work, US, tier=tier, reads=reads, read_amplification=amplification, egress=egress
    )
    assert all(v >= 0 for v in result.components.values())
    assert result.total == pytest.approx(
        sum(v for k, v in result.components.items() if k != "storage_per_month")
    )
    assert result.get_request_count == objects * reads
    more = estimate(
        work, US, tier=tier, reads=reads + 1, read_amplification=amplification, egress=egress
    )
    assert more.total >= result.total


def test_reads_of_rehydrated_azure_blobs_pay_hot_reads_not_the_rehydration() -> None:
    """A rehydrated blob is a Hot blob: its GETs are Hot read operations; the Archive read
    operation (Set Blob Tier / Copy Blob out of Archive) is the rehydration's own request."""
    azure = load_price_sheet("azure-eastus")
    archive = SC.parse("Archive", provider="azure")
    hot_read = azure.price(SC.parse("Hot", provider="azure")).get_per_1000
    rehydrated = Plan(groups=(group("c/r", archive, Action.READ, MiB, gets=1000),))
    assert estimate(rehydrated, azure).components["requests"] == pytest.approx(hot_read)
    restore = Plan(groups=(group("c/a", archive, Action.RESTORE, GiB, gets=1000),))
    result = estimate(restore, azure, tier="Standard")
    assert result.components["requests"] == pytest.approx(hot_read)
    assert result.components["restore_requests"] == pytest.approx(0.55 / 1000)


def test_write_cost_is_the_put_and_the_monthly_storage_of_the_class() -> None:
    """One object written into GLACIER: one PUT at $0.03 per 1,000, and its month of
    storage with GLACIER's per-object overheads (as a workload estimate prices it)."""
    from archivefs.pricing.estimate import write_cost

    cost = write_cost(US, SC.GLACIER, GiB)
    assert cost.requests == pytest.approx(0.03 / 1000)
    assert cost.storage_per_month == pytest.approx(glacier_month(GiB))
    assert (cost.put_requests, cost.min_storage_days, cost.sheet) == (1, 90, "aws-us-east-1")
    small = write_cost(US, SC.STANDARD_IA, 1000, put_requests=3)  # below the 128 KiB minimum
    assert small.requests == pytest.approx(3 * 0.01 / 1000)
    assert small.storage_per_month == pytest.approx(128 * 1024 * 0.0125 / GiB)


def test_early_deletion_cost_bills_the_rest_of_the_minimum_days() -> None:
    """Deleting a GLACIER object after 30 of its 90 days bills 60 days (2 months) of its
    storage; after 90 days, or in STANDARD, nothing."""
    from archivefs.pricing.estimate import early_deletion_cost

    assert early_deletion_cost(US, SC.GLACIER, GiB, 30) == pytest.approx(glacier_month(GiB) * 2)
    assert early_deletion_cost(US, SC.GLACIER, GiB, 90) == 0
    assert early_deletion_cost(US, SC.STANDARD, GiB, 0) == 0
