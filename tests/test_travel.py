"""Travel between towns: agents plan trips to another town for typed reasons (a market, people
known who live there, a doctrine's gathering for a believer); with `travel` off every agent keeps
to its own town; worlds of one town ask what they asked before."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from smalltown.config import Settings
from smalltown.llm.render import render
from smalltown.llm.tasks import DailyPlan, PersonaCard, TownSeen, Trip
from smalltown.mind import trips as mind_trips
from smalltown.mind.travel import Atlas
from smalltown.scripted import ScriptedBackend
from smalltown.scripted import trips as scripted_trips
from smalltown.sim.open import create
from smalltown.world.model import Doctrine

from travel_world import bundled, towns_world

WORLDS = ["generated", "bundled"]  # a 3-town world generated here; worlds/towns.toml


def _world(kind: str, tmp: Path):
    return towns_world(tmp) if kind == "generated" else bundled()


def _run(tmp: Path, world, settings: Settings, hours: int = 24, before=None, streets: bool = True):
    """Run the world; (agent -> towns it stood in that are not its own, the trips started).
    `streets` False: only a town's places count (its arenas), not the street tiles of its circle
    (the generated grid's rows of towns: the way to work may cross another town's circle)."""
    sim = create(world, tmp / "run.sqlite", ScriptedBackend(world.seed), settings, overwrite=True)
    if before is not None:
        before(sim)
    atlas = Atlas(world)
    own = {a.name: _own_towns(atlas, a) for a in world.agents}
    away: dict[str, set[str]] = {}
    started = []
    end = sim.now + timedelta(hours=hours)
    while sim.now < end:
        for e in sim.step():
            if e.kind == "started":
                started.append(e)
        for a in sim.agents:
            if not streets and a.arena < 0:
                continue
            town = world.town_at(*a.tile) if streets else atlas.sector_town.get(world.arenas[a.arena].sector, "")
            if town and town not in own[a.name]:
                away.setdefault(a.name, set()).add(town)
    return sim, away, started


def _own_towns(atlas: Atlas, spec) -> set[str]:
    """The towns an agent keeps to with travel off: its home's (a rural agent's nearest; and any
    town whose circle its home's tiles reach), and those of its usual day's places (world data: a
    farmer living out of town works in one)."""
    home = atlas.home_town(spec.name) or atlas.nearest(spec.home)
    world = atlas.world
    at_home = {world.town_at(*t) for a in world.sectors[spec.home].arenas.values() for t in a.tiles}
    return ({home} | at_home | {atlas.sector_town.get(it.place, "") for it in spec.routine if it.place}) - {""}


@pytest.mark.parametrize("kind", WORLDS)
def test_travel_off_keeps_every_agent_in_its_own_town(tmp_path, kind):
    world = _world(kind, tmp_path)
    assert len(world.towns) == 3
    _, away, _ = _run(tmp_path, world, Settings(travel=False), streets=kind == "bundled")
    assert away == {}


@pytest.mark.parametrize("kind", WORLDS)
def test_travel_on_agents_visit_other_towns_for_the_reasons_given(tmp_path, kind):
    world = _world(kind, tmp_path)
    squares = {t.square: t.name for t in world.towns}
    sim, away, started = _run(tmp_path, world, Settings(travel=True), streets=kind == "bundled")
    assert len(away) >= 3, away  # several agents of the 18 stood in another town during the day
    own = {a.name: _own_towns(Atlas(world), a) for a in world.agents}
    at_square = [e for e in started if squares.get(e.data["address"].split(":")[0], "") not in ("", *own[e.agent])]
    # what takes them there is a trip of the stand-in's, planned for a reason its day plan was given
    # (once there, they may also talk with the people they meet)
    trips = [e for e in at_square if e.data["activity"].startswith(("go to the market", "visit "))]
    assert trips, "no trip to another town's square"
    assert len({e.agent for e in trips}) >= 3 and {e.agent for e in trips} <= set(away)
    assert all(e.data["activity"].startswith("talking with") for e in at_square if e not in trips)


@pytest.mark.parametrize("kind", WORLDS)
def test_a_believer_is_given_its_doctrines_gathering_and_goes(tmp_path, kind):
    world = _world(kind, tmp_path)
    if kind == "generated":  # a doctrine of the test's own, meeting in the second town's square
        world.doctrines = [Doctrine("Lanternism", (("lantern",), ("Lantern Keeper",)), ("indirect", "direct"), (), (),
                                    gathering=world.towns[1].square, gathering_hours="16:00-17:00")]
    doctrine = world.doctrines[0]
    far = next(t for t in world.towns if t.square == doctrine.gathering)
    hours = doctrine.gathering_hours.split("-")
    atlas = Atlas(world)
    believers = [a.name for a in world.agents if atlas.home_town(a.name) not in ("", far.name)]
    assert len(believers) >= 5

    def believe(sim) -> None:
        for a in sim.agents:
            if a.name in believers:
                a.mind.state.modules["belief"] = {doctrine.name: {"level": 1, "since": "2023-06-05 06:00:00",
                                                                  "exposures": []}}

    sim, _, started = _run(tmp_path, world, Settings(travel=True), hours=18, before=believe)
    went = {e.agent for e in started if e.data["activity"].startswith(f"go to the gathering of {doctrine.name}")
            and e.data["address"].split(":")[0] == far.square}
    assert went and went <= set(believers)
    assert len(went) >= len(believers) // 3  # most days a believer goes (the stand-in: 70 %)
    # the reason is typed in the plan's question: a non-believer is never given it
    day = world.start.date()
    other = next(a for a in sim.agents if a.name not in believers)
    assert all(t.why != "gathering" for t in mind_trips.trips(other.mind, day))
    one = next(a for a in sim.agents if a.name in believers)
    gathering = [t for t in mind_trips.trips(one.mind, day) if t.why == "gathering"]
    assert [(t.place, t.start, t.end, t.doctrine) for t in gathering] == [(far.square, *hours, doctrine.name)]


def test_reasons_are_typed_from_the_world(tmp_path):
    world = towns_world(tmp_path)
    sim = create(world, tmp_path / "r.sqlite", ScriptedBackend(world.seed), Settings(), overwrite=True)
    atlas = Atlas(world)
    for a in sim.agents:
        own = atlas.home_town(a.name)
        towns = mind_trips.towns_seen(a.mind)
        assert [t.name for t in towns] == [t.name for t in world.towns]
        assert [t.name for t in towns if t.own] == ([own] if own else [])
        got = mind_trips.trips(a.mind, date(2023, 6, 5))
        markets = {t.town for t in got if t.why == "market"}
        if own:  # a town agent: every other town's market
            assert markets == {t.name for t in world.towns} - {own}
        else:  # a rural agent: its nearest town's
            assert markets == {atlas.nearest(a.spec.home)}
        assert all(t.place in a.mind.state.known.tree for t in got)  # a trip's place is known, so a plan may name it
    # people known who live in another town are a reason to go there
    a = next(x for x in sim.agents if atlas.home_town(x.name))
    friend = next(x for x in sim.agents if atlas.home_town(x.name) not in ("", atlas.home_town(a.name)))
    a.mind.state.last_chat[friend.name] = datetime(2023, 6, 4, 12)
    people = [t for t in mind_trips.trips(a.mind, date(2023, 6, 5)) if t.why == "people"]
    assert [(t.town, t.people) for t in people] == [(atlas.home_town(friend.name), [friend.name])]


def test_travel_off_or_one_town_gives_no_travel_inputs(tmp_path):
    world = towns_world(tmp_path)
    sim = create(world, tmp_path / "o.sqlite", ScriptedBackend(world.seed), Settings(travel=False), overwrite=True)
    mind = sim.agents[0].mind
    assert mind_trips.planning_inputs(mind, sim.now) == {}
    one = towns_world(tmp_path / "one", towns=1, rural=0)
    sim1 = create(one, tmp_path / "one.sqlite", ScriptedBackend(one.seed), Settings(), overwrite=True)
    assert mind_trips.planning_inputs(sim1.agents[0].mind, sim1.now) == {}
    assert mind_trips.allowed(sim1.agents[0].mind) is None


PERSONA = PersonaCard(name="Ana Cole", age=30, traits="curious", description="Ana Cole bakes", home="Cole house")
NOW = datetime(2023, 6, 5, 6)
TRIPS = [Trip(town="Brambury", place="Brambury Park", why="market", start="09:00", end="18:00", minutes=20),
         Trip(town="Thornford", place="Thornford Park", why="people", start="09:00", end="18:00", minutes=40,
              people=["Bo Li"])]


def test_the_prompt_shows_towns_and_reasons_only_when_given():
    plain = DailyPlan(persona=PERSONA, now=NOW, known_places=["Cole house", "Brambury Park"])
    text = render(plain)
    assert "Towns" not in text and "\n\n\n" not in text
    towns = [TownSeen(name="Coldhollow", square="Coldhollow Park", minutes=0, own=True),
             TownSeen(name="Brambury", square="Brambury Park", minutes=20)]
    told = render(plain.model_copy(update={"towns": towns, "trips": TRIPS}))
    assert "- Coldhollow (square: Coldhollow Park): Ana Cole's own town" in told
    assert "- Brambury (square: Brambury Park): 20 minutes' walk from home" in told
    assert "the market at Brambury Park in Brambury, open 09:00-18:00; 20 minutes' walk from home" in told
    assert "people Ana Cole knows live in Thornford: Bo Li" in told
    assert told.replace(told[told.index("Towns Ana"):told.index("Ana Cole's own intentions")], "") == text
    # the question's identity (its JSON) is unchanged while there are none
    assert "towns" not in plain.model_dump() and "trips" not in plain.model_dump()


def test_the_stand_in_travels_more_when_outgoing():
    days = [date(2023, 6, 5) + timedelta(days=i) for i in range(300)]
    reserved = PERSONA.model_copy(update={"traits": "shy, quiet, reserved"})
    outgoing = PERSONA.model_copy(update={"traits": "outgoing, talkative, sociable"})
    n_reserved = sum(scripted_trips.chosen(1, reserved, d, TRIPS) is not None for d in days)
    n_outgoing = sum(scripted_trips.chosen(1, outgoing, d, TRIPS) is not None for d in days)
    assert 0 < n_reserved < n_outgoing < len(days)
    assert all(scripted_trips.chosen(1, outgoing, d, []) is None for d in days)  # no reason: no trip
    # a nearer town before a farther one
    picks = [scripted_trips.chosen(1, outgoing, d, TRIPS[:1] + [replace_trip(TRIPS[0], town="Far", minutes=170),
                                                                 replace_trip(TRIPS[0], town="Farther", minutes=175)])
             for d in days]
    assert "Farther" not in {p.town for p in picks if p is not None}


def replace_trip(t: Trip, **kw) -> Trip:
    return t.model_copy(update=kw)


@pytest.mark.parametrize("why", ["market", "gathering"])
def test_a_trip_block_leaves_in_time_to_walk_there(why):
    trip = Trip(town="Brambury", place="Brambury Park", why=why, start="16:00" if why == "gathering" else "09:00",
                end="17:00" if why == "gathering" else "18:00", minutes=30, doctrine="Lanternism")
    for day in (date(2023, 6, 5) + timedelta(days=i) for i in range(20)):
        leave, back = scripted_trips.window(1, PERSONA, day, trip, 7 * 60)
        if why == "gathering":  # there at its start, stayed to its end
            assert (leave, back) == (15 * 60 + 30, 17 * 60)
        else:  # there within the market's hours, after the first hour awake, for a stay
            assert 9 * 60 <= leave + 30 and 8 * 60 <= leave and back <= 18 * 60
            assert back - leave - 30 in scripted_trips.STAY
    early = trip.model_copy(update={"start": "07:00", "end": "07:30"})
    assert scripted_trips.window(1, PERSONA, date(2023, 6, 5), early, 7 * 60) is None  # asleep / no time
