"""Loading worlds: the valid tiny town, and a corpus of malformed worlds in tests/worlds_bad/.

Every `bad_*.toml` in tests/worlds_bad/ is a copy of `ok_base.toml` (a minimal valid world on
`map_ok.toml`) with exactly one mistake, in the world or in its own map. Its first line declares
the problem `load_world` must report:

    # expect: [FILE:]LINE[:COL] SUBSTRING

FILE is the basename of the file the problem is reported in (the world file itself when left
out, e.g. `map_ragged_row.toml` for a mistake in a map), LINE the 1-based line, COL the 1-based
column (declared only where the loader gives one) and SUBSTRING a part of the message.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import BAD, BAD_WORLDS, ROOT, expectation
from smalltown.world.errors import Problem, WorldError
from smalltown.world.load import load_world
from smalltown.world.model import Persona
from smalltown.world.toml_lines import TomlLines


def _problems(path: Path) -> list[Problem]:
    with pytest.raises(WorldError) as info:
        load_world(path)
    problems = info.value.problems
    assert problems, "WorldError raised with no problems"
    assert all(isinstance(p, Problem) for p in problems)
    return problems


def _show(problems: list[Problem]) -> str:
    return "\n".join(f"  {Path(p.file).name}:{p.line}:{p.col}: {p.message}" for p in problems)


def _has(problems: list[Problem], file: str, line: int, col: int | None, text: str) -> bool:
    return any(
        Path(p.file).name == file
        and p.line == line
        and (col is None or p.col == col)
        and text in p.message
        for p in problems
    )


# --- the corpus ------------------------------------------------------------------------------


def test_corpus_is_complete():
    assert len(BAD_WORLDS) >= 14
    for path in BAD_WORLDS:
        expectation(path)  # every case declares what it expects


def test_the_base_of_the_corpus_is_valid():
    """Each bad world is ok_base.toml plus one mistake, so the base itself must load."""
    world = load_world(BAD / "ok_base.toml")
    assert [a.name for a in world.agents] == ["John Lin", "Mei Lin"]
    assert len(world.arenas) == 3
    assert len(world.objects) == 4
    assert (world.map.width, world.map.height) == (16, 4)


@pytest.mark.parametrize("path", BAD_WORLDS, ids=[p.stem for p in BAD_WORLDS])
def test_bad_world_is_reported_at_its_line(path: Path):
    file, line, col, text = expectation(path)
    problems = _problems(path)
    where = f"{file}:{line}" + (f":{col}" if col is not None else "")
    assert _has(problems, file, line, col, text), (
        f"expected a problem at {where} containing {text!r}; got:\n{_show(problems)}"
    )


def test_missing_world_file(tmp_path: Path):
    problems = _problems(tmp_path / "nowhere.toml")
    assert len(problems) == 1
    assert Path(problems[0].file).name == "nowhere.toml"
    assert problems[0].line is None
    assert "file not found" in problems[0].message


# --- the tiny town ---------------------------------------------------------------------------


def test_tiny_world_loads():
    world = load_world(ROOT / "worlds" / "tiny.toml")
    assert len(world.agents) == 3
    assert len(world.sectors) == 3
    assert len(world.arenas) == 6
    assert len(world.objects) == 19
    assert (world.map.width, world.map.height) == (40, 14)
    assert world.step_seconds == 10
    assert {a.name for a in world.agents} == {"Isabella Rodriguez", "Maria Lopez", "Klaus Mueller"}
    for agent in world.agents:
        assert world.map.is_walkable(agent.spawn)
        assert agent.knows[0] == agent.home


# --- several mistakes at once ----------------------------------------------------------------


def _world_with(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """A copy of ok_base.toml (and its map) in tmp_path with the given text replacements."""
    shutil.copy(BAD / "map_ok.toml", tmp_path / "map_ok.toml")
    text = (BAD / "ok_base.toml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "two.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _line(path: Path, needle: str) -> int:
    hits = [no for no, line in enumerate(path.read_text().splitlines(), 1) if needle in line]
    assert len(hits) == 1, needle
    return hits[0]


def test_two_mistakes_are_both_reported(tmp_path: Path):
    path = _world_with(
        tmp_path,
        ('{ name = "bed", tiles = [[1, 1]] }', '{ name = "bed", tiles = [[0, 1]] }'),
        ('spawn = [11, 1]', 'spawn = [9, 2]'),
    )
    problems = _problems(path)
    assert _has(problems, "two.toml", _line(path, '"bed"'), None, "is a blocked tile"), _show(problems)
    assert _has(problems, "two.toml", _line(path, "spawn = [9, 2]"), None, "is in a wall"), _show(problems)
    assert len(problems) == 2, _show(problems)


def test_two_schema_mistakes_are_both_reported(tmp_path: Path):
    path = _world_with(
        tmp_path,
        ("age = 45", 'age = "old"'),
        ('traits = "warm, curious"', 'traits = "warm, curious"\nhobby = "chess"'),
    )
    problems = _problems(path)
    assert _has(problems, "two.toml", _line(path, 'age = "old"'), None, "agents.0.age"), _show(problems)
    assert _has(problems, "two.toml", _line(path, "hobby ="), None, "agents.1.hobby: unknown field"), _show(problems)


def test_object_after_a_duplicate_is_reported_at_its_own_line(tmp_path: Path):
    """A duplicate object name must not shift the lines of the objects after it."""
    path = _world_with(
        tmp_path,
        (
            '  { name = "desk", tiles = [[3, 2]] },\n',
            '  { name = "bed", tiles = [[2, 2]] },\n  { name = "desk", tiles = [[4, 2]] },\n',
        ),
    )
    problems = _problems(path)
    assert _has(problems, "two.toml", _line(path, '"desk"'), None, "object 'desk': tile [4, 2] is a blocked tile"), (
        _show(problems)
    )


# --- TomlLines -------------------------------------------------------------------------------

TOML = '''\
name = "x"
seed = 1

[sectors."Lin's house".arenas."the kitchen"]
code = "k"
objects = [
  { name = "stove", tiles = [[1, 1]] },
  { name = "fridge", tiles = [[2, 1]], state = "full" },
  { name = "table", tiles = [[3, 1]] }, { name = "chair", tiles = [[4, 1]] },
]
after = 2

[sectors.park.arenas.'pond']
code = "p"

[[agents]]
name = "Ann"
description = """
Ann writes.
[sectors]
home = "fake"
name = "fake"
"""
home = "real"

[[agents]]
name = "Bob"
spawn = [1, 2]
'''


def test_toml_lines_nested_quoted_keys():
    lines = TomlLines(TOML)
    kitchen = ("sectors", "Lin's house", "arenas", "the kitchen")
    assert lines.line_of(kitchen) == 4
    assert lines.line_of(kitchen + ("code",)) == 5
    assert lines.line_of(kitchen + ("after",)) == 11
    assert lines.line_of(("sectors", "park", "arenas", "pond", "code")) == 14
    # an unknown key falls back to its table
    assert lines.line_of(kitchen + ("nope",)) == 4
    assert lines.line_of(("seed",)) == 2


def test_toml_lines_array_of_tables():
    lines = TomlLines(TOML)
    assert lines.line_of(("agents", 0)) == 16
    assert lines.line_of(("agents", 0, "name")) == 17
    assert lines.line_of(("agents", 1)) == 26
    assert lines.line_of(("agents", 1, "name")) == 27
    assert lines.line_of(("agents", 1, "spawn")) == 28
    assert lines.line_of(("agents", 1, "age")) == 26  # missing key: the item's header


def test_toml_lines_inline_array_items():
    lines = TomlLines(TOML)
    objects = ("sectors", "Lin's house", "arenas", "the kitchen", "objects")
    assert lines.line_of(objects) == 6
    assert lines.line_of(objects + (0,)) == 7
    assert lines.line_of(objects + (1, "state")) == 8
    assert lines.line_of(objects + (2,)) == 9
    assert lines.line_of(objects + (3, "tiles", 0)) == 9  # two items on one line


def test_toml_lines_ignore_multiline_strings():
    lines = TomlLines(TOML)
    assert lines.line_of(("agents", 0, "description")) == 18
    assert lines.line_of(("agents", 0, "home")) == 24
    assert lines.line_of(("agents", 0, "name")) == 17
    # "[sectors]" inside the string opens no table and is not where sectors start
    assert lines.line_of(("sectors",)) == 4
    assert lines.line_of(("agents", 1, "name")) == 27


def test_toml_lines_ignore_literal_multiline_strings():
    text = "[layers]\ntiles = '''\n[x]\nk = 1\n'''\nafter = 1\n"
    lines = TomlLines(text)
    assert lines.line_of(("layers", "tiles")) == 2
    assert lines.line_of(("layers", "after")) == 6
    assert lines.line_of(("x",)) is None
    assert lines.line_of(("layers", "k")) == 1  # falls back to the table, not line 4


def test_toml_lines_headers_with_comments():
    text = (
        "[sectors.home.arenas.room]   # the only room\n"
        "code = \"r\"\n"
        "\n"
        "[[agents]]   # the first agent\n"
        "name = \"Ann\"\n"
        "\n"
        "[[agents]]   # the second agent\n"
        "name = \"Bob\"\n"
    )
    lines = TomlLines(text)
    assert lines.line_of(("sectors", "home", "arenas", "room", "code")) == 2
    assert lines.line_of(("agents", 0, "name")) == 5
    assert lines.line_of(("agents", 1)) == 7
    assert lines.line_of(("agents", 1, "name")) == 8


# --- seed memories ---------------------------------------------------------------------------


def test_seed_memories_split_the_description_on_semicolons():
    world = load_world(BAD / "ok_base.toml")
    assert world.agent("John Lin").seed_memories == [
        "John Lin is a pharmacist",
        "he loves his family",
        "he walks in the park",
    ]
    tiny = load_world(ROOT / "worlds" / "tiny.toml")
    memories = tiny.agent("Isabella Rodriguez").seed_memories
    assert len(memories) == 4
    assert memories[0] == "Isabella Rodriguez runs Hobbs Cafe and works there every day"
    assert all(m == m.strip() and m for m in memories)


def test_seed_memories_drop_empty_phrases():
    spec = Persona("A B", 30, "kind", " one ;two;; ;three; ", "home", (0, 0), ("home",))
    assert spec.seed_memories == ["one", "two", "three"]
