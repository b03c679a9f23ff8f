"""S3 timestamps read by the standard library give what botocore's dateutil parser gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
import s3fs
from aiobotocore.session import AioSession
from botocore.utils import parse_timestamp as botocore_parse
from hypothesis import given
from hypothesis import strategies as st

from archivefs.filesystem import ArchiveFileSystem
from archivefs.stores.timestamps import parse_timestamp

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

instants = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
)


@given(instants, st.sampled_from(["", ".%f", ".%f3", ".%f1"]))
def test_every_form_s3_writes_reads_as_botocore_reads_it(when: datetime, fraction: str) -> None:
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if fraction:
        digits = when.strftime("%f")[: int(fraction[3:] or 6)]
        text += "." + digits
    text += "Z"
    ours, theirs = parse_timestamp(text), botocore_parse(text)
    assert ours == theirs
    assert ours.utcoffset() == timedelta(0)


@given(st.text(alphabet="0123456789-:.TZ +GMTWedNov,", max_size=32))
def test_any_other_text_goes_to_botocore(text: str) -> None:
    try:
        expected: Any = botocore_parse(text)
    except Exception as error:  # whatever botocore raises, we raise
        with pytest.raises(type(error)):
            parse_timestamp(text)
    else:
        assert parse_timestamp(text) == expected


@pytest.mark.parametrize(
    "value", ["Wed, 25 Nov 2026 01:02:03 GMT", 1_764_032_523, "1764032523.5", "2026-11-25"]
)
def test_headers_and_epochs_read_as_botocore_reads_them(value: Any) -> None:
    assert parse_timestamp(value) == botocore_parse(value)


def test_listings_through_archivefs_carry_the_times_s3fs_gives(
    archive: EmulatedArchive, bucket: str, make_fs: Any
) -> None:
    archive.put_objects(bucket, {f"d/{i}": b"x" for i in range(5)}, storage_class="GLACIER")
    fs = make_fs()
    plain = s3fs.S3FileSystem(skip_instance_cache=True, **archive.storage_options())
    ours = {e["name"]: e["LastModified"] for e in fs.ls(f"{bucket}/d", detail=True)}
    theirs = {e["name"]: e["LastModified"] for e in plain.ls(f"{bucket}/d", detail=True)}
    assert ours == theirs
    assert len(ours) == 5
    assert fs.info(f"{bucket}/d/0")["LastModified"] == plain.info(f"{bucket}/d/0")["LastModified"]
    factory = fs.fs.session.get_component("response_parser_factory")
    assert factory.create_parser("rest-xml")._timestamp_parser is parse_timestamp


def test_a_session_the_caller_passed_is_left_alone(archive: EmulatedArchive) -> None:
    session = AioSession()
    fs = ArchiveFileSystem(
        target_protocol="s3",
        target_options={**archive.storage_options(), "session": session},
        journal=False,
        skip_instance_cache=True,
    )
    assert fs.fs.session is session
    factory = session.get_component("response_parser_factory")
    assert factory.create_parser("rest-xml")._timestamp_parser is not parse_timestamp
