"""The scripted stand-in (`smalltown.scripted`) answers every task validly and deterministically
from the task's typed inputs alone: it imports nothing of the town but the seam's types, its
decisions do not move when every text the mind wrote is replaced by gibberish, and the town it
makes looks like a town (routines bent by gatherings and inner voices, actions that go on
rather than restart, one's own bed, news told in the first person by its subject and never
twice, plan questions answered from the schedule)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import smalltown.scripted
from smalltown.llm.tasks.roles import GoalSeen, InferRole
from smalltown.llm.tasks.memes import MemeSummary, TownGoal
from smalltown.llm.tasks import Feeling, SummarizeConversationSocial
from smalltown.llm.tasks import EconomyDecompose, Holding, Op
from smalltown.llm.tasks import (
    SLEEPING,
    TASKS,
    Block,
    ChoosePlace,
    DailyPlan,
    Decompose,
    Done,
    HourlySchedule,
    Interview,
    LastTalk,
    TranscriptLine,
    NextAction,
    ObjectState,
    PersonaCard,
    PlanStep,
    RateImportance,
    React,
    Record,
    ReflectionInsights,
    ReflectionQuestions,
    SummarizeConversation,
    SummaryDescription,
    Task,
    Utterance,
    CommittingUtterance,
)
from smalltown.llm.tasks import Other, RatePerson, SocialGoal
from smalltown.scripted import ScriptedBackend
from smalltown.llm.tasks import Amendment, Amendments, ConstitutionFeedback, FeedbackSeen, PayTax, ReviseConstitution, Vote
from smalltown.llm.tasks.civics import SummarizeConversationCivic, SummarizeConversationSocialCivic
from smalltown.world.model import ROUTINE_KINDS, Fact, Gathering, RoutineItem

PKG = Path(smalltown.scripted.__file__).parent
DAY = datetime(2023, 2, 14, 6, 0)
HOME, CAFE, PARK = "Willow Cottage", "Hobbs Cafe", "Johnson Park"
PLACES = [HOME, CAFE, PARK]
OBJECTS = {
    HOME: ["bedroom: Isabella's bed", "bedroom: Maria's bed", "bedroom: Klaus's bed", "kitchen: stove",
           "kitchen: kitchen table", "kitchen: kitchen sink", "bathroom: toilet", "bathroom: shower",
           "bathroom: sink", "living room: sofa", "living room: bookshelf", "living room: desk"],
    CAFE: ["cafe: cafe counter", "cafe: coffee machine", "cafe: cafe table", "cafe: piano",
           "cafe kitchen: cafe stove"],
    PARK: ["park: park bench", "park: bench by the pond", "park: flower garden"],
}
OWNER = (
    RoutineItem("22:30", 480, SLEEPING, "", "sleep"),
    RoutineItem("06:30", 45, "wake up and get ready", "", "morning"),
    RoutineItem("07:15", 45, "eat breakfast", "", "meal"),
    RoutineItem("08:00", 240, "serve customers at the counter", CAFE, "work"),
    RoutineItem("12:00", 60, "have lunch at the cafe", CAFE, "meal"),
    RoutineItem("13:00", 240, "make coffee and wipe the tables", CAFE, "work",
                ("make coffee", "wipe the tables", "chat with the regulars", "close the till")),
    RoutineItem("17:00", 60, "take a walk in the park", PARK, "leisure"),
    RoutineItem("18:00", 60, "cook and eat dinner", "", "meal"),
    RoutineItem("19:00", 180, "read a book", "", "leisure"),
    RoutineItem("22:00", 30, "get ready for bed", "", "evening"),
)
ISA = PersonaCard(name="Isabella Rodriguez", age=34, traits="friendly, outgoing", description="runs a cafe",
              home=HOME, routine=OWNER)
MARIA = PersonaCard(name="Maria Lopez", age=21, traits="curious", description="a student", home=HOME)
KLAUS = PersonaCard(name="Klaus Mueller", age=20, traits="kind", description="a student", home=HOME)
PARTY = Fact(name="party", text="Isabella Rodriguez is hosting a Valentine's Day party at Hobbs Cafe on "
             "February 14, 5-7 pm", keywords=("party",), question="", known_by=(ISA.name,), subject=ISA.name)
MAYOR = Fact(name="candidacy", text="Sam Moore is running for mayor in the local election",
             keywords=("mayor",), question="", known_by=("Sam Moore",), subject="Sam Moore")
GATHERING = Gathering("Valentine's Day party", CAFE, datetime(2023, 2, 14, 17), datetime(2023, 2, 14, 19),
                      ISA.name, "party")
NAMES = [ISA.name, MARIA.name, KLAUS.name, "Sam Moore"]
GIBBERISH = ("Isabella Rodriguez is hosting a party! fire burning", "zq xv", "Thought: You are going to the park",
             "From 10:00 to 11:00 sleeping in Maria's bed", "Klaus Mueller loves Maria Lopez; he died",
             "Sam Moore is running for mayor", "ǂ¿", "go to the Valentine's Day party at Hobbs Cafe")


def ask(task: Task, seed: int = 1):
    out = ScriptedBackend(seed).answer(task, "").output
    assert isinstance(out, task.output)
    assert type(out).model_validate(out.model_dump()) == out
    assert task.check(out) == "", task.check(out)
    return out


def rec(text: str, kind: str = "observation", about=(), facts=(), when: datetime = DAY, **kw) -> Record:
    return Record(time=when, kind=kind, text=text, about=tuple(about), facts=tuple(facts), **kw)


# --- generated inputs ---------------------------------------------------------------------------

texts = st.text(min_size=1, max_size=50)
hhmm = st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.integers(0, 59))
times = st.datetimes(min_value=datetime(2023, 2, 13), max_value=datetime(2023, 2, 15, 23, 59))
items = st.builds(RoutineItem, start=hhmm, minutes=st.integers(5, 900), activity=texts | st.just(SLEEPING),
                  place=st.sampled_from(["", *PLACES]), kind=st.sampled_from(["", *ROUTINE_KINDS]),
                  steps=st.lists(texts, max_size=5).map(tuple))
personas = st.builds(PersonaCard, name=st.sampled_from(NAMES), age=st.integers(1, 99), traits=texts, description=texts,
                     home=st.sampled_from(PLACES),
                     routine=st.one_of(st.just(()), st.just(OWNER), st.lists(items, max_size=10).map(tuple)))
records = st.builds(Record, id=st.integers(0, 999), time=times,
                    kind=st.sampled_from(["observation", "reflection", "plan", "chat"]), text=texts,
                    importance=st.integers(0, 10), score=st.floats(0, 5),
                    about=st.lists(st.sampled_from(NAMES), max_size=3, unique=True).map(tuple),
                    facts=st.lists(st.sampled_from(["party", "candidacy"]), max_size=2, unique=True).map(tuple))
recs = st.lists(records, max_size=8)
facts = st.lists(st.sampled_from([PARTY, MAYOR]), max_size=2, unique=True)


@st.composite
def gatherings(draw) -> Gathering:
    start = draw(times)
    return Gathering(draw(texts), draw(st.sampled_from([*PLACES, "Hobbs Cafe:cafe"])), start,
                     start + timedelta(minutes=draw(st.integers(15, 300))), draw(st.sampled_from([None, *NAMES])),
                     draw(st.sampled_from([None, "party"])))


blocks = st.builds(Block, start=hhmm, minutes=st.integers(5, 600), activity=st.text(min_size=1, max_size=60),
                   place=st.sampled_from(PLACES))
lines = st.builds(TranscriptLine, speaker=st.sampled_from(NAMES), text=texts,
                  facts=st.lists(st.sampled_from(["party", "candidacy"]), max_size=1).map(tuple))
last_talks = st.none() | st.builds(LastTalk, time=times, summary=texts)
gathered = st.lists(gatherings(), max_size=2)
acts60 = st.text(min_size=1, max_size=60)
activity = st.sampled_from([a.activity for a in OWNER]) | acts60
QUESTIONS = ("What will you be doing at 6pm today?", "What will you have just finished doing at 1pm today?",
             "Give an introduction of yourself.", "Who is Kane Martinez?", "Who is Maria Lopez?",
             "Your breakfast is burning! What would you do?", "Was there a Valentine's day party?",
             "Describe your typical weekday schedule in broad strokes.", "What inspires you in life the most?")


def common(draw) -> dict:
    return {"persona": draw(personas), "now": draw(times)}


CIVIC = ("constitution_feedback", "amendments", "vote", "revise_constitution", "pay_tax", "summarize_conversation_civic",
         "summarize_conversation_social_civic")


def civic_task(draw, name: str, c: dict) -> Task:
    rate, stance = draw(st.integers(0, 100)), draw(st.none() | st.integers(0, 100))
    side = draw(st.sampled_from(["", "anti", "pro"]))
    civ = dict(**c, constitution=draw(texts) or "x", rate=rate)
    amend = st.builds(Amendment, text=texts, rate=st.none() | st.integers(0, 100))
    if name == "constitution_feedback":
        return ConstitutionFeedback(**civ, memories=draw(recs), stance=stance, stance_text=draw(texts), side=side)
    if name == "amendments":
        seen = st.builds(FeedbackSeen, who=st.sampled_from(NAMES), rate=st.integers(0, 100), text=texts)
        return Amendments(**civ, feedback=draw(st.lists(seen, max_size=8)))
    if name == "vote":
        return Vote(**civ, amendments=draw(st.lists(amend, min_size=1, max_size=5)), memories=draw(recs), stance=stance,
                    side=side)
    if name == "revise_constitution":
        return ReviseConstitution(**civ, passed=draw(st.lists(amend, min_size=1, max_size=5)),
                                  new_rate=draw(st.integers(0, 100)))
    if name == "pay_tax":
        held = st.builds(Holding, item=st.sampled_from(["bread", "ore", "wheat", "tools"]), qty=st.integers(1, 10 ** 6))
        return PayTax(**civ, holdings=draw(st.lists(held, max_size=4, unique_by=lambda h: h.item)), memories=draw(recs),
                      season=draw(st.integers(1, 20)))
    other = draw(st.sampled_from(NAMES))
    base = dict(**c, other=other, place=draw(texts), lines=draw(st.lists(lines, max_size=9)), facts=draw(facts),
                gatherings=draw(gathered), rate=rate, stance=stance, other_side=side)
    if name == "summarize_conversation_civic":
        return SummarizeConversationCivic(**base)
    return SummarizeConversationSocialCivic(**base, feeling=Feeling(other=other, sentiment=draw(st.integers(0, 10))),
                                            other_traits=draw(st.just("") | texts), tones=[])


@st.composite
def any_task(draw) -> Task:
    name = draw(st.sampled_from(sorted(TASKS)))
    c = common(draw)
    places = draw(st.lists(st.sampled_from(PLACES), unique=True, max_size=3))
    if name == "daily_plan":
        return DailyPlan(**c, known_places=places, yesterday=draw(recs), context=draw(recs),
                         gatherings=draw(gathered), intentions=draw(recs))
    if name == "hourly_schedule":
        return HourlySchedule(**c, wake_up_hour=draw(st.integers(3, 12)), known_places=places,
                              daily_plan=draw(st.lists(st.builds(PlanStep, time=hhmm, activity=acts60), max_size=8)),
                              gatherings=draw(gathered), intentions=draw(recs), from_time=draw(st.just("") | hhmm),
                              done=draw(st.lists(blocks, max_size=3)), reason=draw(recs),
                              reaction=draw(st.just("") | st.text(max_size=80)))
    if name == "decompose":
        sector = draw(st.sampled_from(PLACES))
        objs = draw(st.lists(st.sampled_from(OBJECTS[sector]), unique=True, max_size=6))
        return Decompose(**c, activity=draw(activity), start=draw(hhmm), minutes=draw(st.integers(1, 60)), place=sector,
                         objects=objs, activity_start=draw(hhmm), activity_minutes=draw(st.integers(0, 600)),
                         done=draw(st.lists(st.builds(Done, time=hhmm, activity=texts,
                                                      object=st.sampled_from(["", *objs])), max_size=4)),
                         minutes_left=draw(st.integers(0, 300)), before=draw(st.none() | blocks),
                         after=draw(st.none() | blocks), rate=draw(recs))
    if name == "decompose_economy":  # (issue 17) ops of every kind, some the answer's action cannot fit
        sector = draw(st.sampled_from(PLACES))
        objs = draw(st.lists(st.sampled_from(OBJECTS[sector]), unique=True, max_size=6))
        items = st.sampled_from(["bread", "flour", "wheat", "tools"])
        ops = draw(st.lists(st.builds(Op, op=st.sampled_from(["gather", "craft", "give", "trade", "deposit"]), item=items,
                                      qty=st.integers(1, 5), other=st.sampled_from(["", "Maria Lopez"]), get=items,
                                      get_qty=st.integers(0, 3), minutes=st.integers(0, 20)), max_size=8,
                            unique_by=lambda o: o.label))
        return EconomyDecompose(**c, activity=draw(activity), start=draw(hhmm), minutes=draw(st.integers(1, 60)),
                                place=sector, objects=objs, activity_start=draw(hhmm),
                                activity_minutes=draw(st.integers(0, 600)), minutes_left=draw(st.integers(0, 300)),
                                rate=draw(recs), ops=ops, need=draw(st.just("") | items),
                                inventory=draw(st.lists(st.builds(Holding, item=items, qty=st.integers(1, 9)), max_size=3)))
    if name == "next_action":
        return NextAction(**c, status=draw(texts), recent=draw(recs), known_places=places)
    if name == "choose_place":
        return ChoosePlace(**c, activity=draw(activity), level=draw(st.sampled_from(["sector", "arena", "object"])),
                           within=draw(st.sampled_from(["", "in Willow Cottage", "in Willow Cottage: bedroom"])),
                           current=draw(texts), options=draw(st.lists(texts, min_size=1, max_size=5, unique=True)))
    if name == "object_state":
        return ObjectState(**c, activity=draw(activity), object=draw(st.sampled_from(OBJECTS[HOME]) | texts))
    if name == "rate_importance":
        return RateImportance(**c, memories=draw(recs))
    if name == "reflection_questions":
        return ReflectionQuestions(**c, statements=draw(recs))
    if name == "reflection_insights":  # the mind asks with at least one statement to cite
        return ReflectionInsights(**c, questions=draw(st.lists(texts, max_size=3)),
                                  statements=draw(st.lists(records, min_size=1, max_size=12)))
    if name == "summary_description":
        return SummaryDescription(**c, core=draw(recs), occupation=draw(recs), feeling=draw(recs))
    if name == "react":
        is_agent = draw(st.booleans())
        return React(**c, status=draw(texts), place=draw(texts), observation=draw(texts),
                     observed=draw(st.sampled_from(NAMES)) if is_agent else draw(st.sampled_from(OBJECTS[HOME])),
                     observed_is_agent=is_agent,
                     observed_state=draw(st.sampled_from(["", "burning", "idle", "studying"]) | texts),
                     context=draw(recs), last_talk=draw(last_talks), news=draw(recs), facts=draw(facts))
    if name == "utterance":
        return Utterance(**c, listener=draw(st.sampled_from(NAMES)), place=draw(texts),
                         initiator=draw(st.sampled_from(NAMES)),
                         reason=draw(texts), speaker_doing=draw(texts), listener_doing=draw(texts),
                         relationship=draw(st.just("") | texts), last_talk=draw(last_talks), already_told=draw(recs),
                         news=draw(recs), facts=draw(facts), memories=draw(recs),
                         transcript=draw(st.lists(lines, max_size=9)))
    if name == "utterance_commit":  # (issue 16) may carry a promise: at one of the places listed, later today
        return CommittingUtterance(**c, listener=draw(st.sampled_from(NAMES)),
                                   place=draw(st.sampled_from([f"{p}: kitchen" for p in PLACES]) | texts),
                                   initiator=draw(st.sampled_from(NAMES)), reason=draw(texts),
                                   speaker_doing=draw(texts), listener_doing=draw(texts), news=draw(recs),
                                   facts=draw(facts), gatherings=draw(gathered), memories=draw(recs),
                                   transcript=draw(st.lists(lines, max_size=9)), known_places=places,
                                   plan_next=draw(st.none() | blocks))
    if name == "summarize_conversation":
        return SummarizeConversation(**c, other=draw(st.sampled_from(NAMES)), place=draw(texts),
                                     lines=draw(st.lists(lines, max_size=9)), facts=draw(facts),
                                     known_facts=draw(st.lists(st.sampled_from(["party", "candidacy"]), unique=True)),
                                     gatherings=draw(gathered))
    if name == "social_goal":
        needs = draw(st.lists(st.sampled_from(["food", "company", "tools", "safety", "water"]), unique=True, max_size=4))
        others = st.builds(Other, name=st.sampled_from(NAMES), activity=texts, need=st.sampled_from(["", *needs]))
        return SocialGoal(**c, community_goal=draw(st.just("") | texts), needs=needs, goal=draw(st.just("") | texts),
                          others=draw(st.lists(others, max_size=4)), goal_need=draw(st.sampled_from(["", *needs])))
    if name == "rate_person":  # (issue 16, eval social) from traits, or from an observer's view
        traits = draw(st.just("") | st.sampled_from(["warm, shy", "blunt, talkative", "calm"]) | texts)
        return RatePerson(**c, other=draw(st.sampled_from(NAMES)), quality=draw(st.sampled_from(["likeable", "outgoing"])),
                          traits=traits, relationship=draw(texts), sentiment=draw(st.none() | st.integers(0, 10)))
    if name == "summarize_conversation_social":  # (issue 16) the summary with the feeling toward the other
        other = draw(st.sampled_from(NAMES))
        return SummarizeConversationSocial(
            **c, other=other, place=draw(texts), lines=draw(st.lists(lines, max_size=9)), facts=draw(facts),
            gatherings=draw(gathered),
            feeling=Feeling(other=other, sentiment=draw(st.integers(0, 10)), summary=draw(st.just("") | texts)),
            other_traits=draw(st.just("") | st.sampled_from(["kind, warm", "rude, cold", "curious"])),
            tones=draw(st.lists(st.sampled_from(["kind", "neutral", "rude"]), max_size=5)))
    if name == "infer_role":  # (issue 17) from the window's needs; the goals' text is never read
        seen = st.builds(GoalSeen, goal=texts, need=st.sampled_from(["", "food", "tools", "music making", "water"]))
        return InferRole(**c, community_goal=draw(st.just("") | texts), goals=draw(st.lists(seen, max_size=5)),
                         role=draw(st.just("") | texts))
    if name in CIVIC:  # (issue 17) from rates, stances, sides, holdings and typed amendment rates only
        return civic_task(draw, name, c)
    if name == "meme_summary":  # (a town's question) from the goals' typed needs; their text is never read
        seen = st.builds(TownGoal, agent=st.sampled_from(NAMES), goal=texts,
                         need=st.sampled_from(["", "food", "company", "tools", "music making", "water"]))
        return MemeSummary(**c, town=draw(st.just("") | st.sampled_from(PLACES)), goals=draw(st.lists(seen, max_size=12)))
    assert name == "interview"
    return Interview(**c, interviewer=draw(texts), question=draw(st.sampled_from(QUESTIONS) | texts), doing=draw(texts),
                     schedule=draw(st.lists(blocks, max_size=8)), memories=draw(recs))


SLOW = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SLOW
@given(any_task(), st.integers(0, 3))
def test_every_answer_is_valid_and_keeps_to_its_question(task, seed):
    ask(task, seed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_task())
def test_same_seed_and_inputs_same_answer(task):
    a, b = ScriptedBackend(7).answer(task, ""), ScriptedBackend(7).answer(task, "ignored prompt")
    assert a.raw == b.raw


def test_answers_are_the_same_in_a_fresh_process():
    code = ("from tests.test_stand_in import conversation; print(conversation(3)[0])")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PKG.parents[1],
                           env={"PYTHONHASHSEED": str(i), "PATH": ""}) for i in (1, 2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


# --- what it may read -----------------------------------------------------------------------------

ALLOWED = {"smalltown.llm.tasks", "smalltown.world.model", "smalltown.seeded", "smalltown.lang"}


def test_imports_only_the_seam_the_world_types_and_the_standard_library():
    for path in PKG.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                top = name.split(".")[0]
                if top == "smalltown":
                    assert name in ALLOWED or name.startswith(("smalltown.scripted", "smalltown.llm.tasks.")), \
                        f"{path.name} imports {name}"
                else:
                    assert top in sys.stdlib_module_names or top == "__future__", f"{path.name} imports {name}"


def test_importing_it_loads_nothing_else_of_the_town():
    code = "import sys, smalltown.scripted; print(' '.join(m for m in sys.modules if m.startswith('smalltown')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    packages = {"smalltown", "smalltown.llm", "smalltown.world"}
    extra = {m for m in out if not m.startswith(("smalltown.scripted", "smalltown.llm.tasks."))} - ALLOWED - packages
    assert not extra


def scramble(task: Task, salt: int = 0) -> Task:
    """The task with every text the mind (or a model) wrote replaced by gibberish: memory texts,
    transcript lines, plan activities, summaries. World data and the user's words stay."""
    k = iter(range(salt, salt + 10_000))

    def g() -> str:
        return GIBBERISH[next(k) % len(GIBBERISH)]

    update = {}
    for field in type(task).model_fields:
        v = getattr(task, field)
        if field == "intentions" or field == "activity":
            continue  # the user's own words; the activity being decomposed or placed is the schedule's
        if isinstance(v, list) and v and isinstance(v[0], Record):
            update[field] = [r.model_copy(update={"text": g()}) for r in v]
        elif isinstance(v, list) and v and isinstance(v[0], (TranscriptLine, PlanStep, Done, Block)):
            key = "text" if isinstance(v[0], TranscriptLine) else "activity"
            update[field] = [x.model_copy(update={key: g()[:60]}) for x in v]
        elif isinstance(v, Block):
            update[field] = v.model_copy(update={"activity": g()[:60]})
        elif isinstance(v, LastTalk):
            update[field] = v.model_copy(update={"summary": g()})
        elif isinstance(v, list) and v and isinstance(v[0], Other):  # what others do, as the engine says it
            update[field] = [o.model_copy(update={"activity": g()}) for o in v]
        elif field == "goal" and isinstance(task, SocialGoal):  # a model's earlier answer
            update[field] = g()
        elif field == "relationship" and isinstance(task, RatePerson):  # the mind's view of someone
            update[field] = g()
    return task.model_copy(update=update)


