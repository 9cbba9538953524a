"""The scripted backend answers every task, plainly but plausibly, and keeps the conventions the
mind relies on: importance by keywords, exact decompositions, valid citations, news passed on
word for word, no invented knowledge, and plans bent by thoughts, reactions and dated events."""

from __future__ import annotations

import pytest

from conftest import SMALLVILLE
from smalltown.llm.scripted import ScriptedBackend
from smalltown.llm.tasks import (
    TASKS,
    ChoosePlace,
    DailyPlan,
    Decompose,
    HourlySchedule,
    Interview,
    NextAction,
    ObjectState,
    Persona,
    RateImportance,
    React,
    ReflectionInsights,
    ReflectionQuestions,
    SummarizeConversation,
    SummaryDescription,
    Task,
    Utterance,
)
from smalltown.world.load import load_world

PARTY = "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe on February 14 from 5 pm to 7 pm"
MONDAY, TUESDAY = "Monday February 13, 2023", "Tuesday February 14, 2023"


@pytest.fixture(scope="module")
def town():
    return load_world(SMALLVILLE)


def persona(town, name: str) -> Persona:
    s = town.agent(name)
    return Persona(name=s.name, age=s.age, traits=s.traits, description=s.description, home=s.home)


def knows(town, name: str) -> list[str]:
    return list(town.agent(name).knows)


def ask(task: Task, seed: int = 1):
    out = ScriptedBackend(seed).answer(task, task.render()).output
    assert isinstance(out, task.output)
    return task.output.model_validate(out.model_dump())  # a valid instance of the output model


def realistic_tasks(town) -> dict[str, Task]:
    isa, klaus = persona(town, "Isabella Rodriguez"), persona(town, "Klaus Mueller")
    seeds = town.agent("Klaus Mueller").seed_memories
    statements = seeds + [PARTY, "Klaus Mueller is studying in the library at Oak Hill College",
                          "Maria Lopez is having a coffee and chatting at Hobbs Cafe", "bed is idle",
                          "Klaus Mueller talked with Maria Lopez about the Valentine's Day party"]
    places = knows(town, "Klaus Mueller")
    return {
        "daily_plan": DailyPlan(persona=klaus, date=TUESDAY, known_places=places, context=[PARTY]),
        "hourly_schedule": HourlySchedule(persona=klaus, date=TUESDAY, wake_up_hour=7, known_places=places,
                                          daily_plan=["wake up and complete the morning routine at 7:00 am"] * 5,
                                          from_time="10:20", done=["07:00 wake up"], context=[PARTY]),
        "decompose": Decompose(persona=isa, activity="open Hobbs Cafe and serve customers", start="08:30",
                               minutes=60, place="Hobbs Cafe: cafe"),
        "next_action": NextAction(persona=klaus, time=f"{MONDAY}, 12:10", status="study in the library",
                                  recent=statements[-3:], known_places=places),
        "choose_place": ChoosePlace(persona=klaus, activity="study in the library at Oak Hill College",
                                    level="sector", within="", current="Oak Hill College dorm: kitchen",
                                    options=places),
        "object_state": ObjectState(persona=isa, activity="serve customers at Hobbs Cafe", object="coffee machine"),
        "rate_importance": RateImportance(persona=klaus, memories=statements),
        "reflection_questions": ReflectionQuestions(persona=klaus, statements=statements),
        "reflection_insights": ReflectionInsights(persona=klaus, questions=["What is Klaus Mueller most focused on lately?"],
                                                  statements=statements),
        "summary_description": SummaryDescription(persona=klaus, core=seeds, occupation=seeds, feeling=statements),
        "react": React(persona=klaus, time=f"{MONDAY}, 12:10", status="have lunch at Hobbs Cafe",
                       observation="Maria Lopez is having a coffee and chatting at Hobbs Cafe", observed="Maria Lopez",
                       observed_is_agent=True, context=statements),
        "utterance": Utterance(persona=isa, listener="Klaus Mueller", time=f"{MONDAY}, 12:10",
                               place="Hobbs Cafe: cafe", memories=town.agent("Isabella Rodriguez").seed_memories,
                               transcript=[]),
        "summarize_conversation": SummarizeConversation(
            persona=klaus, other="Isabella Rodriguez",
            transcript=[f"Isabella Rodriguez: Hi, Klaus! You're invited! {PARTY}.",
                        "Klaus Mueller: That sounds lovely, I'd love to come! See you later, Isabella!"]),
        "interview": Interview(persona=klaus, interviewer="a news reporter", question="What's your occupation?",
                               memories=statements),
    }


