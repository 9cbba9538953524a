"""One agent as a save last kept it, read without opening the run (`smalltown inspect`).

Resuming a run builds every agent's mind, memory stream and paths (seconds and a gigabyte at 500
agents); a look reads the save's meta, the world it holds, one agent's row and its newest memories
through the store's reader. The save is checked as a resume checks it (its rows, and its rows
against its world) before anything is decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from smalltown.state.known import KnownTree
from smalltown.state.agent import AgentState
from smalltown.sim.check import require
from smalltown.store.records import Memory
from smalltown.store.save import Save
from smalltown.world.load import load_world_text
from smalltown.world.model import Persona
from smalltown.world.names import agent_named


@dataclass
class Look:
    spec: Persona
    state: AgentState
    now: datetime
    memories: list[Memory]  # the newest first
    memory_count: int


def look(path: str | Path, name: str, memories: int) -> Look:
    """The agent `name` names (NoSuchAgent if none) with its `memories` newest memories."""
    save = Save.open(path, readonly=True).current()  # an older save: migrated in memory, as a resume reads it
    try:
        require(save)  # rows that make no sense against the world are refused, as a resume refuses them
        reader = save.reader()
        world = load_world_text(*(save.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")))
        saved = set(reader.agent_names())
        full = agent_named(name, [a.name for a in world.agents if a.name in saved])
        spec = next(a for a in world.agents if a.name == full)
        state = AgentState.from_json(reader.agent_state(full), known=KnownTree.from_world(world, spec.knows))
        now = world.start + timedelta(seconds=int(save.meta("tick")) * world.step_seconds)
        newest = reader.memories(agent=full, limit=memories, newest_first=True) if memories > 0 else []
        return Look(spec, state, now, newest, sum(reader.memory_counts(full).values()))
    finally:
        save.close()
