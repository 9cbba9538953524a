"""A many-town Smallville for the culture tests: the bundled Smallville with two towns (the
houses and apartments to the west, the college to the east; the rest is rural) and a doctrine of
Sid's kind whose priests live at the college, written beside a copy of its map."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import ROOT

NEEDS = '''community_goal = "make the towns a good place to live"
needs = ["food", "company", "tools", "knowledge", "safety"]
'''
TOWNS = '''
[settings]
architecture = "culture"

[[towns]]
name = "West End"
centre = [25, 40]
radius = 36
square = "Johnson Park"

[[towns]]
name = "College Hill"
centre = [112, 32]
radius = 26
square = "Oak Hill College"

[[doctrines]]
name = "Noodlism"
levels = [["Pasta", "Spaghetti"], ["Pastafarian", "Spaghetti Monster"]]
level_names = ["indirect", "direct"]
priests = ["Klaus Mueller", "Maria Lopez", "Isabella Rodriguez"]
persona = ["You are a passionate Pastafarian who believes in the Flying Spaghetti Monster.",
           "You want to convert everyone you meet to Pastafarianism."]
'''


def culture_world(tmp_path: Path, extra: str = "", settings: str = 'architecture = "culture"') -> Path:
    """The world file's path (its map copied beside it); `settings` replaces the culture preset's line."""
    (tmp_path / "worlds").mkdir(exist_ok=True)
    (tmp_path / "maps").mkdir(exist_ok=True)
    shutil.copy(ROOT / "maps" / "smallville.toml", tmp_path / "maps" / "smallville.toml")
    text = (ROOT / "worlds" / "smallville.toml").read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n# --- ")
    out = tmp_path / "worlds" / "towns.toml"
    out.write_text(head + NEEDS + TOWNS.replace('architecture = "culture"', settings) + extra + sep + rest, encoding="utf-8")
    return out
