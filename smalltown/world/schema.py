"""The shape of world and map files, checked by pydantic; errors keep their key path."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from smalltown.world.model import ROUTINE_KINDS, START_MAX, START_MIN, TILE_KINDS, parse_hours
from smalltown.world.names import name_problem

Name = Field(min_length=1, max_length=120)


# Text from a world file reaches every prompt (quoted there, see llm/render.py) and the screen:
# names are one line without double quotes or backslashes (prompts show them unquoted); short
# texts are one line; longer texts may hold line breaks and tabs. No other control characters.
def _breaks(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Zl", "Zp")


def _name(v: str) -> str:
    problem = name_problem(v)  # (one line, visible, not blank, one look-alike script: world/names.py)
    if problem:
        raise ValueError(problem)
    return v


def _map_file(v: str) -> str:
    # a world names its map file; anything else (/etc/passwd, /dev/zero) is not read at all
    if not v.endswith(".toml"):
        raise ValueError(f"{v[:120]!r} is not a map file: a map is a .toml file")
    return v


def _one_line(v: str) -> str:
    for c in v:
        if _breaks(c):
            raise ValueError(f"{c!r} is not allowed here: one line of text, without control characters")
    return v


def _text(v: str) -> str:
    for c in v:
        if _breaks(c) and c not in "\n\t\r":
            raise ValueError(f"control character {c!r} is not allowed in text")
    return v


def _game_time(v: datetime) -> datetime:
    if not START_MIN <= v.replace(tzinfo=None) < START_MAX:
        raise ValueError(f"{v:%Y-%m-%d %H:%M} is out of range: a world's times are from "
                         f"{START_MIN:%Y-%m-%d} to before {START_MAX:%Y-%m-%d}")
    return v


NameStr = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(_name)]
GameTime = Annotated[datetime, AfterValidator(_game_time)]
LineStr = Annotated[str, AfterValidator(_one_line)]
TextStr = Annotated[str, AfterValidator(_text)]
TileIn = tuple[int, int]
NeedStr = Annotated[str, Field(min_length=1, max_length=30), AfterValidator(_name)]  # "food", "tools"

Kind = Literal[TILE_KINDS]  # type: ignore[valid-type]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


# An object's state: the world file's, and every edit of it (`edit-object`, the TUI's form,
# Simulation.edit_object) are held to this one rule. It is shown in prompts and on screen.
STATE_MAX_CHARS = 200


def object_state_problem(state: object) -> str | None:
    """What is wrong with `state` as an object's state (as a world file is told), or None."""
    if not isinstance(state, str):
        return "not text"
    if not state:
        return 'empty: a state says what the object is doing (e.g. "idle", "burning")'
    if len(state) > STATE_MAX_CHARS:
        return f"String should have at most {STATE_MAX_CHARS} characters"  # (as every field over its length is told)
    for c in state:
        if _breaks(c):
            return f"{c!r} is not allowed here: one line of text, without control characters"
    if not state.strip():
        return 'blank: a state says what the object is doing (e.g. "idle", "burning")'
    return None


def _state(v: str) -> str:
    problem = object_state_problem(v)
    if problem:
        raise ValueError(problem)
    return v


StateStr = Annotated[str, AfterValidator(_state)]


class ObjectIn(_Strict):
    name: NameStr
    tiles: list[TileIn] = Field(min_length=1, max_length=1000)
    state: StateStr = "idle"
    capacity: int | None = Field(default=None, ge=1, le=1000)  # agents at once; absent: any number


def _hours(v: str) -> str:
    parse_hours(v)  # (raises what is wrong)
    return v


HoursStr = Annotated[str, AfterValidator(_hours)]


class ArenaIn(_Strict):
    code: str = Field(min_length=1, max_length=1)
    objects: list[ObjectIn] = Field(default_factory=list, max_length=1000)
    hours: HoursStr | None = None  # "07:00-20:00"; absent: always open (or its sector's hours)

    @field_validator("code")
    @classmethod
    def _code_char(cls, v: str) -> str:
        if v == "." or v.isspace():
            raise ValueError('"." and blanks mean "no arena" and cannot be a code')
        return v


class SectorIn(_Strict):
    arenas: dict[NameStr, ArenaIn] = Field(min_length=1, max_length=1000)
    hours: HoursStr | None = None  # its arenas' opening hours; absent: always open


def _hhmm(v: str) -> str:
    h, sep, m = v.partition(":")
    if not (sep and len(h) == 2 and len(m) == 2 and h.isdigit() and m.isdigit() and h.isascii()
            and m.isascii() and int(h) < 24 and int(m) < 60):
        raise ValueError(f"{v!r} is not a 24-hour time \"HH:MM\" (e.g. \"07:30\", \"22:00\")")
    return v