def decisions(task: Task, seed: int):
    out = ScriptedBackend(seed).answer(task, "").output
    if isinstance(task, React):
        return out.react, out.talk, out.reaction
    if isinstance(task, Utterance):
        return out.end, out.tells
    if isinstance(task, (HourlySchedule, DailyPlan)):
        return out.model_dump()
    if isinstance(task, Decompose):
        return [(a.activity, a.minutes, a.object) for a in out.actions]
    if isinstance(task, SummarizeConversation):
        return out.learned, out.plan_changes, out.importance
    if isinstance(task, ReflectionInsights):
        return [i.because for i in out.insights]
    if isinstance(task, SocialGoal):
        return out.goal, out.need
    if isinstance(task, RatePerson):
        return out.rating
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(any_task().filter(lambda t: t.name in ("react", "utterance", "hourly_schedule", "daily_plan", "decompose",
                                               "summarize_conversation", "reflection_insights", "social_goal",
                                               "rate_person")),
       st.integers(0, 3), st.integers(0, 7))
def test_decisions_do_not_read_what_the_mind_wrote(task, seed, salt):
    assert decisions(task, seed) == decisions(scramble(task, salt), seed)


# --- plans ----------------------------------------------------------------------------------------


def schedule(persona=ISA, gatherings=(), intentions=(), **kw) -> list[Block]:
    now = kw.pop("now", DAY)
    return ask(HourlySchedule(persona=persona, now=now, wake_up_hour=6, daily_plan=[], known_places=PLACES,
                              gatherings=list(gatherings), intentions=list(intentions), **kw)).blocks


