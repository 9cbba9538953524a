"""The mind's typed context (issue 11), checked on a queue fake: what each task is given, not how
a backend answers. Decomposition sees its day; dialogue has its situation; every memory shown
carries its time; retrieval is hygienic; prompts fit their window."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fakes import QueueBackend, RandomBackend
from helpers import TINY
from hold import hold_conversation
from smalltown.config import Settings
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Capabilities
from smalltown.llm.embed import HashEmbedder
from smalltown.llm.tasks import Block, PlanStep, Record
from smalltown.mind.agent import Mind
from smalltown.mind.memory import MemoryStream
from smalltown.state.plan import DayPlan, PlanItem
from smalltown.mind.records import Lore
from smalltown.mind.talk import news_for
from smalltown.world.load import load_world
from smalltown.world.perception import Seen

T0 = datetime(2023, 2, 13, 8, 0)


@pytest.fixture(scope="module")
def world():
    """The tiny town; it declares Isabella's party as news ([[facts]], [[gatherings]])."""
    w = load_world(TINY)
    assert [f.name for f in w.facts] == ["party"]
    return w


def make_minds(world, backend, names=None, settings=Settings(), context=None):
    calls = []
    if context is not None:
        backend.can = Capabilities(context=context)  # declared, as a backend declares its window
    asker = Asker(backend, calls.append)
    lore = Lore(world)
    counter = iter(range(1, 10**9))
    minds = {}
    for spec in world.agents:
        if names and spec.name not in names:
            continue
        stream = MemoryStream(spec.name, HashEmbedder(), lambda: next(counter))
        minds[spec.name] = m = Mind(spec, world, asker, stream, {}, settings, lore=lore)
        m.remember("observation", spec.seed_memories, T0 - timedelta(hours=2))
    return minds, calls


def a_plan(mind: Mind, blocks: list[PlanItem]) -> None:
    mind.plan = DayPlan(T0.date(), 6, [("06:00", "wake up")], blocks)


def test_a_long_activity_is_decomposed_with_its_day_and_what_is_done(world):
    q = QueueBackend(default=RandomBackend(1))
    minds, _ = make_minds(world, q, ["Isabella Rodriguez"])
    m = minds["Isabella Rodriguez"]
    work = "serve customers at the cafe"
    a_plan(m, [PlanItem(0, 420, "sleeping", place="Willow Cottage"),
               PlanItem(420, 60, "wake up and have breakfast", place="Willow Cottage"),
               PlanItem(480, 60, work, place="Hobbs Cafe"), PlanItem(540, 60, work, place="Hobbs Cafe"),
               PlanItem(600, 60, work, place="Hobbs Cafe"), PlanItem(660, 780, "sleeping", place="Willow Cottage")])
    steps = [("open up", "cafe: cafe counter"), ("make coffee", "cafe: coffee machine"),
             ("serve", "cafe: cafe counter"), ("wipe tables", "cafe: corner table")]
    q.push("decompose", {"actions": [{"activity": a, "minutes": 15, "object": o, "state": ""} for a, o in steps * 2],
                         "ratings": []})
    action = m.next_action(T0, "Hobbs Cafe:cafe")[0]
    assert (action.activity, action.address) == ("open up", "Hobbs Cafe:cafe:cafe counter")  # each at its own object
    first = q.of("decompose")[0]
    # two hours of the activity at once (two of its hour-long blocks), with the whole activity in view
    assert (first.start, first.minutes, first.activity_start, first.activity_minutes) == ("08:00", 120, "08:00", 180)
    assert first.minutes_left == 60 and first.done == []
    assert first.before.activity == "wake up and have breakfast" and first.after.activity == "sleeping"
    assert "cafe: coffee machine" in first.objects
    nine = m.plan.block_at(9 * 60)
    assert [a.activity for a in nine.actions] == ["open up", "make coffee", "serve", "wipe tables"]
    # the last hour of the same activity sees what was done, and that it is the last
    q.push("decompose", {"actions": [{"activity": "restock", "minutes": 15, "object": "nowhere", "state": ""}] * 4,
                         "ratings": []})
    m.next_action(T0 + timedelta(hours=2), "Hobbs Cafe:cafe")
    second = q.of("decompose")[1]
    assert (second.start, second.minutes, second.minutes_left) == ("10:00", 60, 0)
    assert [d.activity for d in second.done] == ["serve", "wipe tables", "open up", "make coffee", "serve",
                                                  "wipe tables"]  # the latest six
    assert second.done[3].object == "cafe: coffee machine"
    # an object that is not there: the previous action's is used, and the call log says so
    assert m.action.address == "Hobbs Cafe:cafe:corner table"
    prompt = q.prompt("decompose")
    assert "Already done of it:\n- 08:30 \"serve\" at cafe: cafe counter" in prompt
    assert "now: 08:00-11:00 \"serve customers at the cafe\" at Hobbs Cafe" in prompt


