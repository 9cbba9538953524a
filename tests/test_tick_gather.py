"""Issue 15: a tick gathers its model work by phase (reflections, reactions, conversations' lines
and summaries, next actions) and asks it at once; the answers are applied in agent order, so the
run is the same at any concurrency. Measured at a real HTTP server (benchmarks/promptserver.py)
whose answers depend only on the prompt."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from benchmarks.promptserver import PromptServer, max_in_flight
from helpers import TINY, query
from smalltown.llm.backend import question_seed
from smalltown.sim.backends import BackendOptions, make_backend, make_fallback
from smalltown.sim.open import create
from smalltown.world.load import load_world

SETS = ["reflection_threshold=30"]  # reflections every hour or so: several agents due in one tick


def run(tmp_path: Path, concurrency: int) -> tuple[str, Counter, int, list]:
    """Three game hours of the tiny town at `concurrency`: (digest, the pairs of tasks that
    different agents had in flight together at one tick, the most requests at once, the call log)."""
    world = load_world(TINY)
    path = tmp_path / f"c{concurrency}.sqlite"
    with PromptServer(latency=0.01) as server:
        opts = BackendOptions(base_url=server.url, concurrency=concurrency, timeout=30, retries=0)
        sim = create(world, path, make_backend("openai", world.seed, opts), sets=SETS,
                     fallback=make_fallback("openai", world.seed, opts))
        try:
            sim.run_until(sim.now + timedelta(hours=3))
            digest = sim.save.digest()
        finally:
            sim.close()
        requests = list(server.requests)
    rows = query(path, "SELECT agent, task, tick FROM llm_calls WHERE backend = 'openai'")
    asked = {question_seed(world.seed, *row): row for row in rows}  # each request's (agent, task, tick)
    together: Counter = Counter()
    for i, r in enumerate(requests):
        for q in requests[i + 1:]:
            x, y = asked.get(r.seed), asked.get(q.seed)
            if r.start < q.end and q.start < r.end and x and y and x[0] != y[0] and x[2] == y[2]:
                together[tuple(sorted((x[1], y[1])))] += 1
    log = query(path, "SELECT tick, agent, task, note FROM llm_calls ORDER BY id")
    return digest, together, max_in_flight(requests), log


def test_a_tick_asks_every_agents_reactions_reflections_and_talk_at_once_and_the_run_is_the_same(tmp_path):
    one, eight = run(tmp_path, 1), run(tmp_path, 8)
    assert one[0] == eight[0]  # the same digest
    assert one[3] == eight[3]  # the same calls, logged in the same order (phase, then agent)
    assert one[2] == 1 and not one[1]
    together = eight[1]
    # different agents' questions of one tick were at the server at the same time
    assert together[("react", "react")] > 0
    assert together[("reflection_questions", "reflection_questions")] > 0
    assert together[("summarize_conversation", "summarize_conversation")] > 0  # both sides of a talk
