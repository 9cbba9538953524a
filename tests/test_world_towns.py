"""Towns and doctrines as world data: `[[towns]]` and `[[doctrines]]` load into World.towns and
World.doctrines (a world without them loads as before), World.town_at / town_of place tiles and
agents, and every mistake is told at its line, naming the field (unknown names with a
did-you-mean). The matcher (world/doctrines.py) finds whole words and phrases, in any case."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import ROOT
from smalltown.world.doctrines import keywords_in, level_in, level_name
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world
from smalltown.world.model import Doctrine

FAITH = Doctrine("Noodlism", (("Pasta", "Spaghetti"), ("Pastafarian", "Spaghetti Monster")),
                 ("indirect", "direct"), (), ())

TOWNS = '''
[[towns]]
name = "West End"
centre = [8, 4]
radius = 9
square = "Willow Cottage"

[[towns]]
name = "East End"
centre = [31, 3]
radius = 6
square = "Hobbs Cafe"

[[doctrines]]
name = "Noodlism"
levels = [["Pasta", "Spaghetti"], ["Pastafarian", "Spaghetti Monster"]]
level_names = ["indirect", "direct"]
priests = ["Maria Lopez"]
persona = ["You are a passionate Pastafarian.", "You invite everyone you meet."]
gathering = "Hobbs Cafe: cafe"
gathering_hours = "17:00-18:00"
'''


def world_with(tmp_path: Path, extra: str, replace: tuple[str, str] | None = None) -> Path:
    (tmp_path / "worlds").mkdir()
    (tmp_path / "maps").mkdir()
    shutil.copy(ROOT / "maps" / "tiny.toml", tmp_path / "maps" / "tiny.toml")
    text = (ROOT / "worlds" / "tiny.toml").read_text(encoding="utf-8") + extra
    if replace:
        assert replace[0] in text
        text = text.replace(*replace)
    out = tmp_path / "worlds" / "tiny.toml"
    out.write_text(text, encoding="utf-8")
    return out


def problems(path: Path) -> list[str]:
    with pytest.raises(WorldError) as info:
        load_world(path)
    return [str(p) for p in info.value.problems]


def line_of(path: Path, needle: str, after: str = "") -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if after in ln) if after else 0
    return next(i for i, ln in enumerate(lines) if i >= start and needle in ln) + 1


def test_a_world_without_towns_or_doctrines_loads_as_before() -> None:
    world = load_world(ROOT / "worlds" / "tiny.toml")
    assert world.towns == [] and world.doctrines == []
    assert world.town_at(1, 1) == "" and world.town_of("Maria Lopez") == ""


def test_towns_and_a_doctrine_load_and_place_tiles_and_agents(tmp_path: Path) -> None:
    world = load_world(world_with(tmp_path, TOWNS))
    assert [(t.name, t.centre, t.radius, t.square) for t in world.towns] == [
        ("West End", (8, 4), 9, "Willow Cottage"), ("East End", (31, 3), 6, "Hobbs Cafe")]
    (d,) = world.doctrines
    assert d.levels == FAITH.levels and d.level_names == ("indirect", "direct") and d.top == 2
    assert d.priests == ("Maria Lopez",) and len(d.persona) == 2
    assert d.gathering == "Hobbs Cafe:cafe" and d.gathering_hours == "17:00-18:00"
    assert world.town_at(8, 4) == "West End" and world.town_at(17, 4) == "West End"  # on the edge
    assert world.town_at(18, 4) == "" and world.town_at(31, 9) == "East End" and world.town_at(31, 10) == ""
    assert world.town_of("Maria Lopez") == "West End"  # Willow Cottage's tiles lie in West End


def test_where_two_towns_overlap_the_nearer_centre_has_the_tile(tmp_path: Path) -> None:
    world = load_world(world_with(tmp_path, TOWNS, ('radius = 6', 'radius = 30')))
    assert world.town_at(10, 4) == "West End" and world.town_at(25, 4) == "East End"
    assert world.town_at(39, 13) == "East End"


def test_a_home_outside_every_town_is_rural(tmp_path: Path) -> None:
    world = load_world(world_with(tmp_path, TOWNS, ("centre = [8, 4]", "centre = [8, 13]")))
    assert world.town_of("Klaus Mueller") == ""


@pytest.mark.parametrize("change, needle, message", [
    (('square = "Willow Cottage"', 'square = "Willow Cotage"'), "square =",
     'town \'West End\': square \'Willow Cotage\' is not a sector; did you mean "Willow Cottage"?'),
    (("centre = [8, 4]", "centre = [80, 4]"), "centre =", "is outside the map (40x14)"),
    (('name = "East End"', 'name = "west  end"'), 'name = "west  end"', "duplicate town name 'west  end'"),
    (('priests = ["Maria Lopez"]', 'priests = ["Maria Lopes"]'), "priests =",
     'priest \'Maria Lopes\' is not an agent of this world; did you mean "Maria Lopez"?'),
    (('priests = ["Maria Lopez"]', 'priests = ["Maria Lopez", "Maria Lopez"]'), "priests =", "named twice"),
    (('gathering = "Hobbs Cafe: cafe"', 'gathering = "Hobbs Cafe: cofe"'), "gathering =",
     'is not a place (a sector, or "sector:arena"); did you mean "Hobbs Cafe:cafe"?'),
    (('gathering_hours = "17:00-18:00"', 'gathering_hours = "17:00"'), "gathering_hours", "gathering_hours:"),
    (('gathering = "Hobbs Cafe: cafe"', 'gathering = ""'), "gathering_hours", "without a gathering"),
    (('level_names = ["indirect", "direct"]', 'level_names = ["direct"]'), "level_names",
     "1 level names for 2 levels"),
    (('["Pastafarian", "Spaghetti Monster"]', '["Pastafarian", "pasta"]'), "levels =",
     "keyword 'pasta' is at level 1 and level 2"),
    (('levels = [["Pasta", "Spaghetti"], ', 'levels = [[], '), "levels =", "levels.0: List should have at least 1"),
    (('radius = 9', 'radius = 0'), "radius = 0", "towns.0.radius: Input should be greater than or equal to 1"),
    (('square = "Hobbs Cafe"', 'sqare = "Hobbs Cafe"'), "sqare", 'unknown field; did you mean "square"?'),
])
def test_a_mistake_in_towns_or_doctrines_is_told_at_its_line(tmp_path: Path, change, needle, message) -> None:
    path = world_with(tmp_path, TOWNS, change)
    found = problems(path)
    assert any(message in p for p in found), found
    want = line_of(path, needle, after="[[towns]]")
    assert any(p.startswith(f"{path}:{want}:") for p in found if message in p), (want, found)


@pytest.mark.parametrize("text, level", [
    ("I love pasta!", 1), ("Spaghetti, anyone?", 1), ("a pasta-themed dinner", 1), ("PASTA", 1),
    ("Pastafarian", 2), ("I am a pastafarian.", 2), ("Praise the Spaghetti Monster", 2),
    ("the spaghetti\n  monster", 2), ("pasta and the Spaghetti Monster", 2),
    ("Pastafarianism", 0), ("pastas", 0), ("antipasta", 0), ("spaghettimonster", 0), ("", 0),
    ("nothing to see", 0), ("Monster Spaghetti", 1),
])
def test_level_in_matches_whole_words_and_phrases_in_any_case(text: str, level: int) -> None:
    assert level_in(FAITH, text) == level


def test_keywords_in_lists_each_keyword_found_once_in_the_order_given() -> None:
    keys = ["eco", "dance", "c++", "group hug"]
    assert keywords_in(keys, "Dance! eco-friendly dance, a GROUP   hug") == ["eco", "dance", "group hug"]
    assert keywords_in(keys, "economy, dancer, c++ code") == ["c++"]
    assert keywords_in(keys, "cc++ and group-hug") == []
    assert keywords_in(["", "  "], "anything") == []


def test_level_names() -> None:
    assert [level_name(FAITH, i) for i in range(4)] == ["", "indirect", "direct", ""]
