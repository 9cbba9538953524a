"""Answers that are the agent's own (llm/own.py, llm/examples.py): examples show shapes a model
cannot adopt; an answer copying the example, or another agent's answer from an earlier tick, or
incoherent, is retried with another seed, then answered by the stand-in and counted by reason."""

from __future__ import annotations

from datetime import datetime, timedelta

from smalltown.llm.asker import Asker
from smalltown.llm.coherence import incoherence
from smalltown.llm.backend import Capabilities, RetryPolicy
from smalltown.llm.examples import EXAMPLES, example
from smalltown.llm.own import PLACEHOLDER, RECENT_TICKS, Recent, copied_example, free_text
from smalltown.llm.tasks import (Answer, Interview, InterviewOut, PersonaCard, React, ReactOut, SummarizeConversation,
                                 ConversationOut, TranscriptLine)
from smalltown.scripted import ScriptedBackend
from smalltown.store.calls import describe_reasons

NOW = datetime(2023, 2, 13, 9, 0)
ANN = PersonaCard(name="Ann Lee", age=30, traits="kind", description="a baker", home="Elm House")
BOB = PersonaCard(name="Bob Stone", age=40, traits="quiet", description="a smith", home="Oak House")


def test_examples_hold_no_text_a_model_could_take_for_its_own():
    """Every text an example shows is a placeholder ("<...>"), and every number a model could
    adopt is shown as its range: nothing of another life to copy."""
    for name, ex in EXAMPLES.items():
        for text in free_text(ex):
            assert PLACEHOLDER.search(text) or text.startswith("\u0000"), (name, text)  # (a bare slot)
        shown = example(name)
        assert shown.startswith("{") and "\u0000" not in shown, name
    assert example("rate_importance") == '{"ratings": [<1-10>, ...]}'


def summary(persona: PersonaCard, text: str, fact: str = "") -> tuple[SummarizeConversation, ConversationOut]:
    task = SummarizeConversation(persona=persona, now=NOW, other="x", place="Elm House",
                                 lines=[TranscriptLine(speaker="x", text="hello")])
    return task, ConversationOut(summary=text, learned=[{"fact": fact, "importance": 3}] if fact else [])


def test_an_answer_copying_the_example_is_caught():
    assert copied_example(*summary(ANN, "<the conversation in one sentence, naming the other>")) == \
        "copies the example's placeholder '<the conversation in one sentence, naming the other>'"
    assert copied_example(*summary(ANN, "Talked with Bob", "<something new the other said>")).startswith("copies")
    assert copied_example(*summary(ANN, "Talked with Bob about the mill's new wheel.")) == ""


def test_a_placeholder_left_open_is_caught_but_a_less_than_is_not():
    """A small model stops inside a placeholder ("<What Ann remembers..." with no ">"): the same
    copy. A "<" that opens no word ("I <3 it", "x < 5") is the town's own text."""
    assert copied_example(*summary(ANN, "<What Ann Lee remembers of Bob")) == \
        "copies the example's placeholder '<What Ann Lee remembers of Bob'"
    assert copied_example(*summary(ANN, "Talked with Bob. <the conversation in one")).startswith("copies")
    for own in ("I <3 the new bakery, Bob said so too", "Fewer than <5 people came", "x < y at the mill"):
        assert copied_example(*summary(ANN, own)) == "", own


def test_another_agents_answer_counts_only_from_an_earlier_tick():
    r = Recent()
    r.add("react", "Bob Stone", "the same stock answer again and again", 5)
    assert r.copied("react", "Ann Lee", "the same stock answer again and again", 5) == ""  # the tick in flight
    assert r.copied("react", "Ann Lee", "the same stock answer again and again", 6) == "Bob Stone"
    assert r.copied("react", "Bob Stone", "the same stock answer again and again", 6) == ""  # one's own
    assert r.copied("utterance", "Ann Lee", "the same stock answer again and again", 6) == ""  # another task
    for t in range(6, 6 + RECENT_TICKS + 1):  # bounded: the last RECENT_TICKS ticks answered
        r.add("react", "Cy Park", f"something else at {t}", t)
    assert r.copied("react", "Ann Lee", "the same stock answer again and again", 100) == ""
    assert sum(len(v) for v in r._by["react"].values()) == RECENT_TICKS + 1


class Model:
    """A model's backend (it declares seeded retries) answering from a list, one a call."""

    name = model = "fake-model"
    can = Capabilities(retry=RetryPolicy(1, seeded=True, count_attempts=True))

    def __init__(self, *outputs):
        self.outputs = list(outputs)
        self.attempts: list[int] = []

    def answer(self, task, prompt, attempt=0, **kw):
        self.attempts.append(attempt)
        out = task.output.model_validate(self.outputs.pop(0))
        return Answer(output=out, raw=out.model_dump_json(), prompt_tokens=10, completion_tokens=5)


def ask(backend, task, agent: str, tick: int = 0):
    records = []
    asker = Asker(backend, records.append, fallback=ScriptedBackend(1), tick=lambda: tick)
    asker.ask(agent, task)
    return records[-1]


def react(p: PersonaCard) -> React:
    return React(persona=p, now=NOW, status="reading", place="Elm House: kitchen", observation="Cy is here",
                 observed="Cy Park", observed_is_agent=True, context=[])


