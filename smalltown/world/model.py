"""The town as data: the tile map and the area tree (world -> sector -> arena -> object)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

import numpy as np

Tile = tuple[int, int]  # (x, y): column, row

# Game times are bounded so that clock arithmetic never leaves what a datetime holds (year 9999)
# and every time prints as YYYY-MM-DD: a world starts (and its gatherings fall) between START_MIN
# and START_MAX, and a run, a rewind or a replay goes to no time outside GAME_TIME_MIN-GAME_TIME_MAX.
START_MIN = datetime(1000, 1, 1)
START_MAX = datetime(3000, 1, 1)
GAME_TIME_MIN = START_MIN
GAME_TIME_MAX = datetime(4000, 1, 1)

BLOCKED_KINDS = frozenset({"wall", "water", "tree"})
TILE_KINDS = ("wall", "floor", "door", "ground", "street", "grass", "water", "tree", "object")


def address(*parts: str) -> str:
    """Canonical address `sector:arena:object` (as far as given)."""
    return ":".join(parts)


def pretty(addr: str) -> str:
    """The address as shown to people and models: `sector: arena: object`."""
    return ": ".join(addr.split(":"))


Hours = tuple[int, int]  # open from, to: minutes from midnight (to < from: open past midnight)


def parse_hours(text: str) -> Hours:
    """"07:00-20:00" as minutes; ValueError says what is wrong."""
    parts = text.split("-")
    if len(parts) != 2:
        raise ValueError(f"{text!r} is not opening hours \"HH:MM-HH:MM\" (e.g. \"07:00-20:00\")")
    out = []
    for p in parts:
        h, sep, m = p.strip().partition(":")
        if not (sep and len(h) == 2 and len(m) == 2 and h.isdigit() and m.isdigit() and h.isascii()
                and m.isascii() and int(h) < 24 and int(m) < 60):
            raise ValueError(f"{p.strip()!r} is not a 24-hour time \"HH:MM\" (in {text!r})")
        out.append(int(h) * 60 + int(m))
    if out[0] == out[1]:
        raise ValueError(f"{text!r} opens and closes at the same time (leave hours out: always open)")
    return out[0], out[1]


def closed_until(hours: Hours | None, now: datetime) -> datetime | None:
    """None when open at `now`; else when it next opens."""
    if hours is None:
        return None
    start, end = hours
    minute = now.hour * 60 + now.minute
    if (start <= minute < end) if start < end else (minute >= start or minute < end):
        return None
    opens = now.replace(hour=start // 60, minute=start % 60, second=0, microsecond=0)
    return opens if opens > now else opens + timedelta(days=1)


@dataclass
class TileMap:
    name: str
    rows: list[str]
    kinds: dict[str, str]  # glyph -> kind
    walkable: np.ndarray  # (height, width) bool
    arena_at: np.ndarray  # (height, width) int32: index into World.arenas, -1 for none

    @property
    def width(self) -> int:
        return len(self.rows[0]) if self.rows else 0

    @property
    def height(self) -> int:
        return len(self.rows)

    def in_bounds(self, tile: Tile) -> bool:
        x, y = tile
        return 0 <= x < self.width and 0 <= y < self.height

    def is_walkable(self, tile: Tile) -> bool:
        return self.in_bounds(tile) and bool(self.walkable[tile[1], tile[0]])


@dataclass
class Object:
    sector: str
    arena: str
    name: str
    tiles: list[Tile]
    initial_state: str = "idle"
    capacity: int | None = None  # agents using it at once (None: any number)

    @property
    def address(self) -> str:
        return address(self.sector, self.arena, self.name)


@dataclass
class Arena:
    sector: str
    name: str
    code: str
    index: int
    tiles: list[Tile] = field(default_factory=list)
    objects: dict[str, Object] = field(default_factory=dict)
    hours: Hours | None = None  # open (minutes from midnight, from-to); None: always

    @property
    def address(self) -> str:
        return address(self.sector, self.name)


@dataclass
class Sector:
    name: str
    arenas: dict[str, Arena] = field(default_factory=dict)
    hours: Hours | None = None  # its arenas' opening hours, where an arena gives none


def home_beds(home: Sector | None) -> tuple[str, ...]:
    """Where an agent sleeps when its world file does not say: its home's objects with the word
    "bed" in their name (none: any object of its home)."""
    if home is None:
        return ()
    objs = [o.address for a in home.arenas.values() for o in a.objects.values()]
    beds = [a for a in objs if re.search(r"\bbed\b", a.rsplit(":", 1)[-1], re.IGNORECASE)]
    return tuple(beds or objs)


SLEEPING = "sleeping"  # the activity of sleep: every day's schedule ends with it; never decomposed
DAY = 24 * 60  # minutes in a day

ROUTINE_KINDS = ("sleep", "morning", "meal", "work", "leisure", "chores", "evening")


@dataclass(frozen=True)
class RoutineItem:
    """One part of an agent's usual day, as a world file gives it (or as the loader reads it from
    the description, when the file gives none). A routine is data: the scripted stand-in plans
    from it, and a model is shown it when planning a day."""

    start: str  # "HH:MM"
    minutes: int
    activity: str  # "serve customers at the counter"
    place: str = ""  # the sector where it is done ("" = home)
    kind: str = ""  # one of ROUTINE_KINDS, or "" (any other)
    steps: tuple[str, ...] = ()  # its usual 5-15 minute actions, in order (optional)


@dataclass
class Persona:
    """Who an agent is, as the world file says (tasks carry its card, with its summary: `llm.tasks.PersonaCard`)."""

    name: str
    age: int
    traits: str
    description: str
    home: str
    spawn: Tile
    knows: tuple[str, ...]
    routine: tuple[RoutineItem, ...] = ()  # the usual day, wake-up to sleep (see RoutineItem)
    community_goal: str = ""  # its own, else the world's (goal generation)
    # the objects ("sector:arena:object") it may sleep at: the world file's `beds`, else its home's
    # objects named a bed (`home_beds`); sleep elsewhere is an incoherent answer (llm/coherence.py)
    beds: tuple[str, ...] = ()

    @property
    def sleep_places(self) -> tuple[str, ...]:
        """The sectors it may sleep in: its beds' (its home, when it has none)."""
        return tuple(dict.fromkeys(b.split(":")[0] for b in self.beds)) or (self.home,)

    @property
    def seed_memories(self) -> list[str]:
        """The description's ";"-separated phrases: the agent's first memories."""
        return [p.strip() for p in self.description.split(";") if p.strip()]

    @property
    def first_name(self) -> str:
        return self.name.split()[0]


