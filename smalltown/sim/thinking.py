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
    def __init__(self, world: World, crowd: Crowd):
        self.world = world
        self.crowd = crowd

    def next_actions(self, agents: list[Agent], now: datetime) -> list[tuple[Action, bool]]:
        def think(agent: Agent) -> tuple[Action, bool]:
            here = self.world.arena_at(agent.tile)
            return controller.next_action(agent.mind, now, here.address if here else "")

        return self.crowd.each(agents, think)