def at(blocks: list[Block], hhmm_: str) -> Block:
    h, m = map(int, hhmm_.split(":"))
    t = h * 60 + m
    return next(b for b in blocks if int(b.start[:2]) * 60 + int(b.start[3:]) <= t
                < int(b.start[:2]) * 60 + int(b.start[3:]) + b.minutes)


def test_the_day_is_the_routine_at_known_places_ending_in_sleep():
    blocks = schedule()
    assert at(blocks, "09:00").activity == "serve customers at the counter" and at(blocks, "09:00").place == CAFE
    assert at(blocks, "17:30").place == PARK and at(blocks, "19:30").place == HOME
    assert blocks[-1].activity == SLEEPING and all(b.place in PLACES for b in blocks)
    plan = ask(DailyPlan(persona=ISA, now=DAY, known_places=PLACES))
    assert plan.wake_up_hour == 6 and 5 <= len(plan.items) <= 8


def test_a_guest_goes_to_the_gathering_and_its_host_prepares_and_hosts_it():
    guest = at(schedule(MARIA, [GATHERING]), "17:30")
    assert guest.place == CAFE and "Valentine's Day party" in guest.activity and guest.activity.startswith("go to")
    host = schedule(ISA, [GATHERING])
    assert at(host, "16:30").place == CAFE and at(host, "16:30").start == "16:00"
    assert at(host, "18:00").activity.startswith("host") and at(host, "18:00").minutes == 120
    tomorrow = replace(GATHERING, start=GATHERING.start + timedelta(days=1), end=GATHERING.end + timedelta(days=1))
    assert at(schedule(MARIA, [tomorrow]), "17:30").activity != guest.activity


