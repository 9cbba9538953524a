"""Issue 15: every question carries a seed of its own, derived from (run seed, agent, task, tick),
and a run against a server whose answers depend only on the prompt is the same at any concurrency.
The server is benchmarks/promptserver.py: real HTTP, answers drawn from a hash of the prompt."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

from benchmarks.promptserver import PromptServer, longest_chain
from helpers import ROOT, TINY, query
from realistic import ISABELLA, NOW, PLACES
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import question_seed
from smalltown.llm.tasks import NextAction
from smalltown.scripted import ScriptedBackend
from smalltown.cli.backends import BackendOptions, make_backend, make_fallback
from smalltown.sim.open import create
from smalltown.world.load import load_world


def run_hour(tmp_path: Path, name: str, server: PromptServer, concurrency: int) -> tuple[str, Path]:
    """A game hour of the tiny town against `server`, asked up to `concurrency` at once."""
    world = load_world(TINY)
    opts = BackendOptions(base_url=server.url, concurrency=concurrency, timeout=30, retries=0)
    backend = make_backend("openai", world.seed, opts)
    sim = create(world, tmp_path / name, backend, fallback=make_fallback("openai", world.seed, opts))
    try:
        sim.run_until(sim.now + timedelta(hours=1))
        return sim.save.digest(), tmp_path / name
    finally:
        sim.close()


def test_question_seed_is_a_stable_hash_of_run_agent_task_and_tick():
    seed = question_seed(7, "Ann", "react", 12)
    assert seed == question_seed(7, "Ann", "react", 12) and 0 <= seed < 2**31
    others = {question_seed(7, "Bob", "react", 12), question_seed(7, "Ann", "decompose", 12),
              question_seed(7, "Ann", "react", 13), question_seed(8, "Ann", "react", 12)}
    assert seed not in others and len(others) == 4
    # not Python's hash(), which another process salts differently
    code = "from smalltown.llm.backend import question_seed; print(question_seed(7, 'Ann', 'react', 12))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                           env={"PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)})
    assert int(other.stdout) == seed


def test_every_request_carries_the_seed_of_its_agent_task_and_tick(tmp_path):
    world = load_world(TINY)
    with PromptServer(latency=0.005) as server:
        run_hour(tmp_path, "seeded.sqlite", server, 4)
        sent = Counter(r.seed for r in server.requests)
    rows = query(tmp_path / "seeded.sqlite", "SELECT agent, task, tick FROM llm_calls WHERE backend = 'openai'")
    assert rows and None not in sent
    assert sent == Counter(question_seed(world.seed, *row) for row in rows)  # one request per call, retries=0
    # two agents asking the same kind of question at the same tick sample with different seeds
    by_question = Counter((task, tick) for _, task, tick in rows)
    shared = [q for q, n in by_question.items() if n > 1]
    assert shared
    for task, tick in shared:
        agents = {a for a, t, k in rows if (t, k) == (task, tick)}
        assert len({question_seed(world.seed, a, task, tick) for a in agents}) == len(agents)


def test_the_same_question_gets_the_same_seed_in_another_run_at_another_concurrency(tmp_path):
    seeds = []
    for c in (1, 8):
        with PromptServer(latency=0.005) as server:
            run_hour(tmp_path, f"run{c}.sqlite", server, c)
            seeds.append({(r.digest, r.seed) for r in server.requests})
    assert seeds[0] == seeds[1] and len(seeds[0]) > 10


def test_a_game_hour_has_the_same_digest_at_concurrency_1_and_8(tmp_path):
    digests, chains, most = [], [], []
    for c in (1, 8):
        with PromptServer(latency=0.01) as server:
            digests.append(run_hour(tmp_path, f"c{c}.sqlite", server, c)[0])
            chains.append(longest_chain(server.requests))
            most.append(len(server.requests))
    assert digests[0] == digests[1]
    assert most[0] == most[1] > 10
    assert chains[1] < chains[0] == most[0]  # one at a time, every call waits; at 8, some ran together


def test_the_llama_backend_samples_with_its_questions_seed():
    """The llama backend declares its run seed: the Asker derives each question's seed from it,
    the agent, the task and the tick, and llama.cpp samples with that seed (plus the attempt)."""
    import threading

    from smalltown.llm.llama import LlamaBackend

    class Unloaded(LlamaBackend):  # no model: what reaches llama.cpp's sampler is recorded instead
        def __init__(self):
            self.seed, self.context, self.n_ctx, self.retries, self.sampled = 99, 4096, 4096, 0, []
            self.model = "unloaded.gguf"
            self._lock = threading.RLock()

        def prompt_tokens(self, prompt):
            return [1, 2, 3], []

        def _complete(self, task, tokens, stop, max_tokens, seed, used):
            self.sampled.append(seed)
            return ScriptedBackend(0).answer(task).raw, "stop"

    task = NextAction(persona=ISABELLA, now=NOW, status="", recent=[], known_places=PLACES)
    backend, tick = Unloaded(), [41]
    asker = Asker(backend, lambda rec: None, tick=lambda: tick[0])
    asker.ask("Ann", task)
    tick[0] = 42
    asker.ask("Ann", task)
    asker.ask("Bob", task)
    assert backend.sampled == [question_seed(99, "Ann", "next_action", 41), question_seed(99, "Ann", "next_action", 42),
                               question_seed(99, "Bob", "next_action", 42)]
    assert backend.answer(task, "p", attempt=1, seed=5) and backend.sampled[-1] == 6  # a retry samples anew


def test_an_openai_retry_sends_the_next_seed_and_no_seed_is_sent_without_one():
    from smalltown.llm.openai_compat import OpenAIBackend

    task = NextAction(persona=ISABELLA, now=NOW, status="", recent=[], known_places=PLACES)
    with PromptServer(latency=0) as server:
        OpenAIBackend(server.url, timeout=10, seed=3).answer(task, render(task), seed=5, attempt=1)
        OpenAIBackend(server.url, timeout=10).answer(task, render(task))
        assert [r.seed for r in server.requests] == [6, None]
