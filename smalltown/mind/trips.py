"""Travel between towns, as an agent's day is told it (a world of several towns, `travel` on):
the towns it knows, with the walk from home, and today's typed reasons to go to one (a market,
people known who live there, a doctrine's gathering for a believer, another town's square to
preach in for a priest, at the hours
when people's days bring them there). The map of the towns is
mind/travel.py's `Atlas`.

With `travel` off, or a world of one town (or none), an agent is given no towns and no reasons,
and the places it may plan or choose are those of its own town and the land between towns (a
rural agent's: its nearest town's too): other worlds' questions are what they were.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks import TownSeen, Trip
from smalltown.mind.travel import Atlas

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

MAX_WALK = 180  # minutes: a town farther from home than this is no day trip
DEFAULT_GATHERING = (10 * 60, 11 * 60)  # a doctrine's gathering with no hours given


def _span(text: str, default: tuple[int, int]) -> tuple[int, int]:
    """"HH:MM-HH:MM" as minutes (the default when it is not one)."""
    try:
        a, b = text.split("-")
        return int(a[:2]) * 60 + int(a[3:5]), int(b[:2]) * 60 + int(b[3:5])
    except (ValueError, IndexError):
        return default


def _hhmm(m: int) -> str:
    return f"{m // 60 % 24:02d}:{m % 60:02d}"


def atlas(mind: "MindCore") -> Atlas:
    return mind.lore.atlas


def travelling(mind: "MindCore") -> bool:
    """Trips are planned: a world of several towns with `travel` on."""
    return mind.settings.travel and atlas(mind).many


def allowed(mind: "MindCore") -> frozenset[str] | None:
    """The sectors the agent may plan or choose (None: any it knows): with travel off in a world
    of several towns, its own town's and those between towns."""
    if mind.settings.travel or not atlas(mind).many:
        return None
    usual = frozenset(it.place for it in mind.spec.routine if it.place) | frozenset(mind.spec.sleep_places)
    return atlas(mind).allowed(mind.name, mind.persona.home, usual)


def known_places(mind: "MindCore") -> list[str]:
    """The sectors a plan may name: all the agent knows, less those travel off keeps it from."""
    ok = allowed(mind)
    return [s for s in mind.state.known.tree if ok is None or s in ok]


def towns_seen(mind: "MindCore") -> list[TownSeen]:
    """The towns as the agent knows them (all of them: every agent knows the towns' names and
    squares), with the walk from home; [] unless travelling."""
    if not travelling(mind):
        return []
    a, home = atlas(mind), mind.persona.home
    own = a.home_town(mind.name)
    return [TownSeen(name=t.name, square=t.square, minutes=0 if t.name == own else a.minutes(home, t.square),
                     own=t.name == own) for t in a.towns]


def believes(mind: "MindCore") -> list[str]:
    """The doctrines the agent holds at some level (the `belief` module's saved state)."""
    held = mind.state.modules.get("belief", {})
    return [d for d, s in held.items() if isinstance(s, dict) and int(s.get("level", 0) or 0) > 0]


def people_known(mind: "MindCore") -> list[str]:
    """Those the agent knows: talked with, felt about (social awareness), or named in its own
    description (world data, matched by full name)."""
    names = set(mind.state.talks) | set(mind.state.last_chat) | set(mind.state.social)
    names |= set(mind.lore.tags(mind.persona.description)[0])
    names.discard(mind.name)
    return sorted(names)


def trips(mind: "MindCore", day: date) -> list[Trip]:
    """Today's reasons to go to another town, typed; [] unless travelling. A rural agent's market
    is its nearest town's; a town agent's, every other town's within a day's walk."""
    if not travelling(mind):
        return []
    a, home = atlas(mind), mind.persona.home
    own = a.home_town(mind.name)
    near = a.nearest(home) if not own else ""
    homes = {p.name: p.home for p in a.world.agents}
    known = people_known(mind)
    out: list[Trip] = []
    for t in a.towns:
        if t.name == own:
            continue
        walk = a.minutes(home, t.square)
        if walk > MAX_WALK or t.square not in mind.lore.sectors:
            continue
        s, e = a.square_hours(t.square)
        if own or t.name == near:
            out.append(Trip(town=t.name, place=t.square, why="market", start=_hhmm(s), end=_hhmm(e), minutes=walk))
        there = [n for n in known if n in homes and a.home_town(n) == t.name]
        if there:
            out.append(Trip(town=t.name, place=t.square, why="people", start=_hhmm(s), end=_hhmm(e), minutes=walk,
                            people=there[:5]))
    for d in a.world.doctrines:  # a priest preaches in the other towns' squares, when people are there
        if not (mind.settings.belief and d.levels and mind.name in d.priests):  # (its priests alone preach:
            continue  # mind/belief.py `seeker`, not imported here: mind/module.py imports this file)
        for t in a.towns:
            walk = a.minutes(home, t.square)
            if t.name != own and walk <= MAX_WALK and t.square in mind.lore.sectors:
                s, e = a.busy_hours(t.square)
                out.append(Trip(town=t.name, place=t.square, why="preaching", start=_hhmm(s), end=_hhmm(e),
                                minutes=walk, doctrine=d.name))
    held = believes(mind)
    for d in a.world.doctrines:
        sector = (d.gathering or "").split(":")[0]
        if d.name not in held or sector not in mind.lore.sectors:
            continue
        town = a.sector_town.get(sector, "")
        walk = a.minutes(home, sector)
        if walk > MAX_WALK:
            continue
        s, e = _span(d.gathering_hours, DEFAULT_GATHERING)
        out.append(Trip(town=town, place=sector, why="gathering", start=_hhmm(s), end=_hhmm(e), minutes=walk,
                        doctrine=d.name))
    for r in out:  # knowing of a place one may go is knowing where it is
        _learn(mind, r.place)
    return out


def _learn(mind: "MindCore", sector: str) -> None:
    tree = mind.state.known
    if sector not in tree.tree and sector in mind.lore.sectors:
        for arena, objects in mind.lore.sectors[sector].items():
            tree.visit(sector, arena, objects)


def planning_inputs(mind: "MindCore", now: datetime) -> dict[str, list]:
    """The day-plan and schedule tasks' travel inputs (none unless travelling: other worlds'
    questions keep their identity)."""
    if not travelling(mind):
        return {}
    return {"towns": towns_seen(mind), "trips": trips(mind, now.date())}
