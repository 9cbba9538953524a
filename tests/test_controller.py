"""Issue 16, say–do coherence: the cognitive controller's decisions (broadcast to the talking and
acting prompts), the controller_inputs bottleneck, commitments in talk, and their checker. Off (the
defaults), a run is byte-identical; on, the kept rate is read from the save's event log and drops
when the broadcast is off."""

from __future__ import annotations

from datetime import datetime

import pytest

from helpers import GULLHAVEN, TINY
from piano_worlds import scripted_digest
from smalltown.config import Settings, SettingsError
from smalltown.llm.render import render
from smalltown.llm.tasks import (Block, CommittingUtterance, Decided, HourlySchedule, PersonaCard, Promise, React,
                                 Utterance)
from smalltown.state.commitments import Commitment, Decision
from smalltown.state.agent import AgentState
from smalltown.scripted import ScriptedBackend
from smalltown.sim.breakpoints import Breakpoint, check
from smalltown.eval.saydo import rate_of, rate_of_save
from smalltown.sim.open import create
from smalltown.sim.shapes import state_problem
from smalltown.store.records import Event, EventRow
from smalltown.world.load import load_world

NOW = datetime(2023, 2, 13, 10, 0)
P = PersonaCard(name="Ann Lee", age=30, traits="kind", description="a baker", home="Oak House")


def test_the_settings_off_leave_the_tiny_town_byte_identical(tmp_path):
    assert scripted_digest(TINY, tmp_path / "t.sqlite", 6, []).startswith("447e8537")


@pytest.mark.parametrize("world", [TINY, GULLHAVEN], ids=["tiny", "gullhaven"])
def test_promises_are_kept_with_the_broadcast_and_fewer_without(world, tmp_path):
    on = tmp_path / "on.sqlite"
    off = tmp_path / "off.sqlite"
    scripted_digest(world, on, 24, ["commitments=true", "controller_broadcast=true"])
    scripted_digest(world, off, 24, ["commitments=true", "controller_broadcast=false"])
    r_on, r_off = rate_of_save(on), rate_of_save(off)
    assert r_on.made > 0 and r_on.kept + r_on.broken > 0
    assert r_on.rate >= 0.9
    if world == GULLHAVEN:  # enough talk in a day to say one thing and do another
        assert r_off.made >= 10 and r_off.rate < r_on.rate
    from helpers import query
    assert query(on, "SELECT count(*) FROM events WHERE kind = 'decided'")[0][0] > 0
    assert query(off, "SELECT count(*) FROM events WHERE kind = 'decided'")[0][0] == 0


def _row(i: int, kind: str) -> EventRow:
    return EventRow(i, i, "2023-02-13 10:00:00", "Ann Lee", kind, "", {})


def test_the_rate_counts_kept_and_broken_promises_of_an_event_list():
    r = rate_of([_row(1, "committed"), _row(2, "committed"), _row(3, "said"), _row(4, "kept"),
                 _row(5, "committed"), _row(6, "broken"), _row(7, "kept")])
    assert (r.made, r.kept, r.broken) == (3, 2, 1) and r.rate == pytest.approx(2 / 3)
    assert rate_of([_row(1, "committed")]).rate is None


def test_controller_inputs_is_a_checked_list_of_names_and_narrows_the_react_prompt():
    s = Settings().override(controller_inputs="status, news")
    assert s.controller_inputs == ("status", "news") and s.changes() == {"controller_inputs": ("status", "news")}
    assert Settings().saved({"controller_inputs": ["place"]}).controller_inputs == ("place",)
    with pytest.raises(SettingsError, match="controller_inputs: 'mood' is not one of"):
        Settings().override(controller_inputs="status,mood")

    from smalltown.mind.commitments import narrowed

    class M:
        settings = s
    task = React(persona=P, now=NOW, status="baking", place="Cafe: kitchen", observation="Bob is here",
                 observed="Bob", observed_is_agent=True, context=[])
    assert narrowed(type("D", (), {"settings": Settings()}), task) is task  # default: all, unchanged
    cut = narrowed(M, task)
    assert cut.status == "baking" and cut.place == "" and "Cafe: kitchen" not in render(cut)


def test_the_broadcast_is_rendered_only_when_present_and_leaves_the_task_key_alone_when_absent():
    base = dict(persona=P, now=NOW, listener="Bob", place="Cafe: kitchen", initiator="Ann Lee", reason="Bob",
                speaker_doing="baking", listener_doing="reading")
    plain = Utterance(**base)
    told = Utterance(**base, decision=Decided(intent="bake bread", target="Cafe:kitchen:oven", reason="the plan",
                                              time="10:00"),
                     promises=[Promise(what="meet Bob", to="Bob", by="12:00", where="Cafe")])
    assert "decided" not in render(plain) and "promised" not in render(plain)
    assert '"bake bread"' in render(told) and "by 12:00 at Cafe" in render(told)
    assert "decision" not in plain.model_dump_json() and "decision" in told.model_dump_json()
    c = CommittingUtterance(**base, known_places=["Cafe", "Oak House"],
                            plan_next=Block(start="13:00", minutes=60, activity="sell bread", place="Cafe"))
    assert '"commitment"' in render(c) and "plans to do next: 13:00-14:00" in render(c)


