"""The benchmarks' prompt server (benchmarks/promptserver.py) with a latency model: its slots bound
the requests served at once, a prompt's cached prefix is counted per agent (X-Session-ID), and
answer tokens are the answer's; in a subprocess of its own it serves the same answers, the
stand-in's included (the task sent typed in the request), and its log comes over HTTP."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from benchmarks.latency import GPU, tokens
from benchmarks.promptserver import PromptServer, ServerProcess, Telling, task_field, task_from
from realistic import ISABELLA, NOW, PLACES
from smalltown.llm.render import render
from smalltown.llm.tasks import NextAction
from smalltown.llm.wrappers import retrying
from smalltown.scripted import ScriptedBackend

TASK = NextAction(persona=ISABELLA, now=NOW, status="", recent=[], known_places=PLACES)
SLOW = replace(GPU, overhead=0.2, per_prompt_token=0.0, per_answer_token=0.0, slowdown=0.0, slots=2)


def test_the_slots_bound_the_requests_served_at_once():
    with PromptServer(model=SLOW) as server:
        backend = retrying(Telling(server.url, timeout=10, max_concurrency=6, seed=1))
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda i: backend.answer(TASK, render(TASK), seed=i), range(6)))
        # 2 slots, 0.2 s each: 6 requests arriving at once are served two at a time, in 3 waves at
        # least (a loaded machine only makes it slower: no upper bound is asserted)
        assert server.peak == 2
        assert max(r.end for r in server.requests) - min(r.start for r in server.requests) >= 3 * 0.2 - 0.02


def test_the_cached_prefix_is_counted_per_agent_and_the_answer_tokens_are_the_answers():
    with PromptServer(model=GPU, stand_in=ScriptedBackend(1)) as server:
        backend = retrying(Telling(server.url, timeout=10, seed=1))
        prompt = render(TASK)
        answers = [backend.answer(TASK, prompt, agent=who).raw for who in ("Ann", "Ann", "Bob")]
        first, again, other = server.requests
        assert [r.agent for r in server.requests] == ["Ann", "Ann", "Bob"]
        assert first.uncached == first.prompt_tokens > 100 and other.uncached == other.prompt_tokens
        assert again.uncached == 0  # the same agent's same prompt: all cached
        assert [r.answer_tokens for r in server.requests] == [tokens(a) for a in answers]


def test_a_task_sent_in_the_request_is_the_task_asked():
    assert task_from(task_field(TASK)) == TASK


def test_in_a_subprocess_the_stand_ins_answers_and_the_log_over_http():
    with PromptServer(latency=0, stand_in=ScriptedBackend(7)) as here, ServerProcess(latency=0, stand_in=7) as there:
        asked = [retrying(Telling(s.url, timeout=10, seed=7)).answer(TASK, render(TASK), agent="Ann").raw
                 for s in (here, there)]
        assert asked[0] == asked[1] == ScriptedBackend(7).answer(TASK).raw
        (mine,), (theirs,) = here.requests, there.requests
        assert (theirs.agent, theirs.digest, theirs.answer_tokens) == (mine.agent, mine.digest, mine.answer_tokens)
        there.kill()
        assert there.requests == [theirs]  # (the last log fetched, once it is gone)
