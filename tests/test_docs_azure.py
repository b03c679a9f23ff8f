"""The getting-started page's Azure section runs as written, against the emulated Azure archive."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

from tests.support.docs import run_page_code, section_code

if TYPE_CHECKING:
    from pathlib import Path

AZURE_CHECKS = """
assert len(plan.to_restore) == 4, plan
assert float(lazy["t"].sum()) == 3160.0
assert azure.requests.count("BlobBatch") == 1
assert azure.requests.count("SetBlobTier", batched=True, status=202) == 4
assert set(azure.pending()) == set()  # all rehydrated
print("azure: ok")
"""


def test_getting_started_azure_section_gives_the_quoted_results(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the emulated Azure archive needs Node.js and npm (for Azurite)")
    pytest.importorskip("adlfs")
    code = section_code("The same on Azure Blob Archive")
    for quoted in ("# 4:", "# 3160.0", "# 1:"):
        assert quoted in code, f"the page no longer quotes {quoted}"
    assert code.count("azure.stop()") == 1
    code = code.replace("azure.stop()", AZURE_CHECKS + "azure.stop()")
    # not azure.py: a script of that name would shadow the azure package
    run_page_code(tmp_path, "azure_quickstart.py", code, "azure: ok")
