"""Information diffusion (SPEC 9): who knows a declared fact, since when, and from whom.

An agent knows a fact from its first memory about it (the fact's keywords); that memory is
traced to how it was learned: known at the start, told in a conversation (the chat record, or
a record citing it), seen (an observation of someone doing it), an inner voice, or its own idea.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from smalltown.eval.town import Town
from smalltown.store.records import Memory
from smalltown.world.model import Fact


@dataclass(frozen=True)
class Learned:
    agent: str
    time: datetime
    memory: Memory  # the first record about the fact
    how: str  # "start" | "told" | "saw" | "inner voice" | "own"
    source: str | None  # who it came from (told, saw), when known


@dataclass
class Spread:
    fact: Fact
    agents: list[str]
    start: datetime
    end: datetime
    learned: dict[str, Learned]  # per agent who ever knew it, in the order they learned it

    def known_by(self, t: datetime) -> list[str]:
        return [a for a, l in self.learned.items() if l.time <= t]

    def curve(self) -> list[tuple[datetime, int]]:
        """How many agents know it, at the start and after each change, to the end."""
        points = [(self.start, len(self.known_by(self.start)))]
        for l in self.learned.values():
            if l.time > self.start:
                if points[-1][0] == l.time:
                    points[-1] = (l.time, points[-1][1] + 1)
                else:
                    points.append((l.time, points[-1][1] + 1))
        return points + [(self.end, points[-1][1])]

    def edges(self) -> list[tuple[str, str, datetime, str]]:
        """The spread graph: (from, to, when, how) for each agent who heard it from someone."""
        return [(l.source, l.agent, l.time, l.how) for l in self.learned.values()
                if l.source is not None and l.how in ("told", "saw")]


def spread(town: Town, fact: Fact) -> Spread:
    learned: dict[str, Learned] = {}
    for m in town.memories:  # in time order: the first record about the fact is how it arrived
        if m.agent not in learned and fact.about(m.description):
            how, source = trace(town, fact, m)
            learned[m.agent] = Learned(m.agent, m.created, m, how, source)
    return Spread(fact, town.agents, town.start, town.end, learned)


def trace(town: Town, fact: Fact, m: Memory, depth: int = 0) -> tuple[str, str | None]:
    """How a record about the fact came to be: follow its evidence back to a conversation, a
    sight, an inner voice or the start."""
    if m.id in town.whispers:
        return "inner voice", None
    if m.kind == "chat":
        return "told", town.partner.get(m.id)
    cited = [town.by_id[e] for e in m.evidence if e in town.by_id]
    about = [c for c in cited if fact.about(c.description)]
    if about and depth < 50:
        first = min(about, key=lambda c: (c.created, c.id))
        return trace(town, fact, first, depth + 1)
    chat = next((c for c in cited if c.kind == "chat"), None)
    if chat is not None:  # learned in that conversation, phrased afresh
        return "told", town.partner.get(chat.id)
    if m.created <= town.start:
        return "start", None
    if m.kind == "observation":
        seen = town.people_in(m.description)
        if seen and seen[0] != m.agent and m.description.startswith(seen[0]):
            return "saw", seen[0]
    return "own", None