def test_an_inner_voice_takes_the_next_full_hour_at_the_place_it_names():
    voice = rec("You are going to paint a mural in the park", "reflection", when=DAY.replace(hour=10, minute=20))
    blocks = schedule(intentions=[voice], now=voice.time, from_time="10:20",
                      done=[Block(start="08:00", minutes=140, activity="x", place=CAFE)])
    b = at(blocks, "11:30")
    assert (b.start, b.minutes, b.activity, b.place) == ("11:00", 60, "paint a mural in the park", PARK)
    assert blocks[0].start == "10:20" and blocks[0].place == CAFE
    fresh = schedule(intentions=[voice.model_copy(update={"time": DAY - timedelta(hours=12)})])
    assert at(fresh, "08:30").activity == "paint a mural in the park"  # the first free morning slot


def test_a_reaction_comes_first_for_15_to_30_minutes_where_the_agent_is():
    blocks = schedule(now=DAY.replace(hour=10, minute=23), from_time="10:23", reaction="put out the fire on the stove",
                      done=[Block(start="08:00", minutes=143, activity="x", place=CAFE)])
    first = blocks[0]
    assert (first.start, first.activity, first.place) == ("10:23", "put out the fire on the stove", CAFE)
    assert 15 <= first.minutes <= 30 and blocks[1].activity == "serve customers at the counter"


