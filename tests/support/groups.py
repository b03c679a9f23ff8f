"""Which tests share one worker under pytest-xdist (pyproject.toml: ``--dist loadgroup``)."""

from __future__ import annotations

import os

import pytest

# Servers too heavy to start once per xdist worker, by the fixture that starts them:
# every test that uses one is put in that server's xdist group, so one worker runs
# them all and starts the server once (pyproject.toml runs `--dist loadgroup`).
# A fixture reached through ``request.getfixturevalue`` is not seen here: mark that
# parameter with ``pytest.mark.xdist_group`` itself (e.g. RGW_GROUP).
HEAVY_SERVERS = {"local_rgw": "radosgw", "rgw_bucket": "radosgw", "dask_client": "dask-cluster"}
RGW_GROUP = pytest.mark.xdist_group("radosgw")
# worker processes of the one Dask cluster (``dask_client``); several processes, so a
# restore decided once must hold across processes, not just threads
DASK_WORKERS = 3
# the Dask settings that cluster runs with (passed on to its worker processes): it lives
# for the whole session of one xdist worker, mostly idle, and its workers' statistical
# profiler (100 samples a second) and 20 ms event-loop ticks cost about 3 % of a core
# each, all session long; no test reads either
IDLE_QUIETLY = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
}


def name_with_group(item: pytest.Item) -> None:
    """Suffix the test's node id with ``@group`` for its xdist_group marks, as xdist does.

    xdist's loadgroup scheduler groups tests by that suffix, which xdist 3.8 sets by
    assigning ``item._nodeid``; pytest 9.2 keeps node ids in ``item._id``, so the
    assignment has no effect and every group was silently spread over the workers
    (radosgw started once per worker). Setting ``_id`` here restores the grouping;
    a suffix already present is left alone.
    """
    from _pytest.nodeid import coerce_node_id

    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})  # fmt: skip
    nodeid = item.nodeid
    if not names or nodeid.rfind("@") > nodeid.rfind("]"):
        return
    item._id = coerce_node_id(f"{nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]


def usable_cores() -> int:
    """The cores this process may run on (all of them where the OS cannot say)."""
    if hasattr(os, "sched_getaffinity"):  # Linux
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def workers_for_cores(cores: int) -> int:
    """xdist workers for ``-n auto`` on ``cores`` cores: one and a half per core.

    A worker is one Python process (one core at most, outside its subprocesses) that
    spends about a third of its time waiting by design (botocore's back-off, leases,
    restore delays, processes starting): the half worker fills those waits
    (docs/testing.md, "Fifth round", has the measurements).
    """
    return max(1, cores + cores // 2)
