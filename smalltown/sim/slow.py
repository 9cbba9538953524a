"""The tick's phase for slow modules: apply the answers due now (sim/later.py), then ask the
questions due now, module by module in the registry's order (mind/modules.py: goal generation,
role inference, reflection with `slow_reflection`, and any module registered after them)."""

from __future__ import annotations

from datetime import datetime

from smalltown.config import Settings
from smalltown.llm.backend import CallRecord
from smalltown.llm.tasks import Output, Task
from smalltown.mind import modules
from smalltown.mind.module import Applied, Emit, Module, TownView
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.later import Applier, Later
from smalltown.sim.public import Public
from smalltown.world.model import World


def running(settings: Settings) -> bool:
    """Whether a run under `settings` has a slow phase: some registered slow module is on."""
    return bool(modules.running(settings))


def emit(agent: Agent, events: list[Emit], changes: Changes) -> None:
    for e in events:
        changes.emit(agent.name, e.kind, e.text, **e.data)
    if events:
        changes.changed.add(agent.name)


class SlowModules:
    def __init__(self, world: World, crowd: Crowd, agents: list[Agent], settings: Settings, public: Public,
                 grid: int = 1):
        self.world = world
        self.agents = agents  # the simulation's list, in agent order (its names: the town the questions see)
        self.public = public  # the others as they were at the last tick's end (sim/public.py)
        self.modules = modules.running(settings)
        # every registered step is applied (a question a save holds is answered whatever is on now)
        appliers = {s.key: self._applier(m, i) for m in modules.MODULES for i, s in enumerate(m.steps)}
        self.later = Later(crowd, settings.slow_lag_ticks, appliers, grid)

    def _town(self) -> TownView:
        """The town as a question may see it: the others as they were at the end of the last tick
        (what they did and needed then), never as another group of this tick left them."""
        return TownView(self.world.needs, [a.name for a in self.agents], self.public.other)

    def step(self, tick: int, now: datetime, changes: Changes, calls: list[tuple[int, int, CallRecord]],
             agents: list[Agent]) -> None:
        """The tick's part for `agents` (the town, or a group of it: sim/groups.py)."""
        self.later.step(tick, agents, changes, calls)
        town = self._town()
        for m in self.modules:
            for agent in agents:
                if m.is_due(agent.mind, now, town):
                    mark = agent.mind.memory.mark()
                    task = m.ask(agent.mind, now, town)
                    self.later.ask(agent, m.steps[0].key, task, tick, agent.mind.memory.take_retrievals(mark))
                    changes.changed.add(agent.name)

    def outcomes(self, now: datetime, changes: Changes, agents: list[Agent]) -> None:
        """At the end of the tick: each module's outcome, given the kinds of each agent's events this tick."""
        for m in self.modules:
            if m.outcome is None:
                continue
            for agent in agents:
                kinds = {e.kind for e in changes.events if e.agent == agent.name}
                emit(agent, m.outcome(agent.mind, now, kinds), changes)

    def _applier(self, module: Module, index: int) -> Applier:
        def apply(agent: Agent, out: Output, shown: Task, changes: Changes) -> None:
            mark = agent.mind.memory.mark()
            applied: Applied = module.steps[index].apply(agent.mind, out, shown, changes.time)
            emit(agent, applied.events, changes)
            if applied.then is not None:
                if index + 1 >= len(module.steps):
                    raise ValueError(f"module {module.name!r}: its last step asked a next question")
                self.later.ask(agent, module.steps[index + 1].key, applied.then, changes.tick,
                               agent.mind.memory.take_retrievals(mark))
        return apply