def test_the_stand_in_promises_its_next_planned_block_with_the_broadcast_and_else_what_the_talk_gives():
    base = dict(persona=P, now=NOW, listener="Bob Ray", place="Cafe: kitchen", initiator="Ann Lee",
                reason="Bob", speaker_doing="baking", listener_doing="reading", known_places=["Cafe", "Park"])
    b = ScriptedBackend(0)
    with_plan = b.answer(CommittingUtterance(**base, plan_next=Block(start="13:00", minutes=60, activity="walk",
                                                                       place="Park"))).output
    assert (with_plan.commitment.what, with_plan.commitment.by, with_plan.commitment.where) == ("walk", "13:00", "Park")
    without = b.answer(CommittingUtterance(**base)).output
    assert without.commitment.where == "Cafe" and without.commitment.by == "12:00"
    late = b.answer(CommittingUtterance(**{**base, "now": NOW.replace(hour=21)})).output
    assert late.commitment is None


def test_the_stand_ins_replan_keeps_an_open_promise():
    task = HourlySchedule(persona=P, now=NOW, wake_up_hour=7, daily_plan=[], known_places=["Oak House", "Park"],
                          from_time="10:00", promises=[Promise(what="meet Bob", to="Bob", by="15:00", where="Park")])
    blocks = ScriptedBackend(0).answer(task).output.blocks
    at = [b for b in blocks if b.start <= "15:00" and b.activity == "meet Bob"]
    assert at and at[-1].place == "Park"
    without = ScriptedBackend(0).answer(task.model_copy(update={"promises": []})).output.blocks
    assert not any(b.activity == "meet Bob" for b in without)


def test_state_keeps_decision_and_promises_only_when_there_are_some():
    s = AgentState()
    assert "decision" not in s.to_json() and "commitments" not in s.to_json()
    s.decision = Decision("bake", "Cafe:kitchen:oven", "the plan", NOW)
    s.commitments = [Commitment("meet Bob", "Bob", NOW.replace(hour=12), "Cafe", NOW)]
    back = AgentState.from_json(s.to_json())
    assert back.decision == s.decision and back.commitments == s.commitments
    import json
    assert state_problem(json.dumps(s.to_json())) is None
    bad = {**s.to_json(), "commitments": [{"what": "x", "to": "y", "by": "noon", "where": "Cafe", "made": "x"}]}
    assert state_problem(json.dumps(bad)).startswith("commitments.0.by")


def test_acting_prompts_hear_a_decision_made_on_an_observation_not_the_plans_own(tmp_path):
    """The broadcast to a schedule or a decomposition carries a decision only when it came from
    something seen (a reaction, a talk): the plan's own next action tells the plan nothing new.
    The talking prompt hears either."""
    from smalltown.mind.commitments import decision_input

    w = load_world(TINY)
    sim = create(w, tmp_path / "t.sqlite", ScriptedBackend(w.seed), sets=["controller_broadcast=true"])
    try:
        mind = sim.agents[0].mind
        mind.state.decision = Decision("bake", "Cafe:kitchen:oven", "today's plan: bake", NOW)
        assert decision_input(mind, acting=True) is None and decision_input(mind).intent == "bake"
        mind.state.decision = Decision("talk with Bob", "Bob", "Bob is walking by", NOW, observed=True)
        assert decision_input(mind, acting=True).intent == "talk with Bob"
        back = AgentState.from_json(mind.state.to_json()).decision
        assert back == mind.state.decision and back.observed
    finally:
        sim.close()


def test_breakpoints_stop_at_promises_kept_and_broken():
    ev = [Event(1, "t", "Ann Lee", "kept", "Ann Lee keeps the promise", {}),
          Event(1, "t", "Bob", "broken", "Bob breaks the promise", {})]
    hits = check([Breakpoint(1, "kept"), Breakpoint(2, "broken", agent="Ann Lee"), Breakpoint(3, "committed")],
                 ev, [], [])
    assert [h.breakpoint.id for h in hits] == [1]
    decided = [Event(2, "t", "Ann Lee", "decided", "Ann Lee decides: baking", {"intent": "bake"})]
    hits = check([Breakpoint(4, "decided", agent="Bob"), Breakpoint(5, "decided", agent="Ann Lee")], decided, [], [])
    assert [h.breakpoint.id for h in hits] == [5]
