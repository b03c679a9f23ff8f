"""The public surface stays what it was (issue 32: the face is split, its behaviour is not).

Compares, against the committed snapshot ``tests/data/public_surface.json``:
``archivefs.__all__``; the signature of every public callable in the package
root and of every public method of ``ArchiveFileSystem`` and ``ArchiveFile``
(inherited fsspec methods included); and ``to_json()`` of an S3, an Azure and
an ``fs=``-wrapped filesystem, with the per-process credentials reference masked.

A deliberate change of the surface regenerates the snapshot:
``ARCHIVEFS_UPDATE_SURFACE=1 pytest tests/test_public_surface.py`` (then review
and commit the diff of the JSON file).
"""

from __future__ import annotations

import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

import fsspec
import pytest

import archivefs

SNAPSHOT = Path(__file__).parent / "data" / "public_surface.json"
UPDATE = "ARCHIVEFS_UPDATE_SURFACE"


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "<no signature>"
    return re.sub(r" at 0x[0-9a-f]+>", ">", text)  # default objects' addresses vary


def _members(cls: type) -> dict[str, str]:
    """Public names of ``cls``: methods with their signatures, properties as such."""
    out: dict[str, str] = {}
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, property):
            out[name] = "<property>"
        elif isinstance(raw, classmethod | staticmethod) or callable(raw):
            out[name] = _signature(getattr(cls, name))
    return out


def _masked(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    if "credentials" in data:
        data["credentials"] = "<reference>"  # a fresh id per process
    return data


def surface() -> dict[str, Any]:
    from archivefs.filesystem import ArchiveFile, ArchiveFileSystem

    s3 = ArchiveFileSystem(
        target_protocol="s3",
        target_options={
            "key": "AKIDEXAMPLE",
            "secret": "not-a-secret",
            "client_kwargs": {"endpoint_url": "http://127.0.0.1:9"},
        },
        tier="Bulk",
        days=3,
        skip_instance_cache=True,
    )
    azure = ArchiveFileSystem(
        target_protocol="az",
        target_options={"account_name": "devstoreaccount1", "account_key": "a2V5"},
        skip_instance_cache=True,
    )
    wrapped = ArchiveFileSystem(fs=fsspec.filesystem("memory"), skip_instance_cache=True)
    return {
        "__all__": list(archivefs.__all__),
        "root": {
            name: _signature(getattr(archivefs, name))
            for name in archivefs.__all__
            if callable(getattr(archivefs, name))
        },
        "ArchiveFileSystem": _members(ArchiveFileSystem),
        "ArchiveFile": _members(ArchiveFile),
        "to_json": {
            "s3": _masked(s3.to_json()),
            "azure": _masked(azure.to_json()),
            "fs": _masked(wrapped.to_json()),
        },
    }


def test_the_public_surface_matches_the_snapshot() -> None:
    now = surface()
    if os.environ.get(UPDATE):
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"{SNAPSHOT.name} written ({UPDATE} is set): review and commit it")
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    # compared part by part, so a failure names the part that changed
    for part in ("__all__", "root", "ArchiveFileSystem", "ArchiveFile", "to_json"):
        assert now[part] == recorded[part], f"the public surface changed: {part}"
    assert set(now) == set(recorded)
