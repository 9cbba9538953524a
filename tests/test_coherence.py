"""Coherence checks (llm/coherence.py): an answer that keeps to its schema but contradicts itself
or the world is named for what is wrong with it; the scripted stand-in, which answers when a
model fails, gives none such in a run of the tiny town and of another world."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from helpers import GULLHAVEN, TINY
from smalltown.llm.coherence import incoherence, line_problem
from smalltown.llm.tasks import (SLEEPING, Block, ChoosePlace, ChoosePlaceOut, Decompose, DecomposeOut, HourlySchedule,
                                 HourlyScheduleOut, TranscriptLine, PersonaCard, PlanStep, React, ReactOut, Utterance, UtteranceOut)

NOW = datetime(2023, 2, 13, 22, 30)
ANN = PersonaCard(name="Ann Lee", age=30, traits="kind", description="a baker", home="Elm House")
BOB = "Bob Stone"


def react(observed_is_agent: bool = True) -> React:
    return React(persona=ANN, now=NOW, status="reading", place="Elm House: kitchen", observation=f"{BOB} is cooking",
                 observed=BOB if observed_is_agent else "Elm House:kitchen:stove", observed_is_agent=observed_is_agent,
                 context=[])


def reply(**kw) -> ReactOut:
    return ReactOut(**{"context_summary": "", "react": True, "talk": True, "reaction": "", "opening": "", **kw})


@pytest.mark.parametrize("out, reason", [
    (reply(react=False, talk=True, opening="Hi Bob, how was your day?"), "react is false but talk is true"),
    (reply(talk=False, reaction="yes"), "react is true without talking, but the reaction is 'yes'"),
    (reply(talk=False, reaction=""), "react is true without talking, but the reaction is ''"),
    (reply(opening=" "), "talk is true but the opening is empty"),
    (reply(opening="Bob Stone"), "the line is only a name"),
    (reply(opening="walks to the washroom to sleep"), "the line narrates an action in the third person"),
    (reply(opening="Ann smiles and waves"), "the line starts with the speaker's own name"),
    (reply(opening="*waves at Bob*"), "the line narrates an action"),
])
def test_a_react_answer_that_contradicts_itself_is_named_for_it(out, reason):
    assert incoherence(react(), out).startswith(reason)


def test_coherent_react_answers_pass():
    for out in (reply(opening="Hi Bob, how was your day?"), reply(opening="Sounds like you are cooking something good!"),
                reply(opening="Bob, is that soup?"), reply(react=False, talk=False),
                reply(talk=False, reaction="help Bob with the cooking")):
        assert incoherence(react(), out) == "", out
    assert incoherence(react(False), reply(opening="Hello there")) == "talk is true but Elm House:kitchen:stove is not a person"


def utterance(*said: str) -> Utterance:
    return Utterance(persona=ANN, now=NOW, listener=BOB, place="Elm House: kitchen", initiator=ANN.name,
                     reason="Bob is cooking", speaker_doing="reading", listener_doing="cooking",
                     transcript=[TranscriptLine(speaker=ANN.name if i % 2 == 0 else BOB, text=t) for i, t in enumerate(said)])


def test_a_line_of_a_conversation_must_be_said_and_new():
    u = utterance("Hi Bob, what are you cooking?", "Soup, for the two of us.")
    line = lambda text: incoherence(u, UtteranceOut(utterance=text, end=False))  # noqa: E731
    assert line("Hi Bob, what are you cooking?") == "the line repeats an earlier line of the conversation"
    assert line("hi bob what are you cooking") == "the line repeats an earlier line of the conversation"
    assert line("Bob.").startswith("the line is only a name")
    assert line("Ann Lee").startswith("the line is only a name")
    assert line("goes to the stove to taste it").startswith("the line narrates an action in the third person")
    assert line("Ann: that smells lovely").startswith("the line starts with the speaker's own name")
    assert line("That smells lovely, thank you!") == ""
    assert line("Looks like rain later, doesn't it?") == ""
    assert line("Thanks, Bob!") == ""
    assert line("Makes a sandwich at the kitchen table.").startswith("the line narrates an action in the third person")
    assert line("making lattes at the coffee machine") == \
        "the line narrates what someone is doing ('making lattes at the coffee machine')"
    assert line("morning! lovely day") == "" and line("Making soup? It smells lovely.") == ""
    assert line("Lots of love from all of us") == "" and line("That's lovely.") == "" and line("News travels fast here.") == ""
    assert line_problem("...", ANN.name, BOB, []) == "the line is empty"


def test_a_line_of_numbers_alone_says_nothing():
    """SmolLM2's lines on a 3-town world: a year, a range and a year, in place of something said."""
    u = utterance("Hi Bob, what are you cooking?")
    line = lambda text: incoherence(u, UtteranceOut(utterance=text, end=False))  # noqa: E731
    assert line("2023") == "the line has no words, only numbers ('2023')"
    assert line("5-10, 2023").startswith("the line has no words, only numbers")
    assert line("Two of them, at 5.") == "" and line("About 20 minutes, I think.") == ""


