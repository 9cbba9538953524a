"""Deciding each due agent's next action: the model-heavy part of a tick, asked of every due
agent at once (the crowd), the results taken in agent order.

With `think_ahead`, an agent whose action ends before the next grid tick has its next action
decided on this one (`ahead`), beside the tick's encounters (those the weighing cannot touch
before it, the rest once the decisions are known), and takes it up when the action ends
(sim/simulation.py). A thought touches only its own mind, and its calls are
logged at a phase of their own in agent order (`join`), so the run is the same at any
concurrency."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from datetime import datetime
from typing import Callable

from smalltown.llm.backend import CallRecord
from smalltown.mind import controller
from smalltown.state.agent import Action
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.movement import Movement
from smalltown.world.model import World


class Thinking:
    def __init__(self, world: World, crowd: Crowd, movement: Movement, prefetch: bool = False):
        self.world = world
        self.crowd = crowd
        self.movement = movement
        # (thinking on a grid) the state the action's object takes when used is asked with the
        # action, so an arrival between grid ticks asks nothing: the same question (it names the
        # action's start), asked sooner, and for an object the agent may not reach
        self.prefetch = prefetch
        self._local = threading.local()
        # thoughts out, in the order sent: (agent, the action they follow, the decisions, their
        # calls, the phase of the call log they are logged at)
        self._out: list[tuple[Agent, Action, Future, list[CallRecord], int]] = []

    def next_actions(self, agents: list[Agent], now: datetime,
                     horizon: datetime | None = None) -> list[tuple[Action, bool, list[Action]]]:
        """Each agent's action now (and whether it is new), and with a `horizon` (`think_ahead`) the
        ones after it that begin by then, decided ahead."""
        def think(agent: Agent) -> tuple[Action, bool, list[Action]]:
            here = self.world.arena_at(agent.tile)
            action, new = controller.next_action(agent.mind, now, here.address if here else "")
            self._object_state(agent, action)
            return action, new, self._after(agent, action, horizon) if horizon else []

        return self.crowd.each(agents, think)

    def _after(self, agent: Agent, action: Action, horizon: datetime) -> list[Action]:
        """The plan's actions after `action`, each decided now, while they begin by `horizon`."""
        out: list[Action] = []
        while action.end <= horizon:
            current = action.address.rsplit(":", 1)[0] if action.address.count(":") == 2 else ""
            nxt = agent.mind.plan_ahead(action.end, current)
            self._object_state(agent, nxt)
            out.append(nxt)
            if nxt.end <= action.end:  # (a plan always moves on; never loop on one that does not)
                break
            action = nxt
        return out

    def _object_state(self, agent: Agent, action: Action) -> None:
        thing = self.world.objects.get(action.address)
        if self.prefetch and thing is not None:
            agent.mind.object_state(thing.name, action)

    def calls(self) -> list[CallRecord] | None:
        """The call list of the thought this thread is running (None outside one)."""
        return getattr(self._local, "calls", None)

    def ahead(self, agents: list[Agent], involved: set[str], now: datetime, horizon: datetime) -> None:
        """Send out the next actions of each agent whose action ends by `horizon` (the next grid
        tick), but those in `involved` (the encounters may act or talk for them) and those with
        theirs out already: decided for when the action ends, and the ones after it that begin
        by `horizon`; taken in with `join`."""
        self.crowd.phase += 1
        phase = self.crowd.phase  # the thoughts' calls' place in this tick's call log
        self.crowd.phase += 1
        out = {a.name for a, *_ in self._out}
        for agent in agents:
            after = agent.action
            if (agent.name in involved or agent.name in out or agent.ahead is not None or after is None
                    or not now < after.end <= horizon):
                continue
            arena = self.world.arena_at(agent.dest or agent.tile)  # where it will be: its walk's end
            current, calls = arena.address if arena else "", []

            def run(agent=agent, after=after, current=current, calls=calls) -> list[Action]:
                self._local.calls = calls
                try:
                    first = agent.mind.plan_ahead(after.end, current)
                    self._object_state(agent, first)
                    return [first] + self._after(agent, first, horizon)
                finally:
                    self._local.calls = None

            self._out.append((agent, after, self.crowd.submit(run), calls, phase))

    def join(self, changes: Changes, log: Callable[[int, CallRecord], None]) -> None:
        """The thoughts out, in the order sent, kept with their agents (`Agent.ahead`); their
        calls logged with `log(phase, call)` at the phase each was sent in."""
        out, self._out = self._out, []
        for agent, after, future, calls, phase in out:
            actions = self.crowd.result(future)
            for c in calls:
                log(phase, c)
            agent.ahead = (after, actions)
            changes.changed.add(agent.name)

    def take_up(self, agents: list[Agent], now: datetime, changes: Changes) -> None:
        """Agents whose action has ended take up the next one decided ahead, unless the action it
        was to follow was changed meanwhile (then it is decided afresh on the grid)."""
        for agent in agents:
            if agent.ahead is None or not agent.mind.due(now):
                continue
            (after, actions), a, agent.ahead = agent.ahead, agent.action, None
            changes.changed.add(agent.name)
            if a is not None and (a.activity, a.address, a.start) == (after.activity, after.address, after.start):
                action, new = controller.begin(agent.mind, actions[0], now)
                self.movement.start(agent, action, new, changes)
                if actions[1:]:
                    agent.ahead = (action, actions[1:])
