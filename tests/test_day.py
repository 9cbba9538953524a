"""A headless day of Smallville: every agent sleeps, eats and goes to work, and the run repeats."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from helpers import SMALLVILLE, query, save_info

# where each of the paper's 25 agents works (its home, for those who work at home)
WORKPLACE = {
    "John Lin": "The Willows Market and Pharmacy", "Mei Lin": "Oak Hill College",
    "Eddy Lin": "Oak Hill College", "Sam Moore": "Moore family's house",
    "Jennifer Moore": "Moore family's house", "Tom Moreno": "The Willows Market and Pharmacy",
    "Jane Moreno": "Moreno family's house", "Isabella Rodriguez": "Hobbs Cafe",
    "Klaus Mueller": "Oak Hill College", "Maria Lopez": "Oak Hill College",
    "Ayesha Khan": "Oak Hill College", "Wolfgang Schulz": "Oak Hill College",
    "Latoya Williams": "artist's co-living space", "Rajiv Patel": "artist's co-living space",
    "Abigail Chen": "artist's co-living space", "Francisco Lopez": "artist's co-living space",
    "Hailey Johnson": "artist's co-living space", "Adam Smith": "Adam Smith's house",
    "Yuriko Yamamoto": "Yuriko Yamamoto's house", "Tamara Taylor": "Tamara Taylor and Carmen Ortiz's house",
    "Carmen Ortiz": "Harvey Oak Supply Store", "Arthur Burton": "The Rose and Crown Pub",
    "Ryan Park": "Ryan Park's apartment", "Giorgio Rossi": "Giorgio Rossi's apartment",
    "Carlos Gomez": "Carlos Gomez's apartment",
}
MEALS = ("breakfast", "lunch", "dinner", "eat")
NOT_WORK = MEALS + ("sleeping", "morning routine", "relax", "walk", "coffee", "drink with", "groceries", "browse")


@pytest.fixture(scope="module")
def day(tmp_path_factory, smallville_one_day, smallville_two_days):
    """Two runs of the same first day: a one-day run, and the session's two-day run as it was at
    the end of its first day (forked from its snapshot there; that run is shared, not made again)."""
    from smalltown.sim.fork import fork

    first = fork(smallville_two_days, datetime(2023, 2, 14, 6), tmp_path_factory.mktemp("day") / "b.sqlite")
    assert first.tick == 8640  # a snapshot at the day's end: nothing run again, nothing cut off
    return [smallville_one_day, first.path]


def arrivals(save):
    """(agent, time, activity, address) each time an agent reached the place of its action."""
    rows = query(save, "select agent, time, data from events where kind='arrived' order by id")
    return [(a, t, json.loads(d)["activity"], json.loads(d)["address"]) for a, t, d in rows]


def test_the_day_runs_to_its_end(day):
    info = save_info(day[0])
    assert info["game_time"] == "2023-02-14 06:00:00" and info["tick"] == 8640
    assert info["agents"] == 25


def test_every_agent_slept_in_a_bed(day):
    slept = {a for a, _, act, addr in arrivals(day[0]) if act == "sleeping" and "bed" in addr.split(":")[-1]}
    assert slept == set(WORKPLACE)


def test_every_agent_ate(day):
    ate = {a for a, _, act, _ in arrivals(day[0]) if any(m in act for m in MEALS)}
    assert ate == set(WORKPLACE)


def test_every_agent_was_at_its_workplace_to_work(day):
    worked: dict[str, set[str]] = {}
    for agent, time, act, addr in arrivals(day[0]):
        if "07:00" <= time[11:16] <= "23:00" and not any(w in act for w in NOT_WORK):
            worked.setdefault(agent, set()).add(addr.split(":")[0])
    missing = {a: w for a, w in WORKPLACE.items() if w not in worked.get(a, set())}
    assert not missing, f"never worked at their workplace: {missing}"


def test_agents_walk_one_tile_per_tick_and_never_through_walls(day):
    from smalltown.world.load import load_world

    world = load_world(SMALLVILLE)
    moves = query(day[0], "select data from events where kind='moved'")
    assert len(moves) > 100
    for (data,) in moves[:50]:
        d = json.loads(data)
        assert d["steps"] >= 1 and world.map.is_walkable(tuple(d["dst"]))
    for name, x, y in query(day[0], "select name, x, y from agents"):
        assert world.map.is_walkable((x, y)), name


def test_the_same_inputs_give_the_same_digest(day):
    a, b = (save_info(s) for s in day)
    assert a["digest"] == b["digest"]
    assert a["events"] == b["events"] and a["llm_calls"] == b["llm_calls"]
