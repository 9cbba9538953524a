"""A mind, not a script for one town: no code or prompt in smalltown/ names a bundled world's
people, places or events (they come from world files; a behaviour that needs them is fitted to one
world). Checked against every bundled world's names."""

from __future__ import annotations

import re

import pytest

from helpers import ROOT
from smalltown.world.load import load_world

WORLDS = sorted((ROOT / "worlds").glob("*.toml"))
# the events of the bundled worlds' news, in words a behaviour fitted to them would use
EVENT_WORDS = ("valentine", "mayor", "election", "candidacy", "anniversary", "lighthouse", "museum")
# a civic role of every world with [civics] (Project Sid's, issue 17), not a world's news
ROLE_WORDS = re.compile(r"election[ _-]managers?", re.I)


# worlds that are `world generate`'s output unchanged (tests/test_world_bundled_towns.py makes them
# again from their header's options): their people are drawn from the generator's word lists by
# construction, so the word lists (and they alone) may hold those worlds' names
GENERATED = ("towns.toml", "towns-lantern.toml")
WORD_LISTS = ROOT / "smalltown" / "world" / "wordlists"


def world_names(worlds: list = WORLDS) -> set[str]:
    names: set[str] = set()
    for path in worlds:
        w = load_world(path)
        names.add(w.name)
        for a in w.agents:
            names.add(a.name)
            names.update(part for part in a.name.split() if len(part) > 3)
        names.update(w.sectors)
        names.update(g.name for g in w.gatherings)
        names.update(t.name for t in w.towns)
        names.update(d.name for d in w.doctrines)
    return {n for n in names if len(n) > 3}


@pytest.fixture(scope="module")
def names() -> set[str]:
    """The bundled worlds' names, loaded once for the module (not once per file checked)."""
    return world_names()


def code_files() -> list:
    return sorted(p for p in (ROOT / "smalltown").rglob("*") if p.suffix in (".py", ".txt", ".tcss") and p.is_file())


@pytest.mark.parametrize("path", code_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_code_names_a_worlds_people_places_or_events(path, names):
    if path.parent == WORD_LISTS:
        names = world_names([w for w in WORLDS if w.name not in GENERATED])
    text = path.read_text().replace("election_manager", "")  # (the [civics] key issue 17 names, not an event)
    hits = [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)]
    hits += [w for w in EVENT_WORDS if re.search(rf"\b{w}", ROLE_WORDS.sub("", text), re.I)]
    assert hits == [], f"{path.relative_to(ROOT)} names {sorted(hits)}"


def test_the_check_knows_the_bundled_worlds():
    names = world_names()
    assert {"Isabella Rodriguez", "Hobbs Cafe", "Smallville", "Gullhaven"} <= names
    assert "Pastafarianism" in names and {t for t in names if t.endswith(" Park")}  # faiths, towns' squares


def test_only_the_generated_worlds_are_left_to_the_word_lists():
    for name in GENERATED:
        head = (ROOT / "worlds" / name).read_text(encoding="utf-8").split("\nname = ", 1)[0]
        assert "Made by `smalltown world generate" in head and "nothing else changed" in head


def test_the_civic_role_is_no_worlds_news():
    assert re.search(r"\belection", ROLE_WORDS.sub("", "the election manager proposes; election_manager = 'A'")) is None
    assert re.search(r"\belection", ROLE_WORDS.sub("", "the mayoral election is near, says the election manager"))
