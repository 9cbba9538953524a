"""Where every agent stood at a tick, read from a save alone: the one reconstruction the replay
screen (sim/history.py) and the measures (eval/culture.py) share.

The nearest snapshot at or before the tick (taken each game hour; a save without one starts from
the world file's tick 0), brought forward by the event log as the run wrote it: "moved" starts a
walk along the world's own deterministic path (world/paths.py), one tile a tick from the tick it
is logged; "arrived" puts the agent on its tile; "started" of a conversation halts it where it
stands. A walk is kept as where it began and the tick it began, its path found only when someone
asks where the walker is (most walks end first), so bringing the state forward costs the events,
not the ticks times the agents. Events at the snapshot's own tick logged after it (a user's
command between ticks) take no step that tick."""

from __future__ import annotations

import json

from smalltown.state.agent import partner_of
from smalltown.store.reader import Reader
from smalltown.store.records import EventRow
from smalltown.world.model import Tile, World
from smalltown.world.paths import Paths

KINDS = ("moved", "arrived", "started")


class Positions:
    """Every agent's tile at the end of a tick, for ticks asked in any order (asked forward, the log
    is read once: a tick before the last one asked starts again from its snapshot)."""

    kinds: tuple[str, ...] = KINDS  # the events read (a subclass that follows more adds to them)

    def __init__(self, reader: Reader, world: World, paths: Paths | None = None):
        self.reader, self.world = reader, world
        self.paths = paths or Paths(world.map.walkable)
        self.names = [a.name for a in world.agents]
        self.tick = -1  # the tick the state is at (-1: none read yet)
        self.last_event = 0  # events up to this id are applied
        self._reset()

    def _reset(self) -> None:
        # per agent: where it stood when its walk began (or stands), its walk, the tick it stood there
        self.anchor: dict[str, Tile] = {a.name: a.spawn for a in self.world.agents}
        self.walk: dict[str, list[Tile]] = {}
        self.since: dict[str, int] = {}
        self.goal: dict[str, Tile] = {}  # a walk's destination, its path not yet found
        self.dest: dict[str, Tile | None] = {n: None for n in self.names}  # where it walks to, until it arrives

    # --- where one agent is -------------------------------------------------------------------

    def _walk(self, name: str) -> list[Tile]:
        if name in self.goal:
            here = self.anchor[name]
            self.walk[name] = [here, *self.paths.path(here, self.goal.pop(name))]
        return self.walk.get(name) or []

    def tile(self, name: str, tick: int) -> Tile:
        """Where `name` stood at the end of `tick` (a tick at or after its walk began)."""
        walk = self._walk(name)
        if not walk:
            return self.anchor[name]
        return walk[max(0, min(tick - self.since[name], len(walk) - 1))]

    def left(self, name: str, tick: int) -> tuple[Tile, ...]:
        """The tiles still to walk after the end of `tick`."""
        walk = self._walk(name)
        return tuple(walk[max(0, tick - self.since[name]) + 1:]) if walk else ()

    # --- bringing the state to a tick ---------------------------------------------------------

    def at(self, tick: int) -> dict[str, Tile]:
        """Every agent's tile at the end of `tick` (after its events), in the world file's order."""
        self.goto(tick)
        return {name: self.tile(name, tick) for name in self.names}

    def goto(self, tick: int) -> None:
        """Bring the state to the end of `tick`: from the last tick asked when that is on the way,
        else from the nearest snapshot; then the events after those applied, tick by tick."""
        base = self.reader.snapshot_tick_by(tick)
        base = base if base is not None else 0
        if not base <= self.tick <= tick:
            self.load(base, self.snapshot(base))
        by_tick: dict[int, list[EventRow]] = {}
        for e in self.reader.events(kinds=self.kinds, until=tick, after_id=self.last_event):
            by_tick.setdefault(e.tick, []).append(e)
            self.last_event = max(self.last_event, e.id)
        for t in sorted(by_tick):
            for e in by_tick[t]:
                self.apply(e, step=t > self.tick)
        self.tick = max(self.tick, tick)

    def snapshot(self, tick: int) -> dict | None:
        """The snapshot at `tick`, if the save has one."""
        return self.reader.snapshot(tick, f"snapshot at tick {tick}")

    def load(self, tick: int, snap: dict | None) -> None:
        """Start from the snapshot at `tick` (None: no snapshot this early, the world file's tick 0)."""
        self._reset()
        self.tick, self.last_event = tick, 0
        if snap is None:
            return
        for name, x, y, dest, *_ in snap["agents"]:
            if name not in self.dest:
                continue
            self.anchor[name] = (x, y)
            if dest:
                self.dest[name] = self.goal[name] = tuple(json.loads(dest))
                self.since[name] = tick
        self.last_event = snap["last_ids"]["events"]

    def apply(self, e: EventRow, step: bool) -> None:
        """One event of tick `e.tick`. `step`: logged during the tick, before its walking step (an
        event logged after its tick ended, at a snapshot's own tick, takes no step until the next)."""
        name, data = e.agent, e.data
        if name not in self.dest:
            return
        stood = e.tick - 1 if step else e.tick  # the tick whose end it starts from
        if e.kind == "moved":
            self.anchor[name] = tuple(data["src"])  # where the run had it then
            self.walk.pop(name, None)
            self.dest[name] = self.goal[name] = tuple(data["dst"])
            self.since[name] = stood  # a walk logged in tick t takes its first step in t
        elif e.kind == "arrived":
            if "tile" in data:  # where it stands (after this tick's step, if it walked)
                self.anchor[name] = tuple(data["tile"])
            else:  # (a save from before arrivals logged their tile) a step only onto its walk's end
                walk = self._walk(name)
                ends = not walk or e.tick - self.since[name] + 1 >= len(walk)
                self.anchor[name] = self.tile(name, e.tick if ends or not step else stood)
            self._stop(name)
        elif e.kind == "started" and partner_of(data.get("activity")) is not None:
            self.anchor[name] = self.tile(name, stood)  # a conversation stops it where it stood
            self._stop(name)

    def _stop(self, name: str) -> None:
        self.walk.pop(name, None)
        self.goal.pop(name, None)
        self.dest[name] = None
