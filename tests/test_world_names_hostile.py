"""Hostile names (tests/hostile/names.py): an agent or a place named by white space alone, by an
invisible character, by a second spelling of a name already there, or by letters of look-alike
scripts mixed, is refused by `world check` at its line; a save carrying such a world is refused
by every command that reads it, naming the save, and left as it was; a name the user types is
found as the check compares names, and never raises anything but NoSuchAgent."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from helpers import cli_within, file_sha
from smalltown.cli.execute import BUG
from smalltown.world.load import load_world
from smalltown.world.names import NoSuchAgent, agent_named

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("hostile_names", ROOT / "tests" / "hostile" / "names.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules["hostile_names"] = corpus  # dataclasses look their module up
_spec.loader.exec_module(corpus)
LIMIT = 30  # seconds one command may take on one case


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-names")
    corpus.make_all(out)
    return out


@pytest.mark.parametrize("case", corpus.WORLDS, ids=[c.name for c in corpus.WORLDS])
def test_world_check_refuses_a_hostile_name_at_its_line(made: Path, case, capsys) -> None:
    path = made / "worlds" / case.name
    rc, out = cli_within(capsys, ["world", "check", path], LIMIT)
    assert rc == 1, f"{case.rule}: world check -> {rc}\n{out}"
    assert f"{path}{case.expect}" in out, f"{case.rule}: expected {case.expect!r} after the file's name:\n{out}"
    assert "Traceback" not in out and BUG not in out


def commands(path: Path, work: Path) -> list[list]:
    scripted = ["--backend", "scripted"]
    return [["save", "check", path], ["inspect", path, "John"], ["inspect", path, "x"],
            ["inspect", path, " "], ["whisper", path, "John", "be kind", *scripted],
            ["interview", path, "John", "How are you?", *scripted],
            ["edit-object", path, "Lin house:kitchen:stove", "warm"],
            ["run", path, "--headless", "--until", "+1m", *scripted],
            ["run", path, "--headless", "--until", "+1m", *scripted, "--save", work / "new.sqlite"],
            ["fork", path, "--to", work / "fork.sqlite"], ["replay", path], ["eval", "town", path, *scripted]]


@pytest.mark.parametrize("case", corpus.SAVES, ids=[c.name for c in corpus.SAVES])
def test_a_save_whose_world_has_a_hostile_name_is_refused_by_every_command(made: Path, case, capsys,
                                                                          tmp_path: Path) -> None:
    path = made / case.name
    before = file_sha(path)
    for argv in commands(path, tmp_path):
        rc, out = cli_within(capsys, argv, LIMIT)
        said = f"{case.rule}: smalltown {' '.join(map(str, argv))} -> {rc}\n{out}"
        assert rc == (1 if list(argv[:2]) == ["save", "check"] else 2), said  # (a check fails; the others refuse it)
        assert "Traceback" not in out and BUG not in out, said
        assert case.name in out, said  # the save is named
        assert case.expect in out, said  # and what is wrong in the world it holds, at its line
        assert not (tmp_path / "new.sqlite").exists() and not (tmp_path / "fork.sqlite").exists(), said
    assert file_sha(path) == before


# --- what a name may be -------------------------------------------------------------------------

GOOD = ["John Lin", "Anna Иванова".split()[0], "Анна Иванова", "山田　太郎", "Νίκος Παπάς", "Kaʻiulani",
        "Zoë O'Brien", "José Núñez", "محمد علي", "Anna 山田", "R2-D2", "Café 7", "Straße"]


@pytest.mark.parametrize("name", GOOD)
def test_a_name_in_one_script_or_with_non_lookalike_scripts_is_a_name(name: str) -> None:
    from smalltown.world.names import name_problem

    assert name_problem(name) is None


def test_a_world_of_names_in_many_scripts_passes_world_check(tmp_path: Path) -> None:
    """The rules refuse what is hostile, not what is foreign: CJK, Cyrillic, Greek and Latin with
    accents, one script to a name, are agents of one town."""
    text = corpus.base_world()
    text = corpus.renamed("John Lin", "山田　太郎")(corpus.renamed("Mei Lin", "Анна Иванова")(text))
    text = corpus.renamed("bench", "Παγκάκι")(corpus.renamed("Park", "Kaʻiulani Park")(text))
    path = tmp_path / "w" / "world.toml"
    corpus.write_world(path, corpus.NameCase("world.toml", "", "", lambda t: text))
    world = load_world(path)
    assert [a.name for a in world.agents] == ["山田　太郎", "Анна Иванова"]
    assert "Kaʻiulani Park:lawn:Παγκάκι" in world.objects


# --- naming an agent ----------------------------------------------------------------------------

TOWN = ["Klaus Mueller", "Maria Lopez", "Klaus Schmidt", "Анна Иванова", "山田　太郎", "Ann Strauß"]


@pytest.mark.parametrize("typed, meant", [
    ("klaus mueller", "Klaus Mueller"), ("KLAUS   MUELLER", "Klaus Mueller"), ("Ｋｌａｕｓ Ｍｕｅｌｌｅｒ", "Klaus Mueller"),
    ("maria", "Maria Lopez"), ("MARIA\u3000LOPEZ", "Maria Lopez"), ("анна", "Анна Иванова"),
    ("山田 太郎", "山田　太郎"), ("山田", "山田　太郎"), ("ann strauss", "Ann Strauß"), (" Maria Lopez ", "Maria Lopez"),
])
def test_an_agent_is_found_by_any_spelling_of_its_name_the_check_counts_as_one(typed: str, meant: str) -> None:
    assert agent_named(typed, TOWN) == meant


def test_a_first_name_two_agents_share_asks_for_the_full_name() -> None:
    with pytest.raises(NoSuchAgent, match="give the full name"):
        agent_named("ＫＬＡＵＳ", TOWN)


HOSTILE_TYPED = ["", " ", "\u3000", "\u00a0", "\u200b", "\u2060", "\u3164", "\u0301", "\t\n", "\udcff",
                 "x" * 200_000, "Klaus\u200bMueller", "Mаria Lopez", "\U0010ffff", "\x00", "' OR 1=1 --"]
HOSTILE_TOWNS = [[" "], ["", "Maria Lopez"], ["\u3000", "\u00a0 "], ["\u200b"], TOWN, [], ["\udcff", "\x00"]]


def test_naming_an_agent_raises_nothing_but_no_such_agent() -> None:
    """Whatever is typed, whatever a town holds (even names a world check refuses): a name found,
    or a NoSuchAgent (a usage error), never an IndexError (before: `inspect SAVE x` exited 70)."""
    rng = random.Random(32)
    typed = HOSTILE_TYPED + ["".join(chr(rng.choice([rng.randrange(0x20, 0x250), rng.randrange(0x2000, 0x3100),
                                                      rng.randrange(0x0400, 0x0500), 0x20, 0x3000, 0x200b]))
                                     for _ in range(rng.randrange(0, 12))) for _ in range(300)]
    outcomes = {"found": 0, "no such agent": 0}
    for town in HOSTILE_TOWNS:
        for name in typed:
            try:
                assert agent_named(name, town) in town
                outcomes["found"] += 1
            except NoSuchAgent as e:
                assert len(str(e)) < 2_000 + sum(map(len, town)), "a message bounded, whatever was typed"
                outcomes["no such agent"] += 1
    assert outcomes["found"] > 0 and outcomes["no such agent"] > 0
