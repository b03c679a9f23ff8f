"""Restore scenarios, once for every provider with restores (``NO_RESTORES`` says why not)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest

from archivefs.model import Action
from tests.support.providers import (
    FIRST_LOOK,
    hold_restores,
    provider_params,
    restores_started,
    seed_cold,
)

if TYPE_CHECKING:
    from tests.support.providers import Provider

WITH_RESTORES = provider_params("s3", "azure", "oracle")


@pytest.mark.parametrize("provider", WITH_RESTORES, indirect=True)
def test_a_repeat_while_pending_sends_nothing(provider: Provider) -> None:
    hold_restores(provider)
    paths = seed_cold(provider, 300)
    provider.fs().restore(paths)
    assert restores_started(provider) == Counter(paths)  # each once
    provider.server.requests.clear()

    again = provider.fs().restore(paths)  # a new instance sharing the journal
    assert again.requests_sent == 0
    assert {g.action for g in again.plan} == {Action.WAIT}
    no_journal = provider.fs(journal=False).restore(paths)  # the listing alone also knows
    assert no_journal.requests_sent == 0

    # all the two instances sent (no restore among them): per instance, one look for a
    # catalog registry (absent) and one probe listing
    assert provider.server.requests.counts() == {
        op: 2 * n for op, n in FIRST_LOOK[provider.name].items()
    }
