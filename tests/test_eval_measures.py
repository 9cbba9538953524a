"""The measures of `smalltown eval` on a small hand-built save whose right answers are known.

The town: four agents on the tiny map. Ann Lee plans a Valentine's Day party and knows Bob Stone;
Cal Reyes runs for mayor. On Monday at 10:00 Ann and Cal talk: Cal hears of the party, Ann of
the candidacy. On Tuesday at 16:50 Dee Park sees Cal walking to the party. Bob was only asked
about the party by an interviewer (which must not count as knowing it). Then, at Hobbs Cafe
on Tuesday 17:00-19:00: Ann is there throughout, Cal for 30 minutes, Dee and Bob for 5.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from handmade import ANN, BOB, CAL, DEE, END, START, make_town, world_text
from helpers import ROOT
from smalltown.eval.coordination import turnout
from smalltown.eval.diffusion import spread
from smalltown.eval.interview import Interviewer, claims, names_person
from smalltown.eval.measure import ask_fact, ask_relationships
from smalltown.eval.questions import questions_for
from smalltown.eval.relationships import acquaintance, density, mutual
from smalltown.cli.eval import copy_save
from smalltown.eval.town import Town, read_town
from smalltown.sim.interviews import Interviews
from smalltown.llm.backend import Answer
from smalltown.scripted import ScriptedBackend
from smalltown.llm.tasks import Interview, InterviewOut, Task
from smalltown.sim.open import create, resume
from smalltown.sim.simulation import Simulation
from smalltown.store.save import Save
from smalltown.world.load import load_world

@pytest.fixture
def town_path(tmp_path) -> Path:
    return make_town(tmp_path)


def read(path: Path) -> Town:
    save = Save.open(path)
    try:
        return read_town(save)
    finally:
        save.close()


def t(text: str) -> datetime:
    return datetime.fromisoformat(text)


# --- diffusion -------------------------------------------------------------------------------------


def test_diffusion_traces_each_agent_to_how_it_learned(town_path):
    town = read(town_path)
    party = spread(town, town.world.facts[0])
    assert party.known_by(town.start) == [ANN]
    assert [(l.agent, l.how, l.source, l.time) for l in party.learned.values()] == [
        (ANN, "start", None, START),
        (CAL, "told", ANN, t("2023-02-13 10:00")),
        (DEE, "saw", CAL, t("2023-02-14 16:50")),
    ]
    assert BOB not in party.learned  # asked about it by an interviewer: not knowing
    assert party.curve() == [(START, 1), (t("2023-02-13 10:00"), 2), (t("2023-02-14 16:50"), 3), (t(END), 3)]
    assert party.edges() == [(ANN, CAL, t("2023-02-13 10:00"), "told"), (CAL, DEE, t("2023-02-14 16:50"), "saw")]


def test_news_heard_in_a_conversation_is_traced_to_the_other_side(town_path):
    town = read(town_path)
    candidacy = spread(town, town.world.facts[1])
    assert candidacy.known_by(town.start) == [CAL]
    assert (candidacy.learned[ANN].how, candidacy.learned[ANN].source) == ("told", CAL)
    assert sorted(candidacy.known_by(town.end)) == [ANN, CAL]


def test_a_record_noted_but_not_yet_filed_counts(town_path):
    save = Save.open(town_path)
    (state,) = save.conn.execute("SELECT state FROM agents WHERE name=?", (BOB,)).fetchone()
    state = json.loads(state)
    state["pending"] = [["observation", "Ann Lee is greeting guests at the Valentine's Day party",
                         "2023-02-14 18:00:00", []]]
    with save.transaction():
        save.conn.execute("UPDATE agents SET state=? WHERE name=?", (json.dumps(state), BOB))
    save.close()
    town = read(town_path)
    learned = spread(town, town.world.facts[0]).learned[BOB]
    assert (learned.how, learned.source, learned.time) == ("saw", ANN, t("2023-02-14 18:00"))
    assert learned.memory.id < 0  # not filed yet


def test_an_inner_voice_is_traced_as_such(tmp_path):
    world_file = tmp_path / "town.toml"
    world_file.write_text(world_text())
    world = load_world(world_file)
    sim = create(world, tmp_path / "w.sqlite", ScriptedBackend(world.seed))
    try:
        sim.whisper(DEE, "Ann Lee is throwing a Valentine's Day party")
        town = read_town(sim.save)
    finally:
        sim.close()
    learned = spread(town, town.world.facts[0]).learned[DEE]
    assert (learned.how, learned.source) == ("inner voice", None)


def test_the_record_an_interview_leaves_is_not_knowing(tmp_path):
    world_file = tmp_path / "town.toml"
    world_file.write_text(world_text())
    world = load_world(world_file)
    sim = create(world, tmp_path / "i.sqlite", ScriptedBackend(world.seed))
    try:
        sim.interview(BOB, "Did you know there is a Valentine's Day party?", "a reporter")
        recorded = [m.description for m in sim.agent(BOB).mind.memory if m.kind == "chat"]
        town = read_town(sim.save)
    finally:
        sim.close()
    assert any("Valentine" in r for r in recorded)  # the question is in Bob's memory now...
    assert BOB not in spread(town, town.world.facts[0]).learned  # ...but he did not learn it from anyone
    assert not any(m.agent == BOB and m.kind == "chat" for m in town.memories)


# --- relationships ---------------------------------------------------------------------------------


def test_density_formula_on_a_known_graph():
    knows = {("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("d", "c")}  # d -> c is one way
    edges = mutual(knows)
    assert edges == {frozenset("ab"), frozenset("ac")}
    assert density(4, edges) == pytest.approx(2 * 2 / (4 * 3))
    assert density(25, {frozenset((i, i + 1)) for i in range(50)}) == pytest.approx(100 / 600)
    assert density(1, set()) == 0.0


def test_relationships_at_the_start_and_at_the_end(town_path):
    town = read(town_path)
    ac = acquaintance(town)
    assert ac.knows(town.start) == {(ANN, BOB), (BOB, ANN)}  # from the seed memories
    assert ac.edges(town.start) == {frozenset((ANN, BOB))}
    assert ac.density(town.start) == pytest.approx(1 / 6)
    # Ann and Cal talked; Dee only saw Cal (one way): two edges of six
    assert ac.edges(town.end) == {frozenset((ANN, BOB)), frozenset((ANN, CAL))}
    assert (DEE, CAL) in ac.knows(town.end) and (CAL, DEE) not in ac.knows(town.end)
    assert ac.density(town.end) == pytest.approx(1 / 3)


def test_a_place_named_after_someone_does_not_name_them():
    world = load_world(ROOT / "worlds" / "smallville.toml")
    town = Town(world, world.start, [], {}, set(), [])
    assert town.people_in("Maria Lopez walks past Adam Smith's house to Hobbs Cafe") == ["Maria Lopez"]
    assert town.people_in("Adam Smith is reading in Adam Smith's house") == ["Adam Smith"]


# --- coordination ----------------------------------------------------------------------------------


def test_coordination_invited_planned_attended(town_path):
    town = read(town_path)
    g = town.world.gatherings[0]
    out = turnout(town, g, spread(town, town.world.facts[0]))
    assert out.invited == [CAL, DEE]  # knew before 17:00; the host is not counted
    assert out.planned == [CAL, DEE]  # Bob's plan for the day does not name it
    assert out.minutes == {ANN: 120.0, CAL: 30.0, BOB: 5.0, DEE: 5.0}
    assert out.attended == [ANN, CAL]  # five minutes is passing through
    assert out.came == [CAL]


# --- asking ----------------------------------------------------------------------------------------


class Overclaiming(ScriptedBackend):
    """A model that says yes to every interview question, whatever it remembers."""

    def answer(self, task: Task, prompt: str) -> Answer:
        if isinstance(task, Interview):
            out = InterviewOut(answer="Yes, of course I know all about that.")
            return Answer(out, out.model_dump_json())
        return super().answer(task, prompt)


def open_copy(path: Path, tmp_path: Path, backend) -> Simulation:
    return resume(copy_save(path, tmp_path / "copy.sqlite"), backend)


def test_a_yes_with_no_memory_behind_it_is_hallucinated(town_path, tmp_path):
    sim = open_copy(town_path, tmp_path, Overclaiming(0))
    try:
        town = read_town(sim.save)
        iv = Interviewer(Interviews(sim))
        party = ask_fact(iv, spread(town, town.world.facts[0]))
        rel = ask_relationships(iv, acquaintance(town), town)
    finally:
        sim.close()
    assert {a["agent"]: a["verdict"] for a in party["answers"]} == {
        ANN: "knew", BOB: "hallucinated", CAL: "knew", DEE: "knew"}
    assert (party["knew"], party["hallucinated"], party["missed"]) == (3, 1, 0)
    # 12 ordered pairs, all answered yes; memory backs 5 of them (Ann-Bob, Bob-Ann, Ann-Cal, Cal-Ann, Dee-Cal)
    assert (rel["asked"], rel["yes"], rel["hallucinated"]) == (12, 12, 7)
    assert rel["hallucination_rate"] == pytest.approx(7 / 12, abs=1e-4)
    assert rel["density"] == 1.0


def test_scripted_answers_about_people_agree_with_memory(town_path, tmp_path):
    sim = open_copy(town_path, tmp_path, ScriptedBackend(0))
    try:
        town = read_town(sim.save)
        rel = ask_relationships(Interviewer(Interviews(sim)), acquaintance(town), town)
        calls = sim.save.conn.execute("SELECT count(*) FROM llm_calls WHERE task='interview'").fetchone()[0]
    finally:
        sim.close()
    verdicts = {(a["agent"], a["about"]): a["verdict"] for a in rel["answers"]}
    assert verdicts[(ANN, BOB)] == "knew"
    assert verdicts[(DEE, BOB)] == "did not know"
    assert rel["hallucinated"] == 0
    assert calls == 12  # every question went through the normal, logged path


def test_no_question_leaks_into_the_next(town_path, tmp_path):
    sim = open_copy(town_path, tmp_path, ScriptedBackend(0))
    try:
        iv = Interviewer(Interviews(sim))
        before = [m.id for m in sim.agent(DEE).mind.memory]
        iv.ask(DEE, "Who is Kane Martinez?")
        second = iv.ask(DEE, "Tell me about Kane Martinez.")
        after = [m.id for m in sim.agent(DEE).mind.memory]
        logged = sim.save.conn.execute("SELECT count(*) FROM events WHERE kind='interviewed' AND agent=?",
                                       (DEE,)).fetchone()[0]
    finally:
        sim.close()
    assert after == before
    assert not any("Kane" in m["description"] for m in second.memories)
    assert logged == 2  # the interviews are still on the copy's record


def test_each_condition_answers_from_the_memory_it_keeps(town_path, tmp_path):
    sim = open_copy(town_path, tmp_path, ScriptedBackend(0))
    try:
        iv = Interviewer(Interviews(sim))
        kinds = {c: {m["kind"] for m in iv.ask(CAL, "What will you be doing at 5pm today?", c).memories}
                 for c in ("full", "no-reflection", "no-planning", "no-memory")}
    finally:
        sim.close()
    assert "plan" in kinds["full"] and "plan" in kinds["no-reflection"]
    assert kinds["no-planning"] and not kinds["no-planning"] & {"plan", "reflection"}
    assert kinds["no-memory"] == set()


def test_reading_a_yes_or_a_no():
    kane = names_person("Kane Martinez")
    assert not claims("I'm sorry, I don't know who Kane Martinez is.", kane)
    assert claims("Yes! Everyone is talking about it.", kane)
    assert claims("Kane Martinez? He fixes bikes on Main Street.", kane)
    assert not claims("I have not heard of anyone by that name.", kane)
    world = load_world(ROOT / "worlds" / "smallville.toml")
    candidacy = next(f for f in world.facts if f.name == "candidacy")
    assert claims("I am running for mayor of Smallville.", candidacy.about, "Sam Moore")
    assert not claims("I am running for mayor of Smallville.", candidacy.about, "Carmen Ortiz")


def test_bracketed_names_come_from_memory(town_path):
    town = read(town_path)
    qs, notes = questions_for(town, CAL)
    assert len(qs) == 25
    assert ("memory", "Who is Ann Lee?") in qs  # the one Cal talked with
    assert ("reflections", "What would you get Ann Lee for their birthday?") in qs
    qs, notes = questions_for(town, DEE)  # remembers only Cal: the town's others stand in, said so
    assert ("memory", "Who is Cal Reyes?") in qs and notes

