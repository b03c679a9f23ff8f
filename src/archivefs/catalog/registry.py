"""The per-bucket registry of catalog roots (``bucket/.archivefs/catalogs.json``).

Bundling adds a root; removing a catalog root's data removes it here in the
same call, so the registry never names a catalog that is gone. Many writers
share it: :func:`change_registry` writes only over the version it read and, on a
lost race, reads the other writer's roots and applies its change again; a
registry it cannot read stops it (never replaced by what one writer knows).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from archivefs.catalog import layout
from archivefs.errors import CatalogError
from archivefs.stores.conditional import read_versioned_async, write_versioned_async

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_REGISTRY_BYTES = 16 << 20
"""The largest registry read, by a filesystem looking up catalogs and by a change to it
alike (about 10^5 roots), so no writer grows one past what readers accept."""
REGISTRY_TRIES = 20  # lost races in a row before giving up (each try reads the winner's roots)


def parse_registry(raw: bytes, path: str) -> list[str]:
    """The roots a registry lists (checked for shape)."""
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise CatalogError(
            f"the catalog registry is not valid JSON ({error}).",
            path=path,
            fix="check that --endpoint-url / endpoint_url points at the S3 service that holds "
            "this bucket (another server answers with something else); if it does, re-run "
            "`archivefs catalog rebuild` for each catalog root in this bucket (it rewrites the "
            "registry; bundles and catalogs are left as they are).",
        ) from error
    roots = data.get("roots", []) if isinstance(data, dict) else None
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise CatalogError(
            "the catalog registry has an unknown format.",
            path=path,
            fix="upgrade archivefs, or re-run `archivefs catalog rebuild` for each catalog root.",
        )
    return roots


def dump_registry(roots: list[str]) -> bytes:
    """The registry's bytes for ``roots``."""
    return json.dumps({"roots": sorted(set(roots))}).encode()


async def change_registry(
    fs: Any,
    bucket: str,
    change: Callable[[list[str]], list[str]],
    *,
    replace_damaged: bool = False,
) -> list[str]:
    """Apply ``change`` to the roots of ``bucket``'s registry; return the roots written.

    Each try reads the registry with its version and writes only over that version
    (none: only if there is still no registry); writes nothing when ``change``
    changes nothing. A registry that cannot be read raises :class:`CatalogError`,
    unless ``replace_damaged`` (``catalog rebuild``, the repair: it starts the list
    again from its own root; readers find the other roots without it).
    """
    path = layout.registry_path(bucket)
    for _ in range(REGISTRY_TRIES):
        current = await read_versioned_async(
            fs, path, limit=MAX_REGISTRY_BYTES, too_large=CatalogError
        )
        try:
            roots = parse_registry(current[0], path) if current else []
        except CatalogError:
            if not replace_damaged:
                raise
            roots = []
        wanted = sorted(set(change(list(roots))))
        if wanted == sorted(set(roots)) and (current is not None or not wanted):
            return wanted
        version = current[1] if current else None
        if await write_versioned_async(fs, path, dump_registry(wanted), version):
            return wanted
    raise CatalogError(
        f"the catalog registry changed {REGISTRY_TRIES} times while it was being updated.",
        path=path,
        fix="run the command again once the other bundling runs into this bucket finish.",
    )
