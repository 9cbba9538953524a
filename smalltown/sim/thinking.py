"""Deciding each due agent's next action: the model-heavy part of a tick, asked of every due
agent at once (the crowd), the results taken in agent order."""

from __future__ import annotations

from datetime import datetime

from smalltown.mind import controller
from smalltown.mind.state import Action
from smalltown.sim.agent import Agent
from smalltown.sim.crowd import Crowd
from smalltown.world.model import World


class Thinking:
    def __init__(self, world: World, crowd: Crowd, prefetch: bool = False):
        self.world = world
        self.crowd = crowd
        # (thinking on a grid) the state the action's object takes when used is asked with the
        # action, so an arrival between grid ticks asks nothing: the same question (it names the
        # action's start), asked sooner, and for an object the agent may not reach
        self.prefetch = prefetch

    def next_actions(self, agents: list[Agent], now: datetime) -> list[tuple[Action, bool]]:
        def think(agent: Agent) -> tuple[Action, bool]:
            here = self.world.arena_at(agent.tile)
            action, new = controller.next_action(agent.mind, now, here.address if here else "")
            thing = self.world.objects.get(action.address)
            if self.prefetch and thing is not None:
                agent.mind.object_state(thing.name)
            return action, new

        return self.crowd.each(agents, think)
