"""Issue 15: the mind thinks on a grid (`think_every_ticks` G). Reflection, reactions and
conversations and next actions run only on ticks that are multiples of G, so every agent's
questions of a stretch go out together; between them bodies move, perceive and remember, and a
reaction weighs what the agent saw since the last grid tick. A run stopped between grid ticks
resumes to the same save, and the run is the same at any concurrency."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.promptserver import PromptServer
from helpers import TINY, query, server_hour, stopped_and_resumed
from smalltown.config import Settings
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.store.save import open_reader
from smalltown.world.load import load_world

G = 6
HOURS = 16  # the tiny town's day: reactions, a conversation, reflections
SETS = [f"think_every_ticks={G}"]


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> tuple[Path, str]:
    """Sixteen game hours of the tiny town thinking every G ticks, in one go: the save and its digest."""
    path = tmp_path_factory.mktemp("grid") / "straight.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed), sets=SETS)
    try:
        sim.run_until(world.start + timedelta(hours=HOURS))
        return path, sim.save.digest()
    finally:
        sim.close()


def test_thinking_every_tick_is_the_default():
    assert Settings().think_every_ticks == 1


def test_the_model_is_asked_only_on_grid_ticks(straight):
    path, _ = straight
    rows = query(path, "SELECT tick, task FROM llm_calls")
    tasks = {t for _, t in rows}
    # every phase that asks: reflection, reactions, a conversation, next actions (and objects' states)
    assert {"reflection_questions", "react", "utterance", "summarize_conversation", "decompose",
            "object_state"} <= tasks
    assert [(tick, task) for tick, task in rows if tick % G] == []


def test_a_reaction_weighs_what_was_seen_since_the_last_grid_tick(straight):
    path, _ = straight
    reader = open_reader(path)
    try:
        seen_before_the_grid = 0
        reacts = reader.calls(task="react", limit=None)
        assert reacts
        for call in reacts:
            prompt = reader.call_detail(call.id)["prompt"]
            sightings = query(path, "SELECT tick, text FROM events WHERE kind = 'perceived' AND agent = ? "
                                    "AND tick > ? AND tick <= ?", call.agent, call.tick - G, call.tick)
            weighed = [tick for tick, text in sightings
                       if f'notices: "{text.split(" sees: ", 1)[1]}"' in prompt]
            assert weighed, (call.tick, call.agent)  # a sighting of this stretch, not an older one
            seen_before_the_grid += all(tick < call.tick for tick in weighed)
        assert seen_before_the_grid  # seen between grid ticks, weighed at the next
    finally:
        reader.close()


def test_a_run_stopped_between_grid_ticks_resumes_to_the_same_save(straight, tmp_path):
    _, want = straight
    start = load_world(TINY).start
    # stopped off the grid, after hour 4, with a sighting not yet weighed
    got = stopped_and_resumed(
        tmp_path / "stopped.sqlite", SETS,
        stop=lambda sim: sim.tick % G and sim.now >= start + timedelta(hours=4) and any(a.sighted for a in sim.agents),
        held=lambda sim: sim.tick % G and any(a.sighted for a in sim.agents), hours=HOURS)
    assert got == want


def test_a_grid_run_has_the_same_digest_at_concurrency_1_and_4(tmp_path):
    digests = []
    for c in (1, 4):
        with PromptServer(latency=0.005) as server:
            digests.append(server_hour(tmp_path / f"c{c}.sqlite", server.url, c, SETS))
        assert not [t for (t,) in query(tmp_path / f"c{c}.sqlite", "SELECT tick FROM llm_calls") if t % G]
    assert digests[0] == digests[1]
