"""Shared helpers of the reliability suite (not a test module)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import s3fs

from archivefs.catalog import Catalog
from archivefs.catalog.layout import bundle_dir, catalog_dir
from archivefs.catalog.writer import bundle_tree
from archivefs.filesystem import ArchiveFileSystem

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive

FAST_RETRIES: dict[str, Any] = {
    # botocore: no retries. archivefs's own requests (restores, HEAD, LIST) then get exactly
    # one attempt; s3fs reads keep s3fs's 5 attempts (0.1 s to 0.5 s apart) for throttling
    # and dropped connections: counts stay exact, persistent faults end fast.
    "config_kwargs": {"retries": {"mode": "standard", "total_max_attempts": 1}},
}


def options(archive: EmulatedArchive, **extra: Any) -> dict[str, Any]:
    """s3fs options for the emulated archive (``extra`` overrides)."""
    opts = archive.storage_options()
    opts.update(extra)
    return opts


def make_fs(archive: EmulatedArchive, tmp_path: Path, **kwargs: Any) -> ArchiveFileSystem:
    target = kwargs.pop("target_options", None) or options(archive)
    kwargs.setdefault("journal", str(tmp_path / "journal.sqlite"))
    kwargs.setdefault("restore_status_in_listings", True)
    kwargs.setdefault("restore_time_scale", 1 / 3600)
    return ArchiveFileSystem(target_options=target, skip_instance_cache=True, **kwargs)


def s3(archive: EmulatedArchive, **extra: Any) -> s3fs.S3FileSystem:
    return s3fs.S3FileSystem(skip_instance_cache=True, **options(archive, **extra))


def seed_cold(
    archive: EmulatedArchive, bucket: str, n: int, *, prefix: str = "o", cls: str = "GLACIER"
) -> dict[str, bytes]:
    """``n`` archived objects; returns ``{bucket/key: data}``."""
    objects = {f"{prefix}/{i:04d}": f"{prefix} object {i} ".encode() * 7 for i in range(n)}
    archive.put_objects(bucket, objects, storage_class=cls)
    return {f"{bucket}/{k}": v for k, v in objects.items()}


def make_tree(root: Path, n: int, *, seed: int = 0, dirs: int = 4) -> dict[str, bytes]:
    rng = random.Random(seed)
    files = {}
    for i in range(n):
        files[f"d{i % dirs}/f{i:04d}.dat"] = rng.randbytes(rng.randint(200, 3000))
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def bundle(src: Path, dest_fs: Any, dest: str, **kwargs: Any) -> Any:
    import fsspec

    from archivefs.catalog import ByPrefix

    kwargs.setdefault("policy", ByPrefix(depth=1, target_size=8_000))
    kwargs.setdefault("storage_class", "STANDARD")
    return bundle_tree(fsspec.filesystem("file"), str(src), dest_fs, dest, **kwargs)


def assert_catalog_consistent(fs: Any, root: str) -> Catalog:
    """The catalog loads, every bundle it lists is complete, and no other bundle is visible."""
    catalog = Catalog.load(fs, catalog_dir(root))
    for key, info in catalog.bundles.items():
        assert fs.info(key)["size"] == info.size, key
    visible = sorted(p for p in fs.find(bundle_dir(root)) if p.endswith(".zip"))
    assert visible == sorted(catalog.bundles)
    return catalog