def test_next_action_is_the_routine_item_now():
    out = ask(NextAction(persona=ISA, now=DAY.replace(hour=9, minute=10), status="", recent=[], known_places=PLACES))
    assert (out.activity, out.minutes) == ("serve customers at the counter", 120)


# --- decomposition and objects ----------------------------------------------------------------------


def part(activity: str, start: str, minutes: int, span_start: str, span: int, left: int, place=CAFE, done=(),
         persona=ISA) -> list[tuple[str, str]]:
    out = ask(Decompose(persona=persona, now=DAY, activity=activity, start=start, minutes=minutes, place=place,
                        objects=OBJECTS[place], activity_start=span_start, activity_minutes=span,
                        done=list(done), minutes_left=left))
    assert sum(a.minutes for a in out.actions) == minutes
    return [(a.activity, a.object) for a in out.actions]


def test_a_long_activity_goes_on_instead_of_restarting_each_hour():
    act = "make coffee and wipe the tables"
    hours = [part(act, f"{13 + i}:00", 60, "13:00", 240, 180 - 60 * i,
                  done=[Done(time="13:00", activity="?", object="cafe: cafe counter")] if i else ()) for i in range(4)]
    steps = [s for h in hours for s, _ in h]
    assert hours[0][0][0] == "make coffee" and all(s != "make coffee" for h in hours[1:] for s, _ in h)
    assert hours[3][-1][0] == "close the till" and all(s != "close the till" for h in hours[:3] for s, _ in h)
    runs = [s for i, s in enumerate(steps) if i == 0 or steps[i - 1] != s]
    assert len(runs) == len(set(runs))  # each step one stretch, in order
    assert runs == ["make coffee", "wipe the tables", "chat with the regulars", "close the till"]


