"""The objects system: each object's state, who is using it, and what use and rest do to it."""

from __future__ import annotations

from typing import Mapping

from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.world.model import World, pretty
from smalltown.world.schema import object_state_problem


class Objects:
    def __init__(self, world: World):
        self.world = world
        self.states: dict[str, str] = {a: o.initial_state for a, o in world.objects.items()}
        self.users: dict[str, set[str]] = {}

    def set(self, address: str, state: str, by: str | None, changes: Changes) -> None:
        if self.states[address] == state:
            return
        self.states[address] = state
        changes.objects.add(address)
        changes.emit(by, "object", f"{pretty(address)} is {state}", address=address, state=state)

    def edit(self, address: str, state: str, changes: Changes) -> None:
        """The user's rewrite of a state, held to the world file's rule for one."""
        if address not in self.states:
            raise KeyError(f"no object {address!r} (addresses look like 'sector:arena:object')")
        problem = object_state_problem(state)
        if problem:
            raise ValueError(f"the state {str(state)[:60]!r}: {problem}")
        self.set(address, state, None, changes)

    def use(self, agent: Agent, address: str, changes: Changes) -> bool:
        """An agent arrived at `address`: the object takes the state its mind expects of its use.
        False when it holds no more users (its capacity): it is not used."""
        capacity = self.world.objects[address].capacity
        if capacity is not None and len(self.users.get(address, set()) - {agent.name}) >= capacity:
            return False
        agent.using = address
        self.users.setdefault(address, set()).add(agent.name)
        self.set(address, agent.mind.object_state(self.world.objects[address].name), agent.name, changes)
        return True

    def release(self, agent: Agent, changes: Changes) -> None:
        """The agent leaves what it used; an object nobody uses goes back to rest."""
        if agent.using is None:
            return
        users = self.users.get(agent.using, set())
        users.discard(agent.name)
        if not users:
            self.set(agent.using, self.world.objects[agent.using].initial_state, agent.name, changes)
        agent.using = None

    def unusual(self, address: str, by_name: Mapping[str, Agent]) -> bool:
        """An object in a state that neither rest nor its users' use of it explains (a stove burning
        with nobody at it, a state the user wrote): worth reacting to. What use does to an object is
        what its users' minds were told it does (their object states, kept in their saved state), so
        the test holds after a resume. Only its users are asked: they stand on it, within sight of
        whoever sees it, so the answer is the same whichever group of the tick asks (sim/groups.py)."""
        state = self.states[address]
        if state == self.world.objects[address].initial_state:
            return False
        key = self.world.objects[address].name + "\x1f"
        users = [by_name[n] for n in sorted(self.users.get(address, ())) if n in by_name]
        return not any(v == state for a in users for k, v in a.mind.state.object_states.items() if k.startswith(key))