def test_equal_actions_in_a_row_are_one_action(world):
    q = QueueBackend(default=RandomBackend(2))
    minds, _ = make_minds(world, q, ["Klaus Mueller"])
    m = minds["Klaus Mueller"]
    a_plan(m, [PlanItem(0, 480, "sleeping", place="Willow Cottage"), PlanItem(480, 60, "write", place="Johnson Park"),
               PlanItem(540, 900, "sleeping", place="Willow Cottage")])
    q.push("decompose", {"actions": [{"activity": "write", "minutes": 15, "object": "park: park bench"}] * 3
                         + [{"activity": "stretch", "minutes": 15, "object": "park: park bench"}], "ratings": []})
    action, new = m.next_action(T0, "Johnson Park:park")
    assert new and action.end == T0 + timedelta(minutes=45)  # three 15-minute steps, one action


def test_every_memory_in_a_prompt_says_when_it_happened(world):
    q = QueueBackend(default=RandomBackend(3))
    minds, calls = make_minds(world, q, ["Maria Lopez"])
    m = minds["Maria Lopez"]
    m.remember("observation", ["Maria Lopez saw a fox in the park"], T0)
    m.interview("What did you see?", "a reporter", T0 + timedelta(hours=2))
    prompt = q.prompt("interview")
    assert '(08:00) "Maria Lopez saw a fox in the park"' in prompt  # today's: the prompt says which day
    assert "It is Monday February 13, 2023, 10:00." in prompt  # the interview knows the time


def test_the_interview_is_given_todays_schedule_and_the_time(world):
    q = QueueBackend(default=RandomBackend(4))
    minds, _ = make_minds(world, q, ["Isabella Rodriguez"])
    m = minds["Isabella Rodriguez"]
    a_plan(m, [PlanItem(0, 360, "sleeping", place="Willow Cottage"), PlanItem(360, 720, "run the cafe", place="Hobbs Cafe"),
               PlanItem(1080, 120, "go to the market", place="Johnson Park"),
               PlanItem(1200, 240, "sleeping", place="Willow Cottage")])
    m.interview("What will you be doing at 6pm today?", "a reporter", T0)
    task, prompt = q.of("interview")[-1], q.prompt("interview")
    assert [(b.start, b.activity) for b in task.schedule][2] == ("18:00", "go to the market")
    assert '18:00-20:00 "go to the market" at Johnson Park' in prompt and "2023, 08:00" in prompt


def test_idle_things_are_seen_but_not_remembered(world):
    q = QueueBackend(default=RandomBackend(5))
    minds, _ = make_minds(world, q, ["Klaus Mueller"])
    m = minds["Klaus Mueller"]
    m.observe([Seen("Willow Cottage:kitchen:stove", "stove is idle", 1, idle=True),
               Seen("Willow Cottage:kitchen:stove", "stove is burning", 1)], T0, {})
    assert [p.text for p in m.state.pending] == ["stove is burning"]


