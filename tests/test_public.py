"""The public record (sim/public.py): at the end of every tick it holds each agent as it is then,
though only the agents whose row changed or who moved are read again; what reads it (the goal
question's view of others, awareness of an absent partner, memes) sees the last tick's end."""

from __future__ import annotations

from datetime import timedelta

from helpers import ROOT, SMALLVILLE
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


def test_a_decomposition_lists_trade_partners_where_the_last_tick_left_them(tmp_path):
    """Economy.options reads the others of the sector asked about from the record: one who walked
    out of it during this tick (another group's agent, run before this one) is still listed, with
    what it held then, until the tick ends."""
    world = load_world(ROOT / "worlds" / "sid-tax.toml")
    sim = create(world, tmp_path / "e.sqlite", ScriptedBackend(world.seed), sets=["civics_scale=6"])
    try:
        sim.step()
        by_sector: dict[str, list] = {}
        for a in sim.agents:
            by_sector.setdefault(sim.public.sector(a.name), []).append(a)
        sector, here = next((s, v) for s, v in by_sector.items() if s and len(v) >= 2)
        me, other = here[0], here[1]

        def partners() -> set[str]:
            ops, _ = sim.economy.options(me, sim.agents, sector, sim.public)
            return {o.other for o in ops if o.op in ("give", "trade")}

        if not sim.economy.holdings(me.name):  # (give and trade need something held)
            sim.economy.transfer(None, "gather", "", me.name, world.economy.items[0], 1)
        assert other.name in partners()
        height, width = world.map.walkable.shape
        other.tile = next((x, y) for y in range(height) for x in range(width)
                          if world.map.is_walkable((x, y)) and world.arena_at((x, y)) is None)  # (moved this tick)
        assert other.name in partners()  # the record: where the last tick left it
        sim.public.refresh([other])  # (the tick's end)
        assert other.name not in partners()
    finally:
        sim.close()
