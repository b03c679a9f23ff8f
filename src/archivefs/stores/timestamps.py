"""Reading S3's timestamps without dateutil: the one form S3 writes, parsed by the standard library.

botocore parses every timestamp of a response with dateutil, which made parsing the
``LastModified`` values of LIST pages the largest cost of planning many bundled
members. S3 writes them in one form, ``2026-11-25T01:02:03.000Z``, which
:meth:`datetime.fromisoformat` reads far faster. Anything else (a header's
``Wed, 25 Nov 2026 01:02:03 GMT``, an epoch number) goes to botocore's own parser.

``stores/s3session.py`` gives it to the sessions archivefs makes, through botocore's
documented hook (the response parser factory's ``timestamp_parser``).
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
