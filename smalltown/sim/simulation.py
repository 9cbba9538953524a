"""The Simulation: the clock, the tick loop, the event log, and the save it commits to."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

from smalltown.config import Settings
from smalltown.seeded import stable_int
from smalltown.llm.backend import Asker, Backend, CallRecord
from smalltown.mind.agent import Action, Mind
from smalltown.sim.events import Event
from smalltown.store.save import Save
from smalltown.world.load import load_world_text
from smalltown.world.model import AgentSpec, Tile, World, pretty
from smalltown.world.paths import Paths
from smalltown.world.perception import Body, perceive

TIME_FMT = "%Y-%m-%d %H:%M:%S"


@dataclass
class Agent:
    """An agent in the running town: its body (where it is, where it walks) and its mind."""

    spec: AgentSpec
    mind: Mind
    tile: Tile
    arena: int
    path: deque[Tile] = field(default_factory=deque)
    dest: Tile | None = None
    using: str | None = None  # the object it is acting on, once arrived
    recent: deque[str] = field(default_factory=deque)  # latest percepts (retention)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def action(self) -> Action | None:
        return self.mind.action

    @property
    def doing(self) -> str:
        a = self.mind.action
        if a is None:
            return "idle"
        return f"walking to {pretty(a.address)} to {a.activity}" if self.path else a.activity

    @property
    def asleep(self) -> bool:
        a = self.mind.action
        return a is not None and a.asleep and not self.path

    def state_json(self) -> str:
        return json.dumps({**self.mind.to_json(), "using": self.using, "recent": list(self.recent)},
                          sort_keys=True)


class Simulation:
    def __init__(self, world: World, save: Save, backend: Backend, settings: Settings, tick: int):
        self.world = world
        self.save = save
        self.backend = backend
        self.settings = settings
        self.tick = tick
        self.paths = Paths(world.map.walkable)
        self._calls: list[tuple[int, CallRecord]] = []
        self.asker = Asker(backend, lambda rec: self._calls.append((self.tick, rec)))
        self.objects: dict[str, str] = {a: o.initial_state for a, o in world.objects.items()}
        self.users: dict[str, set[str]] = {}
        self.agents: list[Agent] = []

    # --- creating and opening -----------------------------------------------------------------

    @classmethod
    def create(cls, world: World, path: str | Path, backend: Backend,
               settings: Settings | None = None, overwrite: bool = False) -> "Simulation":
        save = Save.create(path, {
            "world": world.name, "world_source": world.source, "world_text": world.text,
            "map_source": world.map_source, "map_text": world.map_text,
            "tick": 0, "game_time": world.start.strftime(TIME_FMT),
            "created_with": backend.name,
        }, overwrite=overwrite)
        sim = cls(world, save, backend, settings or Settings(), tick=0)
        start = sim.now.strftime(TIME_FMT)
        with save.transaction():
            for spec in world.agents:
                arena = world.arena_at(spec.spawn)
                sim.agents.append(Agent(spec, Mind(spec, world, sim.asker), spec.spawn,
                                        arena.index if arena else -1))
                save.add_memories(
                    (spec.name, "observation", m, start, start, None, None, "[]")
                    for m in spec.seed_memories)
            save.upsert_agents(sim._agent_row(a) for a in sim.agents)
            save.set_objects(sim.objects.items())
        return sim

    @classmethod
    def open(cls, path: str | Path, backend: Backend, settings: Settings | None = None) -> "Simulation":
        save = Save.open(path)
        world = load_world_text(save.meta("world_source"), save.meta("world_text"),
                                save.meta("map_source"), save.meta("map_text"))
        sim = cls(world, save, backend, settings or Settings(), tick=save.meta("tick"))
        sim.objects.update(save.objects())
        rows = {r[0]: r for r in save.agents()}
        for spec in world.agents:
            name, x, y, dest, _action, _address, state = rows[spec.name]
            state = json.loads(state)
            tile = (x, y)
            arena = world.arena_at(tile)
            agent = Agent(spec, Mind(spec, world, sim.asker, state), tile,
                          arena.index if arena else -1, using=state.get("using"),
                          recent=deque(state.get("recent", [])))
            if dest:
                agent.dest = tuple(json.loads(dest))
                agent.path = deque(sim.paths.path(tile, agent.dest))
            if agent.using:
                sim.users.setdefault(agent.using, set()).add(agent.name)
            sim.agents.append(agent)
        return sim

    def close(self) -> None:
        self.save.close()

    # --- the clock ----------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        return self.world.start + timedelta(seconds=self.tick * self.world.step_seconds)

    def agent(self, name: str) -> Agent:
        for a in self.agents:
            if a.name == name:
                return a
        raise KeyError(name)

    # --- the tick -----------------------------------------------------------------------------

    def step(self) -> list[Event]:
        """Advance one tick and commit it: perceive, decide, move, use objects."""
        self.tick += 1
        now = self.now
        stamp = now.strftime(TIME_FMT)
        events: list[Event] = []
        changed: set[str] = set()
        moved: set[str] = set()
        dirty_objects: set[str] = set()

        def emit(agent: str | None, kind: str, text: str, **data: object) -> None:
            events.append(Event(self.tick, stamp, agent, kind, text, data))

        self._perceive(emit, changed)
        for agent in self.agents:
            if agent.mind.due(now):
                self._decide(agent, now, emit, dirty_objects)
                changed.add(agent.name)
        for agent in self.agents:
            if agent.path:
                self._walk(agent, emit, dirty_objects)
                moved.add(agent.name)
                if not agent.path:
                    changed.add(agent.name)

        with self.save.transaction():
            self.save.upsert_agents(self._agent_row(self.agent(n)) for n in sorted(changed))
            self.save.move_agents((a.tile[0], a.tile[1], a.name) for a in self.agents
                                  if a.name in moved and a.name not in changed)
            self.save.set_objects((o, self.objects[o]) for o in sorted(dirty_objects))
            self.save.add_events((e.tick, e.time, e.agent, e.kind, e.text, json.dumps(e.data))
                                 for e in events)
            self.save.add_calls(
                (t, stamp, c.agent, c.task, c.prompt, c.raw_answer, c.parsed_answer, c.prompt_tokens,
                 c.completion_tokens, c.cached_tokens, c.ms, c.backend, c.model, c.note)
                for t, c in self._calls)
            self.save.set_meta({"tick": self.tick, "game_time": stamp})
        self._calls.clear()
        return events

    def _perceive(self, emit, changed: set[str]) -> None:
        s = self.settings
        bodies = [Body(a.name, a.tile, a.arena, a.doing) for a in self.agents]
        for agent, body in zip(self.agents, bodies):
            if agent.asleep:
                continue
            for seen in perceive(self.world, body, bodies, self.objects, s.vision_radius,
                                 s.attention_bandwidth):
                if seen.description in agent.recent:
                    continue  # retention: already among the latest percepts
                agent.recent.append(seen.description)
                while len(agent.recent) > s.retention:
                    agent.recent.popleft()
                emit(agent.name, "perceived", f"{agent.name} sees: {seen.description}",
                     subject=seen.subject, distance=seen.distance)
                changed.add(agent.name)

    def _decide(self, agent: Agent, now: datetime, emit, dirty: set[str]) -> None:
        here = self.world.arena_at(agent.tile)
        current = here.address if here else ""
        action, new = agent.mind.next_action(now, current)
        if not new:
            return
        self._release(agent, emit, dirty)
        emit(agent.name, "started", f"{agent.name}: {action.describe()}",
             activity=action.activity, address=action.address, end=action.end.strftime(TIME_FMT))
        goal = self._tile_for(agent, action.address)
        agent.dest = goal
        agent.path = deque(self.paths.path(agent.tile, goal))
        if agent.path:
            emit(agent.name, "moved", f"{agent.name} walks to {pretty(action.address)}",
                 src=list(agent.tile), dst=list(goal), steps=len(agent.path))
        else:
            self._arrive(agent, emit, dirty)

    def _tile_for(self, agent: Agent, address: str) -> Tile:
        """A tile of the object: objects with several tiles seat several agents."""
        tiles = self.world.objects[address].tiles
        return tiles[stable_int(self.world.seed, agent.name, address) % len(tiles)]

    def _walk(self, agent: Agent, emit, dirty: set[str]) -> None:
        agent.tile = agent.path.popleft()
        arena = self.world.arena_at(agent.tile)
        index = arena.index if arena else -1
        if index != agent.arena:
            agent.arena = index
            where = pretty(arena.address) if arena else "the street"
            emit(agent.name, "entered", f"{agent.name} enters {where}",
                 arena=arena.address if arena else None)
        if not agent.path:
            self._arrive(agent, emit, dirty)

    def _arrive(self, agent: Agent, emit, dirty: set[str]) -> None:
        action = agent.action
        assert action is not None
        agent.dest = None
        emit(agent.name, "arrived", f"{agent.name} arrives at {pretty(action.address)}",
             address=action.address, activity=action.activity)
        obj = self.world.objects[action.address]
        agent.using = action.address
        self.users.setdefault(action.address, set()).add(agent.name)
        state = agent.mind.object_state(obj.name)
        self._set_object(action.address, state, agent.name, emit, dirty)

    def _release(self, agent: Agent, emit, dirty: set[str]) -> None:
        if agent.using is None:
            return
        users = self.users.get(agent.using, set())
        users.discard(agent.name)
        if not users:
            self._set_object(agent.using, self.world.objects[agent.using].initial_state,
                             agent.name, emit, dirty)
        agent.using = None

    def _set_object(self, address: str, state: str, by: str | None, emit, dirty: set[str]) -> None:
        if self.objects[address] == state:
            return
        self.objects[address] = state
        dirty.add(address)
        emit(by, "object", f"{pretty(address)} is {state}", address=address, state=state)

    def _agent_row(self, a: Agent) -> tuple:
        act = a.action
        return (a.name, a.tile[0], a.tile[1], json.dumps(list(a.dest)) if a.dest else None,
                act.describe() if act else None, act.address if act else None, a.state_json())

    # --- running ------------------------------------------------------------------------------

    def run_until(self, when: datetime, stop: Callable[[], bool] = lambda: False,
                  on_tick: Callable[[list[Event]], None] | None = None) -> None:
        """Tick until game time `when` (or `stop()` says so, checked between ticks)."""
        while self.now < when and not stop():
            events = self.step()
            if on_tick:
                on_tick(events)
