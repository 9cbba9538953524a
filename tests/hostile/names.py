"""Writes hostile names: worlds, and saves carrying such worlds, whose agents or places are named
by nothing but white space, by invisible characters, by two spellings of one name, or by letters
of look-alike scripts mixed in one name.

    python tests/hostile/names.py DIR

Each world case is refused by `world check` with its `file:line` and what is wrong (`expect`, a
substring after "NAME:"); each save case by every command that reads the world a save holds,
naming the save. tests/test_world_names_hostile.py runs them.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BASE = ROOT / "tests" / "worlds_bad" / "ok_base.toml"
BASE_MAP = ROOT / "tests" / "worlds_bad" / "map_ok.toml"


@dataclass(frozen=True)
class NameCase:
    name: str  # the file written, under DIR/worlds/ (a world) or DIR/ (a save)
    expect: str  # what the error says after the file's name: ":LINE: ..." for a world's line
    rule: str
    text: Callable[[str], str]  # the base world's text -> the hostile one


WORLDS: list[NameCase] = []
SAVES: list[NameCase] = []


def base_world() -> str:
    return BASE.read_text(encoding="utf-8")


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def at(needle: str) -> Callable[[str], int]:
    return lambda text: line_of(text, needle)


def renamed(old: str, new: str) -> Callable[[str], str]:
    """Every `"old"` of the base world (a name, and what refers to it) spelt `"new"`."""
    def edit(text: str) -> str:
        assert f'"{old}"' in text, f"the base world changed: no {old!r}"
        return text.replace(f'"{old}"', json.dumps(new, ensure_ascii=False))
    return edit


def world_case(name: str, expect: Callable[[str], str], rule: str, edit: Callable[[str], str],
               save: bool = False) -> None:
    """A case whose expected message is computed from the hostile text (its line numbers)."""
    text = edit(base_world())
    c = NameCase(name, expect(text), rule, edit)
    WORLDS.append(c)
    if save:
        SAVES.append(NameCase(name.replace(".toml", ".sqlite"), c.expect, rule, edit))


def agent_line(n: int) -> Callable[[str], int]:
    """The line of the `n`-th agent's name (0: John Lin's, 1: Mei Lin's)."""
    def line(text: str) -> int:
        at = text.index("[[agents]]")
        for _ in range(n):
            at = text.index("[[agents]]", at + 1)
        return line_of(text, "[[agents]]") + text[text.index("[[agents]]"):at].count("\n") + 1
    return line


# --- agents: blank, invisible ------------------------------------------------------------------
for case_name, blank, what in (("space", " ", "a space"), ("ideographic-space", "\u3000", "U+3000"),
                               ("nbsp", "\u00a0", "U+00A0"), ("em-spaces", "\u2003\u2003", "two em spaces")):
    world_case(f"agent-{case_name}.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: blank",
               f"an agent named only by {what} is refused at its line", renamed("John Lin", blank),
               save=case_name in ("space", "ideographic-space"))

world_case("agent-zero-width.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: U+200B (ZERO WIDTH SPACE)",
           "a zero-width space alone is no name", renamed("John Lin", "\u200b"), save=True)
world_case("agent-zero-width-inside.toml", lambda t: f":{agent_line(1)(t)}: agents.1.name: U+200B",
           "a zero-width space inside a name is refused", renamed("Mei Lin", "Mei\u200b Lin"))
world_case("agent-word-joiner.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: U+2060 (WORD JOINER)",
           "a word joiner (Cf) alone is no name", renamed("John Lin", "\u2060"))
world_case("agent-hangul-filler.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: U+3164 (HANGUL FILLER)",
           "an invisible letter (Hangul filler, Lo) is refused", renamed("John Lin", "\u3164"))
world_case("agent-soft-hyphen.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: U+00AD (SOFT HYPHEN)",
           "a soft hyphen (shown or not, by the terminal) is refused", renamed("John Lin", "John\u00adLin"))
world_case("agent-combining-only.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: blank",
           "a name of a combining accent alone is blank", renamed("John Lin", "\u0301"))
