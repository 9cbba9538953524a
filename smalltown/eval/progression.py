"""Item progression (Project Sid §3): how many distinct kinds of item each agent has come to hold
over game time, from a save of a world with an economy.

An agent holds an item kind from the start when the world file's starting inventories give it one,
else from the first ledger row that gives it one (its taker: a gather, a craft's output, a give or a
trade received). A kind counts from then on whether or not the agent still holds it, as Sid counts
the distinct items an agent has acquired. Read only: the ledger and the world text of the save.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from smalltown.config import Settings
from smalltown.eval import EvalError
from smalltown.store.reader import Reader
from smalltown.store.schema import TIME_FMT

# Project Sid §3 (Minecraft, a model): 25 agents reach about 17 distinct items each in 30 minutes;
# fewer without action awareness. Its world has hundreds of item kinds; ours has the world file's.
SID_AGENTS, SID_ITEMS, SID_MINUTES = 25, 17, 30


@dataclass
class ProgressionSave:
    """What the measure reads from a save."""

    world: str
    agents: list[str]
    items: tuple[str, ...]  # the world's item kinds, in its order
    start: datetime
    end: datetime
    settings: dict[str, object]  # architecture, action_awareness (the run's)
    first: dict[str, dict[str, datetime]]  # agent -> item kind -> when it first held one
    # gives and trades done (ledger rows: a give one, a trade two) and not done (`refused` events):
    # what action awareness notices, beside what it is meant to improve
    offers: dict[str, int] = field(default_factory=lambda: {"done": 0, "refused": 0})


def read_progression(reader: Reader, where: str = "save") -> ProgressionSave:
    from smalltown.world.load import load_world_text

    world = load_world_text(*(reader.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")))
    if world.economy is None:
        raise EvalError(f"{where}: its world has no [economy]: there are no items to hold")
    settings = Settings().saved(reader.meta("settings"))
    agents = reader.agent_names()
    end = datetime.strptime(str(reader.meta("game_time")), TIME_FMT)
    first: dict[str, dict[str, datetime]] = {a: {} for a in agents}
    for holder, inv in world.economy.starting().items():
        if holder in first:
            first[holder].update({i: world.start for i, n in inv.items() if n > 0})
    offers = {"done": 0, "refused": 0}
    trades = 0
    for row_id, _tick, time, kind, _giver, taker, item, qty, _note in reader.ledger():
        offers["done"] += kind == "give"
        trades += kind == "trade"
        if taker in first and qty > 0 and item not in first[taker]:
            try:
                first[taker][item] = datetime.strptime(time, TIME_FMT)
            except (TypeError, ValueError):
                raise EvalError(f"{where}: ledger row {row_id}: time {str(time)[:40]!r} is not "
                                "YYYY-MM-DD HH:MM:SS") from None
    offers["done"] += trades // 2  # (a trade is a row each way)
    for e in reader.events(kinds=["refused"]):
        op = e.data.get("op") if isinstance(e.data, dict) else None
        offers["refused"] += isinstance(op, str) and op.split(" ", 1)[0] in ("give", "trade")  # (Op.label's first word)
    return ProgressionSave(world.name, agents, tuple(world.economy.items), world.start, end,
                           {"architecture": settings.architecture, "action_awareness": settings.action_awareness},
                           first, offers)


def held_by(p: ProgressionSave, agent: str, at: datetime) -> int:
    """The distinct item kinds `agent` had come to hold by `at`."""
    return sum(t <= at for t in p.first[agent].values())


def curve(p: ProgressionSave, agent: str | None = None) -> list[tuple[datetime, float]]:
    """Step points (time, distinct kinds) of one agent, or of the mean over agents (None): the
    start, then each time the value changes."""
    who = [agent] if agent else p.agents
    times = sorted({p.start, *(t for a in who for t in p.first[a].values() if t <= p.end)})
    out: list[tuple[datetime, float]] = []
    for t in times:
        v = sum(held_by(p, a, t) for a in who) / len(who) if who else 0.0
        if not out or out[-1][1] != v:
            out.append((t, v))
    return out


def by_hour(p: ProgressionSave) -> list[tuple[int, float]]:
    """The mean distinct kinds at the end of each game hour (1 = the first)."""
    hours = int(-(-(p.end - p.start).total_seconds() // 3600))
    n = len(p.agents) or 1
    return [(h, sum(held_by(p, a, min(p.end, p.start + timedelta(hours=h))) for a in p.agents) / n)
            for h in range(1, hours + 1)]


def measure_progression(p: ProgressionSave) -> dict:
    """Every figure of one save, JSON-ready."""
    final = {a: held_by(p, a, p.end) for a in p.agents}
    values = list(final.values())
    mean = sum(values) / len(values) if values else None
    mark = p.start + timedelta(minutes=SID_MINUTES)
    return {"world": p.world, "start": p.start.strftime(TIME_FMT), "end": p.end.strftime(TIME_FMT),
            **p.settings, "agents": len(p.agents), "items": list(p.items),
            "mean": mean, "max": max(values, default=None), "min": min(values, default=None),
            "all_kinds": sum(v == len(p.items) for v in values),
            "offers_done": p.offers["done"], "offers_refused": p.offers["refused"],
            "mean_at_30_minutes": (sum(held_by(p, a, mark) for a in p.agents) / len(p.agents)
                                   if p.agents and mark <= p.end else None),
            "per_agent": [{"agent": a, "distinct": final[a],
                           "first": {i: t.strftime(TIME_FMT)
                                     for i, t in sorted(p.first[a].items(), key=lambda x: x[1])}}
                          for a in p.agents],
            "mean_curve": [(t.strftime(TIME_FMT), v) for t, v in curve(p)],
            "by_hour": by_hour(p)}
