"""Frames: immutable pictures of the simulation that the worker hands to the interface.

The interface draws only from frames, so it never reads `Simulation` state while a tick may
be half done on the worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from smalltown.sim.breakpoints import Breakpoint, Hit
from smalltown.store.records import Event
from smalltown.sim.simulation import Simulation
from smalltown.world.model import Tile

# Speeds in ticks per second; None runs as fast as the simulation can go.
SPEEDS: tuple[int | None, ...] = (1, 2, 5, 10, 30, 60, 120, None)
DEFAULT_SPEED = SPEEDS.index(10)


def speed_label(speed: int | None) -> str:
    return "max speed" if speed is None else f"{speed} t/s"


@dataclass(frozen=True)
class AgentView:
    name: str
    tile: Tile
    action: str | None  # Action.describe(), None before the first decision
    doing: str  # includes "walking to ..." while on the way
    asleep: bool
    walking: bool
    talking: bool = False
    reflecting: bool = False  # reflected in the last half hour of game time
    path: tuple[Tile, ...] = ()  # the tiles still to walk
    action_address: str | None = None  # the object its action is at

    @property
    def state(self) -> str:
        """One word for the agents list: what it is in the middle of."""
        if self.asleep:
            return "asleep"
        if self.talking:
            return "talking"
        if self.reflecting:
            return "reflecting"
        return "walking" if self.walking else ""


@dataclass(frozen=True)
class Frame:
    tick: int
    now: datetime
    agents: tuple[AgentView, ...]
    events: tuple[Event, ...]  # new since the previous frame, oldest first (Event is never mutated)
    dropped: int  # events left out of `events` because too many came at once (max speed)
    running: bool
    speed: int | None
    until: datetime | None
    note: str | None = None  # a one-off message for the log, e.g. "reached the until time"
    objects: dict[str, str] = field(default_factory=dict)  # every object's state (a copy)
    changed_objects: frozenset[str] = frozenset()  # objects whose state changed in the last half hour
    breakpoints: tuple[Breakpoint, ...] = ()
    hits: tuple[Hit, ...] = ()  # the breakpoints that paused the town on this frame's last tick
    save_path: str = ""


def agent_views(sim: Simulation, reflecting: frozenset[str] = frozenset()) -> tuple[AgentView, ...]:
    """Read the agents; call only where no tick is in flight (worker thread, or before it starts)."""
    return tuple(
        AgentView(a.name, tuple(a.tile), a.action.describe() if a.action else None, a.doing,
                  a.asleep, bool(a.path), talking=bool(a.action and a.action.talking),
                  reflecting=a.name in reflecting, path=tuple(a.path),
                  action_address=a.action.address if a.action else None)
        for a in sim.agents
    )
