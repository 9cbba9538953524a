"""The import graph of smalltown/, read from the source with `ast` (every import: at a module's
top, under `if TYPE_CHECKING:` and inside functions), shared by the tests of its layers
(tests/test_imports.py) and of its circles (tests/test_import_circles.py)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "smalltown"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    """Whether the dotted `name` is a module (a file or a package) under smalltown/."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(path: Path) -> set[str]:
    """Every smalltown module `path` imports, at its top, under `if TYPE_CHECKING:` or inside a
    function. `from pkg import module` is an arrow to that module alone, as `from pkg.module import
    x` is (Python runs pkg's __init__ first in both, which is counted in neither); pkg itself
    counts when a name it defines or hands on is taken from it."""
    tree = ast.parse(path.read_text(), str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, `level - 1` steps up
                up = package.split(".")
                base = ".".join(up[:len(up) - node.level + 1] + ([base] if base else []))
            named = {f"{base}.{a.name}" for a in node.names}
            modules = {m for m in named if is_module(m)}  # `from pkg import module`
            found.update(modules)
            if modules != named:
                found.add(base)
    return {m for m in found if m == "smalltown" or m.startswith("smalltown.")}


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {m: {i for i in imports(p) if i in modules} for m, p in modules.items()}


def cycles(g: dict[str, set[str]], within: str) -> list[list[str]]:
    """Import loops among the modules under `within` (Tarjan's strongly connected components)."""
    nodes = {m for m in g if m.startswith(within + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g[v] & nodes):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in g[v]:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found
