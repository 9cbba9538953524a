"""A recorded run, read back at any moment: what the replay screen scrubs through.

Read-only (the save is opened with SQLite's `mode=ro`) and model-free. The state at a tick is the
nearest snapshot at or before it (taken each game hour; a save without one starts from the world
file's tick 0) brought forward by the event log: "started" sets an agent's action, "moved" starts
a walk (its path is recomputed with the same deterministic path finder the run used, one tile per
tick), "arrived" and a conversation end it, and "object" sets an object's state.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Iterable

from smalltown.lang import doing
from smalltown.sim.breakpoints import QUIET_KINDS, Breakpoint, Hit, check
from smalltown.sim.events import KINDS
from smalltown.state.agent import Action, partner_of
from smalltown.mind.memory import Memory
from smalltown.store.records import Event
from smalltown.store.conversations import ConversationRow
from smalltown.store.records import EventRow
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT
from smalltown.world.load import load_world_text
from smalltown.world.model import Tile
from smalltown.world.paths import Paths

# events that change what state_at shows
_STATE_KINDS = ("started", "moved", "arrived", "object")
_BREAK_CHUNK = 360  # ticks read at a time looking for a breakpoint's hit (a game hour of 10 s ticks)


@dataclass(frozen=True)
class AgentAt:
    """One agent at one tick, as the map and the agents panel show it."""

    name: str
    tile: Tile
    action: str | None  # "activity @ sector: arena: object", as the agents table holds it
    activity: str | None
    address: str | None  # sector:arena:object of the action
    dest: Tile | None  # where it is walking to
    walking: bool
    path: tuple[Tile, ...] = ()  # the tiles still to walk

    @property
    def talking(self) -> bool:
        """In a conversation (its action is one)."""
        return partner_of(self.activity) is not None

    @property
    def doing(self) -> str:
        """What others see it doing, as the running simulation says it."""
        return doing(self.activity, self.address, self.walking)


@dataclass(frozen=True)
class StateAt:
    tick: int
    time: datetime
    agents: dict[str, AgentAt]  # in the world file's order
    objects: dict[str, str]  # address -> state


def _describe(activity: str | None, address: str | None) -> str:
    """The action as the agents table shows it (the mind's own wording)."""
    return Action(activity or "", address or "", datetime.min, datetime.min).describe()


class _Replay:
    """The state being brought forward tick by tick (mutable; StateAt is its frozen copy)."""

    def __init__(self, tick: int, last_event: int, tiles: dict[str, Tile], walks: dict[str, list[Tile]],
                 dests: dict[str, Tile | None], acts: dict[str, tuple[str | None, str | None, str | None]],
                 objects: dict[str, str]):
        self.tick = tick
        self.last_event = last_event  # events up to this id are applied
        self.tiles, self.walks, self.dests, self.acts, self.objects = tiles, walks, dests, acts, objects


class History:
    """Open a save read-only and ask what the town was like at any tick."""

    def __init__(self, path: str | Path, snapshot_cache: int = 8):
        self.path = Path(path)
        from smalltown.sim.check import require

        self.save = Save.open(self.path, readonly=True)
        require(self.save, snapshots=True)  # what a replay reads back, checked before the screen opens
        self.reader = self.save.reader()
        try:
            self.world = load_world_text(self._meta("world_source"), self._meta("world_text"),
                                         self._meta("map_source"), self._meta("map_text"))
        except BaseException:
            self.save.close()
            raise
        self.paths = Paths(self.world.map.walkable)
        self.names = [a.name for a in self.world.agents]
        self._snapshots: OrderedDict[int, dict] = OrderedDict()
        self._cache_size = snapshot_cache
        self._cursor: _Replay | None = None

    def close(self) -> None:
        self.save.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _meta(self, key: str, default=None):
        return self.reader.meta(key, default)

    # --- the clock ----------------------------------------------------------------------------

    @property
    def last_tick(self) -> int:
        """The last committed tick (read each time: the save may still be running)."""
        return int(self._meta("tick", 0))

    def ticks(self) -> range:
        """Every tick the save can show, from the start to its last committed tick."""
        return range(0, self.last_tick + 1)

    def time_of(self, tick: int) -> datetime:
        return self.world.start + timedelta(seconds=tick * self.world.step_seconds)

    def tick_of(self, when: datetime) -> int:
        """The tick in progress at game time `when` (not clamped to the run)."""
        return int((when - self.world.start).total_seconds() // self.world.step_seconds)

    def snapshot_ticks(self) -> list[int]:
        return self.reader.snapshot_ticks()

    # --- the state at a tick ------------------------------------------------------------------

    def state_at(self, tick: int) -> StateAt:
        """Where every agent was and what it was doing, and every object's state, at the end of
        `tick` (after its events, interventions included)."""
        if not 0 <= tick <= self.last_tick:
            raise ValueError(f"tick {tick} is outside the run (0 to {self.last_tick})")
        base = self._base_tick(tick)
        cur = self._cursor
        if cur is None or not base <= cur.tick <= tick:
            cur = self._from_snapshot(base)
        self._advance(cur, tick)
        self._cursor = cur
        agents = {}
        for name in self.names:
            action, activity, address = cur.acts[name]
            agents[name] = AgentAt(name, cur.tiles[name], action, activity, address, cur.dests[name],
                                   bool(cur.walks[name]), tuple(cur.walks[name]))
        return StateAt(tick, self.time_of(tick), agents, dict(cur.objects))

    def _base_tick(self, tick: int) -> int:
        base = self.reader.snapshot_tick_by(tick)
        return base if base is not None else 0

    def _snapshot(self, tick: int) -> dict | None:
        if tick in self._snapshots:
            self._snapshots.move_to_end(tick)
            return self._snapshots[tick]
        snap = self.reader.snapshot(tick, str(self.path))
        if snap is None:
            return None
        self._snapshots[tick] = snap
        while len(self._snapshots) > self._cache_size:
            self._snapshots.popitem(last=False)
        return snap

    def _from_snapshot(self, tick: int) -> _Replay:
        objects = {a: o.initial_state for a, o in self.world.objects.items()}
        snap = self._snapshot(tick)
        if snap is None:  # no snapshot this early (an older save): the world file's tick 0
            assert tick == 0
            none = (None, None, None)
            return _Replay(0, 0, {a.name: a.spawn for a in self.world.agents}, {n: [] for n in self.names},
                           {n: None for n in self.names}, {n: none for n in self.names}, objects)
        tiles, walks, dests, acts = {}, {}, {}, {}
        for name, x, y, dest, action, address, activity in snap["agents"]:
            tiles[name] = (x, y)
            dests[name] = tuple(json.loads(dest)) if dest else None
            walks[name] = self.paths.path(tiles[name], dests[name]) if dests[name] else []
            acts[name] = (action, activity, address)
        objects.update(dict(snap["objects"]))
        return _Replay(tick, snap["last_ids"]["events"], tiles, walks, dests, acts, objects)

    def _advance(self, cur: _Replay, tick: int) -> None:
        """Bring `cur` forward to the end of `tick`: each tick's events, then one step of walking."""
        by_tick: dict[int, list[EventRow]] = {}
        for e in self.reader.events(kinds=_STATE_KINDS, until=tick, after_id=cur.last_event):
            by_tick.setdefault(e.tick, []).append(e)
            cur.last_event = max(cur.last_event, e.id)
        # interventions made after the snapshot, at its own tick: no walking step for them
        self._apply_events(cur, by_tick.pop(cur.tick, []), step=False)
        for t in range(cur.tick + 1, tick + 1):
            self._apply_events(cur, by_tick.get(t, []), step=True)
        cur.tick = max(cur.tick, tick)

    def _apply_events(self, cur: _Replay, rows: list[EventRow], step: bool) -> None:
        moved: set[str] = set()
        arrived: set[str] = set()
        for e in rows:
            agent, kind, data = e.agent, e.kind, e.data
            if kind == "object":
                cur.objects[data["address"]] = data["state"]
            elif agent not in cur.tiles:
                continue
            elif kind == "started":
                activity, address = data.get("activity"), data.get("address")
                cur.acts[agent] = (_describe(activity, address), activity, address)
                if partner_of(activity) is not None:  # a conversation stops a walk
                    cur.walks[agent] = []
                    cur.dests[agent] = None
            elif kind == "moved":
                src, dst = tuple(data["src"]), tuple(data["dst"])
                cur.walks[agent] = self.paths.path(src, dst)
                cur.dests[agent] = dst
                moved.add(agent)
            elif kind == "arrived":
                if "tile" in data:  # where it stands (after this tick's step, if it walked)
                    cur.tiles[agent] = tuple(data["tile"])
                    cur.walks[agent] = []
                arrived.add(agent)
        if not step:
            return
        for name, walk in cur.walks.items():
            if not walk:
                continue
            here = walk.pop(0)
            if name in arrived and walk:
                # (a save from before arrivals logged their tile) an arrival where it stood, a new
                # goal under its feet: it did not step this tick
                walk.insert(0, here)
                cur.walks[name] = []
            else:
                cur.tiles[name] = here
        for name in arrived:
            cur.walks[name] = []
            cur.dests[name] = None

    # --- the logs up to a tick ----------------------------------------------------------------

    def events(self, until: int, since: int = -1, agent: str | None = None,
               kinds: Iterable[str] | None = None, limit: int | None = None) -> list[Event]:
        """Events of ticks in (since, until], oldest first (the latest `limit` when given)."""
        return [Event(e.tick, e.time, e.agent, e.kind, e.text, e.data)
                for e in self.reader.events(agent=agent, kinds=kinds, since=since, until=until, limit=limit)]

    def memories_at(self, agent: str, tick: int) -> list[Memory]:
        """The agent's memories made by the time of `tick`, oldest first, each with its last
        access as of then (from the retrieval log: a record is accessed only by retrievals)."""
        stamp = self.time_of(tick).strftime(TIME_FMT)
        accessed = self.reader.last_access_until(agent, tick)
        out = []
        for m in self.reader.memories(agent=agent, created_by=stamp):
            last = max(m.created, datetime.fromisoformat(accessed[m.id])) if m.id in accessed else m.created
            out.append(replace(m, last_accessed=last, importance=m.importance or 0))
        return out

    def conversations_until(self, tick: int, agent: str | None = None) -> list[ConversationRow]:
        """Conversations held by the end of `tick` (with `agent` in them, if given), oldest first:
        where, why, who said what, and each side's view of the other. A conversation is written at
        once, at the tick it starts. (A save from before schema 4, read as it is: from its said
        events, without reasons or views.)"""
        return self.reader.conversations(until=tick, agent=agent)

    # --- breakpoints, checked against the record ----------------------------------------------

    def first_hits(self, breakpoints: Iterable[Breakpoint], since: int, until: int) -> tuple[int, list[Hit]] | None:
        """The first tick in (since, until] where breakpoints fire, and what they caught, as the
        running town checks each tick (sim/breakpoints.py): its events, its model calls from the
        call log, the memories made at its time. None when none fires."""
        bps = list(breakpoints)
        kinds = {b.kind for b in bps}
        breakable = tuple(k for k in KINDS if k not in QUIET_KINDS)  # the events a breakpoint may stop at
        start = since
        while bps and start < until:
            end = min(until, start + _BREAK_CHUNK)
            events: dict[int, list[Event]] = {}
            for e in self.events(end, start, kinds=breakable):
                events.setdefault(e.tick, []).append(e)
            calls: dict[int, list[tuple[str, str]]] = {}
            for t, agent, task in self.reader.calls_between(start, end) if "call" in kinds else ():
                calls.setdefault(t, []).append((agent, task))
            made: dict[int, list[tuple[str, str]]] = {}
            stamps = (self.time_of(start).strftime(TIME_FMT), self.time_of(end).strftime(TIME_FMT))
            for when, agent, text in self.reader.memories_between(*stamps) if "memory" in kinds else ():
                made.setdefault(self.tick_of(datetime.strptime(when, TIME_FMT)), []).append((agent, text))
            for t in sorted({*events, *calls, *made}):
                hits = check(bps, events.get(t, []), calls.get(t, []), made.get(t, []))
                if hits:
                    return t, hits
            start = end
        return None
