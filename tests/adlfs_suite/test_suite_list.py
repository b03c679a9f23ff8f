"""The exceptions list of adlfs's suite (``suite.toml``) names tests that exist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.adlfs_suite.conftest import SUITE_FILE, TEST_MODULES, adlfs_tests, adlfs_version

SECTIONS = ("heavy", "internals", "adlfs_fails", "differences")


def test_every_listed_test_exists_with_a_reason() -> None:
    listed = tomllib.loads((Path(__file__).parent / SUITE_FILE).read_text())
    assert set(listed) <= set(SECTIONS), f"{SUITE_FILE}: unknown sections {set(listed)}"
    tests = adlfs_tests()
    sources = {name: (tests / name).read_text() for name in TEST_MODULES}
    for section in SECTIONS:
        for key, reason in listed.get(section, {}).items():
            module, *names = key.split("[", 1)[0].split("::")
            assert module in sources, f"{SUITE_FILE} [{section}] {key}: no module {module}"
            assert re.search(rf"def {re.escape(names[-1])}\(", sources[module]), (
                f"{SUITE_FILE} [{section}] {key}: no such test in adlfs {adlfs_version()}"
            )
            assert len(reason) > 10, f"{SUITE_FILE} [{section}] {key}: give the reason"
