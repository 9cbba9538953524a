"""Towns made to order (`smalltown world generate`): a world of N towns of M agents each plus R
rural agents, with homes, workplaces and haunts, personas from seeded word lists, and optional
facts and gatherings. The same options give the same bytes; the result passes `world check`."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from smalltown.world.errors import WorldError
from smalltown.world.generate_map import LEGEND, Building, codes, draw, lay_out
from smalltown.world.generate_people import Person, assign_jobs, farm_jobs, households, routine, words
from smalltown.world.generate_sid import AREA, TOWN_RADIUS, LayoutError, lay_out_sid
from smalltown.world.generate_towns import doctrine_table, grid_towns, nearest, priests_of
from smalltown.world.generate_places import (CAPACITY, COMMUNITY_GOALS, HAUNTS, NEEDS, OWNERS, PLACES, SHOPS, home,
                                             place, place_name)
from smalltown.world.load import load_world_text
from smalltown.world.model import Fact

START = datetime(2023, 6, 5, 6, 0)  # a Monday in June
EVENTS = ("fair", "picnic", "concert", "festival", "carnival")
LIMITS = {"towns": 64, "agents": 1000}  # a world holds at most 1000 agents (world/schema.py)
SEED_MAX = 2**32 - 1  # a world's seed (world/schema.py)


class GenerateError(ValueError):
    """Options that cannot make a valid world (too many agents, a map too large)."""


class GeneratedInvalid(GenerateError):
    """A world made that its own check refuses (a bug in the generator): nothing is written."""

    def __init__(self, error: WorldError):
        self.problems = error.problems
        super().__init__(f"the world made would not pass `world check` ({len(error.problems)} problem"
                         f"{'s' if len(error.problems) != 1 else ''}), so nothing was written; "
                         f"the first: {error.problems[0]}")


@dataclass(frozen=True)
class Options:
    towns: int = 1
    agents: int = 5  # in each town
    rural: int = 0
    seed: int = 0
    facts: bool = True
    gatherings: bool = True
    same_traits: bool = False  # every persona the same traits and hobby, no couples (the role world)
    layout: str = "grid"  # "grid": towns in a grid, rural homes in strips; "sid": Sid's (world/generate_sid.py)
    area: tuple[int, int] = AREA  # the sid layout's width x height in tiles
    town_radius: int = TOWN_RADIUS  # the sid layout's town radius in tiles (grown where a town needs more)
    doctrine: tuple[str, str] | None = None  # a doctrine file's (name, text): one [[doctrines]] table
    priests: int = 0  # agents of the first town made the doctrine's priests


SAME_TRAITS = ("calm", "loyal", "energetic")  # (none of the stand-in's trait lexicon: no need leaned to)
SAME_HOBBY = "walking"


def _sizes(rng: random.Random, total: int, most: int) -> list[int]:
    """Household sizes summing to `total`: mostly couples and small families."""
    sizes: list[int] = []
    while total > 0:
        n = min(total, rng.choices(range(1, most + 1), weights=(2, 4, 3, 3, 1)[:most])[0])
        sizes.append(n)
        total -= n
    return sizes


def _town_names(rng: random.Random, n: int) -> list[str]:
    parts = words("towns.txt")  # "[first]", first parts, "[last]", last parts
    split = parts.index("[last]")
    first, last = parts[1:split], parts[split + 1:]
    return rng.sample([a + b for a in first for b in last], n)


def generate(opts: Options) -> tuple[str, str]:
    """The world file's text and its map file's text (the world names its map as MAP_NAME)."""
    if not 1 <= opts.towns <= LIMITS["towns"] or opts.agents < 1 or opts.rural < 0:
        raise GenerateError(f"--towns must be 1 to {LIMITS['towns']}, --agents at least 1, --rural at least 0")
    if not 0 <= opts.seed <= SEED_MAX:
        raise GenerateError(f"--seed must be 0 to {SEED_MAX} (a world's seed, what a model's sampler takes)")
    if opts.layout not in ("grid", "sid"):
        raise GenerateError(f"--layout must be grid or sid, not {opts.layout!r}")
    if opts.priests and opts.doctrine is None:
        raise GenerateError("--priests needs a --doctrine: the faith they preach")
    if opts.priests < 0:
        raise GenerateError("--priests must be 0 or more")
    if opts.layout == "sid" and not (1 <= opts.town_radius <= 500 and all(20 <= n <= 1000 for n in opts.area)):
        raise GenerateError("--area must be 20 to 1000 tiles each way, --town-radius 1 to 500")
    if opts.towns * opts.agents + opts.rural > LIMITS["agents"]:
        raise GenerateError(f"{opts.towns * opts.agents + opts.rural} agents: a world holds at most "
                            f"{LIMITS['agents']}")
    rng = random.Random(opts.seed)
    towns = _town_names(rng, opts.towns)
    town_sizes = [(s, t) for t in range(opts.towns) for s in _sizes(rng, opts.agents, 5)]
    # the sid layout's rural people each on a farmstead of their own, spread out as Sid spawns them
    rural = [1] * opts.rural if opts.layout == "sid" else _sizes(rng, opts.rural, 3)
    rural_sizes = [(s, r % opts.towns) for r, s in enumerate(rural)]
    sizes = town_sizes + rural_sizes
    houses = households(rng, [s for s, _ in sizes], [t for _, t in sizes])
    if opts.same_traits:  # after the draws: names, ages, jobs and layout stay as without it
        for p in (p for h in houses for p in h):
            p.traits, p.hobby, p.partner = list(SAME_TRAITS), SAME_HOBBY, ""
    return _assemble(rng, opts, towns, houses, len(town_sizes))


def _assemble(rng: random.Random, opts: Options, towns: list[str], houses: list[list[Person]],
              n_town: int) -> tuple[str, str]:
    places = [{k: place_name(k, towns[t], t) for k in PLACES if k != "college"} for t in range(opts.towns)]
    for p in places:
        p["college"] = place_name("college", towns[0], 0)  # one college, in the first town
    sid = opts.layout == "sid"  # (its farms live off their land: a farmyard at each farmhouse)
    homes = [home(f"{h[0].surname} {'house' if i < n_town else 'farmhouse'}", [p.first for p in h], sid and i >= n_town)
             for i, h in enumerate(houses)]
    town_buildings: list[list[Building]] = [[] for _ in towns]
    for i, b in enumerate(homes[:n_town]):
        town_buildings[houses[i][0].town].append(b)
    sites = {}
    for t in range(opts.towns):
        kinds = [k for k in PLACES if k != "college" or t == 0]
        for k in kinds:
            sites[places[t][k]] = place(k, places[t][k])
        town_buildings[t] = [sites[places[t][k]] for k in kinds if k not in HAUNTS] + town_buildings[t] + \
            [sites[places[t][k]] for k in HAUNTS]
    buildings = [b for bs in town_buildings for b in bs] + homes[n_town:]
    if len(buildings) > 1000:
        raise GenerateError(f"{len(buildings)} sectors: a world holds at most 1000")
    code = codes()
    for b in buildings:
        for r in b.rooms:
            r.code = next(code)
    if opts.layout == "sid":
        try:
            layout, circles = lay_out_sid(rng, town_buildings, homes[n_town:], opts.area, opts.town_radius)
        except LayoutError as e:
            raise GenerateError(str(e)) from None
        for h, b in zip(houses[n_town:], homes[n_town:]):  # a farm household works its own farm, and uses
            for p in h:                                    # its nearest town's school and square
                p.town = nearest(circles, b)
            farm_jobs(h)
    else:
        layout = lay_out(town_buildings, homes[n_town:])
        circles = grid_towns(town_buildings)
    for t in range(opts.towns):  # (no draw between here and the world's first: the grid's bytes as before)
        assign_jobs(rng, [p for h in (houses[:n_town] if sid else houses) for p in h if p.town == t], college=True)
    if max(layout.width, layout.height) > 1000:
        raise GenerateError(f"a map of {layout.width}x{layout.height} tiles: at most 1000 each way")
    tiles, arenas = draw(buildings, layout)
    people = [p for h in houses for p in h]
    owners = _owners(people, places)
    hosts = _hosts(rng, opts, towns, people, owners, places)
    squares = [places[t]["park"] for t in range(opts.towns)]  # each town's meeting place: its park
    known = squares if opts.layout == "sid" else []  # Sid's agents know every town (and where it is)
    first = [p for p in people[:sum(map(len, houses[:n_town]))] if p.town == 0]  # the first town's (no farm's)
    priests = priests_of(first, opts.priests) if opts.doctrine else []
    if len(priests) < opts.priests:
        raise GenerateError(f"--priests {opts.priests}: {towns[0]}, the first town, has {len(first)} people")
    farms = {i: homes[i].sector for i in range(n_town, len(houses))} if sid else {}
    agents = [_agent(rng, p, houses[p.household], homes[p.household],
                     {**places[p.town], "farm": farms[p.household]} if p.household in farms else places[p.town],
                     owners, hosts, known, farms.get(p.household, "")) for p in people]
    facts, gatherings = _news(opts, people, owners, hosts, places)
    facts = _told_right(facts, gatherings, agents)
    name = f"{len(towns)} town{'s' if len(towns) > 1 else ''} made to order (seed {opts.seed})"
    shops = {p[k] for p in places for k in SHOPS if k in p}
    community = {"community_goal": rng.choice(COMMUNITY_GOALS).format(town=towns[0]),
                 "needs": sorted(rng.sample(NEEDS, 4), key=NEEDS.index)}  # (drawn last: the rest as before)
    tables = {"towns": [{"name": t, "centre": [x, y], "radius": r, "square": squares[i]}
                        for i, (t, (x, y, r)) in enumerate(zip(towns, circles))]}
    if opts.doctrine:
        tables["doctrines"] = [doctrine_table(*opts.doctrine, priests, squares[0])]
        for a in agents:
            if a["name"] in priests:
                a["description"] += f"; {a['name']} is a priest of {tables['doctrines'][0]['name']}"
    return (_world_toml(name, opts.seed, buildings, agents, facts, gatherings, _hours(agents, shops), community,
                        tables), _map_toml(name, tiles, arenas))


def _hours(agents: list[dict], shops: set[str]) -> dict[str, str]:
    """Each shop's opening hours: from the earliest start to the latest end, in whole hours, of the
    routine items at it (someone's work, a lunch); none when they wrap round midnight."""
    spans: dict[str, list[int]] = {}
    for a in agents:
        days = a["routine"]
        for i, d in enumerate(days):
            if d.get("place") not in shops:
                continue
            start, end = _minute(d["start"]), _minute(days[(i + 1) % len(days)]["start"])
            if end <= start:
                spans[d["place"]] = [0, 24 * 60]  # past midnight: always open
                continue
            low, high = spans.setdefault(d["place"], [start, end])
            spans[d["place"]] = [min(low, start), max(high, end)]
    return {s: f"{lo // 60:02d}:00-{-(-hi // 60):02d}:00" for s, (lo, hi) in spans.items()
            if lo // 60 < -(-hi // 60) < 24}


def _minute(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


def _owners(people: list[Person], places: list[dict[str, str]]) -> dict[str, str]:
    """Who runs each bakery, store, cafe and bar: the first of the town holding its owner's job."""
    owners: dict[str, str] = {}
    for p in people:
        for kind, title in OWNERS.items():
            if p.job is not None and p.job.title == title and places[p.town][kind] not in owners:
                owners[places[p.town][kind]] = p.name
    return owners


def _hosts(rng: random.Random, opts: Options, towns: list[str], people: list[Person], owners: dict[str, str],
           places: list[dict[str, str]]) -> dict[str, tuple[str, str, str]]:
    """Each town's gathering, by host: (its name, its place, the event's word)."""
    if not opts.gatherings:
        return {}
    out: dict[str, tuple[str, str, str]] = {}
    for t, town in enumerate(towns):
        host = owners.get(places[t]["cafe"]) or next((p.name for p in people if p.town == t and p.age >= 18), None)
        if host and host not in out:
            event = EVENTS[rng.randrange(len(EVENTS))]
            out[host] = (f"{town} {event}", places[t]["park"], event)
    return out


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _agent(rng: random.Random, p: Person, house: list[Person], b: Building, places: dict[str, str],
           owners: dict[str, str], hosts: dict[str, tuple[str, str, str]], squares: list[str], farm: str = "") -> dict:
    where = places.get(p.job.place, "") if p.job else ""
    if p.job is None:
        work = f"{p.name} is retired"
    elif not where:
        work = f"{p.name} is a {p.job.title} who works from home"
    else:
        work = f"{p.name} is a {p.job.title} at {where}"
    others = [q.name for q in house if q is not p]
    phrases = [work, f"{p.name} lives in {b.sector}" + (f" with {_and(others)}" if others else " alone"),
               f"{p.first} is {_and(p.traits)}", f"{p.first} likes {p.hobby}"]
    if p.partner:
        phrases.append(f"{p.name} is married to {p.partner}")
    phrases += [f"{p.name} runs {s}" for s, o in owners.items() if o == p.name]
    if p.name in hosts:
        gname, at, _ = hosts[p.name]
        day = START + timedelta(days=1)
        phrases.append(f"{p.name} is holding the {gname} at {at} on {day:%B} {day.day}, 5-7 pm")
    days = routine(rng, p, places, farm)
    knows = sorted({d["place"] for d in days if d.get("place")} | {places["cafe"], places["park"], *squares})
    bx, by = b.tiles["bedroom", f"{p.first}'s bed"]
    return {"name": p.name, "age": p.age, "traits": ", ".join(p.traits), "description": "; ".join(phrases),
            "home": b.sector, "spawn": [bx, by], "knows": knows, "routine": days}


def _news(opts: Options, people: list[Person], owners: dict[str, str], hosts: dict[str, tuple[str, str, str]],
          places: list[dict[str, str]]) -> tuple[list[dict], list[dict]]:
    """A fact and a gathering for each town's event; facts of who runs what and who is married,
    up to the hundred a world may hold."""
    facts: list[dict] = []
    gatherings: list[dict] = []
    day = START + timedelta(days=1)
    for host, (gname, at, _) in hosts.items():
        text = f"{host} is holding the {gname} at {at} on {day:%B} {day.day}, 5-7 pm"
        # the whole name, not [town, event]: "fair" alone starts "Fairbairn", and a Fairbairn of the
        # town would match the fact without knowing it (world check refuses that)
        fact = {"name": gname, "text": text, "keywords": [gname], "known_by": [host]} if opts.facts else None
        if fact:
            facts.append(fact)
        gatherings.append({"name": gname, "place": at, "start": day.replace(hour=17), "end": day.replace(hour=19),
                           "host": host, **({"fact": gname} if fact else {})})
    if opts.facts:
        facts += [{"name": f"{o} runs {s}", "text": f"{o} runs {s}", "keywords": [o, "runs"], "known_by": [o]}
                  for s, o in owners.items()]
        facts += [{"name": f"{p.name} and {p.partner}", "text": f"{p.name} is married to {p.partner}",
                   "keywords": [p.name, p.partner, "married"], "known_by": [p.name, p.partner]}
                  for p in people if p.partner and p.name < p.partner]
    return facts, gatherings[:100]


def _told_right(facts: list[dict], gatherings: list[dict], agents: list[dict]) -> list[dict]:
    """Up to the hundred facts a world may hold, each matching the descriptions of those who know
    it and no one else's, as `world check` holds them (world/load_news.py): when a couple's names also
    start a third's double-barrelled surname, that fact is left out (a gathering's fact is kept)."""
    kept: list[dict] = []
    announced = {g.get("fact") for g in gatherings}
    for f in facts:
        if len(kept) == 100:
            break
        fact = Fact(f["name"], f["text"], tuple(f["keywords"]), "", tuple(f["known_by"]))
        # (a phrase matches only if the whole description does: most are told apart by the first test)
        knows = {a["name"] for a in agents if fact.about(a["description"])
                 and any(fact.about(p) for p in a["description"].split(";"))}
        if f["name"] in announced or knows == set(fact.known_by):
            kept.append(f)
    return kept


def _s(v: object) -> str:
    """A TOML value: strings as JSON strings (valid TOML basic strings), lists inline."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_s(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_s(x)}" for k, x in v.items()) + " }"
    return json.dumps(v, ensure_ascii=False) if isinstance(v, str) else str(v)


MAP_NAME = "MAP"  # replaced by the map file's name when written (see write)


def _world_toml(name: str, seed: int, buildings: list[Building], agents: list[dict], facts: list[dict],
                gatherings: list[dict], hours: dict[str, str], community: dict[str, object],
                tables: dict[str, list[dict]]) -> str:
    out = ["# Generated by `smalltown world generate`: edit freely, check with `smalltown world check`.",
           f"name = {_s(name)}", f"map = {_s(MAP_NAME)}", f"start = {START.isoformat()}", "step_seconds = 10",
           f"seed = {seed}", *(f"{k} = {_s(v)}" for k, v in community.items())]
    for b in buildings:
        if b.sector in hours:
            out += ["", f"[sectors.{_s(b.sector)}]", f"hours = {_s(hours[b.sector])}"]
        for r in b.rooms:
            out += ["", f"[sectors.{_s(b.sector)}.arenas.{_s(r.name)}]", f"code = {_s(r.code)}", "objects = ["]
            for o in r.objects:
                state = {"state": r.states[o]} if o in r.states else {}
                room = {"capacity": CAPACITY[o]} if o in CAPACITY else {}
                out.append("  " + _s({"name": o, "tiles": [list(b.tiles[r.name, o])], **state, **room}) + ",")
            out.append("]")
    for a in agents:
        out += ["", "[[agents]]"] + [f"{k} = {_s(v)}" for k, v in a.items() if k != "routine"]
        out += ["routine = ["] + [f"  {_s(d)}," for d in a["routine"]] + ["]"]
    for table, rows in (("facts", facts), ("gatherings", gatherings), *tables.items()):
        for row in rows:
            out += ["", f"[[{table}]]"] + [f"{k} = {_s(v)}" for k, v in row.items()]
    return "\n".join(out) + "\n"


def _map_toml(name: str, tiles: list[str], arenas: list[str]) -> str:
    legend = [f"{_s(g)} = {_s(kind)}" for g, kind in LEGEND.items()]
    return "\n".join([f"name = {_s(name)}", "", "[legend]", *legend, "", "[layers]", "tiles = '''", *tiles,
                      "'''", "arenas = '''", *arenas, "'''"]) + "\n"


def write(opts: Options, out: Path) -> Path:
    """Write the world to `out` and its map beside it (OUT-map.toml); the map's path. The texts
    are checked as `world check` checks the files first: a world it would refuse is not written."""
    world, map_text = generate(opts)
    map_path = out.with_name(out.stem + "-map.toml")
    world = world.replace(_s(MAP_NAME), _s(map_path.name), 1)
    try:
        load_world_text(str(out), world, str(map_path), map_text)
    except WorldError as e:
        raise GeneratedInvalid(e) from None
    map_path.write_text(map_text, encoding="utf-8")
    out.write_text(world, encoding="utf-8")
    return map_path
