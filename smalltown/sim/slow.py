"""The tick's phase for slow modules (issue 16): apply the answers due now (sim/later.py), then
ask the questions due now. Goal generation (mind/goals.py) is the first such module."""

from __future__ import annotations

from datetime import datetime

from smalltown.llm.backend import CallRecord
from smalltown.llm.tasks import Other, Output, SocialGoalOut
from smalltown.mind import goals
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.later import Later
from smalltown.world.model import World


class SlowModules:
    def __init__(self, world: World, crowd: Crowd, agents: list[Agent], lag: int):
        self.world = world
        self.agents = agents  # the simulation's list, in agent order
        self.later = Later(crowd, lag, {goals.MODULE: self._goal})

    def step(self, tick: int, now: datetime, changes: Changes, calls: list[tuple[int, int, CallRecord]]) -> None:
        self.later.step(tick, self.agents, changes, calls)
        names = [a.name for a in self.agents]
        by_name = {a.name: a for a in self.agents}
        for agent in self.agents:
            if not goals.due(agent.mind, now):
                continue
            others = [Other(name=n, activity=by_name[n].doing, need=by_name[n].mind.state.goal_need)
                      for n in goals.known(agent.mind, names)]
            self.later.ask(agent, goals.MODULE, goals.question(agent.mind, now, self.world.needs, others), tick)
            changes.changed.add(agent.name)

    @staticmethod
    def _goal(agent: Agent, out: Output, changes: Changes) -> None:
        assert isinstance(out, SocialGoalOut)
        if goals.apply(agent.mind, out):
            changes.emit(agent.name, "goal", f"{agent.name}'s goal: {agent.mind.state.goal}",
                         goal=agent.mind.state.goal, need=agent.mind.state.goal_need)
