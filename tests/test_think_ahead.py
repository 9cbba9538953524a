"""Issue 15: next actions decided ahead (`think_ahead`, with `think_every_ticks` G). On a grid tick,
an agent whose action ends before the next one has its next actions decided there (beside the
encounters of the others) and takes each up the moment the one before ends: nobody stands
between actions waiting for a grid tick, the model is still asked on grid ticks only, a run
stopped with next actions held resumes to the same save, and the run is the same at any
concurrency."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.promptserver import PromptServer
from helpers import GULLHAVEN, TINY, query, server_hour, stopped_and_resumed
from smalltown.config import Settings
from smalltown.state.agent import Action
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

G = 30  # five game minutes: plans end actions on whole minutes, so a finer grid hardly waits
HOURS = 16
AHEAD = [f"think_every_ticks={G}", "think_ahead=true"]


def _run(world_path: Path, path: Path, sets: list[str], hours: float = HOURS) -> tuple[str, int]:
    """A straight run: its digest, and the agent-ticks an awake agent stood with its action ended
    (after the first grid tick: before it nobody has an action yet)."""
    world = load_world(world_path)
    sim = create(world, path, ScriptedBackend(world.seed), sets=sets)
    try:
        stood = 0
        while sim.now < world.start + timedelta(hours=hours):
            sim.step()
            if sim.tick > G:
                stood += sum(a.action is not None and a.mind.due(sim.now) for a in sim.agents)
        return sim.save.digest(), stood
    finally:
        sim.close()


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> dict[str, tuple[Path, str, int]]:
    out = {}
    for name, sets in (("ahead", AHEAD), ("grid", AHEAD[:1])):
        path = tmp_path_factory.mktemp(name) / "run.sqlite"
        out[name] = (path, *_run(TINY, path, sets))
    return out


def test_thinking_ahead_is_off_by_default():
    assert Settings().think_ahead is False


def test_nobody_stands_between_actions_waiting_for_a_grid_tick(straight):
    _, _, stood_grid = straight["grid"]
    _, _, stood_ahead = straight["ahead"]
    assert stood_grid > 50  # on a grid alone, an action ending between grid ticks waits for the next
    assert stood_ahead == 0


def test_actions_are_taken_up_between_grid_ticks_but_asked_on_them(straight):
    path, _, _ = straight["ahead"]
    assert not [t for (t,) in query(path, "SELECT tick FROM llm_calls") if t % G]
    started = [t for (t,) in query(path, "SELECT tick FROM events WHERE kind = 'started'")]
    assert [t for t in started if t % G]  # begun the moment the one before ended
    tasks = {t for (t,) in query(path, "SELECT task FROM llm_calls")}
    assert {"decompose", "react", "utterance"} <= tasks  # the day still plans, reacts and talks


def test_a_second_world_stands_no_more_either(tmp_path):
    _, stood_grid = _run(GULLHAVEN, tmp_path / "grid.sqlite", AHEAD[:1], hours=8)
    _, stood_ahead = _run(GULLHAVEN, tmp_path / "ahead.sqlite", AHEAD, hours=8)
    assert stood_grid > 50 and stood_ahead == 0


def test_a_run_stopped_with_next_actions_held_resumes_to_the_same_save(straight, tmp_path):
    _, want, _ = straight["ahead"]
    start = load_world(TINY).start
    # stopped off the grid, after hour 4, with next actions decided and not yet taken up
    got = stopped_and_resumed(
        tmp_path / "stopped.sqlite", AHEAD,
        stop=lambda sim: sim.tick % G and sim.now >= start + timedelta(hours=4) and any(a.ahead for a in sim.agents),
        held=lambda sim: sim.tick % G and any(a.ahead for a in sim.agents), hours=HOURS)
    assert got == want


def test_next_actions_decided_for_an_action_since_changed_are_dropped(tmp_path):
    world = load_world(TINY)
    sim = create(world, tmp_path / "run.sqlite", ScriptedBackend(world.seed), sets=AHEAD)
    try:
        def off_grid(a) -> bool:  # its action ends between grid ticks
            return a.ahead is not None and (a.action.end - world.start).total_seconds() // world.step_seconds % G != 0

        while not any(off_grid(a) for a in sim.agents) or sim.tick % G == 0:
            sim.step()
        agent = next(a for a in sim.agents if off_grid(a))
        decided = agent.ahead[1][0]
        a = agent.action  # something else took the agent's time meanwhile: the same end, another thing
        agent.mind.state.action = Action("stretching", a.address, a.start - timedelta(minutes=1), a.end)
        while not agent.mind.due(sim.now):
            sim.step()
        assert agent.ahead is None and agent.action.activity == "stretching"  # not taken up: it followed another
        while sim.tick % G:
            sim.step()
        # decided afresh on the grid tick, when it was due there
        assert agent.action.activity != "stretching" and agent.action.start == sim.now > decided.start
    finally:
        sim.close()


def test_thinking_ahead_is_the_same_at_concurrency_1_and_4(tmp_path):
    digests, logs = [], []
    for c in (1, 4):
        with PromptServer(latency=0.005) as server:
            digests.append(server_hour(tmp_path / f"c{c}.sqlite", server.url, c, AHEAD))
        logs.append(query(tmp_path / f"c{c}.sqlite", "SELECT tick, agent, task, prompt FROM llm_calls ORDER BY id"))
    assert digests[0] == digests[1]
    assert logs[0] == logs[1]  # the same calls, logged in the same order
