"""The public record (sim/public.py): at the end of every tick it holds each agent as it is then,
though only the agents whose row changed or who moved are read again; what reads it (the goal
question's view of others, awareness of an absent partner, memes) sees the last tick's end."""

from __future__ import annotations

from datetime import timedelta

from helpers import SMALLVILLE
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world


def test_the_record_is_every_agent_as_it_was_at_the_end_of_each_tick(tmp_path):
    world = load_world(SMALLVILLE)
    sim = create(world, tmp_path / "p.sqlite", ScriptedBackend(world.seed), sets=["architecture=culture"])
    try:
        end, checked, differed = sim.now + timedelta(minutes=90), 0, 0
        while sim.now < end:
            before = {a.name: sim.public.of(a) for a in sim.agents}
            sim.step()
            for a in sim.agents:
                assert sim.public._rows[a.name] == sim.public.of(a), (sim.tick, a.name)
                checked += 1
                differed += before[a.name] != sim.public.of(a)
        assert checked and differed > 10  # (agents did change: the record followed them)
        some = sim.agents[0]
        assert sim.public.other(some.name).activity == some.doing
        assert sim.public.sector("nobody") is None
    finally:
        sim.close()
