"""The one YAML loader of users' files: the same data as PyYAML's safe loader within the
bounds, a YAML error past them, with libyaml's parser and with PyYAML's pure-Python one."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from archivefs.pricing.yaml_files import MAX_DEPTH, MAX_NODES, load_yaml, shown

SHIPPED = [
    p.read_text("utf-8")
    for folder in ("sheets", "comparisons", "workloads")
    for p in (files("archivefs.pricing") / folder).iterdir()
    if p.name.endswith(".yaml")
]
ALIASES = """\
tiers: &tiers {Standard: {per_gb: 0.01, hours: [3, 5]}, Bulk: {per_gb: 0.0025, hours: [5, 12]}}
classes:
  GLACIER: {restore: *tiers}
  DEEP_ARCHIVE: {restore: *tiers}
"""


def _nested(levels: int) -> str:
    return "a: " + "[" * levels + "1" + "]" * levels + "\n"


@pytest.mark.parametrize("pure", [False, True], ids=["libyaml", "pure"])
def test_within_the_bounds_it_reads_what_pyyaml_reads(pure: bool) -> None:
    for text in [*SHIPPED, ALIASES, _nested(MAX_DEPTH - 2)]:  # mapping, lists, value: 32
        assert load_yaml(text, pure=pure) == yaml.safe_load(text)
    many = "[" + ",".join(["1"] * (MAX_NODES - 1)) + "]"  # the list and its values
    assert load_yaml(many, pure=pure) == [1] * (MAX_NODES - 1)


@pytest.mark.parametrize("pure", [False, True], ids=["libyaml", "pure"])
def test_past_the_bounds_it_raises_a_short_yaml_error(pure: bool) -> None:
    laughs = "a: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
    )
    laughs = laughs.replace("a: &a0", "a0: &a0")
    chain = "".join(f"a{i}: &a{i} [{f'*a{i - 1}' if i else 1}]\n" for i in range(40))
    cases = {
        laughs: "more than 20,000 values with aliases expanded (line 5,",
        "a: &a [1, *a]\n": "alias *a (line 1, column 11) names a node that contains it",
        chain: f"nested more than {MAX_DEPTH} levels deep",
        _nested(MAX_DEPTH - 1): f"nested more than {MAX_DEPTH} levels deep (line 1,",
        _nested(2000): "",  # libyaml stops at 1,000 levels itself, the composer at 32
        "[" + ",".join(["1"] * MAX_NODES) + "]": "more than 20,000 values",
        "a: " + "1" * 5000: "Exceeds the limit (4300 digits)",
        "x" * (256 * 1024 + 1): "longer than 262,144 characters",
    }
    for text, said in cases.items():
        with pytest.raises(yaml.YAMLError) as raised:
            load_yaml(text, pure=pure)
        message = " ".join(str(raised.value).split())
        assert said in message, message
        assert len(message) < 300


def test_values_in_messages_are_cut_short() -> None:
    assert shown("x" * 10) == repr("x" * 10)
    assert len(shown("x" * 10**6)) <= 83
    assert len(shown([["y" * 100] * 100] * 100)) <= 83
    assert len(shown(10**4000 // 7)) <= 83
