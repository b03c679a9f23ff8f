"""The files a bundling run packs: every file below SRC, never a symlink's target outside it.

A symbolic link whose target lies inside SRC is bundled like the file it
points to; a link that leaves SRC (a home directory's secrets, ``/etc``) is
skipped and reported unless the caller asks to follow links. Object stores
have no links; their listing is taken as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivefs.catalog import layout
from archivefs.catalog.grouping import SourceItem
from archivefs.catalog.index import modified_time
from archivefs.errors import BundleError
from archivefs.stores.conditional import is_local


@dataclass
class SourceListing:
    """The files to bundle and the links that were left out."""

    items: list[SourceItem] = field(default_factory=list)
    skipped_links: list[str] = field(default_factory=list)  # relative paths of links left out


def list_sources(fs: Any, root: str, *, follow_symlinks: bool = False) -> SourceListing:
    """Every file below ``root`` on ``fs``, with paths relative to it.

    Raises :class:`BundleError` when ``root`` does not exist, is not a
    directory, or holds no file to bundle.
    """
    root = root.rstrip("/") or "/"
    if is_local(fs):
        listing = _list_local(Path(root), follow_symlinks=follow_symlinks)
    else:
        listing = _list_store(fs, root)
    if not listing.items:
        skipped = f" ({len(listing.skipped_links)} links leaving it were skipped)"
        raise BundleError(
            "there is nothing to bundle: the folder holds no files"
            + (skipped if listing.skipped_links else "")
            + "; no catalog was written.",
            path=root,
            fix="check the source path (or pass --follow-symlinks to bundle link targets).",
        )
    listing.items.sort(key=lambda i: i.path)
    return listing


def _list_store(fs: Any, root: str) -> SourceListing:
    if not fs.isdir(root):
        raise BundleError(
            "the source folder does not exist"
            + (" (it is a file)" if fs.isfile(root) else "")
            + "; no catalog was written.",
            path=root,
            fix="give an existing directory (or prefix) that holds the files to bundle.",
        )
    listing = SourceListing()
    for path, info in fs.find(root, detail=True).items():
        relative = path[len(root) + 1 :] if path.startswith(root + "/") else path
        if layout.is_reserved(relative):
            continue
        mtime = modified_time(info) or 0.0  # whichever key the target's entry has
        listing.items.append(SourceItem(relative, int(info["size"]), mtime))
    return listing


def _list_local(root: Path, *, follow_symlinks: bool) -> SourceListing:
    if not root.is_dir():
        raise BundleError(
            "the source folder does not exist"
            + (" (it is a file)" if root.exists() else "")
            + "; no catalog was written.",
            path=str(root),
            fix="give an existing directory that holds the files to bundle.",
        )
    base = root.resolve()
    listing = SourceListing()
    seen_dirs: set[Path] = set()
    for directory, dirnames, filenames in os.walk(root, followlinks=follow_symlinks):
        here = Path(directory)
        real = here.resolve()
        if real in seen_dirs:  # a link loop, or a link back into SRC: each directory once
            dirnames[:] = []
            continue
        seen_dirs.add(real)
        # string paths per entry (a Path per file is far slower); Path only for links
        inside = here.relative_to(root).as_posix()
        stem = "" if inside == "." else inside + "/"
        subdirectories, files = set(dirnames), set(filenames)
        for name in sorted([*dirnames, *filenames]):
            full = os.path.join(directory, name)
            relative = stem + name
            if layout.is_reserved(relative):
                if name in subdirectories:
                    dirnames.remove(name)
                continue
            if not follow_symlinks and os.path.islink(full):
                if not Path(full).resolve().is_relative_to(base):
                    listing.skipped_links.append(relative)
                    if name in subdirectories:
                        dirnames.remove(name)
                    continue
                if name in subdirectories:  # a link to a directory inside SRC: bundled there
                    dirnames.remove(name)
                    continue
            if name in files:
                try:
                    stat = os.stat(full)
                except FileNotFoundError:  # a dangling link
                    listing.skipped_links.append(relative)
                    continue
                listing.items.append(SourceItem(relative, stat.st_size, stat.st_mtime))
    return listing