world_case("agent-private-use.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: U+E000",
           "a private-use character (no agreed glyph) is refused", renamed("John Lin", "John \ue000"))
world_case("agent-trailing-space.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: 'John Lin ' starts or ends",
           "white space around a name is refused (a user never types it)", renamed("John Lin", "John Lin "))

# --- agents: one name spelt two ways -----------------------------------------------------------
world_case("agent-case.toml",
           lambda t: f":{agent_line(1)(t)}: duplicate agent name 'john lin': the same name as 'John Lin' "
                     f"(line {agent_line(0)(t)})",
           "names differing only in case are one name", renamed("Mei Lin", "john lin"), save=True)
world_case("agent-fullwidth.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'Ｊｏｈｎ Ｌｉｎ'",
           "fullwidth letters are the same name (NFKC)", renamed("Mei Lin", "Ｊｏｈｎ Ｌｉｎ"))
world_case("agent-two-spaces.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'John  Lin'",
           "two spaces between the words are the same name", renamed("Mei Lin", "John  Lin"))
world_case("agent-nbsp-inside.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'John\\xa0Lin'",
           "a no-break space between the words is the same name", renamed("Mei Lin", "John\u00a0Lin"))
world_case("agent-decomposed.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'Jose\u0301 Lin': the "
                                             f"same name as 'Jos\u00e9 Lin' (line {agent_line(0)(t)}) (spelt "
                                             f"'Jose\\u0301 Lin' and 'Jos\\xe9 Lin')",
           "an accent as one character or as e + combining accent is the same name",
           lambda t: renamed("Mei Lin", "Jose\u0301 Lin")(renamed("John Lin", "Jos\u00e9 Lin")(t)))
world_case("agent-ligature.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'ﬁona Lin'",
           "a ligature is the same name as its letters", 
           lambda t: renamed("Mei Lin", "\ufb01ona Lin")(renamed("John Lin", "Fiona Lin")(t)))
world_case("agent-sharp-s.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'Ann Strauss'",
           "case folding: ß is ss", lambda t: renamed("Mei Lin", "Ann Strauss")(renamed("John Lin", "Ann Strauß")(t)))
world_case("agent-cyrillic-whole.toml", lambda t: f":{agent_line(1)(t)}: duplicate agent name 'СОСО': it looks "
                                                  f"the same as 'COCO'",
           "a name wholly in Cyrillic letters drawn as Latin ones looks the same as the Latin one",
           lambda t: renamed("Mei Lin", "СОСО")(renamed("John Lin", "COCO")(t)))

# --- agents: look-alike scripts mixed -----------------------------------------------------------
world_case("agent-cyrillic-e.toml", lambda t: f":{agent_line(1)(t)}: agents.1.name: 'Mеi Lin' mixes letters of "
                                              f"look-alike scripts (Latin, Cyrillic)",
           "a Cyrillic е in a Latin name is refused", renamed("Mei Lin", "M\u0435i Lin"), save=True)
world_case("agent-greek-o.toml", lambda t: f":{agent_line(0)(t)}: agents.0.name: 'Jοhn Lin' mixes",
           "a Greek ο in a Latin name is refused", renamed("John Lin", "J\u03bfhn Lin"))
world_case("agent-cyrillic-i.toml", lambda t: f":{agent_line(1)(t)}: agents.1.name: 'Mei Lіn' mixes",
           "a Cyrillic і in a Latin name is refused", renamed("Mei Lin", "Mei L\u0456n"))

# --- places: the ones a user names (edit-object's sector:arena:object) ---------------------------
SECTOR_CASE_AT = at('[sectors."PARK"')
world_case("sector-case.toml", lambda t: f":{SECTOR_CASE_AT(t)}: duplicate sector name 'PARK': "
                                         f"the same name as 'park'",
           "sector names differing only in case are one name",
           lambda t: renamed("Lin house", "park")(renamed("Park", "PARK")(t)))
