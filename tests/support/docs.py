"""Running the code of a documentation page, shared by the docs tests."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GETTING_STARTED = Path(__file__).parents[2] / "docs" / "getting-started.md"


def run_page_code(tmp_path: Path, name: str, code: str, ok_line: str) -> None:
    """Run a page's code in its own process (the page starts an EmulatedArchive, and a
    process holds one at a time) and check that its checks printed ``ok_line``."""
    script = tmp_path / name
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert ok_line in done.stdout


def section_code(title: str) -> str:
    text = GETTING_STARTED.read_text(encoding="utf-8")
    section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return "\n".join(re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL))