# --- every task, validly, the same every time ------------------------------------------------------

def test_every_task_gets_a_valid_answer(town):
    tasks = realistic_tasks(town)
    assert set(tasks) == set(TASKS)  # a new task must be added here too
    for name, task in tasks.items():
        assert type(task) is TASKS[name]
        ask(task)


def test_answers_are_deterministic_given_seed_and_inputs(town):
    for task in realistic_tasks(town).values():
        a = [ScriptedBackend(7).answer(task, task.render()).raw for _ in range(2)]
        assert a[0] == a[1] == ScriptedBackend(7).answer(task, task.render()).raw


# --- importance -----------------------------------------------------------------------------------

@pytest.mark.parametrize("memory, rating", [
    ("bed is idle", 1),
    ("Maria's bed is idle", 1),
    ("Klaus Mueller is sleeping", 1),
    ("refrigerator is empty", 1),
    ("Klaus Mueller is eating breakfast at home", 2),
    ("Klaus Mueller is eat breakfast at home", 2),  # an activity worded as planned
    ("Klaus Mueller is taking a walk in Johnson Park", 2),
    ("Isabella Rodriguez is serving customers at Hobbs Cafe", 3),
    ("Maria Lopez is having a coffee and chatting at Hobbs Cafe", 4),
    ("Klaus Mueller talked with Maria Lopez about how they have been", 5),
    (PARTY, 8),
    ("Isabella Rodriguez wants to invite everyone in Smallville to her Valentine's Day party", 8),
    ("Sam Moore is running for mayor of Smallville in the upcoming local election", 8),
    ("Maria Lopez has a secret crush on Klaus Mueller", 7),
    ("stove is burning", 9),
    ("bathroom sink is leaking", 9),
    ("Thought: You are going to run against Sam in the upcoming election", 8),
])
def test_importance_lexicon(town, memory, rating):
    assert ask(RateImportance(persona=persona(town, "Klaus Mueller"), memories=[memory])).ratings == [rating]


def test_one_rating_per_memory_in_order_and_identical_text_rates_the_same(town):
    memories = ["bed is idle", PARTY, "stove is burning", "bed is idle", "Klaus Mueller is eating lunch at home"]
    ratings = ask(RateImportance(persona=persona(town, "Klaus Mueller"), memories=memories)).ratings
    assert len(ratings) == len(memories) and ratings[0] == ratings[3] == 1
    assert ratings[1] == 8 and ratings[2] == 9
    other = ask(RateImportance(persona=persona(town, "Maria Lopez"), memories=[PARTY])).ratings
    assert other == [8]


# --- planning -------------------------------------------------------------------------------------

@pytest.mark.parametrize("activity", [
    "wake up and complete the morning routine", "eat breakfast at home", "cook and eat dinner at home",
    "open Hobbs Cafe and serve customers", "serve drinks behind the bar at The Rose and Crown Pub",
    "attend classes at Oak Hill College", "teach a class at Oak Hill College", "work on her novel at home",
    "take a walk in Johnson Park", "go to the Valentine's Day party at Hobbs Cafe", "sleeping",
    "put out the fire on the stove", "prepare to run against Sam Moore in the upcoming election",
])
@pytest.mark.parametrize("minutes", [5, 12, 30, 37, 60, 61, 89, 120, 180])
def test_decompose_sums_exactly_in_5_to_15_minute_actions(town, activity, minutes):
    out = ask(Decompose(persona=persona(town, "Isabella Rodriguez"), activity=activity, start="08:00",
                        minutes=minutes, place="Hobbs Cafe: cafe"))
    assert sum(a.minutes for a in out.actions) == minutes
    assert all(5 <= a.minutes <= 15 for a in out.actions)