@dataclass(frozen=True)
class Fact:
    """A piece of news to follow through the town (SPEC 9: information diffusion)."""

    name: str
    text: str
    keywords: tuple[str, ...]  # each must appear in a memory about the fact; "a|b" accepts either
    question: str  # what an interview asks about it
    known_by: tuple[str, ...]  # agents who know it at the start
    subject: str | None = None  # the agent it is about, who tells it in the first person

    def about(self, text: str) -> bool:
        """A text is about the fact when every keyword (or one of its alternatives) starts a
        word in it, in any case: "council" matches "councillor", not "subcouncil"."""
        return all(_pattern(k).search(text) for k in self.keywords)


def alternatives(keyword: str) -> tuple[str, ...]:
    """A fact keyword's alternatives ("council|councillors")."""
    return tuple(a.strip() for a in keyword.split("|") if a.strip())


@lru_cache(maxsize=1024)
def _pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(a) for a in alternatives(keyword)) + ")", re.IGNORECASE)


@dataclass(frozen=True)
class Gathering:
    """An event agents may coordinate around (a party at a cafe, February 14, 5-7 pm)."""

    name: str
    place: str  # a sector, or a sector:arena address
    start: datetime
    end: datetime
    host: str | None = None
    fact: str | None = None  # the fact that announces it

    def holds(self, arena_address: str | None) -> bool:
        """The arena is the place, or inside it."""
        return arena_address is not None and (arena_address == self.place
                                              or arena_address.startswith(self.place + ":"))


@dataclass(frozen=True)
class ScriptedLine:
    """A line the world file scripts: at `at` (or as soon after as both are free, within the
    hour), `speaker` says `text` to `to`; `tone` is how it is meant (kind, neutral, rude)."""

    at: datetime
    speaker: str
    to: str
    text: str
    tone: str = "neutral"


