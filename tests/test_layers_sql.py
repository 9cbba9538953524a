"""The store owns the save: no SQL and no database calls in smalltown/ outside smalltown/store/
(DESIGN.md, "No SQL outside store"). Read from the code's syntax tree: SQL statements in string
literals (f-strings too) and calls of a connection's execute methods."""

from __future__ import annotations

import ast
import re

import pytest

from helpers import ROOT

PACKAGE = ROOT / "smalltown"
STORE = PACKAGE / "store"

_STATEMENT = (r"^\s*(SELECT\b.*\bFROM\b|INSERT\s+(OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b"
              r"|CREATE\s+(TABLE|INDEX|UNIQUE|VIEW|TRIGGER)\b|DROP\s+(TABLE|INDEX)\b|ALTER\s+TABLE\b"
              r"|PRAGMA\s+\w|VACUUM\s*$|BEGIN(\s+IMMEDIATE|\s+EXCLUSIVE)?\s*$|COMMIT\s*$|ROLLBACK\s*$)")
# SQL keywords are written all upper case or all lower case; a sentence starts "Select ..."
SQL = re.compile(f"{_STATEMENT}|{_STATEMENT.lower()}", re.DOTALL)  # (its escapes are lower case already)
EXECUTE = {"execute", "executemany", "executescript"}


def _text(node: ast.AST) -> str | None:
    """A string literal's text; an f-string's literal parts with a blank for each value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else " x " for v in node.values)
    return None


def sql_uses(source: str) -> list[tuple[int, str]]:
    """(line, what) of every SQL statement written and every execute call in Python source."""
    found = []
    tree = ast.parse(source)
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}  # read whole
    for node in ast.walk(tree):
        text = _text(node) if id(node) not in parts else None
        if text is not None and SQL.match(text):
            found.append((node.lineno, f"SQL {text.strip()[:50]!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
            found.append((node.lineno, f".{node.func.attr}(...)"))
    return sorted(set(found))


def modules() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if STORE not in p.parents)


@pytest.mark.parametrize("module", modules())
def test_no_sql_outside_the_store(module):
    uses = sql_uses((ROOT / module).read_text())
    assert not uses, f"{module}: SQL outside smalltown/store/ (give the store a typed function for it): " + \
        "; ".join(f"line {n}: {what}" for n, what in uses)


def test_the_check_sees_sql_where_it_is():
    """The detector itself: the shapes SQL took outside the store before it moved."""
    seen = sql_uses('conn.execute("select count(*), sum(note) " "from llm_calls where tick > ?", (1,))\n'
                    'q = f"SELECT id FROM {table} WHERE id > ?"\n'
                    'x = "PRAGMA integrity_check(50)"\n'
                    'y = "Select the best of them from the list"\n'
                    'z = "Begin here"\n')
    assert [n for n, _ in seen] == [1, 1, 2, 3]
    assert sql_uses((STORE / "save.py").read_text()), "the store's own SQL is found (and allowed there)"
