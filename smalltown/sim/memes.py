"""The engine's "memes" phase (mind/memes.py): at each `meme_every_minutes` of game time since the
world's start, one meme summary per town and one for the rural area, asked at once (sim/crowd.py),
each answer a row of the save's `memes` table written with the tick. The goals are those the public
record holds (sim/public.py: as at the end of the last tick), so a tick run group by group asks the
same questions. The period is the clock's, so
a resumed run asks at the same times. A group whose goals are the same as at its last summary (the
night, when no one takes up a goal) is not asked again: its last summary stands, and the period has
no row and no call of it. (A resumed run asks every group once more: what it last showed is not kept.)"""

from __future__ import annotations

from datetime import datetime

from smalltown.llm.asker import Asker
from smalltown.llm.tasks.memes import MemeSummaryOut, TownGoal
from smalltown.mind import memes
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.public import Public
from smalltown.store.records import MemeRow
from smalltown.world.model import World


class Memes:
    def __init__(self, world: World, agents: list[Agent], crowd: Crowd, asker: Asker, every: int, public: Public):
        self.world, self.agents, self.crowd, self.asker = world, agents, crowd, asker
        self.public = public  # each town's goals as they were at the end of the last tick (sim/public.py)
        self.every = every
        self.towns = [t.name for t in world.towns] + [""]  # "" the rural area
        self.names = memes.names_of(world)  # a keyword naming only these marks no topic
        self.last: int | None = None  # the period last asked (None: the run's first tick sets it)
        self.shown: dict[str, list[TownGoal]] = {}  # each group's goals at its last summary

    def period(self, now: datetime) -> int:
        return int((now - self.world.start).total_seconds() // 60) // self.every

    def step(self, now: datetime, changes: Changes) -> None:
        p = self.period(now)
        if self.last is None or p <= self.last:
            self.last = p if self.last is None else self.last
            return
        self.last = p
        homes: dict[str, list[str]] = {t: [] for t in self.towns}
        for a in self.agents:
            homes.setdefault(self.world.town_of(a.name), []).append(a.name)
        # (the goals at the end of the tick before: the same whatever group of this tick ran first)
        asked = [(t, q) for t in self.towns if (q := memes.summary(t, self.public.goals(homes[t]), now)) is not None
                 and q.goals != self.shown.get(t)]

        def ask(item: tuple) -> tuple[MemeSummaryOut, str]:
            town, q = item
            out = self.asker.ask(memes.asker(town), q)
            return out, self.asker.last_ref["key"]

        for (town, q), (out, key) in zip(asked, self.crowd.each(asked, ask)):
            self.shown[town] = q.goals
            changes.memes.append(MemeRow(changes.tick, changes.stamp, town, memes.topics(out, self.names), key))