def test_objects_fit_the_actions():
    morning = dict(part("wake up and get ready", "06:30", 45, "06:30", 45, 0, place=HOME))
    assert morning["take a shower"] == "bathroom: shower" and morning["use the toilet"] == "bathroom: toilet"
    assert morning["wake up and stretch"] == "bedroom: Isabella's bed"
    dinner = dict(part("cook and eat dinner", "18:00", 60, "18:00", 60, 0, place=HOME))
    assert dinner["cook dinner"] == "kitchen: stove"
    assert dinner["wash the dishes after dinner"] == "kitchen: kitchen sink"
    assert dict(part("serve customers at the counter", "08:00", 60, "08:00", 240, 180))[
        "serve customers at the counter"] == "cafe: cafe counter"


def test_sleeping_is_done_in_ones_own_bed():
    for who, bed in ((ISA, "Isabella's bed"), (MARIA, "Maria's bed"), (KLAUS, "Klaus's bed")):
        arena = ask(ChoosePlace(persona=who, now=DAY, activity=SLEEPING, level="arena", within=f"in {HOME}",
                                current=f"{HOME}: kitchen", options=["kitchen", "bedroom", "bathroom"])).choice
        obj = ask(ChoosePlace(persona=who, now=DAY, activity=SLEEPING, level="object", within=f"in {HOME}: bedroom",
                              current=f"{HOME}: kitchen",
                              options=["Klaus's bed", "Isabella's bed", "Maria's bed"])).choice
        assert (arena, obj) == ("bedroom", bed)
    rooms = ["Klaus Mueller's room", "Maria Lopez's room", "common room", "kitchen"]
    assert ask(ChoosePlace(persona=MARIA, now=DAY, activity=SLEEPING, level="arena", within="in dorm",
                           current="dorm: kitchen", options=rooms)).choice == "Maria Lopez's room"


def test_a_day_of_actions_seldom_repeats_itself():
    for who, gatherings in ((ISA, [GATHERING]), (MARIA, [GATHERING]), (KLAUS, [])):
        blocks = schedule(who, gatherings)
        actions: list[tuple[str, str]] = []
        for i, b in enumerate(blocks):
            if b.activity == SLEEPING or b.minutes <= 15:
                actions.append((b.activity, ""))
                continue
            s, done = int(b.start[:2]) * 60 + int(b.start[3:]), []
            for off in range(0, b.minutes, 60):
                n = min(60, b.minutes - off)
                got = part(b.activity, f"{(s + off) // 60:02d}:{(s + off) % 60:02d}", n, b.start, b.minutes,
                           b.minutes - off - n, place=b.place, done=done, persona=who)
                done += [Done(time="00:00", activity=a, object=o) for a, o in got]
                for x in got:
                    if not actions or actions[-1] != x:  # the mind merges a repeat into one action
                        actions.append(x)
        names = [a for a, _ in actions]
        repeats = sum(1 for i, a in enumerate(names) if a in names[:i])
        assert repeats <= 0.1 * len(names), (who.name, repeats, names)


# --- importance, reflection, summary -----------------------------------------------------------------


def test_importance_comes_from_typed_fields_first():
    rates = ask(RateImportance(persona=ISA, now=DAY, memories=[
        rec("anything at all", facts=("party",)), rec("You are going to run for mayor", "reflection"),
        rec("a talk", "chat", about=(MARIA.name,)), rec("a talk", "chat", about=(MARIA.name,), facts=("party",)),
        rec("a plan", "plan"), rec("Maria Lopez is reading", about=(MARIA.name,)),
        rec("Isabella Rodriguez is serving customers at the counter", about=(ISA.name,)), rec("bed is idle"),
        rec("the stove is burning")])).ratings
    assert rates == [8, 8, 5, 6, 3, 3, 2, 1, 9]


def test_insights_rest_on_the_statements_they_cite():
    st_ = [rec(f"s{i}", about=(MARIA.name,) if i % 2 else (), facts=("party",) if i == 4 else ()) for i in range(1, 9)]
    out = ask(ReflectionInsights(persona=ISA, now=DAY, questions=[], statements=st_)).insights
    assert all(x.because and all(1 <= i <= 8 for i in x.because) for x in out)
    news = next(x for x in out if "news" in x.insight)
    assert news.because == [4] and '"s4"' in news.insight
    assert any(MARIA.name in x.insight and x.because == [1, 3, 5, 7] for x in out)
    qs = ask(ReflectionQuestions(persona=ISA, now=DAY, statements=st_)).questions
    assert MARIA.name in qs[0]
    assert "customers" in ask(SummaryDescription(persona=ISA, now=DAY, core=[], occupation=[], feeling=[])).occupation


# --- reacting and talking ------------------------------------------------------------------------------


def test_alarming_objects_get_a_short_reaction_and_calm_ones_none():
    def react(state: str):
        return ask(React(persona=ISA, now=DAY, status="cooking", place=f"{HOME}: kitchen", observation="",
                         observed=f"{HOME}:kitchen:stove", observed_is_agent=False, observed_state=state, context=[]))
    fire = react("on fire")
    assert (fire.react, fire.talk, fire.reaction) == (True, False, "put out the fire on the stove")
    assert not react("idle").react and not react("cooking").react


