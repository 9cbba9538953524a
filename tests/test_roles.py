"""Issue 17: roles inferred from the goals window (a slow module, setting `roles`), the stand-in's
answer from the window's typed needs, the role measures on hand-made role changes, and runs on
the role world and on a second world measured from their saves."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime, timedelta

import pytest

from helpers import GULLHAVEN, ROOT, TINY, cli, query, stored_state
from piano_worlds import GOAL_ON, run, world_with_goal
from smalltown.eval.roles import measure, measure_roles, read_roles
from smalltown.llm.tasks import GoalSeen, InferRole, PersonaCard
from smalltown.scripted.roles import infer_role
from smalltown.store.reader import Reader

ROLES_WORLD = ROOT / "worlds" / "roles.toml"
T0 = datetime(2023, 6, 5, 6, 0)
H = timedelta(hours=1)


def test_measures_of_hand_made_role_changes():
    changes = [(T0, "A", "farmer"), (T0, "B", "guard"), (T0 + 2 * H, "B", "farmer"),
               (T0 + 3 * H, "A", "farmer")]  # (a repeat of the role held: no new run)
    acts = [("A", T0 + H, "plough"), ("B", T0 + H / 2, "patrol"), ("B", T0 + 3 * H, "plough"),
            ("C", T0 + H, "idle")]  # (C holds no role: left out)
    m = measure(changes, acts, T0 + 4 * H)
    assert m["roles"] == 2 and m["hours"] == {"farmer": 6.0, "guard": 2.0}
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert m["entropy"] == pytest.approx(h, abs=1e-4)
    assert m["entropy_normalised"] == pytest.approx(h / math.log(2), abs=1e-4)
    assert m["effective_roles"] == pytest.approx(math.exp(h), abs=1e-3)  # between 1 and K = 2: uneven
    assert m["persistence"] == pytest.approx((1.0 + 0.75) / 2)  # A 4 of 4 hourly pairs, B 3 of 4
    assert m["run_hours"] == pytest.approx(8 / 3, abs=1e-3)  # 8 agent-hours in 3 runs
    assert m["matrix"] == {"farmer": {"plough": 2}, "guard": {"patrol": 1}}
    one = measure([(T0, "A", "farmer")], [], T0 + 4 * H)
    assert one["entropy"] == 0 and one["entropy_normalised"] is None and one["persistence"] == 1.0
    assert one["effective_roles"] == 1.0


def test_the_stand_in_names_the_most_frequent_need_ties_by_the_newest():
    p = PersonaCard(name="Ann Lee", age=30, traits="calm", description="", home="", routine=[])
    ask = lambda needs: infer_role(InferRole(persona=p, now=T0, goals=[  # noqa: E731
        GoalSeen(goal="the same words every time", need=n) for n in needs])).role
    assert ask(["food", "tools", "tools", "food"]) == "farmer"  # 2 each: food is the newest
    assert ask(["food", "tools", "tools"]) == "blacksmith"
    assert ask(["music making"]) == "music making worker"  # a need the lexicon lacks
    assert ask(["", ""]) == "helper"


def _roles(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        return measure_roles(read_roles(Reader(conn)))
    finally:
        conn.close()


def test_the_role_world_runs_roles_from_the_save_and_eval_civics_reports_them(tmp_path):
    path = tmp_path / "roles.sqlite"
    run(path, ROLES_WORLD, 3, sets=["architecture=piano"])
    events = query(path, "SELECT agent, data FROM events WHERE kind = 'role' ORDER BY id")
    with_goals = {a for (a,) in query(path, "SELECT agent FROM events WHERE kind = 'goal'")}
    assert len(with_goals) >= 25 and {a for a, _ in events} == with_goals  # each with a goal took up a role
    first = json.loads(events[0][1])
    assert first["previous"] == "" and first["role"]
    calls = query(path, "SELECT tick, note FROM llm_calls WHERE task = 'infer_role'")
    assert calls and all(note == f"asked at tick {tick - 6}" for tick, note in calls)
    with sqlite3.connect(path) as conn:
        state = stored_state(conn, events[-1][0])
    assert state["role"] and len(state["goal_needs"]) == len(state["goals"])
    r = _roles(path)
    assert r["agents_with_roles"] == len(with_goals) and r["roles"] >= 2 and sum(r["hours"].values()) > 0
    assert r["matrix"] and r["social_awareness"] is True
    out = cli("eval", "civics", "--roles", str(path), "--json", "--out", str(tmp_path / "rep"), check=True)
    assert json.loads(out.stdout)["roles"] == r["roles"]
    assert (tmp_path / "rep" / "plots" / "role-shares.svg").exists()


@pytest.mark.parametrize("source", [TINY, GULLHAVEN])
def test_a_second_world_with_roles_on_has_role_events_and_without_none(tmp_path, source):
    world = world_with_goal(tmp_path, source)
    on, off = tmp_path / "on.sqlite", tmp_path / "off.sqlite"
    run(on, world, 3, sets=GOAL_ON + ["roles=true"])
    run(off, world, 3)
    roles = query(on, "SELECT agent, data FROM events WHERE kind = 'role'")
    assert roles and {json.loads(d)["role"] for _, d in roles} <= {"farmer", "host", "blacksmith", "guard"}
    assert _roles(on)["agents_with_roles"] == len({a for a, _ in roles})
    assert not query(off, "SELECT 1 FROM events WHERE kind = 'role'")
    assert not query(off, "SELECT 1 FROM llm_calls WHERE task = 'infer_role'")
    assert all("role" not in json.loads(s) and "goal_needs" not in json.loads(s)
               for (s,) in query(off, "SELECT state FROM agents"))


def test_without_social_awareness_goal_generation_sees_no_others(tmp_path):
    world = world_with_goal(tmp_path, TINY)
    on, off = tmp_path / "on.sqlite", tmp_path / "off.sqlite"
    run(on, world, 3, sets=GOAL_ON + ["social_awareness=true"])
    run(off, world, 3)
    def seen(path):
        with sqlite3.connect(path) as conn:
            reader = Reader(conn)
            return [reader.call_detail(c.id)["prompt"].split("are doing:\n", 1)[1].split("\n", 1)[0]
                    for c in reader.calls(task="social_goal", limit=None)]
    assert any(line.startswith("- ") for line in seen(on))  # the housemates, with their goals' needs
    assert seen(off) and all(line == "(none)" for line in seen(off))
