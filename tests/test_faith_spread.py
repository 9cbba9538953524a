"""A faith spreads (Project Sid §5.3.2) on both bundled doctrine worlds (worlds/towns.toml,
worlds/towns-lantern.toml), scripted 12 game hours (a game day for the converts' rise) under the culture preset, as eval culture
measures the saves (tests/culture_runs.py: each run once a session): converts of each level rise,
the area of influence grows, and with travel off the faith stays in its town. And the mechanism
behind it: a priest seeks out those not known to share its faith
(mind/belief.py `react_inputs`, the stand-in's `P_SEEK`; a preaching trip, mind/trips.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from culture_runs import DOCTRINE_WORLDS, culture_measures, culture_save
from helpers import ROOT
from smalltown.llm.render import render
from smalltown.llm.tasks import PersonaCard, React
from smalltown.llm.tasks.belief import Faith
from smalltown.mind.travel import Atlas
from smalltown.scripted.talk import react
from smalltown.world.load import load_world

OFF = "travel=false"


def _doctrine(world: str, *sets: str, hours: int = 12) -> dict:
    (d,) = culture_measures(world, hours, *sets)["doctrines"]
    return d


def _reached(d: dict) -> list[list[int]]:
    """Per game hour, the converts at each level or above (levels never go down: an agent counted at
    a level stays counted there)."""
    names = d["level_names"]
    return [[sum(row[n] for n in names[i:]) for i in range(len(names))] for row in d["by_hour"]]


@pytest.mark.parametrize("world", DOCTRINE_WORLDS)
def test_converts_of_each_level_rise_over_a_day_and_no_level_falls(world):
    """Over a game day (the small worlds' rural people come to a square some evenings only, so the
    faith spreads slowly: a day, not 12 hours), the converts at each level or above are more at the
    end than at hour 2, and never fewer from one hour to the next."""
    d = _doctrine(world, hours=24)
    names, rows, reached = d["level_names"], d["by_hour"], _reached(d)
    assert len(rows) == 24 and [r["hour"] for r in rows] == list(range(1, 25))
    for i, n in enumerate(names):
        series = [r[i] for r in reached]
        assert series == sorted(series), f"{n} or above fell: {series}"
        assert series[-1] > series[1], f"{n} or above: no more at the end than at hour 2: {series}"
    # (measured, indirect or above / direct at hours 2 and 24: towns 0/0 -> 7/1; lantern 1/0 -> 2/1)
    assert reached[-1][0] >= 2


@pytest.mark.parametrize("world", DOCTRINE_WORLDS)
def test_the_area_of_influence_grows(world):
    d = _doctrine(world)
    hours = [a["hour"] for a in d["area"]]
    assert hours[:2] == [0, 1] and hours[-1] == 12
    for i, n in enumerate(d["level_names"]):
        tiles = [a["tiles"][i] for a in d["area"]]
        assert tiles == sorted(tiles), f"{n}: the cumulative area fell: {tiles}"
        assert tiles[-1] > tiles[1], f"{n}: the area after hour 12 is not larger than after hour 1: {tiles}"
    # the faith's area reaches past what the priests alone covered at the start
    assert d["area"][-1]["tiles"][0] > 2 * d["area"][1]["tiles"][0]


def _own_towns(atlas: Atlas, name: str) -> set[str]:
    """tests/test_travel.py's `_own_towns`: the towns an agent keeps to with travel off (its home's,
    a rural agent's nearest, any whose circle its home reaches, those of its usual day's places)."""
    spec = next(a for a in atlas.world.agents if a.name == name)
    home = atlas.home_town(spec.name) or atlas.nearest(spec.home)
    world = atlas.world
    at_home = {world.town_at(*t) for a in world.sectors[spec.home].arenas.values() for t in a.tiles}
    return ({home} | at_home | {atlas.sector_town.get(it.place, "") for it in spec.routine if it.place}) - {""}


def _believers_away(world: str, *sets: str) -> list[tuple[str, float, str]]:
    """(agent, hour, town) for each sampled tile (the start, each game hour's end) where a priest or
    convert, from its rise, stood inside a town other than the priests' town."""
    s, d = culture_save(world, 12, *sets), _doctrine(world, *sets)
    w = load_world(ROOT / "worlds" / f"{world}.toml")
    (home,) = d["priest_towns"]
    rose = {r["agent"]: r["time"] for r in reversed(d["rises"]) if r["was"] == 0}
    away = []
    for _tick, t, tiles in s.hours:
        stamp = t.strftime("%Y-%m-%d %H:%M:%S")
        for a, tile in tiles.items():
            if a in d["priests"] or (a in rose and rose[a] <= stamp):
                town = w.town_at(*tile)
                if town not in ("", home):
                    away.append((a, round((t - s.start).total_seconds() / 3600, 1), town))
    return away


@pytest.mark.parametrize("world", DOCTRINE_WORLDS)
def test_with_travel_off_the_faith_stays_in_its_town(world):
    """With travel off every convert lives in the priests' town, or is a rural agent who keeps to
    it; and no priest or convert is ever found inside another town, so no tile of the area of
    influence is heard from inside another town (the area may reach the land between towns: the
    farms of rural converts). With travel on, priests and converts are found in other towns."""
    d = _doctrine(world, OFF)
    assert culture_measures(world, 12, OFF)["travel"] is False
    (home,) = d["priest_towns"]
    atlas = Atlas(load_world(ROOT / "worlds" / f"{world}.toml"))
    assert d["converts_total"] >= 1  # (measured: towns 2, lantern 1: the priests' own town is small)
    for a in d["levels"]:
        if a not in d["priests"]:
            assert atlas.home_town(a) == home or (not atlas.home_town(a) and home in _own_towns(atlas, a)), a
    assert d["converts_outside_priests_towns"] == sum(n for t, n in d["converts_by_town"].items() if t != home)
    assert set(d["converts_by_town"]) <= {home, ""}
    assert _believers_away(world, OFF) == []
    assert _believers_away(world), "with travel on, the faith should be found in another town"


# --- the mechanism ----------------------------------------------------------------------------------

NOW = datetime(2023, 6, 5, 9, 0)
PRIEST = PersonaCard(name="Nora Vance", age=40, traits="calm, careful, proud", description="Nora runs the counter",
                     home="Vance house")
NOODLE = dict(doctrine="Noodlism", levels=[["noodle"], ["Noodlist"]], level_names=["indirect", "direct"])


def _seeing(faiths: list[Faith], minutes: int = 0) -> React:
    return React(persona=PRIEST, now=NOW + timedelta(minutes=minutes), status="working", place="Vance Shop: shop",
                 observation="Lilah Hart is buying bread", observed="Lilah Hart", observed_is_agent=True, context=[],
                 faiths=faiths)


def _talks(faiths: list[Faith], n: int = 1500) -> int:
    return sum(react(0, _seeing(faiths, k)).talk for k in range(n))


def test_a_priest_seeking_a_non_believer_starts_more_talks():
    priest = Faith(**NOODLE, level=2, priest=True)
    to_none, to_indirect = _talks([priest]), _talks([priest.model_copy(update={"listener_level": 1})])
    to_believer, plain = _talks([priest.model_copy(update={"listener_level": 2})]), _talks([])
    # a stranger's 2% without the faith; +50% for one not known to hold it at the top level
    assert to_believer == plain and plain < 60
    assert to_none > 8 * plain and to_indirect > 8 * plain
    believer = Faith(**NOODLE, level=2)  # the stand-in answers the typed input alike (the mind gives it to priests alone)
    assert _talks([believer]) == to_none


def test_the_react_prompt_shows_the_faith_only_when_given():
    plain = render(_seeing([]))
    assert "Noodlism" not in plain and "win over" not in plain
    shown = render(_seeing([Faith(**NOODLE, level=2, priest=True)]))
    assert "Nora Vance is a priest of Noodlism and tries to win over everyone they meet; Lilah Hart is not known " \
           "to share this faith." in shown
    shown = render(_seeing([Faith(**NOODLE, level=2, listener_level=2)]))
    assert "Nora Vance is a direct believer in Noodlism and tries to win over everyone they meet; Lilah Hart " \
           "already shares this faith." in shown
    # quiet: a react question without faiths keeps its JSON (its cassette key) as before the input existed
    assert "faiths" not in _seeing([]).model_dump_json() and "faiths" in _seeing([Faith(**NOODLE, level=2)]).model_dump_json()


@pytest.mark.parametrize("sets", [["architecture=culture"], ["architecture=culture", "travel=false"],
                                  ["architecture=culture", "belief=false"]])
def test_the_mind_gives_a_seeker_its_faith_and_its_preaching_trips(tmp_path, sets):
    """On towns.toml after its first tick: a priest's react question carries the faith (a fellow
    priest known to hold it, a townsman not), and its day a reason to preach in each other town
    (none with travel off); anyone else's carries neither; with belief off, nobody's does."""
    from smalltown.mind import belief, trips
    from smalltown.mind.react import attending
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create

    world = load_world(ROOT / "worlds" / "towns.toml")
    (d,) = world.doctrines
    sim = create(world, tmp_path / "s.sqlite", ScriptedBackend(world.seed), sets=sets, overwrite=True)
    try:
        sim.step()
        mind = {a.name: a.mind for a in sim.agents}
        priest, fellow = d.priests[:2]
        other = next(a.name for a in world.agents if a.name not in d.priests and world.town_of(a.name) == world.towns[0].name)
        on, travel = "belief=false" not in sets, "travel=false" not in sets
        got = belief.react_inputs(mind[priest], other)
        if not on:
            assert got == {} and not belief.seeking(mind[priest], other)
            assert not [t for t in trips.trips(mind[priest], sim.now.date()) if t.why == "preaching"]
            return
        (f,) = got["faiths"]
        assert (f.doctrine, f.level, f.priest, f.listener_level, f.persona) == (d.name, len(d.levels), True, 0, [])
        assert belief.react_inputs(mind[priest], fellow)["faiths"][0].listener_level == len(d.levels)
        assert belief.seeking(mind[priest], other) and not belief.seeking(mind[priest], fellow)
        assert belief.react_inputs(mind[other], priest) == {} and not belief.seeking(mind[other], priest)
        mind[priest].state.weighed = sim.now  # just weighed someone: a seeker still weighs a non-believer
        assert mind[priest].settings.attention_minutes > 0
        assert attending(mind[priest], other, sim.now) and not attending(mind[priest], fellow, sim.now)
        preach = [t for t in trips.trips(mind[priest], sim.now.date()) if t.why == "preaching"]
        assert sorted(t.town for t in preach) == (sorted(t.name for t in world.towns[1:]) if travel else [])
        assert all(t.doctrine == d.name and t.place == next(w.square for w in world.towns if w.name == t.town)
                   for t in preach)
        busy = [trips.atlas(mind[priest]).busy_hours(t.place) for t in preach]  # when people are there
        assert [(t.start, t.end) for t in preach] == [(f"{s // 60:02d}:{s % 60:02d}", f"{e // 60:02d}:{e % 60:02d}")
                                                      for s, e in busy]
        assert not [t for t in trips.trips(mind[other], sim.now.date()) if t.why == "preaching"]
    finally:
        sim.close()


def test_a_priest_preaches_in_a_square_when_peoples_days_bring_them_there():
    """A preaching trip's hours are the square's busiest 3 (the world's routines: most person-minutes
    there), not the whole market day: on towns-lantern the rural visitors' and townsfolk's walks in
    Birchwick Park from 15:00; a square no one's day brings anyone to keeps its hours."""
    atlas = Atlas(load_world(ROOT / "worlds" / "towns-lantern.toml"))
    assert atlas.busy_hours("Birchwick Park") == (15 * 60, 18 * 60)
    assert atlas.busy_hours("Larkcombe Park") == atlas.square_hours("Larkcombe Park") == (9 * 60, 18 * 60)
    s, e = atlas.busy_hours("Ashmere Park")
    assert e - s == 180 and s <= 15 * 60 and e >= 17 * 60  # (its visitors come at 15:00, 16:30, 16:45)


def test_a_priest_with_nothing_new_in_sight_looks_again_for_those_it_seeks(tmp_path):
    """The encounters weigh one observation a tick, and a percept already among the latest is not
    new: a priest arriving in a square sees several at once and would get to one. With nothing new
    to weigh, a seeker weighs one in sight it seeks (sim/encounters.py `candidates`); a fellow
    priest, or anyone for one who seeks nobody, is not looked at again."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.perception import Seen

    world = load_world(ROOT / "worlds" / "towns.toml")
    (d,) = world.doctrines
    sim = create(world, tmp_path / "s.sqlite", ScriptedBackend(world.seed), sets=["architecture=culture"], overwrite=True)
    try:
        while sim.now.hour < 9:
            sim.step()
        by = {a.name: a for a in sim.agents}
        free = lambda a: a.action is not None and not a.asleep and not a.action.talking  # noqa: E731
        priest = next(by[p] for p in d.priests if free(by[p]))
        fellow = next(by[p] for p in d.priests if p != priest.name)
        other = next(a for a in sim.agents if a.name not in d.priests and free(a)
                     and a.name not in priest.mind.state.last_chat and a.name not in priest.mind.state.declined)
        layman = next(a for a in sim.agents if a.name not in d.priests and a is not other and free(a))
        look = [Seen(n.name, f"{n.name} is {n.doing}", 1) for n in (fellow, other)]
        priest.look, layman.look = look, look
        found = [(c.agent.name, c.seen.subject) for c in sim.encounters.candidates(sim.agents, {}, sim.now)]
        assert (priest.name, other.name) in found and (priest.name, fellow.name) not in found
        assert not [c for c in found if c[0] == layman.name]
        priest.mind.state.declined[other.name] = sim.now  # passed over: not weighed again for hours
        assert (priest.name, other.name) not in [(c.agent.name, c.seen.subject) for c in sim.encounters.candidates(sim.agents, {}, sim.now)]
    finally:
        sim.close()
