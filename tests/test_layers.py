"""Imports flow one way (docs/architecture.md): a module never imports a layer below it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "archivefs"

# Lower index = closer to the leaves. A module may import modules of its own
# layer or of lower layers only. `testing` and `demo` sit on top of everything.
LAYERS: list[set[str]] = [
    {"errors", "lazy", "wrapped"},
    {"providers"},
    {
        "model",
        "plans",
        "paths",
        "stats",
        "entries",
        "member_reads",
        "readahead",
        "hints",
        "bulk",
        "globbing",
        "worker_logs",
    },
    {"pricing"},
    {"hooks", "ledger"},
    {"stores"},
    {"catalog"},
    {"restore"},
    {"access", "s3compat"},
    {"filesystem"},
    {"coordinator"},
    {"xarray", "dask", "datasets", "selection"},
    {"testing"},
    {"demo", "serve"},
    {"mount"},
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
    index.py can use it (errors, and lazy for numpy on first use, sit at the top); the
    on-demand loading (catalog/opened.py) is the view's alone."""
    shards = imported_modules(PACKAGE / "catalog" / "shards.py")
    assert shards <= {"archivefs.errors", "archivefs.lazy"}
    importers = sorted(
        ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if "archivefs.catalog.opened" in imported_modules(path)
    )
    assert importers == ["catalog.view"]


def module_name(path: Path) -> str:
    """``archivefs.stores.base`` for ``stores/base.py``; a package is its ``__init__``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the archivefs modules it imports: at the top, in functions and under
    ``TYPE_CHECKING`` alike (``from archivefs.x import y`` is module ``x.y`` when there is one)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    targets.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of two or more
    modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_circles() -> None:
    """Not one circle between the files of src/, lazy and typing-only imports counted."""
    assert circles(import_graph()) == []


def test_the_circle_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


PROVIDER_SDKS = frozenset(
    {
        "aiobotocore",
        "botocore",
        "boto3",
        "s3fs",
        "adlfs",
        "azure",
        "gcsfs",
        "google",
        "ocifs",
        "oci",
    }
)


def test_only_stores_and_testing_import_a_provider_sdk() -> None:
    """DESIGN section 10: a provider's client library is named by its adapter in stores/
    (and by the emulators in testing/), never by the engine, catalog, face or CLI."""
    importers = []
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        if layer_of(module) in {"stores", "testing"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            importers += [
                f"{module} imports {n}" for n in names if n.split(".")[0] in PROVIDER_SDKS
            ]
    assert importers == []


def test_nothing_below_the_face_imports_it() -> None:
    """The face (archivefs.filesystem) is used by the layers above it (datasets, the CLI,
    testing, the package root); its collaborators and everything below never import it."""
    above = {name for name, rank in RANK.items() if rank > RANK["filesystem"]}
    importers = sorted(
        module
        for module, targets in import_graph().items()
        if "archivefs.filesystem" in targets
        and module != "archivefs"
        and layer_of(module) not in above
    )
    assert importers == []
