"""Counts of what the emulated servers received."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from archivefs.testing import EmulatedArchive


def assert_each_once(started: Mapping[str, int], paths: Iterable[str]) -> None:
    """Every path had exactly one restore started (none twice, none missed, no other)."""
    wanted = set(paths)
    twice = sorted(p for p, n in started.items() if n > 1)
    never = sorted(wanted - {p for p, n in started.items() if n > 0})
    other = sorted(set(started) - wanted)
    assert (twice, never, other) == ([], [], []), "(restored twice, never, not asked for)"


def s3_restores(archive: EmulatedArchive) -> Counter[str]:
    """``bucket/key`` -> RestoreObject requests the emulated S3 archive accepted (202)."""
    return Counter(
        f"{r.bucket}/{r.key}" for r in archive.requests.matching(op="RestoreObject", status=202)
    )