def test_decomposed_steps_keep_the_blocks_key_words(town):
    p = persona(town, "Isabella Rodriguez")
    cafe = ask(Decompose(persona=p, activity="serve customers at Hobbs Cafe", start="13:00", minutes=60, place="home"))
    assert all("Hobbs Cafe" in a.activity for a in cafe.actions)
    assert any("serve customers at Hobbs Cafe" == a.activity for a in cafe.actions)
    meal = ask(Decompose(persona=p, activity="cook and eat dinner at home", start="18:30", minutes=60, place="home"))
    assert all("dinner" in a.activity for a in meal.actions)
    morning = ask(Decompose(persona=p, activity="wake up and complete the morning routine", start="07:00",
                            minutes=60, place="home"))
    assert [a.activity for a in morning.actions][:3] == ["wake up and stretch", "use the bathroom", "brush teeth"]


def test_next_action_follows_the_routine_from_the_time_of_day(town):
    p, places = persona(town, "Klaus Mueller"), knows(town, "Klaus Mueller")

    def at(clock: str):
        return ask(NextAction(persona=p, time=f"{MONDAY}, {clock}", status="idle", recent=[], known_places=places))

    assert at("03:00").activity == "sleeping"
    assert "lunch" in at("12:10").activity
    assert "Oak Hill College" in at("14:00").activity
    assert at("23:50").activity == "sleeping"


def hourly(town, name: str, date: str, context: list[str], from_time: str = "", done: list[str] = ()):
    p, places = persona(town, name), knows(town, name)
    daily = ask(DailyPlan(persona=p, date=date, known_places=places))
    return daily, ask(HourlySchedule(persona=p, date=date, wake_up_hour=daily.wake_up_hour,
                                     daily_plan=daily.items, known_places=places, context=context,
                                     from_time=from_time, done=list(done))).blocks


def test_a_thought_becomes_an_hour_of_the_agents_own_intention(town):
    thought = "Thought: You are going to run against Sam in the upcoming election"
    _, before = hourly(town, "John Lin", MONDAY, [], from_time="10:20")
    _, after = hourly(town, "John Lin", MONDAY, [thought], from_time="10:20")
    assert after != before
    assert after[0].start == "10:20"
    block = next(b for b in after if "run against Sam Moore in the upcoming election" in b.activity)
    assert (block.start, block.minutes) == ("11:00", 60)  # the next full hour
    assert after[-1].activity == "sleeping"
    # a fresh day puts it in the morning work slot, in the broad strokes too
    p = persona(town, "John Lin")
    daily = ask(DailyPlan(persona=p, date=MONDAY, known_places=knows(town, "John Lin"), context=[thought]))
    assert any("run against Sam Moore" in item for item in daily.items) and 5 <= len(daily.items) <= 8


def test_a_reaction_comes_first_from_the_moment_of_the_reaction(town):
    _, blocks = hourly(town, "Klaus Mueller", MONDAY, ["Reaction: put out the fire on the stove"], from_time="18:40")
    first = blocks[0]
    assert (first.start, first.activity) == ("18:40", "put out the fire on the stove")
    assert 15 <= first.minutes <= 30
    assert all(b.start >= "18:40" for b in blocks) and blocks[-1].activity == "sleeping"


