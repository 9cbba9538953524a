"""The cognitive architecture pinned to SPEC: reflection, plans, dialogue, ablations, and the
user's interventions (whisper, edited objects)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from helpers import TINY
from hold import hold_conversation
from smalltown.config import Settings
from smalltown.llm.asker import Asker
from smalltown.llm.embed import HashEmbedder
from smalltown.scripted import ScriptedBackend
from smalltown.llm.tasks import UtteranceOut
from smalltown.mind.agent import Mind
from smalltown.mind.memory import MemoryStream
from smalltown.sim.open import create
from smalltown.sim.simulation import Simulation
from smalltown.world.load import load_world

NOW = datetime(2023, 2, 13, 9, 0)


@pytest.fixture(scope="module")
def tiny():
    return load_world(TINY)


def make_minds(world, backend=None, settings=Settings()):
    """Minds over real memory streams, sharing an id counter, as in a run; each its own ratings."""
    backend = backend or ScriptedBackend(1)
    calls = []
    asker = Asker(backend, calls.append)
    counter = iter(range(1, 10**9))
    ratings: dict[str, dict[str, int]] = {s.name: {} for s in world.agents}
    embedder = HashEmbedder()
    minds = {s.name: Mind(s, world, asker, MemoryStream(s.name, embedder, lambda: next(counter)), ratings[s.name],
                          settings) for s in world.agents}
    return minds, calls, ratings


def talk(a, b, now, place, opening=""):
    return hold_conversation(a, b, now, place, f"{b.name} is here", {a.name: "reading", b.name: "walking"}, opening)


def test_reflection_triggers_only_above_150(tiny):
    minds, calls, ratings = make_minds(tiny)
    klaus = minds["Klaus Mueller"]
    cache = ratings["Klaus Mueller"]
    texts = [f"Klaus Mueller reads page {i} of a book on gentrification" for i in range(30)]
    for t in texts:
        cache[t] = 5  # 30 records of importance 5 = exactly 150
    klaus.remember("observation", texts, NOW)
    assert klaus.state.since_reflection == 150 and not klaus.should_reflect(NOW)
    cache["Klaus Mueller spills his coffee"] = 1
    klaus.remember("observation", ["Klaus Mueller spills his coffee"], NOW)
    assert klaus.should_reflect(NOW)


def test_a_reflection_asks_3_questions_and_stores_5_insights_with_evidence(tiny):
    minds, calls, _ = make_minds(tiny)
    maria = minds["Maria Lopez"]
    maria.remember("observation", maria.spec.seed_memories + [
        "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe on February 14 from 5 pm to 7 pm",
        "Maria Lopez is studying physics", "Klaus Mueller is writing his paper in Johnson Park"], NOW)
    first = maria.reflect(NOW)
    questions = [c for c in calls if c.task == "reflection_questions"]
    assert len(questions) == 1 and len(__import__("json").loads(questions[0].parsed_answer)["questions"]) == 3
    assert len(first) == 5 and all(m.kind == "reflection" for m in first)
    ids = {m.id for m in maria.memory}
    for m in first:
        assert m.evidence and set(m.evidence) <= ids  # every insight cites records that exist
    assert maria.state.since_reflection == 0
    # reflections may cite reflections: the next reflection can draw on the first ones
    second = maria.reflect(NOW + timedelta(hours=1))
    reflection_ids = {m.id for m in first}
    assert any(set(m.evidence) & reflection_ids for m in second)


def test_plans_have_three_levels_and_actions_of_5_to_15_minutes(tiny):
    minds, calls, _ = make_minds(tiny)
    isabella = minds["Isabella Rodriguez"]
    morning = datetime(2023, 2, 13, 9, 0)
    action, new = isabella.next_action(morning, "Willow Cottage:kitchen")
    assert new and action.start == morning and action.end > morning
    plan = isabella.plan
    assert 5 <= len(plan.items) <= 8  # level 1: broad strokes
    waking = [b for b in plan.blocks if b.activity != "sleeping"]
    assert waking and all(b.minutes <= 89 for b in waking)  # level 2: about an hour each
    assert all(b.place in isabella.known.tree for b in plan.blocks)  # each where it is done
    block = plan.block_at(9 * 60)
    assert block.actions and sum(a.minutes for a in block.actions) == block.minutes
    assert all(5 <= a.minutes <= 15 for a in block.actions)  # level 3
    assert all(a.address.startswith(block.place + ":") for a in block.actions)  # each at an object there
    # only what is at hand is decomposed (just in time): this hour, and the next if the activity goes on
    decomposed = [b for b in plan.blocks if b.actions is not None and b.activity != "sleeping"]
    assert decomposed[0] is block and len(decomposed) <= 2
    assert all(b.activity == block.activity and b.place == block.place for b in decomposed)
    assert any(p.kind == "plan" for p in isabella.state.pending)  # the hour's plan waits to be rated...
    isabella.settle()  # ...with the next batch
    plans = [m for m in isabella.memory if m.kind == "plan"]
    day, schedule, hour = plans[0], plans[1], plans[-1]
    assert "plan for" in day.description and "schedule for" in schedule.description
    assert hour.description.startswith(f"From {block.start // 60:02d}:{block.start % 60:02d} to")
    assert schedule.evidence == (day.id,) and hour.evidence == (schedule.id,)  # the levels cite each other


class EndlessTalker(ScriptedBackend):
    """Never ends a conversation: the 8-round limit must."""

    def answer(self, task, prompt):
        ans = super().answer(task, prompt)
        if task.name == "utterance":
            ans.output = UtteranceOut(utterance=ans.output.utterance, end=False, tells=ans.output.tells)
        return ans


class ShortTalker(ScriptedBackend):
    """Ends the conversation on the third line."""

    def answer(self, task, prompt):
        ans = super().answer(task, prompt)
        if task.name == "utterance":
            ans.output = UtteranceOut(utterance=ans.output.utterance, end=len(task.transcript) == 2,
                                      tells=ans.output.tells)
        return ans


def test_a_conversation_ends_after_8_rounds_or_when_a_side_ends_it(tiny):
    minds, _, _ = make_minds(tiny, EndlessTalker(1))
    conv = talk(minds["Isabella Rodriguez"], minds["Maria Lopez"], NOW, "Hobbs Cafe: cafe")
    assert len(conv.lines) == 16  # 8 rounds, a line from each side
    assert [x.speaker for x in conv.lines[:2]] == ["Isabella Rodriguez", "Maria Lopez"]
    minds, _, _ = make_minds(tiny, ShortTalker(1))
    conv = talk(minds["Isabella Rodriguez"], minds["Maria Lopez"], NOW, "Hobbs Cafe: cafe")
    assert len(conv.lines) == 3


def test_after_a_conversation_both_remember_it_and_what_they_learned(tiny):
    minds, calls, _ = make_minds(tiny)
    isabella, klaus = minds["Isabella Rodriguez"], minds["Klaus Mueller"]
    isabella.remember("observation", isabella.spec.seed_memories, NOW)
    klaus.remember("observation", klaus.spec.seed_memories, NOW)
    conv = talk(isabella, klaus, NOW, "Johnson Park: park")
    for me in (isabella, klaus):
        chat = conv.chats[me.name]  # the summary, not the transcript
        assert chat.kind == "chat" and not any(x.text in chat.description for x in conv.lines)
    assert any(x.speaker == "Isabella Rodriguez" and x.facts == ("party",) for x in conv.lines)
    party = [m for m in conv.learned["Klaus Mueller"] if "Valentine's Day party" in m.description]
    assert party and party[0].evidence == (conv.chats["Klaus Mueller"].id,)  # traceable to the chat
    # each line came from its speaker's own retrieval: about the listener, then the last line
    dialogue = [c for c in calls if c.task == "utterance"]
    assert len(dialogue) == len(conv.lines)
    assert {"Isabella Rodriguez", "Klaus Mueller"} == {c.agent for c in dialogue}


def test_hearing_the_same_news_twice_stores_it_once(tiny):
    minds, _, _ = make_minds(tiny)
    isabella, klaus = minds["Isabella Rodriguez"], minds["Klaus Mueller"]
    isabella.remember("observation", isabella.spec.seed_memories, NOW)
    talk(isabella, klaus, NOW, "Johnson Park: park")
    talk(isabella, klaus, NOW + timedelta(hours=4), "Johnson Park: park")
    party = [m for m in klaus.memory if m.kind != "chat" and "Valentine's Day party at Hobbs" in m.description]
    assert len(party) == 1


def run_tiny(tmp_path, hours: float, **settings) -> Simulation:
    world = load_world(TINY)
    sim = create(world, tmp_path / "t.sqlite", ScriptedBackend(world.seed), Settings(**settings))
    sim.run_until(sim.now + timedelta(hours=hours))
    return sim


def kinds(sim: Simulation) -> dict[str, int]:
    return dict(sim.save.conn.execute("select kind, count(*) from memories group by kind"))


def test_the_full_architecture_leaves_every_kind_of_record(tmp_path):
    sim = run_tiny(tmp_path, 12)
    k = kinds(sim)
    assert k.get("reflection", 0) > 0 and k.get("plan", 0) > 0 and k.get("chat", 0) > 0 and k["observation"] > 20
    sim.close()


def test_ablation_no_reflection(tmp_path):
    sim = run_tiny(tmp_path, 12, reflection=False)
    assert kinds(sim).get("reflection", 0) == 0
    assert sim.save.conn.execute("select count(*) from llm_calls where task like 'reflection%'").fetchone()[0] == 0
    sim.close()


def test_ablation_no_planning_acts_from_the_moment(tmp_path):
    sim = run_tiny(tmp_path, 6, planning=False)
    tasks = dict(sim.save.conn.execute("select task, count(*) from llm_calls group by task"))
    assert tasks.get("next_action", 0) > 0
    assert not {"daily_plan", "hourly_schedule", "decompose"} & set(tasks)
    assert kinds(sim).get("plan", 0) == 0
    assert all(a.mind.plan is None for a in sim.agents)
    sim.close()


def test_ablation_no_observation_memory(tmp_path):
    sim = run_tiny(tmp_path, 6, observation_memory=False)
    perceived = {t.split(": ", 1)[1] for (t,) in sim.save.conn.execute("select text from events where kind='perceived'")}
    assert perceived  # they still see
    remembered = {d for (d,) in sim.save.conn.execute("select description from memories where kind='observation'")}
    assert not perceived & remembered  # but do not remember what they saw
    sim.close()


def test_a_whisper_changes_the_plan_within_the_next_game_hour(tmp_path):
    sim = run_tiny(tmp_path, 3)  # 09:00: Klaus is at work
    before = [b.activity for b in sim.agent("Klaus Mueller").mind.plan.blocks]
    thought = sim.whisper("Klaus Mueller", "You are going to organise a neighbourhood meeting in Johnson Park")
    assert thought.kind == "reflection" and "organise a neighbourhood meeting" in thought.description
    after = [b.activity for b in sim.agent("Klaus Mueller").mind.plan.blocks]
    assert after != before and any("neighbourhood meeting" in a for a in after)
    started = []
    for _ in range(360):  # one game hour
        started += [e for e in sim.step() if e.kind == "started" and e.agent == "Klaus Mueller"]
    assert any("neighbourhood meeting" in e.data["activity"] for e in started)
    sim.close()


def test_a_burning_stove_is_perceived_and_reacted_to(tmp_path):
    world = load_world(TINY)
    sim = create(world, tmp_path / "t.sqlite", ScriptedBackend(world.seed))
    stove = "Willow Cottage:kitchen:stove"
    kitchen = world.arena("Willow Cottage:kitchen").index
    for _ in range(2000):  # until someone is in the kitchen, awake
        sim.step()
        cooks = [a for a in sim.agents if a.arena == kitchen and not a.asleep and not a.path]
        if cooks:
            break
    assert cooks, "nobody came into the kitchen"
    sim.edit_object(stove, "burning")
    assert sim.objects[stove] == "burning"
    events = []
    for _ in range(30):
        events += sim.step()
    seen = [e for e in events if e.kind == "perceived" and e.data["subject"] == stove]
    assert seen and "stove is burning" in seen[0].text
    reacted = [e for e in events if e.kind == "reacted" and e.data["observed"] == stove]
    assert reacted, [e.text for e in events if e.kind in ("perceived", "reacted")]
    who = sim.agent(reacted[0].agent)
    assert who.action.address == stove  # off to the stove
    assert "fire" in who.action.activity or "stove" in who.action.activity
    sim.close()


def test_an_interview_answers_from_memory_and_is_remembered_without_advancing_time(tmp_path):
    sim = run_tiny(tmp_path, 1)
    tick = sim.tick
    answer, retrieval = sim.interview("Isabella Rodriguez", "Are you planning anything special?", "a news reporter")
    assert "Valentine" in answer and retrieval.results
    assert sim.tick == tick
    chat = list(sim.agent("Isabella Rodriguez").mind.memory)[-1]
    assert chat.kind == "chat" and "a news reporter asked" in chat.description
    answer, _ = sim.interview("Isabella Rodriguez", "Who is Kane Martinez?")
    assert "Kane Martinez" not in answer or "know" in answer.lower()
    sim.close()


def test_retrievals_are_recorded_with_their_scores(tmp_path):
    sim = run_tiny(tmp_path, 2)
    from smalltown.store.reader import Reader

    (agent,) = sim.save.conn.execute("select agent from retrievals order by id desc limit 1").fetchone()
    results = Reader(sim.save.conn).retrievals(agent, limit=1)[0]["results"]  # as the store gives them
    assert results
    for r in results:
        assert set(r) == {"id", "recency", "importance", "relevance", "total", "description", "kind"}
        assert 0 <= r["recency"] <= 1 and 0 <= r["relevance"] <= 1
        assert abs(r["total"] - (r["recency"] + r["importance"] + r["relevance"])) < 1e-3
    sim.close()


def test_spatial_memory_grows_as_agents_walk_into_new_places(tmp_path):
    world = load_world(TINY)
    sim = create(world, tmp_path / "t.sqlite", ScriptedBackend(world.seed))
    klaus = sim.agent("Klaus Mueller")
    klaus.mind.known.tree.pop("Hobbs Cafe")  # as if he had never been there
    assert "Hobbs Cafe" not in klaus.mind.known.tree
    for _ in range(6 * 360):
        sim.step()
        if "Hobbs Cafe" in klaus.mind.known.tree:
            break
    # the walk to the park passes no cafe door, so he learns it only by going in; either way the
    # tree only ever grows from arenas he has entered
    entered = {e[0] for e in sim.save.conn.execute(
        "select json_extract(data, '$.arena') from events where kind='entered' and agent='Klaus Mueller'")}
    for sector, arenas in klaus.mind.known.tree.items():
        for arena in arenas:
            assert f"{sector}:{arena}" in entered or sector in world.agent("Klaus Mueller").knows
    sim.close()


def test_a_packed_opening_line_is_the_first_line_and_saves_a_call(tiny):
    minds, calls, _ = make_minds(tiny)
    isabella, maria = minds["Isabella Rodriguez"], minds["Maria Lopez"]
    conv = talk(isabella, maria, NOW, "Hobbs Cafe: cafe", opening="Hi Maria! Lovely morning.")
    assert (conv.lines[0].speaker, conv.lines[0].text) == ("Isabella Rodriguez", "Hi Maria! Lovely morning.")
    assert conv.lines[1].speaker == "Maria Lopez"
    asked = [c for c in calls if c.task == "utterance"]
    assert len(asked) == len(conv.lines) - 1  # the opening came with the decision to talk
