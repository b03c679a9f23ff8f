"""The FUSE binding (mfusepy), loaded over libfuse3 where the system has it.

mfusepy picks its C library when it is first imported: ``FUSE_LIBRARY_PATH`` or
``FUSE_LIBRARY_NAME`` if set, else libfuse 2 before libfuse 3. Many systems have both
(s3fs-fuse and AppImage runtimes pull in libfuse2), and over libfuse 2 no request is larger
than 128 KiB, so a sequential read costs the mount twice the requests it does over libfuse3.
So, unless the user chose a library, the binding is loaded over libfuse3 when ``ctypes``
finds it; the environment is as it was once mfusepy is imported. Every mount module takes
the binding from here.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from ctypes.util import find_library

CHOICE = ("FUSE_LIBRARY_PATH", "FUSE_LIBRARY_NAME")


@contextlib.contextmanager
def _libfuse3_preferred() -> Iterator[None]:
    """Within: mfusepy's choice is libfuse3, unless the user made one or it is missing."""
    if any(os.environ.get(name) for name in CHOICE) or find_library("fuse3") is None:
        yield
        return
    previous = os.environ.get("FUSE_LIBRARY_NAME")  # None, or an empty value: no choice
    os.environ["FUSE_LIBRARY_NAME"] = "fuse3"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["FUSE_LIBRARY_NAME"]
        else:
            os.environ["FUSE_LIBRARY_NAME"] = previous


with _libfuse3_preferred():
    import mfusepy

__all__ = ["libfuse_version", "mfusepy"]


def libfuse_version() -> tuple[int, int]:
    """The (major, minor) version of the libfuse the binding loaded."""
    return int(mfusepy.fuse_version_major), int(mfusepy.fuse_version_minor)
