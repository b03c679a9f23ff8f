"""providers/: one place maps a URL to its provider, and checks a restore's rules."""

from __future__ import annotations

import pytest

from archivefs.errors import ArchiveError, InvalidPathError, InvalidRestoreRequestError
from archivefs.filesystem import ArchiveFileSystem
from archivefs.providers import (
    AZURE,
    GCS,
    ORACLE,
    S3,
    ProviderSpec,
    provider_for_url,
    url_protocol,
)
from archivefs.stores.base import split_path


@pytest.mark.parametrize(
    ("url", "protocol", "provider"),
    [
        ("s3://bucket/key", "s3", S3),
        ("bucket/key", "s3", S3),
        ("archivefs::az://c/blob", "az", AZURE),
        ("archive::abfs://c/blob", "abfs", AZURE),
        ("gcs://bucket/o", "gcs", GCS),
        ("oci://bucket@ns/o", "oci", ORACLE),
        ("archivefs://bucket/key", "s3", S3),
    ],
)
def test_a_url_names_its_provider(url: str, protocol: str, provider: ProviderSpec) -> None:
    assert url_protocol(url) == protocol
    assert provider_for_url(url) is provider


def test_a_scheme_no_provider_has_is_refused_by_name() -> None:
    with pytest.raises(ArchiveError, match="no provider for the 'http' protocol"):
        provider_for_url("http://host/bucket/key")


@pytest.mark.parametrize(
    ("provider", "path", "fix"),
    [
        (S3, "/", "'bucket/key' or 's3://bucket/key'"),
        (AZURE, "", "'container/blob' or 'az://container/blob'"),
        (GCS, "", "'bucket/object' or 'gs://bucket/object'"),
        (ORACLE, "@ns/o", "'bucket/object', 'bucket@namespace/object' or 'oci://"),
    ],
)
def test_one_split_path_speaks_each_providers_path_form(
    provider: ProviderSpec, path: str, fix: str
) -> None:
    with pytest.raises(InvalidPathError, match=f"names no {provider.container_word}") as caught:
        split_path(path, provider)
    assert fix in str(caught.value)
    assert split_path("b@ns/k/x", provider) == ("b@ns", "k/x")


def test_s3_restore_rules_live_with_the_provider() -> None:
    from archivefs.providers.s3 import check_restore_object

    assert check_restore_object("GLACIER", "Expedited", 3) == 3
    assert (
        check_restore_object("INTELLIGENT_TIERING", "Bulk", 3, archive_access="ARCHIVE_ACCESS")
        is None
    )
    with pytest.raises(InvalidRestoreRequestError, match="not available for DEEP_ARCHIVE"):
        check_restore_object("DEEP_ARCHIVE", "Expedited", 1)
    with pytest.raises(InvalidRestoreRequestError, match="reads at once"):
        check_restore_object("STANDARD", "Bulk", 1)


@pytest.mark.parametrize("protocol", ["file", "memory"])
def test_a_target_no_provider_speaks_is_refused_by_name(protocol: str) -> None:
    """Not an AttributeError from deep in the S3 adapter at the first read."""
    with pytest.raises(ArchiveError, match=f"no provider for the '{protocol}' protocol") as raised:
        ArchiveFileSystem(target_protocol=protocol).info("/tmp")
    assert "target_protocol='s3'" in str(raised.value)


def test_a_hook_in_the_options_has_no_json_form_and_the_error_says_what_to_do() -> None:
    fs = ArchiveFileSystem(target_options={"anon": True}, on_estimate=lambda plan, estimate: True)
    with pytest.raises(ArchiveError, match="'on_estimate' holds a function") as raised:
        fs.to_json()
    assert "fs.hooks.on_estimate.append" in str(raised.value)
