"""The one fault matcher every emulator uses: which request a rule replaces."""

from __future__ import annotations

import pytest

from archivefs.testing._fault_rules import FaultRules


def test_queued_rules_come_first_and_each_stops_at_its_count() -> None:
    rules = FaultRules("test", known_ops=("Get", "List"))
    rules.add(503, "Busy", ops=["Get"])  # every Get, no limit
    rules.add(500, "Next", count=2, ops=["Get"], first=True)
    picked = [rule.code if (rule := rules.pick("Get")) else None for _ in range(4)]
    assert picked == ["Next", "Next", "Busy", "Busy"]
    assert rules.pick("List") is None
    assert rules.injected == 4
    rules.clear()
    assert rules.pick("Get") is None
    assert rules.injected == 0


def test_a_rule_matches_its_buckets_and_a_seeded_fraction_repeats() -> None:
    rules = FaultRules("test")
    rules.add(503, "SlowDown", buckets=["a"])
    assert rules.pick("Get", "b") is None
    assert rules.pick("Get", "a") is not None

    def draws() -> list[bool]:
        again = FaultRules("test")
        again.add(503, "SlowDown", fraction=0.5, seed=7)
        return [again.pick("Get") is not None for _ in range(40)]

    first = draws()
    assert first == draws()
    assert 0 < sum(first) < 40


def test_bad_rules_are_refused_with_the_fix() -> None:
    rules = FaultRules("Emulator", known_ops=("Get",))
    with pytest.raises(ValueError, match="Emulator: unknown operation"):
        rules.add(503, "x", ops=["Put"])
    with pytest.raises(ValueError, match=r"outside \(0, 1\]"):
        rules.add(503, "x", fraction=0.0)
    with pytest.raises(ValueError, match="positive whole number"):
        rules.add(503, "x", count=0)
