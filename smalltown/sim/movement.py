"""The movement system: an agent heads for the object its action names, walks one tile a tick,
enters arenas, and arrives (then uses the object)."""

from __future__ import annotations

from collections import deque

from smalltown.mind.awareness import Outcome
from smalltown.state.agent import Action
from smalltown.seeded import stable_int
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.objects import Objects
from smalltown.store.schema import TIME_FMT
from smalltown.world.model import Arena, Tile, World, pretty
from smalltown.world.paths import Paths


class Movement:
    def __init__(self, world: World, paths: Paths, objects: Objects):
        self.world = world
        self.paths = paths
        self.objects = objects

    def start(self, agent: Agent, action: Action, new: bool, changes: Changes) -> None:
        """The agent's next action: leave what it used, and walk to where the action is (or use it
        at once, if already there)."""
        if new:
            changes.emit(agent.name, "started", f"{agent.name}: {action.describe()}",
                         activity=action.activity, address=action.address, end=action.end.strftime(TIME_FMT),
                         calls=action.calls)
        if agent.using == action.address:
            return  # the next step of the same activity, in the same place
        self.objects.release(agent, changes)
        goal = self.tile_for(agent, action.address)
        if agent.path and agent.dest == goal:
            return  # still on the way there
        agent.dest = goal
        agent.path = deque(self.paths.path(agent.tile, goal))
        if agent.path:
            changes.emit(agent.name, "moved", f"{agent.name} walks to {pretty(action.address)}",
                         src=list(agent.tile), dst=list(goal), steps=len(agent.path))
        else:
            self.arrive(agent, changes)

    def halt(self, agent: Agent) -> None:
        """Stop where it stands (to talk)."""
        agent.path.clear()
        agent.dest = None

    def tile_for(self, agent: Agent, address: str) -> Tile:
        """A tile of the object: objects with several tiles seat several agents."""
        tiles = self.world.objects[address].tiles
        return tiles[stable_int(self.world.seed, agent.name, address) % len(tiles)]

    def walk(self, agent: Agent, changes: Changes) -> None:
        """One step along its path (none into the arena it is going to, when that is closed)."""
        ahead = self.world.arena_at(agent.path[0])
        if ahead is not None and ahead.index != agent.arena and self._closed(agent, ahead, changes):
            return
        agent.tile = agent.path.popleft()
        arena = self.world.arena_at(agent.tile)
        index = arena.index if arena else -1
        if index != agent.arena:
            agent.arena = index
            if arena:
                agent.mind.enter(arena.sector, arena.name, list(arena.objects))
            where = pretty(arena.address) if arena else "the street"
            changes.emit(agent.name, "entered", f"{agent.name} enters {where}",
                         arena=arena.address if arena else None)
        if not agent.path:
            self.arrive(agent, changes)

    def arrive(self, agent: Agent, changes: Changes) -> None:
        action = agent.action
        assert action is not None
        agent.dest = None
        changes.emit(agent.name, "arrived", f"{agent.name} arrives at {pretty(action.address)}",
                     address=action.address, activity=action.activity, tile=list(agent.tile))
        if not self.objects.use(agent, action.address, changes):
            changes.emit(agent.name, "blocked", f"{agent.name} finds {pretty(action.address)} taken",
                         address=action.address, reason="taken", place=action.address)
            agent.outcome = Outcome(action.address, action.address, taken=True)

    def _closed(self, agent: Agent, arena: Arena, changes: Changes) -> bool:
        """The agent is about to enter a closed arena of the sector it is going to: it stops at the
        edge. (Other sectors' arenas it passes through are not checked: paths do not know hours.)
        What was closed is the sector when its hours closed it, else the arena."""
        action = agent.action
        if action is None or action.address.split(":")[0] != arena.sector:
            return False
        until = self.world.closed_until(arena, changes.time)
        if until is None:
            return False
        self.halt(agent)
        place = arena.sector if arena.hours is None else arena.address
        changes.emit(agent.name, "blocked", f"{agent.name} finds {pretty(place)} closed",
                     address=action.address, reason="closed", place=place, until=until.strftime(TIME_FMT))
        agent.outcome = Outcome(action.address, place, closed=True, until=until)
        return True