def test_importance_is_rated_per_agent(world):
    q = QueueBackend(default=RandomBackend(6))
    minds, _ = make_minds(world, q, ["Klaus Mueller", "Maria Lopez"])
    for name in ("Klaus Mueller", "Maria Lopez"):
        minds[name].remember("observation", ["the piano is out of tune"], T0)
    rated = [t for t in q.of("rate_importance") if any(r.text == "the piano is out of tune" for r in t.memories)]
    assert sorted(t.persona.name for t in rated) == ["Klaus Mueller", "Maria Lopez"]  # each asks for its own


def test_an_insight_already_held_is_not_stored_again(world):
    q = QueueBackend(default=RandomBackend(7))
    minds, _ = make_minds(world, q, ["Klaus Mueller"])
    m = minds["Klaus Mueller"]
    m.remember("observation", [f"Klaus Mueller wrote page {i}" for i in range(5)], T0)
    insight = {"insight": "Klaus Mueller works hard", "because": [1], "importance": 5}
    for _ in range(2):
        q.push("reflection_insights", {"insights": [insight] * 5})
        m.reflect(T0 + timedelta(hours=1))
    assert sum(1 for x in m.memory if x.description == "Klaus Mueller works hard") == 1


def test_an_oversized_memory_stream_is_trimmed_to_fit_not_answered_elsewhere(world):
    q = QueueBackend(default=RandomBackend(8))
    minds, calls = make_minds(world, q, ["Klaus Mueller"], context=2400)
    m = minds["Klaus Mueller"]
    m.remember("observation", [f"Klaus Mueller read chapter {i} of a long book about the history "
                               f"of cities and their neighbourhoods" for i in range(300)], T0)
    m.reflect(T0 + timedelta(hours=1))
    asked = q.of("reflection_questions")[-1]
    call = next(c for c in calls if c.task == "reflection_questions")
    assert call.fallback == "" and "dropped to fit" in call.note
    assert 0 < len(asked.statements) < 100
    # the oldest statements went first: what is left is the newest
    assert asked.statements[-1].text.endswith("chapter 299 of a long book about the history of cities and "
                                              "their neighbourhoods")
    assert len(call.prompt) / 3 < 2400


def conversation_once(minds, q, a, b, now, told=()):
    q.push("react", {"context_summary": "", "react": True, "talk": True, "reaction": "", "opening": "Hi!"})
    return hold_conversation(minds[a], minds[b], now, "Hobbs Cafe: cafe", f"{b} is reading",
                    {a: "making coffee", b: "reading a book"}, "Hi!", "an old friend")


