"""Reading S3's timestamps without dateutil: the one form S3 writes, parsed by the standard library.

botocore parses every timestamp of a response with dateutil, which made parsing the
``LastModified`` values of LIST pages the largest cost of planning many bundled
members. S3 writes them in one form, ``2026-11-25T01:02:03.000Z``, which
:meth:`datetime.fromisoformat` reads far faster. Anything else (a header's
``Wed, 25 Nov 2026 01:02:03 GMT``, an epoch number) goes to botocore's own parser.

botocore's documented hook for this is its response parser factory
(``set_parser_defaults(timestamp_parser=...)``), which applies to the clients a
session makes afterwards.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

_S3_FORM = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z\Z", re.ASCII)


def parse_timestamp(value: Any) -> datetime:
    """``value`` as botocore's parser reads it: the same instant, ``tzinfo`` UTC."""
    if isinstance(value, str) and _S3_FORM.match(value):
        return datetime.fromisoformat(value[:-1]).replace(tzinfo=UTC)
    from botocore.utils import parse_timestamp as parse_any

    parsed: datetime = parse_any(value)
    return parsed


def parse_timestamps_fast(fs: Any) -> None:
    """Give the session of an s3fs filesystem whose client is not made yet
    :func:`parse_timestamp`. A session the caller passed in is left as it is."""
    if getattr(fs, "_s3", None) is not None or getattr(fs, "session", True) is not None:
        return
    from aiobotocore.session import AioSession

    session = AioSession(**getattr(fs, "kwargs", {}))
    session.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp
    )
    fs.session = session
