"""The cassette replays a recorded call log: by each question's key (a hash of its typed inputs,
since save schema 4), else by prompt (an older save). Each question is asked again exactly as it
was recorded, trimmed to the same lists' budgets and the same window, so an answer's citations
point at the same records; a miss is reported, or answered live."""

from __future__ import annotations

import sqlite3

import pytest

from fakes import RandomBackend
from handmade import HandSave, as_schema_3
from realistic import rate, realistic_tasks
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import DEFAULT_CONTEXT as CONTEXT
from smalltown.llm.backend import CallRecord, Capabilities, estimate_prompt, task_key
from smalltown.llm.cassette import CassetteBackend, CassetteMiss
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.tasks import Answer, Task
from smalltown.scripted import ScriptedBackend


class Window(RandomBackend):
    """A random valid answerer with a window of `context` tokens, counting a token per 4 characters."""

    def __init__(self, context: int, seed: int = 0):
        super().__init__(seed)
        self.name = self.model = "window"
        self.context = context
        self.asked: list[tuple[Task, str]] = []

    @property
    def can(self) -> Capabilities:
        return Capabilities(context=self.context, count=self.count)

    def count(self, prompt: str) -> int:
        return len(prompt) // 4

    def answer(self, task: Task, prompt: str) -> Answer:
        self.asked.append((task, prompt))
        return super().answer(task, prompt)


def record(path, backend, tasks: list[Task]) -> tuple[list[CallRecord], list]:
    """Ask the tasks through an Asker on `backend`, logging the calls in a save at tick 1."""
    hand = HandSave(path)
    records: list[CallRecord] = []
    answers = [Asker(backend, records.append).ask(t.persona.name, t) for t in tasks]
    hand.at(1, calls=[(r.agent, r.task, r.prompt, r.raw_answer, r.parsed_answer, r.prompt_tokens,
                       r.completion_tokens, r.cached_tokens, r.ms, r.backend, r.model, r.note, r.key, r.fallback)
                      for r in records])
    hand.close()
    return records, answers


def replay(cassette: CassetteBackend, tasks: list[Task]) -> tuple[list[CallRecord], list]:
    records: list[CallRecord] = []
    asker = Asker(cassette, records.append, fallback=ScriptedBackend(0))
    return records, [asker.ask(t.persona.name, t) for t in tasks]


@pytest.fixture
def tasks() -> list[Task]:
    q = realistic_tasks()
    return [q["utterance"], rate(4), q["interview"], q["choose_place"], rate(4)]


def test_a_question_trimmed_when_recorded_is_asked_again_as_it_was(tmp_path, tasks):
    utterance = tasks[0]
    small = max(estimate_prompt(render(utterance.model_copy(update={"memories": []}))) + max_answer_tokens(utterance),
                estimate_prompt(render(tasks[2])) + max_answer_tokens(tasks[2])) + 20
    recorded, answers = record(tmp_path / "rec.sqlite", Window(small), tasks)
    assert "dropped to fit" in recorded[0].note  # the recording backend saw a shorter question...
    assert recorded[0].key == task_key(utterance)  # ...logged under the question's own key
    cassette = CassetteBackend(tmp_path / "rec.sqlite", context=small)  # the recording's window (--ctx)
    assert cassette.keyed and cassette.recorded == 5 and cassette.context == small
    replayed, again = replay(cassette, tasks)
    assert again == answers and cassette.replayed == 5 and cassette.missed == 0
    assert [r.key for r in replayed] == [r.key for r in recorded] and not any(r.fallback for r in replayed)
    assert [r.prompt for r in replayed] == [r.prompt for r in recorded]  # asked exactly as recorded


def test_a_question_cut_to_its_lists_budgets_when_recorded_replays_by_its_key(tmp_path, tasks):
    many = tasks[0].model_copy(update={"memories": [r.model_copy(update={"id": i, "score": i / 100})
                                                    for i, r in enumerate(tasks[0].memories * 12)]})
    recorded, answers = record(tmp_path / "rec.sqlite", Window(CONTEXT), [many])
    assert "dropped to fit" in recorded[0].note and recorded[0].key == task_key(many)  # cut to its budget
    cassette = CassetteBackend(tmp_path / "rec.sqlite")
    replayed, again = replay(cassette, [many])
    assert again == answers and cassette.replayed == 1 and replayed[0].prompt == recorded[0].prompt


def test_a_save_without_keys_replays_by_prompt(tmp_path, tasks):
    _, answers = record(tmp_path / "rec.sqlite", Window(CONTEXT), tasks)
    as_schema_3(tmp_path / "rec.sqlite")
    cassette = CassetteBackend(tmp_path / "rec.sqlite")
    assert replay(cassette, tasks)[1] == answers and cassette.replayed == 5  # found by prompt


def test_calls_logged_without_a_key_are_found_by_prompt(tmp_path, tasks):
    _, answers = record(tmp_path / "rec.sqlite", Window(CONTEXT), tasks)
    conn = sqlite3.connect(tmp_path / "rec.sqlite")
    with conn:
        conn.execute("UPDATE llm_calls SET key = NULL WHERE task = 'rate_importance'")  # as a migration leaves them
    conn.close()
    cassette = CassetteBackend(tmp_path / "rec.sqlite")
    assert replay(cassette, tasks)[1] == answers and cassette.replayed == 5


def test_a_recorded_answer_is_checked_against_the_output_model_only(tmp_path):
    hand = HandSave(tmp_path / "rec.sqlite")
    task = rate(4)
    hand.at(1, calls=[("Isabella Rodriguez", task.name, render(task), "", '{"ratings": [5, 5]}', 1, 1, 0, 1.0,
                       "llama", "m", "", task_key(task), "")])
    hand.close()
    # two ratings for four memories breaks the question, not the model: replayed as recorded
    assert CassetteBackend(tmp_path / "rec.sqlite").answer(task, render(task)).output.ratings == [5, 5]


def test_a_miss_is_reported_or_answered_live(tmp_path, tasks):
    record(tmp_path / "rec.sqlite", Window(CONTEXT), tasks[:2])
    other = realistic_tasks()["react"]
    with pytest.raises(CassetteMiss, match="no answer for a 'react' question"):
        CassetteBackend(tmp_path / "rec.sqlite").answer(other, render(other))
    live = Window(CONTEXT)
    cassette = CassetteBackend(tmp_path / "rec.sqlite", fallthrough=live)
    records, _ = replay(cassette, [other])
    assert live.asked == [(other, render(other))] and cassette.missed == 1 and not records[0].fallback
    # a live window too small for the question whole: "too long", answered by the Asker's fallback
    narrow = Window(len(render(other)) // 4)
    records, _ = replay(CassetteBackend(tmp_path / "rec.sqlite", fallthrough=narrow), [other])
    assert narrow.asked == [] and records[0].fallback == "too long"