def test_a_dated_party_adds_a_block_at_its_time_on_its_day_only(town):
    _, tuesday = hourly(town, "Klaus Mueller", TUESDAY, [PARTY])
    party = [b for b in tuesday if "party" in b.activity]
    assert [(b.start, b.minutes) for b in party] == [("17:00", 120)]
    assert party[0].activity == "go to the Valentine's Day party at Hobbs Cafe"
    _, monday = hourly(town, "Klaus Mueller", MONDAY, [PARTY])
    assert not any("party" in b.activity for b in monday)
    _, host = hourly(town, "Isabella Rodriguez", TUESDAY, [PARTY])
    assert any(b.start == "17:00" and b.activity == "host the Valentine's Day party at Hobbs Cafe" for b in host)
    # heard in a conversation during the day: the re-plan from then on has it
    _, later = hourly(town, "Maria Lopez", TUESDAY, [PARTY], from_time="14:05")
    assert later[0].start == "14:05" and any(b.start == "17:00" and "party" in b.activity for b in later)


def test_the_routine_still_sleeps_eats_and_works(town):
    daily, blocks = hourly(town, "Isabella Rodriguez", MONDAY, [])
    acts = [b.activity for b in blocks]
    assert acts[-1] == "sleeping" and any("breakfast" in a for a in acts) and any("Hobbs Cafe" in a for a in acts)
    assert 5 <= len(daily.items) <= 8


# --- reflection and the summary description -----------------------------------------------------

def test_reflection_questions_are_three_about_the_most_frequent_subjects(town):
    p = persona(town, "Klaus Mueller")
    statements = ["Klaus Mueller talked with Maria Lopez about physics", "Maria Lopez is studying in the library",
                  "Klaus Mueller often spends time with Maria Lopez", PARTY, "bed is idle"]
    qs = ask(ReflectionQuestions(persona=p, statements=statements)).questions
    assert len(qs) == len(set(qs)) == 3
    assert qs[0] == "What is Klaus Mueller's relationship with Maria Lopez?"
    assert "Valentine's Day party" in qs[1]


def test_insights_cite_only_valid_statement_numbers(town):
    p = persona(town, "Klaus Mueller")
    statements = town.agent("Klaus Mueller").seed_memories + [
        PARTY, "Maria Lopez is having a coffee and chatting at Hobbs Cafe", "Klaus Mueller often spends time with Maria Lopez",
        "Sam Moore is running for mayor of Smallville in the upcoming local election"]
    for n in (1, 3, len(statements)):
        out = ask(ReflectionInsights(persona=p, questions=["What is Klaus Mueller most focused on lately?"],
                                     statements=statements[:n]))
        assert len(out.insights) == 5 and len({i.insight for i in out.insights}) == 5
        for ins in out.insights:
            assert ins.because and all(1 <= k <= n for k in ins.because)
    out = ask(ReflectionInsights(persona=p, questions=[], statements=statements))
    texts = {i.insight: i.because for i in out.insights}
    knows_party = f"Klaus Mueller knows that {PARTY}"
    assert knows_party in texts and statements.index(PARTY) + 1 in texts[knows_party]
    spends = [t for t in texts if "Maria Lopez" in t and "knows that" not in t]
    assert spends and all("Maria Lopez" in statements[k - 1] for k in texts[spends[0]])


def test_summary_description_has_three_short_sentences(town):
    p = persona(town, "Isabella Rodriguez")
    seeds = town.agent("Isabella Rodriguez").seed_memories
    out = ask(SummaryDescription(persona=p, core=seeds, occupation=seeds, feeling=seeds))
    assert out.core.startswith("Isabella Rodriguez is friendly, outgoing and hospitable")
    assert "Hobbs Cafe" in out.occupation
    assert "Valentine's Day party" in out.feeling
    assert all(s.endswith(".") and len(s) < 300 for s in (out.core, out.occupation, out.feeling))


# --- reacting -------------------------------------------------------------------------------------

def react(town, name="Klaus Mueller", **kw):
    base = dict(time=f"{MONDAY}, 12:10", status="have lunch at Hobbs Cafe", context=[])
    return ask(React(persona=persona(town, name), **{**base, **kw}))


