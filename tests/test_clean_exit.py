"""A script that used archivefs ends quietly: nothing on stderr at interpreter exit.

Client libraries close their sessions in ``weakref.finalize`` callbacks at exit; one that
cannot run there ("Loop is not running", issue 31 item 19) prints a traceback after the
user's last line, and after pytest's summary in a test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.providers import Provider

WORKER = Path(__file__).parent / "support" / "open_zarr_worker.py"


def test_a_script_reading_through_archivefs_exits_with_nothing_on_stderr(
    provider: Provider,
) -> None:
    config = {
        "protocol": provider.spec.protocol,
        "root": provider.bucket,
        "local": str(provider.tmp_path / "src.zarr"),
        "target_options": provider.storage_options(),
        "archive_options": provider.archive_options(),
    }
    done = subprocess.run(
        [sys.executable, str(WORKER), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "28.0\n", "")
