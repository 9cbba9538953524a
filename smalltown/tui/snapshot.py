"""Frames: immutable pictures of the simulation that the worker hands to the interface.

The interface draws only from frames, so it never reads `Simulation` state while a tick may
be half done on the worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from smalltown.sim.breakpoints import Breakpoint, Hit
from smalltown.store.records import Event
from smalltown.sim.simulation import Simulation
from smalltown.world.model import Doctrine, Tile

# Speeds in ticks per second; None runs as fast as the simulation can go.
SPEEDS: tuple[int | None, ...] = (1, 2, 5, 10, 30, 60, 120, None)
DEFAULT_SPEED = SPEEDS.index(10)


def speed_label(speed: int | None) -> str:
    return "max speed" if speed is None else f"{speed} t/s"


def span(game_time: timedelta) -> str:
    """A stretch of game time as a person says it: "45s", "6h12m", "1d3h"."""
    seconds = max(0, int(game_time.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    return f"{minutes}m" if minutes else f"{seconds}s"


@dataclass(frozen=True)
class Chase:
    """A run toward a goal, at full speed whatever the display speed: a game time (run until,
    `until`) or an agent's next event (step to it, `agent`). It ends at the goal, at a breakpoint,
    or when the user pauses."""
    since: datetime  # the game time it started at
    until: datetime | None = None
    agent: str | None = None
    asleep: bool = False  # the agent slept when the step began: its next event is its waking

    def goal(self) -> str:
        if self.agent is not None:
            return f"{self.agent}'s next event"
        assert self.until is not None
        return f"{self.until:%H:%M}" if self.until.date() == self.since.date() else f"{self.until:%a %H:%M}"

    def progress(self, now: datetime, short: bool = False) -> str:
        """How far it has come, for the clock bar (`short`: for a narrow one, "→ 17:30 45%")."""
        if self.agent is not None or self.until is None:
            if short:
                return f"→ {(self.agent or '').split(' ')[0]}'s event {span(now - self.since)}"
            return f"awaiting {self.goal()} · {span(now - self.since)}"
        whole = (self.until - self.since).total_seconds()
        done = 100 if whole <= 0 else int(100 * (now - self.since).total_seconds() / whole)
        day = "" if self.until.date() == now.date() else f"{self.until:%a} "
        if short:
            return f"→ {day}{self.until:%H:%M} {min(100, max(0, done))}%"
        return f"until {day}{self.until:%H:%M} · {min(100, max(0, done))}%"


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
    belief: int = 0  # belief (mind/belief.py), its highest in any doctrine: 0 none, 1 a lower level, 2 the top

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
    until: datetime | None  # a run until this game time is under way
    note: str | None = None  # a one-off message for the log, e.g. "already at the until time"
    objects: dict[str, str] = field(default_factory=dict)  # every object's state (a copy)
    changed_objects: frozenset[str] = frozenset()  # objects whose state changed in the last half hour
    breakpoints: tuple[Breakpoint, ...] = ()
    hits: tuple[Hit, ...] = ()  # the breakpoints that paused the town on this frame's last tick
    save_path: str = ""
    chase: Chase | None = None  # a run until a time, or a step to an agent's event, under way
    stopped: str | None = None  # what the chase that ended on this frame's last tick stopped on


def agent_views(sim: Simulation, reflecting: frozenset[str] = frozenset()) -> tuple[AgentView, ...]:
    """Read the agents; call only where no tick is in flight (worker thread, or before it starts)."""
    return tuple(
        AgentView(a.name, tuple(a.tile), a.action.describe() if a.action else None, a.doing,
                  a.asleep, bool(a.path), talking=bool(a.action and a.action.talking),
                  reflecting=a.name in reflecting, path=tuple(a.path),
                  action_address=a.action.address if a.action else None, belief=belief_mark(sim, a.mind.state.modules))
        for a in sim.agents
    )


def belief_mark(sim: Simulation, modules: dict) -> int:
    """The map layer's mark of a running agent's belief (its module state, mind/belief.py)."""
    held = modules.get("belief", {})
    return mark_of(sim.world.doctrines, {d: int(e.get("level", 0)) for d, e in held.items() if isinstance(e, dict)})


def mark_of(doctrines: list[Doctrine], levels: dict[str, int]) -> int:
    """The map layer's mark of levels held (doctrine -> level): 2 the top level of some doctrine,
    1 a lower one, 0 none."""
    marks = [2 if lvl >= len(d.levels) else 1 for d in doctrines if (lvl := levels.get(d.name, 0))]
    return max(marks, default=0)
