"""The tick's phase for slow modules (issue 16): apply the answers due now (sim/later.py), then
ask the questions due now. Goal generation (mind/goals.py) and, with `slow_reflection`, reflection
(mind/reflect.py: two steps, questions then insights) are such modules."""

from __future__ import annotations

from datetime import datetime

from smalltown.llm.backend import CallRecord
from smalltown.llm.tasks import (Other, Output, ReflectionInsights, ReflectionInsightsOut, ReflectionQuestions,
                                 ReflectionQuestionsOut, SocialGoalOut, Task)
from smalltown.llm.tasks import InferRoleOut
from smalltown.mind import goals, reflect, roles
from smalltown.mind.memory import Memory
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.later import Later
from smalltown.world.model import World


def reflected(agent: Agent, insights: list[Memory], changes: Changes) -> None:
    """The event a reflection ends with (inline or slow)."""
    changes.emit(agent.name, "reflected", f"{agent.name} reflects: " + " / ".join(m.description for m in insights),
                 memories=[m.id for m in insights])
    changes.changed.add(agent.name)


class SlowModules:
    def __init__(self, world: World, crowd: Crowd, agents: list[Agent], lag: int, grid: int = 1):
        self.world = world
        self.agents = agents  # the simulation's list, in agent order
        self.later = Later(crowd, lag, {goals.MODULE: self._goal, reflect.QUESTIONS: self._questions,
                                        reflect.INSIGHTS: self._insights, roles.MODULE: self._role}, grid)

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
        for agent in self.agents:
            if roles.due(agent.mind, now):
                self.later.ask(agent, roles.MODULE, roles.question(agent.mind, now), tick)
                changes.changed.add(agent.name)
        for agent in self.agents:
            if reflect.due_slow(agent.mind, now):
                self.later.ask(agent, reflect.QUESTIONS, reflect.ask_questions(agent.mind, now), tick)
                changes.changed.add(agent.name)

    def outcomes(self, now: datetime, changes: Changes) -> None:
        """At the end of the tick: each goal whose block ended so, a success or a failure (a new
        goal is asked at the next tick)."""
        for agent in self.agents:
            kinds = {e.kind for e in changes.events if e.agent == agent.name}
            goal = agent.mind.state.goal
            result = goals.outcome(agent.mind, now, kinds)
            if result is not None:
                changes.emit(agent.name, "goal_ended", f"{agent.name}'s goal {result}: {goal}", goal=goal,
                             outcome=result)
                changes.changed.add(agent.name)

    @staticmethod
    def _goal(agent: Agent, out: Output, shown: Task, changes: Changes) -> None:
        assert isinstance(out, SocialGoalOut)
        before = roles.window(agent.mind) if agent.mind.settings.roles else []
        if goals.apply(agent.mind, out, changes.time):
            changes.emit(agent.name, "goal", f"{agent.name}'s goal: {agent.mind.state.goal}",
                         goal=agent.mind.state.goal, need=agent.mind.state.goal_need)
            roles.took_goal(agent.mind, agent.mind.state.goal_need, before)

    @staticmethod
    def _role(agent: Agent, out: Output, shown: Task, changes: Changes) -> None:
        assert isinstance(out, InferRoleOut)
        previous = roles.apply(agent.mind, out)
        if previous is not None:
            role = agent.mind.state.role
            changes.emit(agent.name, "role", f"{agent.name}'s role: {role}" + (f" (was {previous})" if previous else ""),
                         role=role, previous=previous)

    def _questions(self, agent: Agent, out: Output, shown: Task, changes: Changes) -> None:
        """Reflection's first step back: retrieve, and ask for the insights now."""
        assert isinstance(out, ReflectionQuestionsOut) and isinstance(shown, ReflectionQuestions)
        task = reflect.take_questions(agent.mind, out, shown, changes.time)
        if task is None:
            reflected(agent, [], changes)  # nothing retrieved to rest an insight on
        else:
            self.later.ask(agent, reflect.INSIGHTS, task, changes.tick)

    @staticmethod
    def _insights(agent: Agent, out: Output, shown: Task, changes: Changes) -> None:
        assert isinstance(out, ReflectionInsightsOut) and isinstance(shown, ReflectionInsights)
        reflected(agent, reflect.keep(agent.mind, out, shown.statements, changes.time), changes)
