"""Coordination (SPEC 9): for a declared gathering, who was invited (knew of it before it
began, from memory), who planned to come (a plan of that day names it), who was there (the
event log's movements)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from smalltown.eval.diffusion import Spread
from smalltown.eval.town import Town
from smalltown.world.model import Gathering

# Walking through the place is not coming to the gathering: a stay this long is.
ATTEND_MINUTES = 10.0


@dataclass
class Turnout:
    gathering: Gathering
    invited: list[str] | None  # None: the gathering names no fact to be invited by
    planned: list[str]
    minutes: dict[str, float]  # agent -> minutes spent in the place while it was on (> 0 only)
    covered: float  # the share of the gathering's time the save reaches (0: it ends before it begins)

    @property
    def attended(self) -> list[str]:
        return [a for a, m in self.minutes.items() if m >= ATTEND_MINUTES]

    @property
    def came(self) -> list[str]:
        """Invited agents who came."""
        return [a for a in self.invited or [] if a in self.attended]


def presence(town: Town, g: Gathering) -> dict[str, float]:
    """Minutes each agent spent in the gathering's place between its start and its end (or the
    save's end, if sooner), from where it spawned and every arena it entered."""
    stop = min(g.end, town.end)
    where: dict[str, tuple[str | None, datetime]] = {}  # agent -> (arena address, since)
    for spec in town.world.agents:
        arena = town.world.arena_at(spec.spawn)
        where[spec.name] = (arena.address if arena else None, town.start)
    minutes: dict[str, float] = {}

    def close(agent: str, until: datetime) -> None:
        arena, since = where[agent]
        lo, hi = max(since, g.start), min(until, stop)
        if g.holds(arena) and hi > lo:
            minutes[agent] = minutes.get(agent, 0.0) + (hi - lo) / timedelta(minutes=1)

    for when, agent, arena in town.moves:
        if agent in where:
            close(agent, when)
            where[agent] = (arena, when)
    for agent in where:
        close(agent, stop)
    return {a: round(m, 1) for a, m in sorted(minutes.items(), key=lambda kv: -kv[1])}


def turnout(town: Town, g: Gathering, announced: Spread | None) -> Turnout:
    invited = None
    if announced is not None:  # knew of it before it began; the host invites, and is not counted
        invited = [a for a, l in announced.learned.items() if l.time < g.start and a != g.host]
    about = announced.fact.about if announced is not None else (lambda text: g.name.lower() in text.lower())
    planned = list(dict.fromkeys(
        m.agent for m in town.memories
        if m.kind == "plan" and m.created.date() == g.start.date() and m.created < g.end and about(m.description)))
    covered = max(0.0, min(1.0, (min(g.end, town.end) - g.start) / (g.end - g.start)))
    return Turnout(g, invited, planned, presence(town, g), round(covered, 3))
