"""A recorded run, read back at any moment: what the replay screen scrubs through.

Read-only (the save is opened with SQLite's `mode=ro`) and model-free. The state at a tick is the
nearest snapshot at or before it (taken each game hour; a save without one starts from the world
file's tick 0) brought forward by the event log: where agents stand as state/positions.py rebuilds
it (the measures use the same), "started" sets an agent's action and "object" an object's state.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
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
from smalltown.state.positions import Positions

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
    levels: dict[str, dict[str, int]] = field(default_factory=dict)  # agent -> doctrine -> belief level held


def _describe(activity: str | None, address: str | None) -> str:
    """The action as the agents table shows it (the mind's own wording)."""
    return Action(activity or "", address or "", datetime.min, datetime.min).describe()


class _Replay(Positions):
    """Where agents stand (state/positions.py), with what each is doing, every object's state, and
    the belief levels the `converted` events raised (mind/belief.py: a level never falls)."""

    kinds = ("started", "moved", "arrived", "object", "converted")  # the events that change what state_at shows

    def __init__(self, history: "History"):
        self.history = history
        super().__init__(history.reader, history.world, history.paths)

    def snapshot(self, tick: int) -> dict | None:
        return self.history._snapshot(tick)

    def load(self, tick: int, snap: dict | None) -> None:
        super().load(tick, snap)
        none = (None, None, None)
        self.acts: dict[str, tuple[str | None, str | None, str | None]] = {n: none for n in self.names}
        self.objects = {a: o.initial_state for a, o in self.world.objects.items()}
        self.levels: dict[str, dict[str, int]] = {}
        if snap is None:
            assert tick == 0
            return
        for e in self.history._conversions(snap["last_ids"]["events"]):
            self._converted(e)
        for name, _x, _y, _dest, action, address, activity in snap["agents"]:
            if name in self.acts:
                self.acts[name] = (action, activity, address)
        self.objects.update(dict(snap["objects"]))

    def apply(self, e: EventRow, step: bool) -> None:
        if e.kind == "object":
            self.objects[e.data["address"]] = e.data["state"]
            return
        if e.kind == "converted":
            self._converted(e)
            return
        if e.kind == "started" and e.agent in self.acts:
            activity, address = e.data.get("activity"), e.data.get("address")
            self.acts[e.agent] = (_describe(activity, address), activity, address)
        super().apply(e, step)

    def _converted(self, e: EventRow) -> None:
        doctrine, level = e.data.get("doctrine"), e.data.get("level")
        if e.agent in self.acts and isinstance(doctrine, str) and isinstance(level, int):
            held = self.levels.setdefault(e.agent, {})
            held[doctrine] = max(held.get(doctrine, 0), level)


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
        self._ordained: dict[str, dict[str, tuple[int, str]]] | None = None  # priests' top levels, read when first asked
        self._converted: list[EventRow] = []  # the `converted` events read so far (to `_converted_to`)
        self._converted_to = 0
        self._cursor = _Replay(self)  # the state brought forward from the last tick asked

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
        cur = self._cursor
        cur.goto(tick)
        agents = {}
        for name in self.names:
            action, activity, address = cur.acts[name]
            left = cur.left(name, tick)
            agents[name] = AgentAt(name, cur.tile(name, tick), action, activity, address, cur.dest[name],
                                   bool(left), left)
        return StateAt(tick, self.time_of(tick), agents, dict(cur.objects), self._levels(cur.levels, tick))

    def _conversions(self, upto_id: int) -> list[EventRow]:
        """The `converted` events with ids up to `upto_id`, read once (a few, in a long log: a scrub
        back to an earlier snapshot does not read the log again)."""
        if upto_id > self._converted_to:
            self._converted += self.reader.events(kinds=("converted",), after_id=self._converted_to, upto_id=upto_id)
            self._converted_to = upto_id
        return [e for e in self._converted if e.id <= upto_id]

    def _levels(self, converted: dict[str, dict[str, int]], tick: int) -> dict[str, dict[str, int]]:
        """The levels held at the end of `tick`: those the `converted` events raised, and a
        priest's top level from the tick it was ordained (no event: the save's state says when)."""
        if self._ordained is None:
            self._ordained = {}
            for d in self.world.doctrines:
                for name in d.priests:
                    entry = self.reader.agent_state(name).get("modules", {}).get("belief", {}).get(d.name, {})
                    if isinstance(entry, dict) and entry.get("priest") and isinstance(entry.get("since"), str):
                        self._ordained.setdefault(name, {})[d.name] = (int(entry.get("level", 0)), entry["since"])
        out = {name: dict(held) for name, held in converted.items()}
        stamp = self.time_of(tick).strftime(TIME_FMT)
        for name, held in self._ordained.items():
            for doctrine, (level, since) in held.items():
                if since <= stamp:
                    out.setdefault(name, {})[doctrine] = max(out.get(name, {}).get(doctrine, 0), level)
        return out

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
