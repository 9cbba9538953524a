"""A save stopped in its first game minutes (a kill, Ctrl-C, a TUI quit, a server failure: any
stop leaves the last committed tick) is one `save check` accepts and a resume continues to
where an unbroken run goes. (Issue 12: a conversation before the first plan stored an empty
action address, and a save stopped at +30 s was refused.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import SMALLVILLE, TINY

TICKS = 12  # the first two game minutes, tick by tick
THEN = 18  # where each resumed copy and the unbroken run are compared


@pytest.mark.parametrize("world_path", [TINY, SMALLVILLE], ids=["tiny", "smallville"])
def test_every_tick_of_the_first_minutes_is_a_save_that_checks_and_resumes(tmp_path: Path, world_path: Path):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.check import check_save, require_sound
    from smalltown.sim.open import create, resume
    from smalltown.store.copy import copy_save
    from smalltown.world.load import load_world

    world = load_world(world_path)
    sim = create(world, tmp_path / "run.sqlite", ScriptedBackend(world.seed))
    copies = []
    try:
        for tick in range(TICKS + 1):
            if tick:
                sim.step()
            sim.write_clock()  # (what a stop does: a tick that changed nothing left the clock behind)
            report = check_save(sim.save.path)
            assert report.ok, f"tick {tick} ({sim.now:%H:%M:%S}): {report.problems}"
            copies.append(copy_save(sim.save.path, tmp_path / f"at-{tick}.sqlite"))  # the run as a stop leaves it
        while sim.tick < THEN:
            sim.step()
        sim.write_clock()
        unbroken = sim.save.digest()
    finally:
        sim.close()
    for tick, copy in enumerate(copies):
        require_sound(copy)  # what `smalltown run SAVE` checks before it continues
        resumed = resume(copy, ScriptedBackend(world.seed))
        try:
            assert resumed.tick == tick
            while resumed.tick < THEN:
                resumed.step()
            resumed.write_clock()
            assert resumed.save.digest() == unbroken, f"resumed at tick {tick}, it went elsewhere"
        finally:
            resumed.close()


@pytest.mark.parametrize("world_path", [TINY, SMALLVILLE], ids=["tiny", "smallville"])
def test_nobody_talks_before_their_first_action(tmp_path: Path, world_path: Path):
    """The root of it: an agent with no action yet (before its first plan) neither starts a
    conversation nor is drawn into one, so no talking action is made without a place."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    world = load_world(world_path)
    sim = create(world, tmp_path / "s.sqlite", ScriptedBackend(world.seed))
    try:
        for _ in range(TICKS):
            before = {a.name: a.action for a in sim.agents}
            events = sim.step()
            for e in events:
                if e.kind == "said":
                    assert before[e.agent] is not None and before[e.data["to"]] is not None, e.text
            for a in sim.agents:
                assert a.action is None or a.action.address in world.objects, (a.name, a.action)
    finally:
        sim.close()