def talk_rate(persona: PersonaCard = ISA.model_copy(update={"traits": "curious"}), **kw) -> float:
    """(Isabella with traits neither outgoing nor reserved by default: extroversion scales the chance.)"""
    talks = sum(ask(React(persona=persona, now=DAY + timedelta(minutes=i), status="x", place="p", observation="",
                          observed=MARIA.name, observed_is_agent=True, observed_state="reading", **kw)).talk
                for i in range(400))
    return talks / 400


def test_talking_is_likelier_with_acquaintances_and_news_and_rarer_after_a_talk_today():
    known = [rec("x", about=(MARIA.name,))]
    news = [rec("x", facts=("party",))]
    stranger, friend = talk_rate(context=[]), talk_rate(context=known)
    tidings = talk_rate(context=known, news=news, facts=[PARTY])
    again = talk_rate(context=known, news=news, facts=[PARTY], last_talk=LastTalk(time=DAY, summary="s"))
    assert stranger < friend < tidings and again < tidings / 2 and tidings < 0.8
    # an outgoing speaker (Isabella's own traits: "friendly, outgoing", x2) starts more of each kind of talk
    assert talk_rate(ISA, context=[]) > 1.5 * stranger and talk_rate(ISA, context=known) > 1.5 * friend


def test_someone_the_world_says_one_lives_with_is_known_from_the_first_meeting():
    housemate = ISA.model_copy(update={"description": f"runs a cafe; she shares a cottage with {MARIA.name}"})
    meetings = [ask(React(persona=p, now=DAY + timedelta(minutes=i), status="x", place="p", observation="",
                          observed=MARIA.name, observed_is_agent=True, observed_state="reading", context=[]))
                for p in (housemate, ISA) for i in range(200)]
    known, strangers = meetings[:200], meetings[200:]
    assert all(f"knows {MARIA.name} well" in m.context_summary for m in known)
    assert all(f"does not know {MARIA.name} yet" in m.context_summary for m in strangers)
    openings = [m.opening for m in known if m.talk]
    assert openings and not any("met" in o or "Nice to meet" in o for o in openings)
    assert sum(m.talk for m in known) > sum(m.talk for m in strangers)
    line = ask(Utterance(persona=housemate, now=DAY, listener=MARIA.name, place="p", initiator=ISA.name, reason="r",
                         speaker_doing="", listener_doing="", facts=[]))
    assert line.relationship == f"{ISA.name} knows {MARIA.name} well."

DOING = {ISA.name: ("wiping the tables", "serving customers", "reading a book"),
         MARIA.name: ("reading a book", "studying for an exam", "streaming a game"),
         KLAUS.name: ("writing his paper", "eating lunch", "taking a walk"),
         "Sam Moore": ("taking a walk", "reading the news", "cooking dinner")}


def conversation(seed: int, a: PersonaCard = ISA, b: PersonaCard = MARIA, news_of: dict | None = None,
                 told: list[Record] = (), now: datetime = DAY.replace(hour=9)) -> tuple[list[TranscriptLine], list]:
    """A whole conversation as the mind runs it: the opening from React, then lines until one ends."""
    news_of = {ISA.name: [rec("x", facts=("party",), id=1)], MARIA.name: []} if news_of is None else news_of
    opening = ask(React(persona=a, now=now, status="x", place="p", observation="", observed=b.name,
                        observed_is_agent=True, observed_state="reading a book", context=[]), seed).opening
    lines = [TranscriptLine(speaker=a.name, text=opening)] if opening else []  # no opening: the first line is asked for
    outs = []
    for k in range(len(lines), 12):
        sp, li = (b, a) if k % 2 else (a, b)
        passed = {f for x in lines for f in x.facts}
        news = [r for r in news_of.get(sp.name, []) if not set(r.facts) & passed]
        out = ask(Utterance(persona=sp, now=now, listener=li.name, place="p", initiator=a.name, reason="r",
                            speaker_doing=DOING[sp.name][now.hour % 3], listener_doing=DOING[li.name][now.hour % 3],
                            already_told=list(told) if sp is a else [], news=news, facts=[PARTY, MAYOR],
                            transcript=lines), seed)
        outs.append(out)
        passed_on = tuple(f for i in out.tells for f in news[i - 1].facts)
        lines.append(TranscriptLine(speaker=sp.name, text=out.utterance, facts=passed_on))
        if out.end:
            break
    return lines, outs


def test_a_fact_is_told_in_the_first_person_by_its_subject_once_and_learned_verbatim():
    lines, outs = conversation(1)
    told = [x for x in lines if x.facts]
    assert len(told) == 1 and told[0].speaker == ISA.name
    assert "I'm hosting a Valentine's Day party at Hobbs Cafe" in told[0].text and ISA.name not in told[0].text
    assert 4 <= len(lines) <= 8 and outs[-1].end and all(len(o.tells) <= 1 for o in outs)
    out = ask(SummarizeConversation(persona=MARIA, now=DAY.replace(hour=9), other=ISA.name, place="p", lines=lines,
                                    facts=[PARTY], gatherings=[GATHERING]))
    assert [x.fact for x in out.learned] == [PARTY.text] and out.plan_changes and out.importance == 6
    assert out.summary.startswith(f"{MARIA.name} talked with {ISA.name} about")