@dataclass(frozen=True)
class Town:
    """A town of a world of many: a circle of tiles (a tile within `radius` of `centre` is the
    town's) and `square`, the sector everyone knows as its market and meeting place (where a trip
    to the town goes)."""

    name: str
    centre: Tile
    radius: int
    square: str

    def holds(self, x: int, y: int) -> bool:
        dx, dy = x - self.centre[0], y - self.centre[1]
        return dx * dx + dy * dy <= self.radius * self.radius


@dataclass(frozen=True)
class Doctrine:
    """A faith as world data: `levels[i]` are the keywords whose use in speech puts a speaker at
    level i + 1 (lowest first), `level_names[i]` that level's name; `priests` hold the top level
    from the start and carry the `persona` lines; believers meet at `gathering` (a sector or
    sector:arena, "" for none) at `gathering_hours` ("HH:MM-HH:MM", "" for none). Matching is
    world/doctrines.py's `level_in`."""

    name: str
    levels: tuple[tuple[str, ...], ...]
    level_names: tuple[str, ...]
    priests: tuple[str, ...]
    persona: tuple[str, ...]
    gathering: str = ""
    gathering_hours: str = ""

    @property
    def top(self) -> int:
        return len(self.levels)


@dataclass
class World:
    name: str
    source: str  # the world file's name, for messages
    text: str  # the world file's text, kept so a save is self-contained
    map_source: str
    map_text: str
    map: TileMap
    start: datetime
    step_seconds: int
    seed: int
    sectors: dict[str, Sector]
    agents: list[Persona]
    arenas: list[Arena] = field(default_factory=list)
    objects: dict[str, Object] = field(default_factory=dict)
    settings: dict[str, bool | int | float] = field(default_factory=dict)  # the file's [settings]
    facts: list[Fact] = field(default_factory=list)  # news eval follows (SPEC 9)
    gatherings: list[Gathering] = field(default_factory=list)
    lines: list[ScriptedLine] = field(default_factory=list)  # scripted lines, in time order
    community_goal: str = ""  # what the community works toward (goal generation)
    needs: tuple[str, ...] = ()  # the community's needs as short words ("food", "tools")
    economy: "EconomySpec | None" = None  # the world file's [economy] (world/economy.py); None: none
    civics: "CivicsSpec | None" = None  # the world file's [civics] (world/civics.py); None: none
    towns: list[Town] = field(default_factory=list)  # [[towns]]: none in a world of one town
    doctrines: list[Doctrine] = field(default_factory=list)  # [[doctrines]]: faiths and their priests
    _homes: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def town_at(self, x: int, y: int) -> str:
        """The name of the town holding tile (x, y), "" for the rural area; where two towns'
        circles overlap, the one whose centre is nearer (the first of equals)."""
        best, near = "", None
        for t in self.towns:
            if t.holds(x, y):
                d = (x - t.centre[0]) ** 2 + (y - t.centre[1]) ** 2
                if near is None or d < near:
                    best, near = t.name, d
        return best

    def town_of(self, agent_name: str) -> str:
        """The town of the agent's home ("" = rural): the town holding most of its home's tiles."""
        if agent_name not in self._homes:
            home = self.agent(agent_name).home
            self._homes[agent_name] = self._sector_town(home)
        return self._homes[agent_name]

    def _sector_town(self, sector: str) -> str:
        if not self.towns or sector not in self.sectors:
            return ""
        votes: dict[str, int] = {}
        for arena in self.sectors[sector].arenas.values():
            for x, y in arena.tiles:
                town = self.town_at(x, y)
                votes[town] = votes.get(town, 0) + 1
        return max(votes, key=lambda k: votes[k]) if votes else ""

    def arena_at(self, tile: Tile) -> Arena | None:
        if not self.map.in_bounds(tile):
            return None
        i = int(self.map.arena_at[tile[1], tile[0]])
        return self.arenas[i] if i >= 0 else None

    def arena(self, addr: str) -> Arena | None:
        sector, _, name = addr.partition(":")
        s = self.sectors.get(sector)
        return s.arenas.get(name.split(":")[0]) if s else None

    def closed_until(self, arena: Arena, now: datetime) -> datetime | None:
        """None when the arena is open at `now` (its hours, else its sector's); else when it opens."""
        return closed_until(arena.hours or self.sectors[arena.sector].hours, now)

    def agent(self, name: str) -> Persona:
        for a in self.agents:
            if a.name == name:
                return a
        raise KeyError(name)