def test_alarming_object_states_get_a_reaction_naming_the_object(town):
    out = react(town, observation="stove is burning", observed="Willow Cottage:kitchen:stove", observed_is_agent=False)
    assert (out.react, out.talk, out.reaction) == (True, False, "put out the fire on the stove")
    out = react(town, observation="bathroom sink is leaking", observed="X:bathroom:bathroom sink", observed_is_agent=False)
    assert out.react and out.reaction == "turn off the leaking bathroom sink"
    out = react(town, observation="stove is idle", observed="X:kitchen:stove", observed_is_agent=False)
    assert not out.react and out.reaction == ""


def test_no_talk_with_someone_asleep_or_already_talking(town):
    ctx = ["Klaus Mueller knows Maria Lopez from the dorm and enjoys talking with her", PARTY]
    for minute in range(60):
        t = f"{MONDAY}, 12:{minute:02d}"
        assert not react(town, time=t, observation="Maria Lopez is sleeping", observed="Maria Lopez",
                         observed_is_agent=True, context=ctx).react
        assert not react(town, time=t, observation="Maria Lopez is talking with Wolfgang Schulz",
                         observed="Maria Lopez", observed_is_agent=True, context=ctx).react
        assert not react(town, time=t, status="sleeping", observation="Maria Lopez is eating lunch at home",
                         observed="Maria Lopez", observed_is_agent=True, context=ctx).react


def test_acquaintances_with_news_talk_more_often_than_strangers(town):
    def talks(ctx):
        return sum(react(town, time=f"{MONDAY}, {h:02d}:{m:02d}", observation="Maria Lopez is eating lunch at home",
                         observed="Maria Lopez", observed_is_agent=True, context=ctx).talk
                   for h in range(8, 20) for m in range(0, 60, 5))

    friend = ["Klaus Mueller knows Maria Lopez from the dorm and enjoys talking with her", PARTY]
    out = react(town, observation="Maria Lopez is eating lunch at home", observed="Maria Lopez",
                observed_is_agent=True, context=friend)
    assert out.context_summary.startswith("Klaus Mueller knows Maria Lopez: Klaus Mueller knows Maria Lopez")
    assert talks(friend) > talks(["bed is idle"]) > 0


# --- dialogue: news passed on word for word -----------------------------------------------------------

def converse(town, a: str, b: str, memories: dict[str, list[str]], seed: int = 1) -> tuple[list[str], dict]:
    """Two agents alternate Utterance tasks until one ends; each then summarises."""
    transcript: list[str] = []
    speakers = (a, b)
    for turn in range(16):
        me, other = speakers[turn % 2], speakers[1 - turn % 2]
        out = ask(Utterance(persona=persona(town, me), listener=other, time=f"{MONDAY}, 10:30",
                            place="Hobbs Cafe: cafe", memories=memories[me], transcript=transcript), seed)
        transcript.append(f"{me}: {out.utterance}")
        if out.end:
            break
    else:
        pytest.fail("the conversation never ended")
    learned = {}
    for me, other in ((a, b), (b, a)):
        out = ask(SummarizeConversation(persona=persona(town, me), other=other, transcript=transcript), seed)
        assert out.summary.startswith(f"{me} talked with {other} about")
        learned[me] = out.learned
    return transcript, learned


def seeds(town, name: str) -> list[str]:
    return list(town.agent(name).seed_memories)


def test_utterance_passes_on_the_top_news_verbatim_and_the_listener_learns_it(town):
    mem = {n: seeds(town, n) for n in ("Isabella Rodriguez", "Klaus Mueller")}
    transcript, learned = converse(town, "Isabella Rodriguez", "Klaus Mueller", mem)
    assert transcript[0].startswith("Isabella Rodriguez: ") and "Klaus!" in transcript[0]  # a greeting
    assert f"{PARTY}." in transcript[0]  # the most important news, first, as a full sentence
    assert 2 <= len(transcript) <= 8
    assert PARTY in learned["Klaus Mueller"]
    assert PARTY not in learned["Isabella Rodriguez"]  # she said it herself
    assert any(line.startswith("Klaus Mueller: ") for line in transcript)
    assert "See you" in transcript[-1]  # a goodbye ends it


