"""The agent state's hand-written encoder (issue 15: `dataclasses.asdict` was a fifth of a
scripted day) writes what the asdict-based one wrote, key for key and in the same order, so
saves, digests and cassettes are unchanged."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from datetime import date, datetime

import pytest

from smalltown.state.plan import DayPlan, PlanItem
from smalltown.state.agent import Action, AgentState, stamp
from smalltown.store.plans import agent_rows
from smalltown.store.snapshots import agent_rows_at, snapshot_list


def _no_op(d):
    """An economy op (issue 17), and the calls that decided a plan item or an action, are written
    only when there are some: without, the JSON is as before."""
    if isinstance(d, dict):
        return {k: _no_op(v) for k, v in d.items() if not (k == "op" and v is None) and not (k == "calls" and v == [])}
    return [_no_op(v) for v in d] if isinstance(d, list) else d


def _asdict_plan(plan: DayPlan) -> dict:
    """The encoder as it was before (the reference)."""
    d = _no_op(asdict(plan))
    d["date"] = plan.date.isoformat()
    d["items"] = [list(i) for i in plan.items]
    return d


def _asdict_action(action: Action) -> dict:
    d = _no_op(asdict(action))
    d["start"], d["end"] = stamp(action.start), stamp(action.end)
    return d


@pytest.fixture(scope="module", params=["smallville", "gullhaven"])
def saved_states(request) -> list[AgentState]:
    path = request.getfixturevalue(f"{request.param}_two_days")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        texts = [r[6] for r in agent_rows(conn)]  # each state whole, its plan put back
        # and the states of earlier hours, as the snapshots keep them (other plans, other actions)
        for tick, _ in snapshot_list(conn)[::5]:
            texts += [row[6] for row in agent_rows_at(conn, tick)]
    finally:
        conn.close()
    return [AgentState.from_json(json.loads(t)) for t in texts if t]


def test_saved_plans_and_actions_encode_as_asdict_did(saved_states):
    plans = [s.plan for s in saved_states if s.plan]
    actions = [s.action for s in saved_states if s.action]
    assert plans and actions
    for plan in plans:
        assert json.dumps(plan.to_json()) == json.dumps(_asdict_plan(plan))
    for action in actions:
        assert json.dumps(action.to_json()) == json.dumps(_asdict_action(action))
    # the states exercised blocks decomposed and not, and actions with their own objects
    blocks = [b for p in plans for b in p.blocks]
    assert any(b.actions is None for b in blocks) and any(b.actions for b in blocks)


def test_every_plan_field_is_encoded_as_asdict_did():
    """Fields the saved runs may not reach: carried blocks, a night's work, an empty decomposition."""
    night = PlanItem(-60, 60, "baking bread", "Bakery:kitchen:oven", [PlanItem(-60, 15, "kneading", "a:b:c")],
                     "Bakery", runs_on=0)
    plan = DayPlan(date(2023, 2, 14), 5, [("05:00", "bake"), ("", "rest")],
                   [PlanItem(0, 300, "sleeping", place="Home"), PlanItem(300, 60, "baking", actions=[]),
                    PlanItem(1380, 60, "baking", "Bakery:kitchen:oven", None, "Bakery", runs_on=120)], [night])
    assert json.dumps(plan.to_json()) == json.dumps(_asdict_plan(plan))
    action = Action("baking", "", datetime(2023, 2, 14, 5), datetime(2023, 2, 14, 5, 15, 30))
    assert json.dumps(action.to_json()) == json.dumps(_asdict_action(action))
    assert json.dumps(PlanItem.from_json(night.to_json()).to_json()) == json.dumps(_no_op(asdict(night)))
    # with an op, it is kept and read back
    night.actions[0].op = {"op": "craft", "item": "bread", "qty": 2, "other": "", "get": "", "get_qty": 0, "minutes": 10}
    assert PlanItem.from_json(json.loads(json.dumps(night.to_json()))).actions[0].op == night.actions[0].op