def test_a_line_has_its_situation_and_news_is_told_once(world):
    q = QueueBackend(default=RandomBackend(9))
    minds, _ = make_minds(world, q)
    isa, maria = "Isabella Rodriguez", "Maria Lopez"
    news = news_for(minds[isa], maria)
    assert [r.facts for r in news] == [("party",)]  # Isabella's own news, from her seed memory
    q.push("utterance",
           {"relationship": "she is my friend", "utterance": "Hi Isabella! What's new?", "end": False, "tells": []},
           {"relationship": "", "utterance": "I'm throwing a party!", "end": False, "tells": [1]},
           {"relationship": "", "utterance": "Lovely!", "end": True, "tells": []})
    q.push("summarize_conversation",
           {"summary": "Isabella told Maria about the party", "importance": 6, "learned": [], "plan_changes": False},
           {"summary": "Maria heard about the party from Isabella", "importance": 6, "plan_changes": True,
            "learned": [{"fact": "Isabella Rodriguez is hosting a Valentine's Day party", "importance": 8}]})
    conv = hold_conversation(minds[isa], minds[maria], T0, "Hobbs Cafe: cafe", "Maria Lopez is reading a book",
                    {isa: "making coffee", maria: "reading a book"}, "Hi Maria!", "a close friend")
    maria_first, isa_line = q.of("utterance")[:2]
    assert (maria_first.speaker_doing, maria_first.listener_doing, maria_first.initiator) == \
        ("reading a book", "making coffee", isa)
    assert maria_first.relationship == "" and maria_first.reason == "Maria Lopez is reading a book"
    assert [x.text for x in maria_first.transcript] == ["Hi Maria!"]
    assert isa_line.relationship == "a close friend" and [r.facts for r in isa_line.news] == [("party",)]
    assert "News Isabella Rodriguez could pass on:\n1. (06:00)" in q.prompt("utterance", 1)
    assert conv.relationships == {isa: "a close friend", maria: "she is my friend"}
    assert [x.facts for x in conv.lines] == [(), (), ("party",), ()]
    # each side keeps the summary, not the transcript; Maria learned the fact, citing the chat
    chats = {k: v.description for k, v in conv.chats.items()}
    assert chats == {isa: "Isabella told Maria about the party", maria: "Maria heard about the party from Isabella"}
    assert conv.learned[maria][0].evidence == (conv.chats[maria].id,)
    assert conv.plan_changes == {isa: False, maria: True}
    summary = q.of("summarize_conversation")[1]
    assert [line.facts for line in summary.lines] == [(), (), ("party",), ()] and summary.known_facts == []
    assert [f.name for f in summary.facts] == ["party"] and summary.gatherings[0].host == isa
    # the next talk: Isabella has told Maria, and Maria heard it from Isabella
    assert news_for(minds[isa], maria) == [] and news_for(minds[maria], isa) == []
    q.push("utterance", {"relationship": "", "utterance": "Hi!", "end": False, "tells": []},
           {"relationship": "", "utterance": "See you!", "end": True, "tells": []})
    q.push("summarize_conversation", *[{"summary": "we said hello", "importance": 2, "learned": [],
                                        "plan_changes": False}] * 2)
    hold_conversation(minds[isa], minds[maria], T0 + timedelta(hours=4), "Hobbs Cafe: cafe", "x", {}, "Hello again")
    again = q.of("utterance")[-1]
    assert again.news == [] and [r.facts for r in again.already_told] == [("party",)]
    assert again.last_talk is not None and again.last_talk.summary == "Isabella told Maria about the party"


def test_a_fact_is_never_offered_to_its_subject(world):
    q = QueueBackend(default=RandomBackend(10))
    minds, _ = make_minds(world, q)
    minds["Maria Lopez"].remember("observation", ["Isabella Rodriguez is hosting a Valentine's Day party "
                                                   "at Hobbs Cafe on February 14"], T0)
    assert news_for(minds["Maria Lopez"], "Isabella Rodriguez") == []  # the host knows her own party
    assert [r.facts for r in news_for(minds["Maria Lopez"], "Klaus Mueller")] == [("party",)]


def test_the_daily_plan_is_told_what_happened_yesterday(world):
    q = QueueBackend(default=RandomBackend(11))
    minds, _ = make_minds(world, q, ["Klaus Mueller"])
    m = minds["Klaus Mueller"]
    a_plan(m, [PlanItem(0, 480, "sleeping", place="Willow Cottage"),
               PlanItem(480, 240, "write the paper", place="Johnson Park"),
               PlanItem(720, 720, "sleeping", place="Willow Cottage")])
    m.remember("chat", ["Klaus Mueller talked with Maria Lopez about physics"], T0 + timedelta(hours=5))
    m.next_action(T0 + timedelta(days=1), "Willow Cottage:bedroom")
    daily = q.of("daily_plan")[0]
    assert [(r.time.hour, r.text) for r in daily.yesterday] == [
        (8, "Klaus Mueller was writing the paper at Johnson Park"),
        (13, "Klaus Mueller talked with Maria Lopez about physics")]
    assert "What happened yesterday:\n- (Feb 13 08:00)" in q.prompt("daily_plan")  # another day: its date


