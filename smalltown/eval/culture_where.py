"""Where every agent stood at a tick, read from a save alone (for `eval culture`: who overheard a
line, and the area of influence): the nearest snapshot at or before the tick (taken each game
hour), brought forward by the event log as the run wrote it. "moved" starts a walk along the
world's own deterministic path (world/paths.py), one tile a tick from the tick it is logged;
"arrived" puts the agent on its tile; "started" of a conversation halts it where it stands.

(The replay screen does the same in the engine's layer; the measures may not import it.) Ticks
are asked in increasing order: the log is read once, forward."""

from __future__ import annotations

import json

from smalltown.state.agent import partner_of
from smalltown.store.reader import Reader
from smalltown.world.model import Tile, World
from smalltown.world.paths import Paths

KINDS = ("moved", "arrived", "started")


class Positions:
    def __init__(self, reader: Reader, world: World):
        self.reader, self.world = reader, world
        self.paths = Paths(world.map.walkable)
        self.snaps = reader.snapshot_ticks()
        self.tick = -1
        # per agent: where it stood when its walk began (or stands), its walk, the tick the walk began
        self.anchor: dict[str, Tile] = {a.name: a.spawn for a in world.agents}
        self.walk: dict[str, list[Tile]] = {}
        self.since: dict[str, int] = {}
        self.events: list = []
        self.read_to = -1  # the events of ticks up to this are in self.events or applied

    def _at(self, name: str, tick: int) -> Tile:
        walk = self.walk.get(name)
        if not walk:
            return self.anchor[name]
        return walk[min(tick - self.since[name], len(walk) - 1)]

    def _from_snapshot(self, tick: int) -> None:
        snap = self.reader.snapshot(tick, f"snapshot at tick {tick}")
        if snap is None:
            return
        self.walk.clear()
        for name, x, y, dest, *_ in snap["agents"]:
            if name not in self.anchor:
                continue
            self.anchor[name] = (x, y)
            if dest:
                d = tuple(json.loads(dest))
                self.walk[name], self.since[name] = [(x, y), *self.paths.path((x, y), d)], tick
        self.tick = tick

    def at(self, tick: int) -> dict[str, Tile]:
        """Every agent's tile at the end of `tick` (ticks asked in increasing order)."""
        if tick < self.tick:
            raise ValueError(f"positions asked at tick {tick} after tick {self.tick}")
        snap = max((t for t in self.snaps if self.tick < t <= tick), default=None)
        if snap is not None:
            self._from_snapshot(snap)
        if tick > self.read_to:
            self.events += [e for e in self.reader.events(kinds=KINDS, since=self.read_to, until=tick)]
            self.read_to = tick
        rest = []
        for e in self.events:
            if e.tick > tick:
                rest.append(e)
            elif e.tick > self.tick and e.agent in self.anchor:
                self._apply(e)
        self.events, self.tick = rest, tick
        return {name: self._at(name, tick) for name in self.anchor}

    def _apply(self, e) -> None:
        name, data = e.agent, e.data
        if e.kind == "moved":
            here = tuple(data["src"])  # where the run had it then
            self.anchor[name] = here
            # a walk logged at tick t takes its first step in t: at t - 1 it stood where it began
            self.walk[name], self.since[name] = [here, *self.paths.path(here, tuple(data["dst"]))], e.tick - 1
        elif e.kind == "arrived" and "tile" in data:
            self.anchor[name] = tuple(data["tile"])
            self.walk.pop(name, None)
        elif e.kind == "started" and partner_of(data.get("activity")) is not None:
            self.anchor[name] = self._at(name, e.tick - 1)  # it stops where it stood: no step this tick
            self.walk.pop(name, None)
