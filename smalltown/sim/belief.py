"""The engine's "belief" phase (mind/belief.py): after the tick's talks, each line said is heard by
its listener and overheard by every agent within `hearing_radius` tiles of the speaker (its
exposures), then counts for its speaker's own level, in the order the lines were said. Priests
take their doctrines' top level at the first tick."""

from __future__ import annotations

from datetime import datetime

from smalltown.mind import belief
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.heard import hearers
from smalltown.sim.slow import emit
from smalltown.world.doctrines import level_in
from smalltown.world.model import World


class Belief:
    def __init__(self, world: World, agents: list[Agent], radius: int):
        self.doctrines = list(world.doctrines)
        self.agents = agents  # the simulation's list, in agent order
        self.radius = radius
        self.priests = {p for d in self.doctrines for p in d.priests}
        self.ordained: set[str] = set()  # the priests ordained (each in its own pass of the first tick)

    def step(self, now: datetime, changes: Changes, by_name: dict[str, Agent], agents: list[Agent]) -> None:
        """The tick's lines said in talks begun by `agents` (the town, or a group of it)."""
        if not self.doctrines:
            return
        names = {a.name for a in agents}
        for name in sorted(self.priests & names - self.ordained):  # (a resumed run's priests hold it already)
            if belief.ordain(by_name[name].mind, self.doctrines, now):
                changes.changed.add(name)
            self.ordained.add(name)
        for conv in changes.conversations:
            if conv.initiator not in names:
                continue  # (another group's talk)
            for line in conv.lines:
                self.line(line.speaker, conv.other if line.speaker == conv.initiator else conv.initiator,
                          line.text, now, changes, by_name, agents)

    def line(self, speaker: str, listener: str, text: str, now: datetime, changes: Changes,
             by_name: dict[str, Agent], agents: list[Agent]) -> None:
        said = by_name.get(speaker)
        if said is None:
            return
        levels = [(d, level_in(d, text)) for d in self.doctrines]
        if not any(lvl for _, lvl in levels):
            return
        for hearer in hearers(agents, said, listener, by_name, self.radius):
            kept = [belief.hear(hearer.mind, d, speaker, lvl, changes.tick, now) for d, lvl in levels]
            if any(kept):
                changes.changed.add(hearer.name)
        converted = [e for d, _ in levels if (e := belief.say(said.mind, d, text, now)) is not None]
        emit(said, converted, changes)
