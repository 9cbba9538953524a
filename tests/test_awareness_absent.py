"""Action awareness (issue 16): "the person had left". An agent keeping a promise to meet someone,
at the promised place and time, with the other not there, notices it (its own observation, an
"unexpected" event) and re-enters the controller (its next action decided at once).
Without action awareness nothing is noticed. Gullhaven, a scripted day, promises on (the
broadcast off, so some promises name meetings the other never planned)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from helpers import GULLHAVEN, query
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world


def _day(path: Path, aware: bool) -> list[tuple[str, str, str, str, list[str]]]:
    """(agent, other, promised place, the other's sector then, the agent's kinds that tick) for
    every absence noticed in a day."""
    world = load_world(GULLHAVEN)
    sim = create(world, path, ScriptedBackend(world.seed),
                 sets=["commitments=true", f"action_awareness={str(aware).lower()}"])
    noticed = []

    def tick(events) -> None:
        for e in events:
            if e.kind == "unexpected" and e.data.get("reason") == "absent":
                arena = sim.world.arena_at(sim.agent(e.data["other"]).tile)
                noticed.append((e.agent, e.data["other"], e.data["place"],
                                arena.address.split(":")[0] if arena else "",
                                [x.kind for x in events if x.agent == e.agent]))

    try:
        sim.run_until(sim.now + timedelta(hours=24), on_tick=tick)
    finally:
        sim.close()
    return noticed


def test_an_agent_whose_promised_meeting_finds_the_other_gone_notices_it(tmp_path):
    on = _day(tmp_path / "on.sqlite", True)
    assert on, "no absence noticed in a day of promises"
    for agent, other, place, where_other_was, kinds in on:
        assert where_other_was != place  # the other really was elsewhere
        assert "kept" in kinds  # it came
        memories = query(tmp_path / "on.sqlite", "select count(*) from memories where agent = ? and description like ?",
                         agent, f"{agent} found {other} was not at {place}%")
        assert memories[0][0] >= 1  # its own observation, filed
    off = _day(tmp_path / "off.sqlite", False)
    assert off == []
    assert query(tmp_path / "off.sqlite", "select count(*) from memories where description like '% was not at %'")[0][0] == 0
