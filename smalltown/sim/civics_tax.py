"""Tax seasons (Project Sid §5.2): every `season_every` Sid seconds (scaled) until the
timeline's end, each constituent is told (a memory: the world's notice) and asked `pay_tax`; one
who pays anything walks to the town chest (an action there for the window: no model call) and its
deposit is applied through the economy's ledger (kind "tax") when it is in the chest's arena,
checked then: never more than it holds then. One who has not reached the chest when the window
closes has missed the season. Resumable: the unpaid taxes are the save's "tax_due" events without
their "tax_paid"."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from smalltown.config import Settings
from smalltown.llm.tasks import Holding, PayTax
from smalltown.llm.tasks.base import Record
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.economy import Economy
from smalltown.state.ledger import Refused
from smalltown.sim.movement import Movement
from smalltown.store.schema import TIME_FMT
from smalltown.world.civics import CivicsSpec
from smalltown.world.model import World, pretty


class Law(Protocol):
    """What the tax seasons read of the civics (sim/civics.Civics, which owns them): the rate and text
    in force, who pays, and how they are told and asked."""

    spec: CivicsSpec
    settings: Settings
    crowd: Crowd
    agents: list[Agent]
    rate: int
    text: str

    def at(self, sid_seconds: float) -> datetime: ...
    def constituents(self) -> list[Agent]: ...
    def memories(self, agent: Agent, now: datetime) -> list[Record]: ...
    def notice(self, agent: Agent, text: str, now: datetime, changes: Changes) -> None: ...


class Taxes:
    def __init__(self, world: World, economy: Economy, movement: Movement, civics: Law):
        self.world, self.economy, self.movement, self.civics = world, economy, movement, civics
        self.season = 0  # the last season begun
        self.pending: dict[str, tuple[int, dict[str, int], datetime]] = {}  # name -> (season, items, until)

    def _due(self, now: datetime) -> int | None:
        """The season that begins at `now`, if one does."""
        t = self.civics.spec.timeline
        elapsed = (now - self.world.start).total_seconds() / self.civics.settings.civics_scale
        n = int(elapsed // t.season_every)
        return n if n > self.season and n * t.season_every < t.end else None

    def begins(self, now: datetime) -> bool:
        return self._due(now) is not None

    def step(self, now: datetime, changes: Changes, agents: list[Agent]) -> None:
        """A season's beginning (town-wide: its tick runs whole), then the payments of `agents`."""
        n = self._due(now)
        if n is not None:
            t = self.civics.spec.timeline
            self.season = n
            self._begin(n, now, self.civics.at(n * t.season_every + t.window), changes)
        self._pay(now, changes, agents)

    def _begin(self, n: int, now: datetime, until: datetime, changes: Changes) -> None:
        c = self.civics
        changes.emit(None, "season", f"Tax season {n} begins: {c.rate}% until {until:%H:%M}", season=n, rate=c.rate,
                     until=until.strftime(TIME_FMT))
        people = c.constituents()
        chest = self.economy.spec.chest
        for agent in people:
            c.notice(agent, f"Tax season {n} has begun: the constitution asks {c.rate}% of what each holds, paid "
                     f"into the town chest at {pretty(chest)} by {until:%H:%M}.", now, changes)
        outs = c.crowd.each(people, lambda a: a.mind.ask(PayTax(
            persona=a.mind.persona, now=now, constitution=c.text, rate=c.rate, season=n, memories=c.memories(a, now),
            holdings=[Holding(item=i, qty=q) for i, q in self.economy.holdings(a.name).items()])))
        for agent, out in zip(people, outs):
            items: dict[str, int] = {}
            for p in out.payments:
                items[p.item] = items.get(p.item, 0) + p.qty
            changes.emit(agent.name, "tax_due", f"{agent.name} will pay " + (", ".join(
                f"{q} {i}" for i, q in items.items()) or "nothing") + f" in season {n}", season=n, items=items,
                until=until.strftime(TIME_FMT))
            if not items:
                continue
            self.pending[agent.name] = (n, items, until)
            self._walk(agent, now, until, changes)

    def _walk(self, agent: Agent, now: datetime, until: datetime, changes: Changes) -> None:
        """To the town chest, by the window's close (an errand: sim/encounters.py's `errands`)."""
        action = agent.mind.start("pay the tax at the town chest", self.economy.spec.chest, now, until)
        self.movement.start(agent, action, True, changes)
        changes.changed.add(agent.name)

    def _pay(self, now: datetime, changes: Changes, agents: list[Agent]) -> None:
        chest_arena = self.economy.spec.chest_arena
        for agent in agents:
            if agent.name not in self.pending:
                continue
            n, items, until = self.pending[agent.name]
            changes.actor = agent.name  # (the ledger's canonical order: Changes.ledger_rows)
            here = self.world.arena_at(agent.tile)
            if here is not None and here.address == chest_arena:
                held = self.economy.holdings(agent.name)
                paid = {}
                for item, qty in items.items():
                    qty = min(qty, held.get(item, 0))  # checked now: never more than it holds now
                    if qty < 1:
                        continue
                    try:
                        self.economy.transfer(changes, "tax", agent.name, self.economy.chest, item, qty,
                                              note=f"season {n}")
                        paid[item] = qty
                    except Refused:
                        continue
                changes.emit(agent.name, "tax_paid", f"{agent.name} pays " + (", ".join(
                    f"{q} {i}" for i, q in paid.items()) or "nothing") + f" of tax (season {n})", season=n,
                    items=paid, asked=items, missed=False)
                agent.mind.finish(now)  # paid: the errand is done, back to the day's plan
            elif now >= until:
                changes.emit(agent.name, "tax_paid", f"{agent.name} misses tax season {n}", season=n, items={},
                             asked=items, missed=True)
            else:
                if agent.mind.due(now):  # stopped on the way (a talk) and let go: the errand resumes
                    self._walk(agent, now, until, changes)
                continue
            del self.pending[agent.name]
            changes.changed.add(agent.name)

    def load(self, events: list[tuple[str, str | None, str, dict]]) -> None:
        for _time, agent, kind, data in events:
            if kind == "season":
                self.season = max(self.season, data["season"])
            elif kind == "tax_due" and agent and data["items"]:
                self.pending[agent] = (data["season"], dict(data["items"]),
                                       datetime.strptime(data["until"], TIME_FMT))
            elif kind == "tax_paid" and agent:
                self.pending.pop(agent, None)
