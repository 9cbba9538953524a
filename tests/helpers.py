"""Paths and small helpers the tests share (tests import this, not each other)."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # imported when used: conftest imports this module for every test
    from textual.pilot import Pilot

    from smalltown.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "worlds" / "tiny.toml"
SMALLVILLE = ROOT / "worlds" / "smallville.toml"
GULLHAVEN = ROOT / "worlds" / "gullhaven.toml"


def tiny_sim(tmp_path: Path, until: str | None = None) -> "Simulation":
    """The tiny town on the scripted backend, in tmp_path/tiny.sqlite (a fixed file name: the TUI's
    header shows it, and snapshots must not depend on tmp_path). With `until` ("07:10", a clock
    time on the first day), it is run there first: the town sleeps until its agents' waking hours
    (Isabella at 06:00, Klaus at 07:00, Maria at 08:00), so a test of what an agent does starts
    near it instead of ticking through the night in the app."""
    from smalltown.cli.when import parse_when
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.simulation import Simulation
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = Simulation.create(world, tmp_path / "tiny.sqlite", ScriptedBackend(world.seed), overwrite=True)
    if until is not None:
        sim.run_until(parse_when(until, sim.now, world.start))
    return sim


async def wait_until(pilot: "Pilot", cond: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll while letting the app process messages (a worker may tick on its own thread)."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)


def run_until_after(sim: "Simulation", done: Callable[[], bool], then: timedelta = timedelta(minutes=10),
                    within: timedelta = timedelta(days=3)) -> None:
    """Run `sim` until `done()` (checked between ticks), then `then` more game time. A test that
    needs something to have happened in the town (a conversation, a reflection) waits for it,
    rather than knowing the hour at which the town's current tuning makes it happen."""
    start = sim.now
    sim.run_until(start + within, stop=done)
    if not done():
        raise AssertionError(f"not happened in the {within} of game time from {start}")
    sim.run_until(sim.now + then)
