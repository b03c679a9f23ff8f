"""Where bundles and catalogs live: a reserved ``.archivefs/`` prefix inside the destination.

Bundling ``SRC`` into ``bucket/prefix`` makes member ``SRC/a/b.nc`` appear at
``bucket/prefix/a/b.nc``; the bundles are ``bucket/prefix/.archivefs/bundles/
<name>.zip``, the catalog ``bucket/prefix/.archivefs/catalog/`` and the kerchunk
references of netCDF/HDF5 file ``a/b.nc`` ``bucket/prefix/.archivefs/references/
a/b.nc.json`` (outside any catalog root, the bucket is the root), those of a
collection of such files in ``a/`` combined into one ``bucket/prefix/.archivefs/
references/a/.combined/<digest>.json``. Each bucket
keeps a small registry, ``bucket/.archivefs/catalogs.json``, of the roots that
have a catalog, so a filesystem finds them with one request per bucket.
"""

from __future__ import annotations

RESERVED = ".archivefs"
COMBINED = ".combined"  # combined reference sets, in the references folder of their files


def bundle_dir(root: str) -> str:
    return f"{root.rstrip('/')}/{RESERVED}/bundles"


def bundle_path(root: str, name: str) -> str:
    return f"{bundle_dir(root)}/{name}.zip"


def catalog_dir(root: str) -> str:
    return f"{root.rstrip('/')}/{RESERVED}/catalog"


def references_dir(root: str) -> str:
    return f"{root.rstrip('/')}/{RESERVED}/references"


def references_path(root: str, relative: str) -> str:
    """Where the kerchunk references of file ``root/relative`` are kept."""
    return f"{references_dir(root)}/{relative.strip('/')}.json"


def combined_path(root: str, folder: str, digest: str) -> str:
    """Where the combined kerchunk references of a set of files under ``root/folder`` (the
    folder all of them lie in) are kept, among the files' own references, so that the
    listing that finds theirs finds it too (``catalog.combined``: ``digest`` names the
    set; no file's references end in ``.combined/<digest>.json``)."""
    inside = f"{folder.strip('/')}/" if folder.strip("/") else ""
    return f"{references_dir(root)}/{inside}{COMBINED}/{digest}.json"


def registry_path(bucket: str) -> str:
    return f"{bucket}/{RESERVED}/catalogs.json"


def member_path(root: str, relative: str) -> str:
    return f"{root.rstrip('/')}/{relative}"


def is_reserved(path: str) -> bool:
    """Paths under a reserved prefix are archivefs's own bookkeeping."""
    return f"/{RESERVED}/" in f"/{path}/"