def test_a_replan_keeps_what_was_lived(world):
    q = QueueBackend(default=RandomBackend(12))
    minds, _ = make_minds(world, q, ["Klaus Mueller"])
    m = minds["Klaus Mueller"]
    a_plan(m, [PlanItem(0, 480, "sleeping", place="Willow Cottage"),
               PlanItem(480, 60, "write the paper", place="Johnson Park"),
               PlanItem(540, 900, "sleeping", place="Willow Cottage")])
    q.push("decompose", {"actions": [{"activity": "write", "minutes": 15, "object": "park: park bench"}] * 4,
                         "ratings": []})
    m.next_action(T0, "Johnson Park:park")
    q.push("hourly_schedule", {"blocks": [{"start": "08:20", "minutes": 100, "activity": "walk home",
                                           "place": "Willow Cottage"}]})
    assert m.replan(T0 + timedelta(minutes=20), [], reaction="walk home")
    task = q.of("hourly_schedule")[-1]
    assert task.from_time == "08:20" and task.reaction == "walk home"
    assert [(b.start, b.minutes, b.activity) for b in task.done][-1] == ("08:00", 20, "write the paper")
    kept = m.plan.blocks[1]
    assert (kept.start, kept.minutes) == (480, 20) and kept.actions[0].address == "Johnson Park:park:park bench"
    assert isinstance(task.daily_plan[0], PlanStep) and isinstance(task.done[0], Block)
    assert all(isinstance(r, Record) for r in task.reason)


def test_a_minds_state_survives_a_round_trip_through_the_save(world, tmp_path):
    """What a resumed run reads back is what the live run had: a mind rebuilt from its saved
    state (and its loaded memories) says the same state, and knows the same facts."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create, resume

    sim = create(world, tmp_path / "s.sqlite", ScriptedBackend(world.seed))
    sim.run_until(T0 + timedelta(hours=14))
    live = {a.name: (a.mind.to_json(), a.mind.known_facts()) for a in sim.agents}
    sim.close()
    again = resume(tmp_path / "s.sqlite", ScriptedBackend(world.seed))
    for a in again.agents:
        state, facts = live[a.name]
        assert a.mind.to_json() == state and a.mind.known_facts() == facts
    assert any(facts for _, facts in live.values())
    again.close()


@pytest.mark.parametrize("question, hour", [("What will you be doing at 6am today?", 6),
                                            ("What will you be doing at 6pm today?", 18),
                                            ("What will you be doing at 10pm today?", 22)])
def test_the_interview_answers_the_papers_plan_questions_from_the_plan(world, tmp_path, question, hour):
    """SPEC 9's plan questions: the prompt holds the time and today's schedule; the stand-in's
    answer is the block of the schedule at the hour asked."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create

    sim = create(world, tmp_path / "s.sqlite", ScriptedBackend(world.seed))
    sim.run_until(T0)  # 08:00, the day planned
    mind = sim.agent("Isabella Rodriguez").mind
    block = next(s for s in mind.plan.spans() if s[0].start <= hour * 60 < s[-1].end)
    answer, _ = sim.interview("Isabella Rodriguez", question, "a news reporter")
    from smalltown.store.packing import unpack_text

    prompt = unpack_text(sim.save.conn.execute("select prompt from llm_calls where task='interview' order by id desc")
                         .fetchone()[0])  # (the call log keeps texts compressed when that is shorter)
    sim.close()
    assert "It is Monday February 13, 2023, 08:00." in prompt
    assert f'{block[0].start // 60:02d}:{block[0].start % 60:02d}-' in prompt and block[0].activity in prompt
    said = "asleep" if block[0].activity == "sleeping" else " ".join(block[0].activity.split()[-3:])
    assert said in answer, answer  # the block at that hour
    assert answer.startswith(("At 6 am", "At 6 pm", "At 10 pm")), answer
