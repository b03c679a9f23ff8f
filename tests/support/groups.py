"""Which tests share one worker under pytest-xdist (pyproject.toml: ``--dist loadgroup``)."""

from __future__ import annotations

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