def test_a_line_that_runs_away_repeating_itself_is_not_said():
    """SmolLM2's own lines on a 3-town world: a sound drawn out, places listed again and again."""
    u = utterance("Hi Bob, what are you cooking?")
    line = lambda text: incoherence(u, UtteranceOut(utterance=text, end=False))  # noqa: E731
    assert line("Thee-e-e-e-e-e-e-e-e-e-e-e-e-e-e-e-e-e-e-e").startswith("the line runs away, repeating itself")
    assert line("Laura (Laura Larkford Park, Stonemere Park, Larkford Park, Sto) (Laura (Laura Larkford Park, "
                "Stonemere Park, Larkford Park, Sto) (Laura (Laura Larkford Park, Stonemere Park, Larkford Park, Sto)"
                ).startswith("the line runs away, repeating itself")
    # said things repeat a little, not runaway
    assert line("No no no no, that's not it.") == "" and line("Well...... I suppose so.") == ""
    assert line("We should go, really go, go now. Go!") == ""


def test_a_summary_sums_up_the_conversation():
    from smalltown.llm.tasks import ConversationOut, SummarizeConversation

    task = SummarizeConversation(persona=ANN, now=NOW, other=BOB, place="Elm House",
                                 lines=[TranscriptLine(speaker=ANN.name, text="Hi Bob"), TranscriptLine(speaker=BOB, text="Hi Ann")])
    summary = lambda text: incoherence(task, ConversationOut(summary=text))  # noqa: E731
    assert summary("Ann: ") == "the summary is only a name ('Ann:')"
    assert summary("Bob Stone: Hey, Ann! I'm off to the mill.") == \
        "the summary quotes a line of the conversation instead of summing it up"
    assert summary("Said hello to Bob Stone in the kitchen.") == ""


def schedule(*blocks: tuple[str, str]) -> tuple[HourlySchedule, HourlyScheduleOut]:
    task = HourlySchedule(persona=ANN, now=NOW, wake_up_hour=7, daily_plan=[PlanStep(time="07:00", activity="bake")],
                          known_places=["Elm House", "Mill Bakery"], sleep_places=["Elm House"])
    out = HourlyScheduleOut(blocks=[Block(start=f"{6 + i:02d}:00", minutes=60, activity=a, place=p)
                                    for i, (a, p) in enumerate(blocks)])
    return task, out


