"""The per-bucket registry of catalog roots (``bucket/.archivefs/catalogs.json``): its format.

Bundling adds a root (``writer._register``); removing a catalog root's data
removes it here in the same call, so the registry never names a catalog that
is gone.
"""

from __future__ import annotations

import json

from archivefs.errors import CatalogError


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
