"""docs/architecture.md's import rules, read from the source with ``ast``: imports go down only
(``api`` → ``sessions`` → ``store``, ``engine`` → ``bytecodec``), no store library above ``store/``,
no gRPC or protobuf in ``sessions/``, and no import cycle among the package's modules."""

from __future__ import annotations

import ast
from pathlib import Path

import accordion

PACKAGE = Path(accordion.__file__).parent
# What a layer must not import (prefixes of dotted module names).
FORBIDDEN = {
    "engine": (
        "accordion.sessions",
        "accordion.store",
        "accordion.api",
        "accordion.solver",
        "accordion.v1",
        "grpc",
        "google.protobuf",
        "redis",
        "hiredis",
    ),
    # (the stored record's bytes come from accordion.bytecodec, not the engine's fields)
    "sessions": (
        "accordion.api",
        "accordion.v1",
        "accordion.engine.fields",
        "grpc",
        "google.protobuf",
        "redis",
        "hiredis",
    ),
    "bytecodec": ("accordion",),  # neutral: every layer may use it, so it uses none
    "store": (
        "accordion.sessions",
        "accordion.api",
        "accordion.engine",
        "accordion.v1",
        "grpc",
        "google.protobuf",
    ),
}


def module_name(path: Path) -> str:
    parts = ["accordion", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, known: frozenset[str] = frozenset()) -> set[str]:
    """Every module ``path`` imports, anywhere in it (a function's own imports too), as dotted
    names. ``from X import y`` is X.y when that is one of the ``known`` modules, else X."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in known or is_extension(submodule) else target)
    return found


def is_extension(name: str) -> bool:
    """A module of the package built from C (the solver's cores: ``_csolver.c`` and its build)."""
    parts = name.split(".")
    if parts[0] != "accordion" or len(parts) < 2:
        return False
    folder = PACKAGE.joinpath(*parts[1:-1])
    return any(folder.glob(parts[-1] + ".c")) or any(folder.glob(parts[-1] + ".*.so"))


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def test_the_walk_sees_what_it_must() -> None:
    """The walk itself: it finds the layers and reads a relative import as the module it names."""
    found = modules()
    assert {
        "accordion.engine",
        "accordion.sessions.flow",
        "accordion.store.base",
        "accordion.api.servicer",
    } <= set(found)
    flow = imports(found["accordion.sessions.flow"], frozenset(found))
    assert {"accordion.sessions.tokens", "accordion.sessions.watching", "accordion.store"} <= flow
    assert "accordion.sessions" in imports(found["accordion.api.servicer"], frozenset(found))
    assert "accordion.solver.row._csolver" in imports(found["accordion.solver.row.adapter"], frozenset(found))


def test_each_layer_imports_only_below_it() -> None:
    broken = []
    for name, path in modules().items():
        layer = name.split(".")[1] if name.count(".") else ""
        for imported in sorted(imports(path)):
            for banned in FORBIDDEN.get(layer, ()):
                if imported == banned or imported.startswith(banned + "."):
                    broken.append(f"{name} imports {imported}")
    assert broken == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of ``graph`` closes (each one once, as the path it closes)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        path.append(node)
        for nxt in sorted(graph[node]):
            if nxt in path:
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in done:
                visit(nxt, path)
        path.pop()
        done.add(node)

    for node in sorted(graph):
        if node not in done:
            visit(node, [])
    return found


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycle_among_modules() -> None:
    """Among the package's own modules. ``from . import x`` is an import of the module x, not
    of the package: a package's ``__init__`` re-exporting its modules makes no cycle."""
    found = modules()
    known = frozenset(found)
    graph = {
        name: {m for m in imports(path, known) if m in known and m != name} for name, path in found.items()
    }
    assert [" → ".join(cycle) for cycle in cycles(graph)] == []