StepStr = Annotated[str, Field(min_length=1, max_length=60), AfterValidator(_one_line)]
RoutineKind = Literal[("", *ROUTINE_KINDS)]  # type: ignore[valid-type]


class RoutineItemIn(_Strict):
    """One part of an agent's usual day; it lasts until the next item's start (see load.py)."""

    start: Annotated[str, AfterValidator(_hhmm)]
    activity: LineStr = Field(default="", max_length=60)  # may be left out for kind "sleep" only
    place: LineStr = Field(default="", max_length=120)  # a sector the agent knows; "" = home
    kind: RoutineKind = ""
    steps: list[StepStr] = Field(default_factory=list, max_length=20)


class PersonaIn(_Strict):
    name: NameStr
    age: int = Field(ge=0, le=150)
    traits: LineStr = Field(min_length=1, max_length=400)
    description: TextStr = Field(min_length=1, max_length=8000)
    home: NameStr
    spawn: TileIn
    knows: list[NameStr] = Field(default_factory=list, max_length=1000)
    routine: list[RoutineItemIn] | None = Field(default=None, max_length=48)  # None: read from the description
    community_goal: LineStr = Field(default="", max_length=300)  # overrides the world's for this agent
    inventory: dict[NameStr, int] = Field(default_factory=dict, max_length=100)  # [economy]: what it starts with
    beds: list[LineStr] = Field(default_factory=list, max_length=20)  # "sector: arena: object" it may sleep at


class FactIn(_Strict):
    """A piece of news `smalltown eval town` follows through the town (SPEC 9)."""

    name: NameStr
    text: LineStr = Field(min_length=1, max_length=400)
    # every keyword must appear in a memory about the fact; "a|b" accepts either
    keywords: list[Annotated[LineStr, Field(min_length=1, max_length=120)]] = Field(min_length=1, max_length=20)
    question: LineStr = Field(default="", max_length=400)  # asked in interviews; default from text
    known_by: list[NameStr] = Field(default_factory=list, max_length=1000)
    subject: NameStr | None = None  # the agent it is about; default: the known_by agent its text starts with


class GatheringIn(_Strict):
    """An event agents may coordinate around: who was invited, who planned to come, who came."""

    name: NameStr
    place: LineStr = Field(min_length=1, max_length=300)  # a sector, or sector:arena
    start: GameTime
    end: GameTime
    host: NameStr | None = None
    fact: NameStr | None = None  # the fact announcing it: knowing it before the start is an invitation


class LineIn(_Strict):
    """A line the world file scripts: at its time, `speaker` says `text` to `to` (social awareness)."""

    at: GameTime | Annotated[str, AfterValidator(_hhmm)]  # a date and time, or "HH:MM" on `day`
    day: int = Field(default=1, ge=1, le=366)  # with an "HH:MM" `at`: the world's first day is 1
    speaker: NameStr
    to: NameStr
    text: LineStr = Field(min_length=1, max_length=300)
    tone: Literal["kind", "neutral", "rude"] = "neutral"


class TownIn(_Strict):
    """A town of a world of many: a circle of tiles, and its square (the sector trips go to)."""

    name: NameStr
    centre: TileIn  # [x, y], a tile of the map
    radius: int = Field(ge=1, le=1000)  # tiles: a tile within it is the town's
    square: LineStr = Field(min_length=1, max_length=120)  # a sector: the town's market / meeting place


KeywordStr = Annotated[LineStr, Field(min_length=1, max_length=60)]


class DoctrineIn(_Strict):
    """A faith as world data (world/load_towns.py checks the names against the agents and places)."""

    name: NameStr
    # the keywords of each level, lowest first: [["Pasta", "Spaghetti"], ["Pastafarian", "Spaghetti Monster"]]
    levels: list[Annotated[list[KeywordStr], Field(min_length=1, max_length=20)]] = Field(min_length=1, max_length=5)
    level_names: list[NameStr] = Field(min_length=1, max_length=5)  # each level's name: ["indirect", "direct"]
    priests: list[NameStr] = Field(default_factory=list, max_length=1000)  # agents at the top level from the start
    persona: list[Annotated[LineStr, Field(min_length=1, max_length=400)]] = Field(default_factory=list, max_length=10)
    gathering: LineStr = Field(default="", max_length=300)  # a sector or sector:arena; "" for none
    gathering_hours: Annotated[str, Field(max_length=20)] = ""  # "HH:MM-HH:MM" (with a gathering)


# a setting's value: a number or switch, a choice (`architecture`) or a list of names (`controller_inputs`)
SettingIn = bool | int | float | Annotated[str, Field(max_length=100)] | \
    Annotated[list[Annotated[str, Field(max_length=100)]], Field(max_length=100)]