def test_news_travels_a_chain_unchanged(town):
    names = ("Isabella Rodriguez", "Klaus Mueller", "Maria Lopez")
    mem = {n: seeds(town, n) for n in names}
    mem["Maria Lopez"] = [m for m in mem["Maria Lopez"] if "Isabella" not in m]  # so Klaus's news is news to her
    _, learned = converse(town, names[0], names[1], mem)
    assert PARTY in learned[names[1]]
    mem[names[1]] = learned[names[1]] + mem[names[1]]  # what Klaus heard is now among his memories
    transcript, learned = converse(town, names[1], names[2], mem)
    assert any(f"{PARTY}." in line for line in transcript if line.startswith(names[1]))
    assert PARTY in learned[names[2]]


def test_dialogue_does_not_repeat_thoughts_secrets_or_what_is_about_the_listener(town):
    mem = {"Maria Lopez": seeds(town, "Maria Lopez") + ["Thought: You should ask Klaus Mueller to the party"],
           "Klaus Mueller": seeds(town, "Klaus Mueller")}
    transcript, _ = converse(town, "Maria Lopez", "Klaus Mueller", mem)
    text = " ".join(transcript)
    assert "crush" not in text and "Thought" not in text and "ask Klaus" not in text


def test_sights_and_reflections_are_not_news_but_facts_are(town):
    sights = ["Isabella Rodriguez is hosting the Valentine's Day party at Hobbs Cafe",
              "Mei Lin is walking to Hobbs Cafe: cafe: cafe customer seating to go to the Valentine's Day party",
              "Klaus Mueller cares about the Valentine's Day party",
              "Klaus Mueller talked with Maria Lopez about the Valentine's Day party (at Hobbs Cafe: cafe: ...)",
              "Klaus Mueller's plan for Tuesday February 14, 2023: go to the Valentine's Day party at 5:00 pm"]
    facts = ["Sam Moore is running for mayor of Smallville in the upcoming local election",
             f"Klaus Mueller knows that {PARTY}"]
    mem = {"Klaus Mueller": sights + facts, "Ayesha Khan": []}
    transcript, learned = converse(town, "Klaus Mueller", "Ayesha Khan", mem)
    assert learned["Ayesha Khan"] == [PARTY, facts[0]]  # the insight passes on the fact it rests on; dated first
    assert not any(s in " ".join(transcript) for s in sights)


def test_a_conversation_without_news_ends_politely(town):
    mem = {"John Lin": ["John Lin and Tom Moreno like to talk about local politics together"],
           "Tom Moreno": ["Tom Moreno is a colleague and friend of John Lin"]}
    transcript, learned = converse(town, "John Lin", "Tom Moreno", mem)
    assert 2 <= len(transcript) <= 4 and learned == {"John Lin": [], "Tom Moreno": []}


# --- interviews -----------------------------------------------------------------------------------

def interview(town, question: str, memories: list[str], name: str = "Klaus Mueller") -> str:
    return ask(Interview(persona=persona(town, name), interviewer="a news reporter", question=question,
                         memories=memories)).answer


def test_interview_says_it_does_not_know_kane_martinez(town):
    answer = interview(town, "Who is Kane Martinez?", seeds(town, "Klaus Mueller") + [PARTY])
    assert "don't know" in answer and "Kane Martinez" in answer


def test_interview_answers_in_character_from_relevant_memories_only(town):
    mems = seeds(town, "Klaus Mueller") + [PARTY]
    assert interview(town, "What's your occupation?", mems).startswith("I am a sociology student at Oak Hill College")
    assert PARTY in interview(town, "Was there a Valentine's day party?", mems)
    assert "don't know" in interview(town, "Was there a Valentine's day party?", seeds(town, "Klaus Mueller"))
    assert "Sam Moore" not in interview(town, "Who is running for the election?", mems)
    assert "Maria Lopez" in interview(town, "Who is Maria Lopez?", mems)
