"""A snapshot reuses what the previous one (written by the same Save) saw of an agent whose
state and plan texts have not changed since (store/snapshots.py `_Kept`), and parses a state and
its plan once (store/plans.joined_parsed): the snapshots it writes are what they were, and a
rewind re-creates every agent's row exactly, whichever part of an agent changed."""

from __future__ import annotations

import json

import pytest

from helpers import tiny_sim
from smalltown.store import plans
from smalltown.store.snapshots import agent_rows_at


def _texts(conn) -> dict[str, tuple]:
    return {r[0]: (r[6], r[7]) for r in plans.apart_rows(conn, "name")}


@pytest.mark.parametrize("state, plan", [
    ('{"a": 1, "plan": null, "b": [1.0, true]}', '{"blocks": [1, 2]}'),
    ('{"a": 1, "plan": null}', None),
    ('{"a":1,"plan":null}', None),  # not json.dumps's own spacing: kept as it is
    ('[1, 2]', '{"blocks": []}'),  # not an object: given as it is
    ('{"a": ', '{"blocks": []}'),  # does not parse
    ('{"a": ', None),
    (None, None),
])
def test_a_state_joined_and_parsed_at_once_is_what_joining_then_parsing_gives(state, plan):
    text, parsed, exact = plans.joined_parsed(state, plan)
    assert text == plans.joined(state, plan)
    try:
        want = json.loads(text)
    except (TypeError, ValueError):
        want = None
    assert parsed == want
    assert exact == (parsed is not None and isinstance(parsed, dict) and plan is not None)
    if exact:
        assert json.dumps(parsed) == text


def test_a_snapshot_stores_only_agents_whose_state_or_plan_changed_and_rewinds_exactly(tmp_path):
    sim = tiny_sim(tmp_path, "07:00")
    try:
        conn = sim.save.conn
        sim.snapshot()
        first = _texts(conn)
        for _ in range(6):
            sim.step()
        # an agent whose plan alone changed (its state text as it was): the snapshot must see it
        still = [n for n, t in _texts(conn).items() if t == first[n]]
        assert still, "someone sleeps through these ticks"
        name = still[0]
        plan = json.loads(first[name][1])
        plan["wake_up_hour"] = (plan.get("wake_up_hour") or 0) + 1
        with sim.save.transaction():
            plans.write(conn, [(name, json.dumps(plan))])
        tick = sim.snapshot()
        now = _texts(conn)
        changed = {n for n in now if now[n] != first[n]}
        assert name in changed and changed != set(now)  # some changed, some did not
        snap = sim.save.snapshot(tick)
        assert not snap["states_base"] and set(snap["states"]) == changed
        assert json.loads(plans.joined(*now[name]))["plan"] == plan
        want = {r[0]: r for r in plans.agent_rows(conn, "name")}
        assert {r[0]: r for r in agent_rows_at(conn, tick)} == want  # every row re-created exactly
    finally:
        sim.close()