def test_a_copied_answer_is_retried_with_another_seed_then_answered_by_the_stand_in():
    copy = {"context_summary": "<what the person knows that bears on this>", "react": False, "talk": False}
    own = {"context_summary": "Cy is an old friend.", "react": False, "talk": False}
    model = Model(copy, own)
    rec = ask(model, react(ANN), ANN.name)
    assert model.attempts == [0, 1] and rec.fallback == "" and "old friend" in rec.parsed_answer
    assert rec.prompt_tokens == 20  # both attempts were paid for
    model = Model(copy, copy)
    rec = ask(model, react(ANN), ANN.name)
    assert rec.fallback == "copied" and "copies the example's placeholder" in rec.note and rec.backend == "fake-model"
    assert "fallback to scripted" in rec.note and rec.raw_answer == ReactOut(**copy).model_dump_json()
    assert describe_reasons({rec.fallback: 1}) == "copied 1"


def test_an_incoherent_answer_is_retried_then_answered_by_the_stand_in():
    bad = {"context_summary": "", "react": False, "talk": True, "opening": "Hi Cy!"}
    rec = ask(Model(bad, bad), react(ANN), ANN.name)
    assert rec.fallback == "incoherent" and "react is false but talk is true" in rec.note
    assert incoherence(react(ANN), ReactOut.model_validate_json(rec.parsed_answer)) == ""  # the stand-in's is coherent


def test_the_same_answer_as_another_agent_at_an_earlier_tick_is_copied():
    stock = {"context_summary": "They know each other from the town square market.", "react": False, "talk": False}
    model = Model(stock, stock, stock, stock)
    records = []
    asker = Asker(model, records.append, fallback=ScriptedBackend(1), tick=lambda: tick)
    tick = 3
    asker.ask(BOB.name, react(BOB))
    asker.ask(ANN.name, react(ANN))  # the same tick: not compared (concurrency would decide)
    assert [r.fallback for r in records] == ["", ""]
    tick = 4
    asker.ask(ANN.name, react(ANN))
    assert records[-1].fallback == "copied" and "repeats Bob Stone's answer" in records[-1].note


def test_naturally_alike_answers_are_not_compared():
    interview = Interview(persona=ANN, now=NOW, interviewer="a reporter", question="How are you?", doing="reading")
    same = {"answer": "I am well, thank you for asking me today."}
    records = []
    asker = Asker(Model(same, same), records.append, fallback=ScriptedBackend(1), tick=lambda: tick)
    tick = 1
    asker.ask(BOB.name, interview.model_copy(update={"persona": BOB}))
    tick = 2
    asker.ask(ANN.name, interview)
    assert [r.fallback for r in records] == ["", ""]
    assert InterviewOut.model_validate_json(records[-1].parsed_answer).answer == same["answer"]


def test_the_stand_in_is_not_checked_as_a_model():
    """The stand-in declares no retries: its answers go through as they are (it answers what a
    model could not, and its own answers are checked by tests/test_coherence.py)."""
    rec = ask(ScriptedBackend(1), react(ANN), ANN.name)
    assert rec.fallback == "" and rec.backend == "scripted"


def test_a_replan_after_a_reaction_says_what_was_noticed():
    """The re-plan a reaction causes shows what the agent noticed (not "(none)"), then the reaction."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from fakes import Asking
    from helpers import TINY
    from smalltown.config import Settings
    from smalltown.llm.embed import HashEmbedder
    from smalltown.mind.agent import Mind
    from smalltown.mind.memory import MemoryStream
    from smalltown.mind.react import Reaction, act_on
    from smalltown.world.load import load_world

    world = load_world(TINY)
    backend = Asking(1)
    spec = world.agents[0]
    counter = iter(range(1, 10**9))
    mind = Mind(spec, world, Asker(backend, lambda r: None), MemoryStream(spec.name, HashEmbedder(), lambda: next(counter)),
                {}, Settings())
    now = datetime(2023, 2, 13, 9, 0)
    mind.next_action(now, f"{spec.home}:kitchen")
    answer = ReactOut(context_summary="", react=True, talk=False, reaction="go and see what made the noise")
    assert act_on(mind, Reaction("somewhere", False, answer, "the stove is smoking"), now + timedelta(minutes=5))
    task, prompt = backend.asked[-1] if backend.asked[-1][0].name == "hourly_schedule" else \
        [x for x in backend.asked if x[0].name == "hourly_schedule"][-1]
    assert task.from_time == "09:05"
    happened = prompt.split("What just happened:\n", 1)[1]
    assert happened.startswith(f'- (09:05) "{spec.name} noticed: the stove is smoking"')
    assert f'{spec.name} first reacts: "go and see what made the noise"' in happened
    assert task.sleep_places == [spec.home]


class CopyingModel(ScriptedBackend):
    """A model (it declares seeded retries) that answers like the stand-in, but copies the
    example's placeholder in a daily plan: what `save info` must count."""

    name, model = "copying", "copying-model"
    can = Capabilities(retry=RetryPolicy(1, seeded=True))

    def answer(self, task, prompt="", attempt=0, **kw):
        ans = super().answer(task, prompt)
        if task.name == "daily_plan":  # its first item copies the example's
            data = ans.output.model_dump()
            data["items"][0]["activity"] = "<what the person does first, in a few words>"
            out = task.output.model_validate(data)
            return Answer(output=out, raw=out.model_dump_json())
        return ans


def test_copied_answers_are_counted_by_task_and_reason_in_save_info(tmp_path):
    from helpers import TINY, cli
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = create(world, tmp_path / "c.sqlite", CopyingModel(world.seed), fallback=ScriptedBackend(world.seed))
    sim.run_until(sim.now + timedelta(seconds=world.step_seconds))  # the first tick: each agent plans its day
    sim.close()
    out = cli("save", "info", tmp_path / "c.sqlite", check=True).stdout
    n = len(world.agents)
    assert f"fallbacks  copied {n}\n" in out and f"daily_plan  {n} of {n} calls: copied {n}\n" in out, out
