"""Imports flow one way (docs/architecture.md): a module never imports a layer below it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "archivefs"

# Lower index = closer to the leaves. A module may import modules of its own
# layer or of lower layers only. `testing` and `demo` sit on top of everything.
LAYERS: list[set[str]] = [
    {"errors"},
    {"providers"},
    {
        "model",
        "plans",
        "paths",
        "stats",
        "keyed_paths",
        "member_reads",
        "readahead",
        "hints",
        "bulk",
        "globbing",
    },
    {"pricing"},
    {"hooks"},
    {"stores"},
    {"catalog"},
    {"restore"},
    {"filesystem", "localcopy", "s3compat"},
    {"coordinator"},
    {"xarray", "dask", "datasets", "selection"},
    {"testing"},
    {"demo", "serve"},
    {"progress", "cli"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m == "archivefs" or m.startswith("archivefs.")}


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(("archivefs", *path.relative_to(PACKAGE).with_suffix("").parts))
        layer = layer_of(module)
        assert layer in RANK or layer == "__init__", f"{module}: add its layer to LAYERS"


def test_imports_flow_one_way() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(("archivefs", *path.relative_to(PACKAGE).with_suffix("").parts))
        layer = layer_of(module)
        if layer == "__init__":
            continue
        for target in imported_modules(path):
            target_layer = layer_of(target)
            if target_layer == "__init__":
                violations.append(f"{module} imports the package root")
            elif RANK[target_layer] > RANK[layer]:
                violations.append(f"{module} ({layer}) imports {target} ({target_layer})")
    assert violations == []


def test_only_the_store_factory_and_testing_import_the_oracle_adapter() -> None:
    """DESIGN section 10: the engine, catalog, pricing and datasets never name Oracle's adapter."""
    allowed = {"archivefs.stores", "archivefs.stores.oracle"}
    importers = []
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(("archivefs", *path.relative_to(PACKAGE).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        if layer_of(module) == "testing" or module in allowed:
            continue
        if "archivefs.stores.oracle" in imported_modules(path):
            importers.append(module)
    assert importers == []


def test_catalog_shard_modules_keep_their_place() -> None:
    """The shard format (catalog/shards.py) is a leaf: it knows no other catalog module, so
    index.py can use it; the on-demand loading (catalog/opened.py) is the view's alone."""
    shards = imported_modules(PACKAGE / "catalog" / "shards.py")
    assert shards <= {"archivefs.errors"}
    importers = sorted(
        ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if "archivefs.catalog.opened" in imported_modules(path)
    )
    assert importers == ["catalog.view"]
