"""What fsspec's ``glob`` walks and matches for a pattern, so that a catalog can answer it.

fsspec's ``AsyncFileSystem._glob`` walks the folder before the first wildcard
(``find`` with a depth, directories included, a name ``prefix``), sorts what it
found and keeps the names its compiled pattern matches. Below a catalog root
archivefs does the same over the catalog's sorted names without building a
``(name, info)`` pair or a dict per member; this module holds the first half,
the pattern taken apart exactly as fsspec does it, and
``tests/test_catalog_members.py`` compares the answers with fsspec's own glob.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from fsspec.utils import glob_translate

_MAGIC = re.compile("[*?[]")
_SEPARATORS = (os.path.sep, os.path.altsep) if os.path.altsep else (os.path.sep,)


@dataclass(frozen=True, slots=True)
class GlobWalk:
    """The walk behind a glob: ``find(root, maxdepth=depth, withdirs=True, prefix=prefix)``,
    then the names ``match`` accepts (a directory's with a ``/`` after it when
    ``dirs_with_slash``)."""

    root: str
    prefix: str
    depth: int | None
    pattern: re.Pattern[str]
    dirs_with_slash: bool

    def matches(self, name: str, is_directory: bool) -> bool:
        """Whether fsspec's glob keeps ``name``."""
        if is_directory and self.dirs_with_slash:
            name += "/"
        return self.pattern.match(name) is not None


def has_wildcard(path: str) -> bool:
    """Whether ``path`` holds a glob wildcard (``*``, ``?`` or ``[``)."""
    return _MAGIC.search(path) is not None


def glob_walk(pattern: str, stripped: str, maxdepth: int | None) -> GlobWalk | None:
    """The walk for ``pattern`` as given (``stripped``: with the protocol taken off), or
    None when it has no wildcard (fsspec then only asks whether the path exists).

    Raises :class:`ValueError` for a ``maxdepth`` below 1, as fsspec does."""
    if maxdepth is not None and maxdepth < 1:
        raise ValueError("maxdepth must be at least 1")
    first = _MAGIC.search(stripped)
    if first is None:
        return None
    ends_with_sep = pattern.endswith(_SEPARATORS)
    wildcard = first.start()
    slash = stripped.rfind("/", 0, wildcard)
    root, prefix = stripped[: slash + 1], stripped[slash + 1 : wildcard]
    depth: int | None = stripped[slash + 1 :].count("/") + 1
    if "**" in stripped:
        if maxdepth is None:
            depth = None
        else:
            stars_depth = stripped[stripped.find("**") :].count("/") + 1
            depth = stripped[slash + 1 :].count("/") + 1 - stars_depth + maxdepth
    compiled = re.compile(glob_translate(stripped + ("/" if ends_with_sep else "")))
    return GlobWalk(
        root,
        prefix,
        depth,
        compiled,
        dirs_with_slash=ends_with_sep or stripped.endswith(tuple(s + "**" for s in _SEPARATORS)),
    )
