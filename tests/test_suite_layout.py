"""The test suite's own layout (issue 13): what tests share lives in helpers.py, fakes.py and the
other shared modules, never in a test module (tests do not import each other) nor in conftest.py,
which holds fixtures only."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported(tree: ast.AST) -> set[str]:
    """The top-level names of the modules a file imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def borrowed(tree: ast.AST) -> set[str]:
    """The test modules and conftest a file imports."""
    return {m for m in imported(tree) if m.startswith("test_") or m == "conftest"}


def not_fixtures(tree: ast.Module) -> list[str]:
    """The public functions and classes at the top of a module that are not pytest fixtures."""
    def fixture(d: ast.expr) -> bool:
        d = d.func if isinstance(d, ast.Call) else d
        return (isinstance(d, ast.Attribute) and d.attr == "fixture") or (isinstance(d, ast.Name) and d.id == "fixture")

    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")
            and not any(fixture(d) for d in n.decorator_list)]


def test_no_test_module_imports_another_or_conftest():
    found = {str(p.relative_to(TESTS)): sorted(borrowed(ast.parse(p.read_text(encoding="utf-8"))))
             for p in sorted(TESTS.rglob("*.py"))}
    assert {f: m for f, m in found.items() if m} == {}


def test_conftest_holds_fixtures_only():
    assert not_fixtures(ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))) == []


def test_the_checks_see_a_borrowed_helper_and_a_plain_function():
    tree = ast.parse("import json\nfrom conftest import query\ndef f():\n    import test_shown.x\n"
                     "@pytest.fixture(scope='session')\ndef fx(): pass\n@fixture\ndef fy(): pass\n")
    assert borrowed(tree) == {"conftest", "test_shown"}
    assert not_fixtures(tree) == ["f"]