def test_news_already_told_is_not_told_again_nor_to_its_subject_nor_by_someone_it_names():
    lines, _ = conversation(1, told=[rec("x", facts=("party",))])
    assert not any(x.facts for x in lines) and not any("hosting" in x.text for x in lines)
    to_subject = ask(Utterance(persona=MARIA, now=DAY, listener=ISA.name, place="p", initiator=MARIA.name, reason="r",
                               speaker_doing="", listener_doing="", news=[rec("x", facts=("party",))], facts=[PARTY]))
    assert to_subject.tells == [] and "hosting" not in to_subject.utterance
    named = Fact(name="crush", text="Maria Lopez has a crush on Klaus Mueller", keywords=(), question="", known_by=())
    by_named = ask(Utterance(persona=MARIA, now=DAY, listener=ISA.name, place="p", initiator=MARIA.name, reason="r",
                             speaker_doing="", listener_doing="", news=[rec("x", facts=("crush",))], facts=[named]))
    assert by_named.tells == [] or "I have a crush" in by_named.utterance
    # someone else's news is brought up with a given listener on some days, not all (P_TELL), and
    # when it is, it is told word for word and cited
    told = []
    for days in range(40):
        gossip = ask(Utterance(persona=MARIA, now=DAY + timedelta(days=days), listener=ISA.name, place="p",
                               initiator=MARIA.name, reason="r", speaker_doing="", listener_doing="",
                               news=[rec("x", facts=("candidacy",))], facts=[MAYOR]))
        assert gossip.tells in ([], [1]) and (MAYOR.text in gossip.utterance) == (gossip.tells == [1])
        told.append(gossip.tells == [1])
    assert 0.15 < sum(told) / len(told) < 0.6


def test_small_talk_is_first_person_varied_and_asks_for_the_relationship_when_told_to():
    everyone = [ISA, MARIA, KLAUS, PersonaCard(name="Sam Moore", age=60, traits="x", description="", home=HOME)]
    said: list[str] = []
    for seed in range(3):
        for i, a in enumerate(everyone):
            for b in everyone[i + 1:]:
                for h in (8, 13, 19):
                    lines, outs = conversation(seed, a, b, news_of={}, now=DAY.replace(hour=h))
                    said += [x.text for x in lines]
                    assert 4 <= len(lines) <= 8  # 2-4 rounds
                    assert all(a.name not in x.text for x in lines if x.speaker == a.name)
    top = Counter(said).most_common(1)[0][1]
    assert top / len(said) <= 0.04, Counter(said).most_common(3)  # no line more than a few percent
    out = ask(Utterance(persona=MARIA, now=DAY, listener=ISA.name, place="p", initiator=ISA.name, reason="r",
                        speaker_doing="reading", listener_doing="", memories=[rec("x", about=(ISA.name,))] * 3))
    assert out.relationship.startswith(ISA.name) or ISA.name in out.relationship


# --- interviews ---------------------------------------------------------------------------------------------


def interview(question: str, memories=(), now: datetime = DAY, asks_about: tuple[str, ...] = ()) -> str:
    return ask(Interview(persona=ISA, now=now, interviewer="a news reporter", question=question, doing="reading",
                         schedule=schedule(ISA, [GATHERING]), memories=list(memories), asks_about=asks_about)).answer


def test_plan_questions_are_answered_from_the_schedule_at_the_asked_time():
    assert interview("What will you be doing at 6pm today?").startswith(
        "At 6 pm I'll be hosting the Valentine's Day party at Hobbs Cafe")
    assert interview("What will you be doing at 10pm today?") == "At 10 pm I'll be getting ready for bed at home."
    assert interview("What will you be doing at 6am today?") == "At 6 am I'll be asleep."
    assert interview("What will you have just finished doing at 1pm today?") == \
        "At 1 pm I'll have just finished having lunch at the cafe at Hobbs Cafe."


def test_who_questions_come_from_records_about_the_person():
    seen = rec("Maria Lopez is reading a book", about=(MARIA.name,), when=DAY - timedelta(hours=20), score=1.0)
    assert "Maria Lopez is reading a book" in interview("Who is Maria Lopez?", [seen])
    assert interview("Who is Kane Martinez?", [seen]) == "I'm sorry, I don't know who Kane Martinez is."
    assert interview("Give an introduction of yourself.").startswith("I'm Isabella Rodriguez")
    assert interview("Was there a Valentine's day party?", [seen]) == "Not that I know of."
    heard = rec("Maria said there is a party at the cafe", facts=("party",), score=2.0)
    assert interview("Was there a Valentine's day party?", [seen, heard], asks_about=("party",)).startswith("Yes")
    assert '"Maria said there is a party at the cafe"' in interview("Who is throwing a party?", [seen, heard],
                                                                   asks_about=("party",))


def test_a_yes_comes_only_from_a_memory_of_the_fact_asked_about():
    """Hearing one piece of news is no answer to a question about another: the stand-in says yes
    only when a memory carries the very fact asked about, however relevant the others score."""
    election = rec("Sam said he is running for mayor", facts=("election",), score=9.0, importance=9)
    party = rec("Maria said there is a party at the cafe", facts=("party",), score=1.0)
    assert interview("Was there a Valentine's day party?", [election], asks_about=("party",)) == "Not that I know of."
    # a question about none of the declared facts is answered from the most relevant memory
    assert interview("Are you planning anything special?", [election]).startswith("Yes")
    yes = interview("Was there a Valentine's day party?", [election, party], asks_about=("party",))
    assert yes.startswith("Yes") and "party at the cafe" in yes and "mayor" not in yes
    assert not interview("Who is throwing a party?", [election], asks_about=("party",)).startswith("From what I've heard")
    assert "stove" in interview("Your breakfast is burning! What would you do?")


def test_a_summary_names_a_place_once(tmp_path):
    """A routine's activity that names its place ("a bench in the park") is not followed by "at the
    park" again in the stand-in's summary of the agent."""
    import json
    import re

    from helpers import query, tiny_sim

    sim = tiny_sim(tmp_path, "06:30")
    path = sim.save.path
    sim.close()
    summaries = [json.loads(s)["summary"] for (s,) in query(path, "SELECT state FROM agents")]
    assert summaries and all(summaries)
    for summary in summaries:
        assert not re.search(r"\b(\w[\w' ]{3,}) at \1\b", summary), summary