SECTOR_MIXED_AT = at('[sectors."Pаrk"')
world_case("sector-mixed.toml", lambda t: f":{SECTOR_MIXED_AT(t)}: sectors.Pаrk.[key]: 'Pаrk' mixes",
           "a Cyrillic а in a sector's name is refused", renamed("Park", "P\u0430rk"))
SECTOR_BLANK_AT = at('[sectors."' + chr(0x3000))
world_case("sector-blank.toml", lambda t: f":{SECTOR_BLANK_AT(t)}: sectors.\u3000.[key]: blank",
           "a sector named by white space is refused", renamed("Park", "\u3000"))
ARENA_CASE_AT = at('.arenas."Bedroom"')
world_case("arena-case.toml", lambda t: f":{ARENA_CASE_AT(t)}: duplicate arena name 'Bedroom' in "
                                        f"Lin house: the same name as 'bedroom'",
           "arena names of one sector differing only in case are one name", renamed("kitchen", "Bedroom"))
ARENA_ZERO_WIDTH_AT = at('.arenas."kit')
world_case("arena-zero-width.toml", lambda t: f":{ARENA_ZERO_WIDTH_AT(t)}: sectors.Lin house.arenas.kit\u200bchen.[key]: U+200B",
           "a zero-width space in an arena's name is refused", renamed("kitchen", "kit\u200bchen"))
OBJECT_CASE_AT = at('{ name = "BED"')
world_case("object-case.toml", lambda t: f":{OBJECT_CASE_AT(t)}: duplicate object name 'BED' in Lin "
                                         f"house: bedroom: the same name as 'bed'",
           "object names of one arena differing only in case are one name", renamed("desk", "BED"))
OBJECT_BLANK_AT = at('{ name = "' + chr(0xa0))
world_case("object-blank.toml", lambda t: f":{OBJECT_BLANK_AT(t)}: sectors.Lin house.arenas.bedroom.objects.1.name: blank",
           "an object named by a no-break space is refused", renamed("desk", "\u00a0"))


# --- writing them -------------------------------------------------------------------------------


def write_world(path: Path, c: NameCase) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "map_ok.toml").write_text(BASE_MAP.read_text(encoding="utf-8"), encoding="utf-8")
    path.write_text(c.text(base_world()), encoding="utf-8")


@contextmanager
def names_unchecked() -> Iterator[None]:
    """World names as an older (or a stranger's) smalltown let them through: a save is written
    from a world this version refuses, as one could be sent."""
    import smalltown.world.load as load
    import smalltown.world.schema as schema

    saved = {m: dict(vars(m)) for m in (load, schema)}
    if hasattr(schema, "name_problem"):  # (absent before names were checked for more than their characters)
        schema.name_problem = lambda v: None
    if hasattr(load, "clashes"):
        load.clashes = lambda names: iter(())
    try:
        yield
    finally:
        for m, attrs in saved.items():
            for k in ("name_problem", "clashes"):
                if k in attrs:
                    setattr(m, k, attrs[k])


def write_save(path: Path, c: NameCase) -> None:
    """A real save (the hostile world run for 30 ticks by the scripted backend), its world's
    source a file that is gone (as a stranger's path is)."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    src = path.with_name(path.stem + "-source") / "world.toml"
    write_world(src, c)
    with names_unchecked():
        world = load_world(src)
    sim = create(world, path, ScriptedBackend(world.seed), overwrite=True)
    for _ in range(30):
        sim.step()
    sim.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")  # one file, as a shared save is
    conn.close()
    for f in src.parent.iterdir():
        f.unlink()
    src.parent.rmdir()


def make_all(out: Path, saves: bool = True) -> tuple[list[NameCase], list[NameCase]]:
    (out / "worlds").mkdir(parents=True, exist_ok=True)
    for c in WORLDS:
        write_world(out / "worlds" / c.name, c)
    for c in SAVES if saves else ():
        write_save(out / c.name, c)
    return WORLDS, SAVES if saves else []


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, str(ROOT))
    worlds, saves = make_all(Path(sys.argv[1]))
    for c in worlds + saves:
        print(f"{c.name:36} {c.rule}")
