"""Agents think at once against a server that answers many requests, and the run is the same as
when they think one after another."""

from __future__ import annotations

from datetime import timedelta

from fakes import FakeServer
from helpers import TINY
from smalltown.llm.openai_compat import OpenAIBackend
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world


class Remembering(OpenAIBackend):
    """Remembers the task behind each prompt, so the fake server can answer it like the scripted
    backend would (a deterministic "model" behind a real HTTP exchange)."""

    tasks: dict = {}

    def answer(self, task, prompt, **kw):  # (seed, agent: as the Asker passes them)
        self.tasks[prompt] = task
        return super().answer(task, prompt, **kw)


def run(tmp_path, name, concurrency, server):
    world = load_world(TINY)
    scripted = ScriptedBackend(world.seed)

    def respond(request):
        user = request["messages"][-1]["content"]
        prompt = next(p for p in Remembering.tasks if p in user)
        return scripted.answer(Remembering.tasks[prompt], prompt).raw

    server.respond = respond
    server.delay = 0.005  # long enough for requests to overlap
    backend = Remembering(server.url, timeout=10, retries=1, backoff=0.01, max_concurrency=concurrency)
    sim = create(world, tmp_path / name, backend)
    sim.run_until(sim.now + timedelta(hours=2))
    digest = sim.save.digest()
    calls = sim.save.count("llm_calls")
    sim.close()
    return digest, calls


def test_agents_think_at_once_and_the_run_is_the_same(tmp_path):
    server = FakeServer()
    try:
        one, calls_one = run(tmp_path, "one.sqlite", 1, server)
        assert server.max_in_flight == 1
        server.max_in_flight = 0
        many, calls_many = run(tmp_path, "many.sqlite", 4, server)
        assert 1 < server.max_in_flight <= 3  # three agents: at most three at once
    finally:
        server.close()
    assert calls_one == calls_many > 0
    assert one == many