class WorldIn(_Strict):
    name: NameStr
    map: Annotated[LineStr, AfterValidator(_map_file)] = Field(min_length=1, max_length=300)
    start: GameTime
    step_seconds: int = Field(default=10, gt=0, le=3600)
    seed: int = Field(default=0, ge=0, le=2**32 - 1)  # what a model's sampler takes
    settings: dict[str, SettingIn] = Field(default_factory=dict, max_length=100)  # overrides of config.Settings
    sectors: dict[NameStr, SectorIn] = Field(min_length=1, max_length=1000)
    agents: list[PersonaIn] = Field(min_length=1, max_length=1000)
    facts: list[FactIn] = Field(default_factory=list, max_length=100)  # what eval measures
    gatherings: list[GatheringIn] = Field(default_factory=list, max_length=100)
    lines: list[LineIn] = Field(default_factory=list, max_length=1000)  # scripted lines (sim/lines.py)
    # what the community works toward, and its needs as short words (goal generation, mind/goals.py)
    community_goal: LineStr = Field(default="", max_length=300)
    needs: list[NeedStr] = Field(default_factory=list, max_length=20)
    economy: "EconomyIn | None" = None  # items, sources, recipes, the chest (world/economy.py)
    civics: "CivicsIn | None" = None  # a constitution, tax seasons, influencers, a vote (world/civics.py)
    towns: list[TownIn] = Field(default_factory=list, max_length=64)  # a world of many towns (world/load_towns.py)
    doctrines: list[DoctrineIn] = Field(default_factory=list, max_length=10)  # faiths, their keywords and priests


class LayersIn(_Strict):
    tiles: str = Field(min_length=1)
    arenas: str = Field(min_length=1)


class MapIn(_Strict):
    name: LineStr = Field(default="", max_length=120)
    legend: dict[str, Kind] = Field(max_length=200)
    layers: LayersIn

    @field_validator("legend")
    @classmethod
    def _one_char(cls, v: dict[str, str]) -> dict[str, str]:
        for glyph in v:
            if len(glyph) != 1 or glyph.isspace():
                raise ValueError(f"legend key {glyph!r} must be a single visible character")
        return v


# --- [economy] (world/economy.py checks what refers to what: items, places, agents, cycles) ---


class SourceIn(_Strict):
    """Where an item is gathered: an arena, and how many one gather action brings."""

    item: NameStr
    at: LineStr = Field(min_length=1, max_length=300)  # "sector:arena"
    qty: int = 1


class RecipeIn(_Strict):
    """Inputs in, `qty` of `output` out, at a place, taking `minutes` (one action: at most 15)."""

    output: NameStr
    qty: int = 1
    inputs: dict[NameStr, int] = Field(min_length=1, max_length=20)
    at: LineStr = Field(min_length=1, max_length=300)  # a sector, or "sector:arena"
    minutes: int = 5


class EconomyIn(_Strict):
    items: list[NameStr] = Field(min_length=1, max_length=200)
    sources: list[SourceIn] = Field(default_factory=list, max_length=200)
    recipes: list[RecipeIn] = Field(default_factory=list, max_length=200)
    chest: LineStr = Field(min_length=1, max_length=400)  # an object's address, "sector:arena:object"
    chest_inventory: dict[NameStr, int] = Field(default_factory=dict, max_length=200)
    inventory: dict[NameStr, dict[NameStr, int]] = Field(default_factory=dict, max_length=1000)  # per agent



# --- [civics] (world/civics.py checks the names against the agents, the timeline's order) ---


class StancesIn(_Strict):
    """What an influencer believes and does, for each side (added to its self-description)."""

    anti: TextStr = Field(min_length=1, max_length=2000)
    pro: TextStr = Field(min_length=1, max_length=2000)


class TimelineIn(_Strict):
    """Sid's timeline in his seconds (scaled by the `civics_scale` setting to game seconds)."""

    season_every: int = Field(default=120, ge=1, le=100_000)
    window: int = Field(default=20, ge=1, le=100_000)
    feedback: int = Field(default=300, ge=1, le=100_000)
    amendments: int = Field(default=360, ge=1, le=100_000)
    vote: int = Field(default=420, ge=1, le=100_000)
    tally: int = Field(default=480, ge=1, le=100_000)
    in_force: int = Field(default=600, ge=1, le=100_000)
    end: int = Field(default=1200, ge=1, le=100_000)


class CivicsIn(_Strict):
    constitution: TextStr = Field(min_length=1, max_length=1500)  # (the revised text is as long at most)
    tax_rate: int = Field(ge=0, le=100)  # percent of what each holds, per season
    influencers: list[NameStr] = Field(default_factory=list, max_length=100)
    election_manager: NameStr
    stances: StancesIn
    timeline: TimelineIn = Field(default_factory=TimelineIn)
    persuasion_step: int = Field(default=5, ge=0, le=100)  # percent a talk with an influencer moves a listener (stand-in)


WorldIn.model_rebuild()  # (after [economy]'s and [civics]' models)
