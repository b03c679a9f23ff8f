"""What the `archivefs` command says and exits with when something is wrong (issue 31)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.cli import EXIT_ERROR

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=str(tmp_path / "aws-config"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "aws-credentials"),
               ARCHIVEFS_RESTORE_TIME_SCALE=str(1 / 3600))  # fmt: skip
    return env


@pytest.fixture
def cli(archive: EmulatedArchive, tmp_path: Path) -> Any:
    """The installed console script against the emulated archive (endpoint after the command)."""

    def invoke(*args: str, endpoint: str | None = None) -> subprocess.CompletedProcess[str]:
        tail = ["--endpoint-url", endpoint or archive.endpoint_url]
        tail += ["--journal", str(tmp_path / "j.sqlite")]
        return subprocess.run(
            [ARCHIVEFS, *args, *tail], capture_output=True, text=True, env=_env(tmp_path),
            timeout=600, check=False,
        )  # fmt: skip

    return invoke


def test_an_unknown_aws_profile_is_named_as_an_aws_profile(cli: Any, bucket: str) -> None:
    result = cli("ls", f"s3://{bucket}/", "--profile", "no-such-profile")
    assert result.returncode == EXIT_ERROR
    assert "AWS profile 'no-such-profile'" in result.stderr
    assert "OCI" not in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert result.stdout == ""
