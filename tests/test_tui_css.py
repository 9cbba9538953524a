"""The TUI's CSS: screens keep theirs in .tcss files beside them (as Textual's examples do), and
every such file ships with the package."""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import pkgutil
import tomllib
from pathlib import Path

from textual.app import App
from textual.screen import Screen

import smalltown.tui
from smalltown.tui.widgets.fit_table import Col, fit_columns

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "smalltown"


def _classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(smalltown.tui.__path__, "smalltown.tui."):
        module = importlib.import_module(info.name)
        found += [c for _, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == info.name]
    return found


def _css_paths(cls: type) -> list[Path]:
    paths = cls.CSS_PATH if isinstance(cls.CSS_PATH, (list, tuple)) else [cls.CSS_PATH]
    return [Path(inspect.getfile(cls)).parent / p for p in paths if p]


def test_screens_and_apps_keep_their_css_in_tcss_files() -> None:
    views = [c for c in _classes() if issubclass(c, (Screen, App))]
    assert views
    inline = [c.__name__ for c in views if "DEFAULT_CSS" in vars(c) or vars(c).get("CSS")]
    assert not inline, f"CSS written inline, not in a .tcss file: {inline}"
    for cls in views:
        for path in _css_paths(cls):
            assert path.is_file(), f"{cls.__name__}: {path} is missing"


def test_every_tcss_file_is_package_data() -> None:
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["smalltown"]
    files = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.tcss")]
    assert files
    for f in files:
        assert any(fnmatch.fnmatch(f, g) and f.count("/") == g.count("/") for g in globs), f"{f} would not ship"


def test_flex_columns_share_what_the_others_leave_by_weight() -> None:
    # one fitting for both kinds of table: sized columns, then flex shares (the plan's 3:2)
    cols = [Col("start", "start", 5), Col("activity", "activity", flex=3), Col("place", "place", flex=2)]
    widths = fit_columns(cols, 7 + 2 + 2 + 50)
    assert widths == {"start": 5, "activity": 30, "place": 20}
    assert fit_columns(cols, 10)["place"] == 8  # never under MIN_FLEX
