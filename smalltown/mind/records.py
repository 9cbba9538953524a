"""Memories as tasks carry them: `Record`s with their times, the agents they name and the world's
declared facts they are about.

Who and what a text concerns is read with the world's own data (its agents' names, its facts'
keywords: the same test `smalltown eval` uses), once per distinct text, so the typed fields cost
nothing after the first time and every backend sees the same ones.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cached_property

from smalltown.llm.tasks import Record
from smalltown.mind.memory import Memory, Scored
from smalltown.mind.travel import Atlas
from smalltown.world.model import Fact, Gathering, World, alternatives


class Lore:
    """What the world declares about itself that a mind uses: its agents' names (to know whom a
    memory names), its facts and the gatherings they announce. Shared by the town's minds."""

    def __init__(self, world: World):
        self.agents = [a.name for a in world.agents]
        self.atlas = Atlas(world)  # where the towns lie (travel between towns)
        self.facts = {f.name: f for f in world.facts}
        self.gatherings = list(world.gatherings)
        self.doctrines = list(world.doctrines)  # faiths (mind/belief.py)
        self.sectors = {name: {a.name: list(a.objects) for a in sec.arenas.values()}
                        for name, sec in world.sectors.items()}
        named = sorted({s for s in world.sectors} | {a.name for a in world.arenas}
                       | {o.name for o in world.objects.values()}, key=len, reverse=True)
        self._places = [n for n in named if any(a in n for a in self.agents)]
        self._tags: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        # An ASCII text can only be about a fact whose every keyword has an alternative inside it
        # (in lower case): a substring test far cheaper than the fact's word-start patterns. The
        # first keyword's alternatives are tried for all facts at once (a generated world of 500
        # agents declares 100 facts), the rest and the patterns only for the facts they leave.
        self._needles = [(f, [alts for k in f.keywords if (alts := _alternatives(k))])
                         for f in self.facts.values()]
        self._ascii = all(a.isascii() for _, ks in self._needles for alts in ks for a in alts)
        self._first: dict[str, list[int]] = {}
        self._always: list[int] = []  # facts with no keyword to look for: `Fact.about` holds for any text
        for i, (_, keys) in enumerate(self._needles):
            for a in keys[0] if keys else ():
                self._first.setdefault(a, []).append(i)
            if not keys:
                self._always.append(i)

    @cached_property
    def _names(self) -> re.Pattern[str] | None:
        names = sorted(self.agents, key=len, reverse=True)
        return re.compile("|".join(re.escape(n) for n in names)) if names else None

    def tags(self, text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(agents the text names by full name, facts it is about); a place named after someone
        ("Ann Lee's house") does not name them."""
        hit = self._tags.get(text)
        if hit is None:
            bare = text
            for place in self._places:
                bare = bare.replace(place, " ")
            about = tuple(dict.fromkeys(self._names.findall(bare))) if self._names else ()
            facts = self._about(text)
            hit = self._tags[text] = (about, facts)
            if len(self._tags) > 200_000:  # a long run's distinct texts: start over rather than grow
                self._tags.clear()
        return hit

    def facts_of(self, text: str) -> tuple[str, ...]:
        """The facts a text is about, as `tags` gives them, not kept (a scan of a whole stream)."""
        hit = self._tags.get(text)
        return hit[1] if hit is not None else self._about(text)

    def _about(self, text: str) -> tuple[str, ...]:
        """The facts the text is about (`Fact.about`), tried only where the substrings allow."""
        if not (self._ascii and text.isascii()):  # case folding beyond ASCII: no shortcut
            return tuple(f.name for f in self.facts.values() if f.about(text))
        low = text.lower()
        near = {i for a, facts in self._first.items() if a in low for i in facts}
        near.update(self._always)
        found = []
        for i in sorted(near):  # in the facts' declared order
            f, keys = self._needles[i]
            if all(any(a in low for a in alts) for alts in keys[1:]) and f.about(text):
                found.append(f.name)
        return tuple(found)

    def announced(self, fact: str) -> list[Gathering]:
        return [g for g in self.gatherings if g.fact == fact]

    def fact(self, name: str) -> Fact:
        return self.facts[name]


def _alternatives(keyword: str) -> tuple[str, ...]:
    """A keyword's alternatives as `Fact.about` reads them, in lower case."""
    return tuple(a.lower() for a in alternatives(keyword))


def record(lore: Lore, m: Memory, score: float = 0.0) -> Record:
    about, facts = lore.tags(m.description)
    return Record(id=m.id, time=m.created, kind=m.kind, text=m.description, importance=m.importance,
                  score=round(score, 6), about=about, facts=facts)


def scored(lore: Lore, results: list[Scored]) -> list[Record]:
    return [record(lore, s.memory, s.total) for s in results]


def pending(lore: Lore, kind: str, text: str, when: datetime, score: float = 0.0) -> Record:
    """A record noted but not filed yet (no id, no rating)."""
    about, facts = lore.tags(text)
    return Record(time=when, kind=kind, text=text, score=score, about=about, facts=facts)