def test_sleep_is_where_the_world_lets_the_person_sleep():
    assert incoherence(*schedule(("bake bread", "Mill Bakery"), (SLEEPING, "Elm House"))) == ""
    assert incoherence(*schedule(("bake bread", "Mill Bakery"), (SLEEPING, "Mill Bakery"))) == \
        "'sleeping' at Mill Bakery, which is not where Ann Lee sleeps"
    objects = ["bedroom: Ann's bed", "bathroom: toilet"]
    task = Decompose(persona=ANN, now=NOW, activity="rest", start="22:30", minutes=30, place="Elm House",
                     objects=objects, activity_start="22:30", activity_minutes=30, beds=["bedroom: Ann's bed"])
    act = lambda what, at: DecomposeOut(actions=[{"activity": what, "minutes": 15, "object": at}])  # noqa: E731
    assert incoherence(task, act("fall asleep", "bedroom: Ann's bed")) == ""
    assert incoherence(task, act("wash up", "bathroom: toilet")) == ""
    assert incoherence(task, act("sleep", "bathroom: toilet")) == "'sleep' at bathroom: toilet, which is not a place to sleep"
    choose = ChoosePlace(persona=ANN, now=NOW, activity=SLEEPING, level="object", within="in Elm House: bathroom",
                         current="Elm House: bathroom", options=["toilet", "shower"], beds=[])
    assert incoherence(choose, ChoosePlaceOut(choice="toilet")) == "sleeping at 'toilet', which is not a place to sleep"
    choose = choose.model_copy(update={"within": "in Elm House: bedroom", "options": ["Ann's bed", "desk"],
                                       "beds": ["Ann's bed"]})
    assert incoherence(choose, ChoosePlaceOut(choice="Ann's bed")) == ""


@pytest.mark.parametrize("world, hours", [(TINY, 20), (GULLHAVEN, 3)])
def test_the_stand_in_gives_only_coherent_answers(tmp_path, world, hours):
    """Every question the stand-in answered in a run (a night's sleep included for the tiny town)
    passes the checks a model's answer must pass."""
    from fakes import Asking
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    w = load_world(world)
    backend = Asking(w.seed)
    sim = create(w, tmp_path / "s.sqlite", backend)
    try:
        sim.run_until(sim.now + timedelta(hours=hours))
    finally:
        sim.close()
    answers = [(task, backend.answer(task, prompt).output) for task, prompt in list(backend.asked)]
    kinds = {task.name for task, _ in answers}
    assert {"react", "utterance", "hourly_schedule", "decompose", "choose_place"} & kinds >= {"hourly_schedule", "decompose"}
    bad = [(task.name, task.persona.name, incoherence(task, out)) for task, out in answers if incoherence(task, out)]
    assert not bad, bad[:5]
    if world == TINY:  # the night: sleep chosen at a bed, with the beds given to the question
        assert any(t.name == "choose_place" and t.beds for t, _ in answers)


def test_a_world_says_where_each_agent_sleeps(tmp_path):
    """`beds` on an agent: the objects it may sleep at (checked to exist, reported at their line);
    without it, its home's beds."""
    from smalltown.world.errors import WorldError
    from smalltown.world.load import load_world

    text = TINY.read_text().replace('map = "../maps/tiny.toml"', f'map = "{(TINY.parent.parent / "maps" / "tiny.toml").as_posix()}"')
    first = text.index("\nhome = ") + 1
    default = load_world(TINY).agents[0]
    assert default.beds and all(b.startswith(default.home + ":") and "bed" in b for b in default.beds)
    bed = default.beds[0].replace(":", ": ")
    (tmp_path / "w.toml").write_text(text[:first] + f'beds = ["{bed}"]\n' + text[first:])
    assert load_world(tmp_path / "w.toml").agents[0].beds == (default.beds[0],)
    (tmp_path / "w.toml").write_text(text[:first] + 'beds = ["Nowhere: attic: hammock"]\n' + text[first:])
    with pytest.raises(WorldError) as e:
        load_world(tmp_path / "w.toml")
    line = text[:first].count("\n") + 1
    assert f"w.toml:{line}" in str(e.value) and "bed 'Nowhere: attic: hammock' is not an object" in str(e.value)
