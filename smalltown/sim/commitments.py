"""Say–do coherence: the model-free checker of the promises agents make in talk (the
rate of kept promises is read back from a save's event log by eval/saydo.py).

CLOCK: every tick (cheap: only agents with an open promise are looked at). A promise is KEPT when
the agent is in the promised sector within `commitment_window_minutes` of its time, BROKEN when
that window has passed without it; either way it leaves the agent's state and is an event
("kept" / "broken"). The engine also emits here what the minds' controllers put in their
outboxes ("decided", "committed"), in agent order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from smalltown.mind import awareness
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.world.model import World


def emit_outboxes(agents: list[Agent], changes: Changes) -> None:
    """What each mind's controller did this tick, as events (agent order, then the order done)."""
    for agent in agents:
        box = agent.mind.state.outbox
        if box:
            for kind, text, data in box:
                changes.emit(agent.name, kind, text, **data)
            box.clear()
            changes.changed.add(agent.name)


def check(agents: list[Agent], sector_of: Callable[[Agent, str], str | None], world: World, now: datetime,
          window_minutes: int, changes: Changes, aware: bool = False) -> None:
    """Mark the promises whose place is reached in their window kept, those past it broken. With
    action awareness (`aware`), an agent keeping a promise to someone who is not there notices
    (`sector_of(agent, other)`: where the other is, None: no such agent; see phases.py
    `_commitment_checks`: seen where it is now when in sight, else as the last tick ended, so a
    group of the tick never reads where another group's agents are this tick)."""
    window = timedelta(minutes=window_minutes)
    for agent in agents:
        promises = agent.mind.state.commitments
        if not promises:
            continue
        sector = _sector(world, agent)
        still, absent = [], []
        for c in promises:
            data = {"to": c.to, "what": c.what, "where": c.where, "by": c.by.strftime("%H:%M")}
            if sector == c.where and abs(now - c.by) <= window:
                changes.emit(agent.name, "kept", f"{agent.name} keeps the promise to {c.to}: {c.what} at {c.where}",
                             **data)
                other = sector_of(agent, c.to) if aware else None
                if other is not None and other != c.where:
                    absent.append(c)
            elif now > c.by + window:
                changes.emit(agent.name, "broken", f"{agent.name} breaks the promise to {c.to}: {c.what} at "
                             f"{c.where} by {data['by']}", **data)
            else:
                still.append(c)
        if len(still) != len(promises):
            agent.mind.state.commitments = still
            changes.changed.add(agent.name)
        for c in absent:
            text = awareness.notice_absent(agent.mind, c.to, c.where, now)
            if text:
                changes.emit(agent.name, "unexpected", text, other=c.to, place=c.where, reason="absent")


def _sector(world: World, agent: Agent) -> str:
    arena = world.arena_at(agent.tile)
    return arena.address.split(":")[0] if arena else ""
