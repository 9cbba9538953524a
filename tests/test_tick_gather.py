"""Issue 15: a tick gathers its model work by phase (reflections, reactions, conversations' lines
and summaries, next actions) and asks it at once; the answers are applied in agent order, so the
run is the same at any concurrency. Measured at a real HTTP server (benchmarks/promptserver.py)
whose answers depend only on the prompt."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from benchmarks.promptserver import PromptServer, max_in_flight
from helpers import SMALLVILLE, TINY, query
from smalltown.llm.backend import question_seed
from smalltown.cli.backends import BackendOptions, make_backend, make_fallback
from smalltown.sim.open import create
from smalltown.world.load import load_world

SETS = ["reflection_threshold=15"]  # reflections every hour or so: several agents due in one tick


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


def test_a_decision_to_talk_is_carried_out_only_when_both_are_still_free_and_its_call_says_why_not(tmp_path):
    """Every agent weighs its observation from the town as the phase began; in agent order, the
    first talk pulls its two in, and a later decision of either is not carried out (its call says so)."""
    from smalltown.llm.tasks import Answer, ReactOut
    from smalltown.scripted import ScriptedBackend

    class Talkative(ScriptedBackend):  # the stand-in, but everyone seen is talked to at once
        def answer(self, task, prompt=""):
            if task.name != "react":
                return super().answer(task, prompt)
            out = ReactOut(context_summary="", react=True, talk=True, opening="Good morning!")
            return Answer(output=out, raw=out.model_dump_json())

    world = load_world(SMALLVILLE)  # (households wake together: several talks at the first tick)
    sim = create(world, tmp_path / "talk.sqlite", Talkative(world.seed))
    try:
        sim.run_until(sim.now + timedelta(minutes=30))
    finally:
        sim.close()
    path = tmp_path / "talk.sqlite"
    skipped = query(path, "SELECT tick, agent, note FROM llm_calls WHERE task = 'react' AND note LIKE 'not carried out%'")
    talks = query(path, "SELECT tick, initiator, other FROM conversations")
    assert skipped and talks
    for tick, agent, note in skipped:
        busy, other = note.split("not carried out: ")[1].split(" was already talking with ")
        # the one already talking is the agent itself or whom it wanted to talk to, in a talk of that tick
        assert (tick, busy, other) in {(t, a, b) for t, a, b in talks} | {(t, b, a) for t, a, b in talks}
    # an agent pulled into an earlier agent's talk: its own decision waits
    assert any(note.startswith(f"not carried out: {agent} was") for _, agent, note in skipped)
    ticks = [t for t, _, _ in talks]
    assert len(ticks) > len(set(ticks))  # several talks begun in one tick, held together
    for tick in set(ticks):  # nobody is in two talks at once
        names = [n for t, a, b in talks if t == tick for n in (a, b)]
        assert len(names) == len(set(names))


def test_a_replan_at_midnight_whose_first_block_starts_later_still_covers_the_whole_day():
    """(Found by a gathered day with hash answers: a reaction at 00:00, whose new schedule began at
    08:15, left the night uncovered and the next action had no block.) Asleep until it, as a day's plan."""
    from smalltown.mind.plan import normalise_blocks

    blocks = normalise_blocks([(8 * 60 + 15, 60, "x", "Home")], 0, before=[], home="Home")
    assert blocks[0].start == 0 and blocks[0].activity == "sleeping" and blocks[0].end == 8 * 60 + 15
    for prev, nxt in zip(blocks, blocks[1:]):
        assert prev.end == nxt.start
    assert blocks[-1].end == 24 * 60


def test_a_reflection_rates_what_is_waiting_in_its_questions_answer_and_files_it_before_retrieving():
    """One call fewer on a reflection's chain: the records noted since the last rating are shown
    among the questions' statements, rated in the same answer, and filed before the retrievals."""
    from datetime import datetime

    from fakes import QueueBackend
    from smalltown.config import Settings
    from smalltown.llm.asker import Asker
    from smalltown.llm.embed import HashEmbedder
    from smalltown.mind import importance
    from smalltown.mind.agent import Mind
    from smalltown.mind.memory import MemoryStream
    from smalltown.scripted import ScriptedBackend

    world = load_world(TINY)
    spec = world.agents[0]
    q = QueueBackend(default=ScriptedBackend(1))
    calls = []
    counter = iter(range(1, 10**6))
    mind = Mind(spec, world, Asker(q, calls.append), MemoryStream(spec.name, HashEmbedder(), lambda: next(counter)),
                {}, Settings())
    now = datetime(2023, 2, 13, 9)
    mind.remember("observation", ["the kettle is boiling", "a letter came"], now, ratings=[2, 4])
    for text in ("a stranger is at the door", "the stranger asks for directions"):
        importance.note(mind, "observation", text, now)
    q.push("reflection_questions", {"questions": ["Who is at the door?", "What came?", "What boils?"],
                                    "ratings": [9, 6]})
    before = len(calls)
    mind.reflect(now)
    tasks = [c.task for c in calls[before:]]
    assert tasks[0] == "reflection_questions" and "rate_importance" not in tasks
    asked = q.of("reflection_questions")[-1]
    assert [r.text for r in asked.rate] == ["a stranger is at the door", "the stranger asks for directions"]
    assert "Newest memories (to rate):" in q.prompt("reflection_questions")
    filed = {m.description: m.importance for m in mind.memory}
    assert filed["a stranger is at the door"] == 9 and filed["the stranger asks for directions"] == 6
    assert not mind.state.pending and mind.state.since_reflection == 0
