"""The tick runs its modules from the registry (sim/phases.py): every registered module is bound to
exactly one of the engine's phases (or says the one it runs inside), so no row of the registry is
described only; and a model-free module on every tick is added from one file (this one): a bell
each game hour, with its own saved state and a breakable event kind, run scripted."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import ROOT, stored_state
from smalltown.config import Settings
from smalltown.mind.module import Clock, Emit, Module
from smalltown.mind.modules import MODULES, registered
from smalltown.scripted import ScriptedBackend
from smalltown.sim.breakpoints import BREAK_KINDS, Breakpoint, check
from smalltown.sim.open import create
from smalltown.sim.phases import PHASES, THINKING, Phase, phase_of
from smalltown.world.load import load_world

TINY = ROOT / "worlds" / "tiny.toml"
AGENT = "Maria Lopez"


def test_every_registered_module_runs_in_exactly_one_phase():
    names = [p.name for p in PHASES + THINKING]
    assert len(set(names)) == len(names)
    where = {m.name: phase_of(m) for m in MODULES}
    assert where == {
        "perception": "perception", "movement": "movement", "action awareness": "each tick",
        "commitment checks": "commitment checks", "memory and importance": "perception",
        "controller": "next actions", "reacting": "encounters", "talking": "encounters",
        "social awareness": "encounters", "places": "next actions", "goal generation": "slow",
        "role inference": "slow", "daily plan": "next actions", "summary": "next actions", "reflection": "slow",
            "memes": "memes", "belief": "belief"}


def test_a_module_bound_to_no_phase_or_to_two_is_refused():
    bare = Module("described only", "mind/goals.py", Clock("every tick", "each tick"), "", "nothing", "nothing")
    with pytest.raises(ValueError, match="bound to no phase"):
        phase_of(bare)
    with pytest.raises(ValueError, match="no such phase"):
        phase_of(replace(bare, runs_in="gossip time"))
    twice = replace(bare, name="perception")  # (bound by name) and with a hook on each tick
    with pytest.raises(ValueError, match="bound to perception, each tick"):
        phase_of(replace(twice, each_tick=lambda mind, now, outcome: []))
    with pytest.raises(ValueError, match="but is bound to movement"):
        phase_of(replace(bare, name="movement", runs_in="encounters"))


def test_a_phase_runs_when_one_of_its_modules_is_on_unless_it_says_when():
    phase = Phase("noticing", lambda sim, tick: None, ("action awareness", "commitment checks"))
    off, one = SimpleNamespace(settings=Settings()), SimpleNamespace(settings=Settings().override(commitments=True))
    assert not phase.runs(off) and phase.runs(one)
    assert replace(phase, when=lambda sim: True).runs(off)
    assert replace(phase, modules=("movement",)).runs(off)  # (a module that is always on)


# --- a new every-tick module, from this file alone ----------------------------------------------

def ring(mind, now: datetime, outcome) -> list[Emit]:
    """Model-free: the first tick of each game hour, the agent hears the bell (its own state keeps
    the hour last rung, so a resumed run rings as the first did)."""
    own = mind.state.modules.setdefault("bell", {})
    hour = now.strftime("%Y-%m-%d %H")
    if own.get("rung") == hour:
        return []
    own["rung"] = hour
    return [Emit("chimed", f"{mind.name} hears the bell at {now:%H:%M}", {"hour": now.hour})]


BELL = Module("bell", "mind/bell.py", Clock("every tick", "each tick, model-free: the first of each game hour"), "",
              "the game time", "modules.bell", each_tick=ring, events={"chimed": "hears the bell"})


def run(path: Path, minutes: int, sets: list[str] = ()):
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed), sets=list(sets))
    events = []
    try:
        while sim.now < world.start + timedelta(minutes=minutes):
            events += sim.step()
    finally:
        sim.close()
    return [e for e in events if e.kind == "chimed" and e.agent == AGENT]


def test_an_every_tick_module_runs_each_tick_from_its_hook(tmp_path: Path):
    with registered(BELL):
        assert phase_of(BELL) == "each tick"
        rung = run(tmp_path / "b.sqlite", 2 * 60 + 5)
    assert [e.time for e in rung] == ["2023-02-13 06:00:10", "2023-02-13 07:00:00", "2023-02-13 08:00:00"]
    assert rung[-1].text == f"{AGENT} hears the bell at 08:00"
    with sqlite3.connect(tmp_path / "b.sqlite") as conn:
        saved = conn.execute("SELECT count(*) FROM events WHERE agent = ? AND kind = 'chimed'", (AGENT,)).fetchone()[0]
        state = stored_state(conn, AGENT)
    assert saved == 3 and state["modules"]["bell"] == {"rung": "2023-02-13 08"}
    assert BELL not in MODULES and "chimed" not in BREAK_KINDS  # (registered for the test only)


def test_an_every_tick_module_switched_off_is_not_run(tmp_path: Path):
    bell = replace(BELL, setting="commitments")  # (a setting off by default)
    assert not bell.switched_on(Settings())
    with registered(bell):
        assert run(tmp_path / "off.sqlite", 65) == []
        assert len(run(tmp_path / "on.sqlite", 65, ["commitments=true"])) == 2


def test_its_event_kind_is_breakable(tmp_path: Path):
    with registered(BELL):
        assert BREAK_KINDS["chimed"] == "hears the bell"
        bp = Breakpoint(1, "chimed", AGENT)
        world = load_world(TINY)
        sim = create(world, tmp_path / "k.sqlite", ScriptedBackend(world.seed))
        try:
            hits = check([bp], sim.step(), [], [])
        finally:
            sim.close()
    assert sim.tick == 1 and hits[0].detail == f"{AGENT} hears the bell at 06:00"
