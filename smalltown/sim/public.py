"""The public record: each agent as the rest of the town may know it, as it was at the end of the
last tick (or command): what it is doing, the need its goal serves, its sector, its goals window.

The few reads of the town beyond what an agent can see or hear go through it: the goal question's
view of the others it knows (sim/slow.py), a kept promise's partner's whereabouts (action
awareness, sim/commitments.py), each town's goals for its meme summary (sim/memes.py). Read from the
last tick's end, they never see a state another agent writes during this tick, so the agents of a
tick may run as groups, in any order, with the same result (sim/groups.py). The record is brought up
to date when a tick is committed, for the agents whose row changed or who moved (all that these
read is in the row), and filled for every agent at the first tick of a run. In a world with an economy
it also holds what each agent held (refreshed for the givers and takers of the tick's ledger rows):
a decomposition's trade partners in another sector (sim/economy.py `options`) are read from it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from smalltown.llm.tasks import Other
from smalltown.llm.tasks.memes import TownGoal
from smalltown.mind import memes
from smalltown.sim.agent import Agent
from smalltown.world.model import World


class Seen(NamedTuple):
    doing: str
    need: str
    sector: str  # "" outdoors
    goals: tuple[TownGoal, ...]


class Public:
    def __init__(self, world: World, goals: bool = True, holdings: Callable[[str], dict[str, int]] | None = None,
                 kept: bool = True):
        self.world = world
        self.kept = kept  # False: nothing of the run reads it (none of its readers is on): not kept
        self.keeps_goals = goals  # (only memes read them: a run without is spared the work)
        self._rows: dict[str, Seen] = {}
        self._holdings = holdings  # (a world with an economy: what each holds, its ledger's)
        self._held: dict[str, dict[str, int]] = {}

    def of(self, agent: Agent) -> Seen:
        """What the record would say of `agent` now."""
        arena = self.world.arena_at(agent.tile)
        return Seen(agent.doing, agent.mind.state.goal_need, arena.sector if arena else "",
                    tuple(memes.goals_of([agent.mind])) if self.keeps_goals else ())

    def fill(self, agents: list[Agent]) -> None:
        """Every agent not yet in the record, as it is now (a run's first tick: the state opened)."""
        if self.kept and len(self._rows) < len(agents):
            self.refresh(a for a in agents if a.name not in self._rows)

    def refresh(self, agents: Iterable[Agent]) -> None:
        if not self.kept:
            return
        for a in agents:
            self._rows[a.name] = self.of(a)
            if self._holdings is not None:
                self._held[a.name] = self._holdings(a.name)

    def refresh_holdings(self, names: Iterable[str]) -> None:
        """Those whose holdings a tick's ledger rows changed (givers and takers)."""
        if self._holdings is not None and self.kept:
            for n in names:
                if n in self._held:
                    self._held[n] = self._holdings(n)

    def holdings(self, name: str) -> dict[str, int]:
        """What it held (the economy's trade partners, sim/economy.py `options`)."""
        return self._held.get(name, {})

    def other(self, name: str) -> Other:
        """An agent as the goal question shows it (mind/module.py TownView)."""
        row = self._rows[name]
        return Other(name=name, activity=row.doing, need=row.need)

    def sector(self, name: str) -> str | None:
        """Where it was (None: no such agent)."""
        row = self._rows.get(name)
        return row.sector if row is not None else None

    def goals(self, names: Iterable[str]) -> list[TownGoal]:
        """The goals windows of `names`, in their order (mind/memes.py `goals_of`, from the record)."""
        return [g for n in names for g in self._rows[n].goals]
