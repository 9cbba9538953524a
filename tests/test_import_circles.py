"""No circle of files: no module of smalltown/ imports, through any chain, a module that imports
it back. Every import counts, at a module's top, under `if TYPE_CHECKING:` and inside a
function (read by tests/import_graph.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import import_graph
from import_graph import cycles, graph

# None is left: a circle that comes back fails the test, with its files listed.
KNOWN: list[list[str]] = []


def test_no_import_circle_of_files():
    found = sorted(cycles(graph(), "smalltown"))
    assert found == sorted(KNOWN), "circles of files (each a list of modules importing each other):\n" + \
        "\n".join(" ".join(c) for c in found)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_reader_counts_type_checking_and_function_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A made-up package: a circle tied only by an import under TYPE_CHECKING, or only by one
    inside a function, is a circle; `from pkg import module` is an arrow to that module, not to
    pkg's __init__ (which here imports its modules back), unless a name of pkg's own is taken."""
    monkeypatch.setattr(import_graph, "PACKAGE", tmp_path / "smalltown")
    write(tmp_path / "smalltown", {
        "__init__.py": "",
        "front.py": "from smalltown.behaviour import act\n",
        "behaviour.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from smalltown.front import Front\n",
        "low.py": "def f():\n    from smalltown.high import g\n",
        "high.py": "from smalltown import low\n",
        "pkg/__init__.py": "from smalltown.pkg.a import A\nNAME = 1\n",
        "pkg/a.py": "from smalltown.pkg import b\n",
        "pkg/b.py": "",
        "user.py": "from smalltown.pkg import NAME, a\n",
    })
    g = graph()
    assert g["smalltown.pkg.a"] == {"smalltown.pkg.b"}  # not the package's __init__
    assert g["smalltown.user"] == {"smalltown.pkg", "smalltown.pkg.a"}  # NAME is the package's own
    assert sorted(cycles(g, "smalltown")) == [["smalltown.behaviour", "smalltown.front"],
                                             ["smalltown.high", "smalltown.low"]]
