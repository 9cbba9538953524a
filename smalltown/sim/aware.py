"""Action awareness in the tick (mind/awareness.py): after movement, each agent whose action the
engine stopped this tick (a closed arena, a taken object) compares it with what it expected; a
mismatch noticed is an "unexpected" event. With `action_awareness` off nothing is noticed: the
agent stands where it was stopped until its action ends."""

from __future__ import annotations

from datetime import datetime

from smalltown.mind import awareness
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.store.schema import TIME_FMT


def notice_all(agents: list[Agent], now: datetime, changes: Changes, on: bool) -> None:
    for agent in agents:
        outcome, agent.outcome = agent.outcome, None
        if outcome is None or not on:
            continue
        text = awareness.notice(agent.mind, outcome, now)
        if text:
            until = agent.mind.state.unavailable[outcome.place]
            changes.emit(agent.name, "unexpected", text, address=outcome.address, place=outcome.place,
                         reason="closed" if outcome.closed else "taken", until=until.strftime(TIME_FMT))
            changes.changed.add(agent.name)
