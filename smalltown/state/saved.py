"""Where a save stands, read from it alone: the world it was started from (as it recorded it, under
the seed it was run with) and its last whole tick with that tick's game time. The engine opens
runs with these; the front ends and the measures read saves with them, without the engine."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from smalltown.store.save import Save
from smalltown.world.load import load_world_text
from smalltown.world.model import World


def saved_at(path: str | Path) -> tuple[int, datetime, datetime]:
    """A save's last whole tick, its game time (what `sim.now` will be once it is opened) and
    the game time its world starts at."""
    save = Save.open(path, readonly=True)
    try:
        world = world_of(save)
        tick = int(save.meta("tick"))
    finally:
        save.close()
    return tick, world.start + timedelta(seconds=tick * world.step_seconds), world.start


def world_of(save: Save) -> World:
    """The world a save was started from, as it recorded it (under the seed it was run with)."""
    world = load_world_text(*(save.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")))
    if isinstance(seed := save.meta("world_seed"), int):
        world.seed = seed
    return world
