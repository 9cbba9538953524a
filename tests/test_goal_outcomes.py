"""Issue 16: a goal renewed on its success or failure, not only on the hour (mind/goals.py). A goal
is pursued in the plan block it is taken up in: the block reaching its planned end is a success,
the agent finding its place closed or taken during it a failure; either way a "goal_ended" event,
and a new goal asked at the next tick (applied a lag later)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

import pytest

from helpers import GULLHAVEN, TINY, query, stored_state
from piano_worlds import CAFE_HOURS, run, variant as _variant, world_with_goal
from smalltown.world.load import load_world

ENDED = "SELECT tick, time, agent, data FROM events WHERE kind = 'goal_ended' ORDER BY id"
ASKED = "SELECT agent, note FROM llm_calls WHERE task = 'social_goal'"


def _asked_after(path, tick: int, agent: str) -> bool:
    return (agent, f"asked at tick {tick + 1}") in query(path, ASKED)


@pytest.mark.parametrize("source", [TINY, GULLHAVEN])
def test_a_goal_whose_block_ends_as_planned_succeeds_and_a_new_one_is_asked_at_once(tmp_path, source):
    path = tmp_path / "goals.sqlite"
    run(path, world_with_goal(tmp_path, source), 5)
    ended = query(path, ENDED)
    successes = [(t, when, a) for t, when, a, d in ended if json.loads(d)["outcome"] == "success"]
    assert successes
    asked_again = [s for s in successes if _asked_after(path, s[0], s[2])]
    assert asked_again  # (an agent asleep by then asks when it wakes)
    step = load_world(source).step_seconds
    asks = [(a, int(n.rsplit(" ", 1)[1])) for a, n in query(path, ASKED)]
    early = [(tick, when, agent) for tick, when, agent in asked_again
             if (tick + 1 - max(t for a, t in asks if a == agent and t <= tick)) * step < 3600]
    assert early  # before the hour was up: the success asked it, not the clock
    assert all(datetime.fromisoformat(when).second == 0 for _, when, _ in successes)  # at blocks' ends
    # the goal's block's end is kept in the state while it lasts
    with sqlite3.connect(path) as conn:
        states = [stored_state(conn, a) for (a,) in query(path, "SELECT name FROM agents")]
    assert any("goal_until" in s for s in states)


def test_a_goal_fails_when_its_place_is_found_closed_and_a_new_one_is_asked_at_once(tmp_path):
    world = world_with_goal(tmp_path, _variant(tmp_path, TINY, "cafe", CAFE_HOURS))
    path = tmp_path / "closed.sqlite"
    run(path, world, 3)
    blocked = query(path, "SELECT tick, agent FROM events WHERE kind = 'blocked'")
    failures = [(t, a) for t, _, a, d in query(path, ENDED) if json.loads(d)["outcome"] == "failure"]
    assert failures and set(failures) <= set(blocked)
    for tick, agent in failures:
        assert _asked_after(path, tick, agent)
    # without goals, the same closed cafe ends nothing
    plain = tmp_path / "plain.sqlite"
    run(plain, world, 3, sets=[])
    assert query(plain, "SELECT tick, agent FROM events WHERE kind = 'blocked'")
    assert query(plain, ENDED) == []
