"""Say–do coherence (issue 16): the model-free checker of the promises agents make in talk, and
the rate of kept promises read back from a save's event log.

CLOCK: every tick (cheap: only agents with an open promise are looked at). A promise is KEPT when
the agent is in the promised sector within `commitment_window_minutes` of its time, BROKEN when
that window has passed without it; either way it leaves the agent's state and is an event
("kept" / "broken"). The engine also emits here what the minds' controllers put in their
outboxes ("decided", "committed"), in agent order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Iterable

from smalltown.mind import awareness
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.store.records import EventRow
from smalltown.store.save import open_reader
from smalltown.world.model import World

KINDS = ("committed", "kept", "broken")


def emit_outboxes(agents: list[Agent], changes: Changes) -> None:
    """What each mind's controller did this tick, as events (agent order, then the order done)."""
    for agent in agents:
        box = agent.mind.state.outbox
        if box:
            for kind, text, data in box:
                changes.emit(agent.name, kind, text, **data)
            box.clear()
            changes.changed.add(agent.name)


def check(agents: list[Agent], by_name: dict[str, Agent], world: World, now: datetime, window_minutes: int,
          changes: Changes, aware: bool = False) -> None:
    """Mark the promises whose place is reached in their window kept, those past it broken. With
    action awareness (`aware`), an agent keeping a promise to someone who is not there notices
    (`by_name`: the run's agents by name, to find the other)."""
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
                other = by_name.get(c.to)
                if aware and other is not None and _sector(world, other) != c.where:
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


@dataclass(frozen=True)
class Rate:
    made: int
    kept: int
    broken: int

    @property
    def rate(self) -> float | None:
        """Kept of those decided (None: none decided yet)."""
        done = self.kept + self.broken
        return self.kept / done if done else None


def rate_of(events: Iterable[EventRow]) -> Rate:
    kinds = [e.kind for e in events]
    return Rate(kinds.count("committed"), kinds.count("kept"), kinds.count("broken"))


def rate_of_save(path: str | Path) -> Rate:
    """The kept-promise rate of a save, from its event log (through the store's reader)."""
    reader = open_reader(path)
    try:
        return rate_of(reader.events(kinds=KINDS))
    finally:
        reader.close()


def _sector(world: World, agent: Agent) -> str:
    arena = world.arena_at(agent.tile)
    return arena.address.split(":")[0] if arena else ""
