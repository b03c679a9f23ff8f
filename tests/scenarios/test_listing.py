"""Listings on every provider: each object's class, access and restore state from one
listing, with exact request counts; a new filesystem's info and plan of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.providers import (
    hold_restores,
    provider_params,
    quick_restores,
    request_counts,
    seed,
)

if TYPE_CHECKING:
    from tests.support.providers import Provider

NOT_HERE = {"rgw": "test_rgw.py lists radosgw's GLACIER objects, which read at once there"}


def seed_every_state(provider: Provider) -> dict[str, tuple[str, str, str, int]]:
    """Objects below ``d/`` in every class and restore state the provider has, and a
    folder ``d/sub``: name -> (class, access, restore state, size) a listing must show."""
    spec = provider.spec
    expected = {"hot": (spec.hot_class, "immediate", "hot", 1)}
    seed(provider, {"d/hot": b"h", "d/sub/x": b"x"}, spec.hot_class)
    for i, klass in enumerate(spec.fee_classes):
        seed(provider, {f"d/fee{i}": b"f" * (i + 2)}, klass)
        expected[f"fee{i}"] = (klass, "retrieval_fee", "hot", i + 2)
    if spec.cold_class is not None:
        seed(
            provider, {n: b"c" * 4 for n in ("d/archived", "d/pending", "d/done")}, spec.cold_class
        )
        fs = provider.fs()
        quick_restores(provider)
        fs.restore([f"{provider.bucket}/d/done"], wait=True, timeout=600)
        hold_restores(provider)
        fs.restore([f"{provider.bucket}/d/pending"])
        done_class, done_state = spec.restored_as or (spec.cold_class, "restored")
        done_access = "immediate" if done_state == "hot" else "restore"
        expected |= {
            "archived": (spec.cold_class, "restore", "archived", 4),
            "pending": (spec.cold_class, "restore", "restoring", 4),
            "done": (done_class, done_access, done_state, 4),
        }
    provider.server.requests.clear()
    return expected


@pytest.mark.parametrize("provider", provider_params(skip=NOT_HERE), indirect=True)
def test_classes_and_states_come_from_one_listing(provider: Provider) -> None:
    expected = seed_every_state(provider)
    spec, d = provider.spec, f"{provider.bucket}/d"
    fs = provider.fs()
    entries = {e["name"].rsplit("/", 1)[1]: e for e in fs.ls(d, detail=True)}
    assert request_counts(provider) == spec.first_look  # no request per object

    assert entries.pop("sub")["type"] == "directory"
    shown = {
        n: (e["storage_class"], e["access"], e["restore"], e["size"]) for n, e in entries.items()
    }
    assert shown == expected
    assert fs.info(f"{d}/hot")["storage_class"] == spec.hot_class  # from the listing
    provider.server.requests.clear()
    found = fs.find(d, detail=True)
    assert {n.rsplit("/", 1)[1] for n in found} == {*expected, "x"}
    assert request_counts(provider) == {spec.list_op: 1}

    fresh = provider.fs()
    provider.server.requests.clear()
    fee = f"{d}/fee0"
    assert fresh.info(fee)["access"] == "retrieval_fee"
    assert request_counts(provider) == {spec.head_op: 1, spec.read_op: 1}  # + registry
    provider.server.requests.clear()
    plan = fresh.plan([f"{d}/{n}" for n in sorted(expected)])  # every state: one listing
    assert request_counts(provider) == {spec.list_op: 1}
    assert [g.key for g in plan.to_restore] == ([f"{d}/archived"] if spec.restores else [])
    assert sorted(g.key for g in plan.fee_reads) == [
        f"{d}/fee{i}" for i in range(len(spec.fee_classes))
    ]
