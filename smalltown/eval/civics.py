"""Civic measures (Project Sid §5.2, Appendix D) from a save: tax compliance per season,
before and after the new constitution, the rate voted, the amendments and their tallies, votes by
agent, and how each agent's stance on the tax formed (the conversations that moved it).

Read from the save only: the events "season", "feedback", "proposal", "vote", "tally",
"constitution" and "stance", and the economy's ledger. Definitions:
- constituents: the agents that are neither influencers nor the election manager (the world's
  [civics] `influencers` and `election_manager`; the manager also as the agent of "proposal"
  events). Under `influencer_side = "none"` the influencers are plain constituents.
- a season: from its "season" event's tick to its `until` (inclusive). Held: the items (all kinds,
  counted as items) a constituent holds at the season's start: the world's starting inventories
  plus the ledger's rows of earlier ticks, replayed by the economy's own arithmetic (state/ledger.Ledger).
  Deposited: the items it moved into the chest ("tax" or "deposit" rows) in the window.
- compliance: deposited / held (None for one who held nothing: left out of the means). Per season
  the mean over constituents with a 95% confidence interval (Student's t, n - 1 degrees of freedom).
- before / after: the seasons starting before / from the newest constitution's `in_force` (version
  above 1); with no new constitution (frozen, or no amendment passed) from the first season that
  starts after the tally. Each constituent's mean compliance over the period's seasons, then the
  mean and 95% CI of those over constituents.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from smalltown.config import Settings
from smalltown.eval import EvalError
from smalltown.store.reader import Reader
from smalltown.store.records import EventRow
from smalltown.store.schema import TIME_FMT

KINDS = ("season", "feedback", "proposal", "vote", "tally", "constitution", "stance")
INTO_CHEST = ("tax", "deposit")  # ledger kinds that are a deposit when their taker is the chest
# Student's t, two-sided 95%, by degrees of freedom (beyond 30: the normal's 1.96 after 120)
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
        29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


@dataclass
class Season:
    n: int
    tick: int
    start: datetime
    until: datetime
    rate: float | None
    held: dict[str, int] = field(default_factory=dict)  # constituent -> items held at the start
    deposited: dict[str, int] = field(default_factory=dict)  # constituent -> items into the chest


@dataclass
class CivicSave:
    world: str
    start: datetime
    end: datetime
    settings: dict  # the saved settings (as recorded: only those changed from the defaults)
    constituents: list[str]
    manager: str | None
    influencers: list[str]
    seasons: list[Season]
    events: dict[str, list[EventRow]]  # kind -> events, oldest first
    talks: dict[int, dict]  # conversation id -> {participants, time, end, place}


def t95(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval (the table's next lower df: wider)."""
    if df < 1:
        return math.nan
    if df > 120:
        return 1.960
    return _T95[max(k for k in _T95 if k <= df)]


def mean_ci(values: list[float]) -> dict:
    """{n, mean, lo, hi}: the mean and its 95% CI (lo = hi = None for fewer than two values)."""
    xs = [v for v in values if v is not None]
    if not xs:
        return {"n": 0, "mean": None, "lo": None, "hi": None}
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return {"n": 1, "mean": m, "lo": None, "hi": None}
    half = t95(len(xs) - 1) * math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))
    return {"n": len(xs), "mean": m, "lo": m - half, "hi": m + half}


def _time(text: object, where: str) -> datetime:
    try:
        return datetime.strptime(str(text), TIME_FMT)
    except ValueError:
        raise EvalError(f"{where}: {str(text)[:40]!r} is not a time ({TIME_FMT})") from None


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _rate(v: object, where: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise EvalError(f"{where}: rate {str(v)[:40]!r} is not a number")
    return float(v)


def civic_roles(world_doc: dict, agents: list[str], proposals: list[EventRow],
                settings: dict) -> tuple[list[str], str | None, list[str]]:
    """(constituents, election manager, influencers) from the world file's [civics] (parsed TOML)
    and the save's proposals."""
    civ = world_doc.get("civics") if isinstance(world_doc.get("civics"), dict) else {}
    manager = civ.get("election_manager") if isinstance(civ.get("election_manager"), str) else None
    manager = manager or next((e.agent for e in proposals if e.agent), None)
    listed = civ.get("influencers") if isinstance(civ.get("influencers"), list) else []
    influencers = [a for a in agents if a in listed]
    out = {manager} | (set() if settings.get("influencer_side") == "none" else set(influencers))
    return [a for a in agents if a not in out], manager, influencers


def read_civics(reader: Reader, where: str = "save") -> CivicSave:
    from smalltown.state.ledger import Ledger
    from smalltown.world.load import load_world_text
    from smalltown.world.load_text import parse_toml

    events: dict[str, list[EventRow]] = {k: [] for k in KINDS}
    for e in reader.events(kinds=KINDS):
        events[e.kind].append(e)
    if not events["season"]:
        raise EvalError(f"{where}: no tax seasons (no \"season\" events): not a run of a world with [civics] "
                        "(`eval civics --roles` measures the roles that emerged)")
    texts = [reader.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")]
    world = load_world_text(*texts)
    if world.economy is None:
        raise EvalError(f"{where}: its world has no [economy]: there is nothing to deposit")
    settings = reader.meta("settings") or {}
    settings = settings if isinstance(settings, dict) else {}
    agents = reader.agent_names()
    constituents, manager, influencers = civic_roles(parse_toml(texts[0], texts[1]), agents,
                                                     events["proposal"], settings)
    seasons = []
    for e in events["season"]:
        w = f"{where}: event {e.id} (season)"
        n = e.data.get("season")
        if not isinstance(n, int) or isinstance(n, bool):
            raise EvalError(f"{w}: season {str(n)[:40]!r} is not a number")
        seasons.append(Season(n, e.tick, _time(e.time, w), _time(e.data.get("until"), w),
                              _rate(e.data.get("rate"), w)))
    seasons.sort(key=lambda s: (s.tick, s.n))
    ledger = reader.ledger()
    economy, done = Ledger(world), 0
    for s in seasons:  # holdings at each season's start: the economy replays the rows before it
        upto = next((i for i, r in enumerate(ledger) if r[1] >= s.tick), len(ledger))
        economy.load(ledger[done:upto], where, s.tick)
        done = max(done, upto)
        s.held = {a: sum(economy.holdings(a).values()) for a in constituents}
        s.deposited = dict.fromkeys(constituents, 0)
        for _id, tick, time, kind, giver, taker, _item, qty, _note in ledger[upto:]:
            if kind in INTO_CHEST and taker == economy.chest and giver in s.deposited \
                    and _time(time, f"{where}: ledger row {_id}") <= s.until:
                s.deposited[giver] += qty
    talks = {}
    for cid in sorted({e.data.get("conversation") for e in events["stance"] if _whole(e.data.get("conversation"))}):
        c = reader.conversation(cid)
        if c is not None:
            talks[cid] = {"participants": list(c.participants), "time": c.time, "end": c.end_time, "place": c.place}
    end = _time(reader.meta("game_time"), f"{where}: meta game_time")
    return CivicSave(str(reader.meta("world") or ""), world.start, end, settings, constituents, manager,
                     influencers, seasons, events, talks)


def _divider(s: CivicSave) -> tuple[datetime | None, str]:
    """When "after" begins, and why (see the module's docstring)."""
    new = [e for e in s.events["constitution"] if isinstance(e.data.get("version"), int) and e.data["version"] > 1]
    if new:
        e = max(new, key=lambda e: e.data["version"])
        return _time(e.data.get("in_force", e.time), f"event {e.id} (constitution)"), f"constitution v{e.data['version']}"
    if s.events["tally"]:
        tally = _time(s.events["tally"][-1].time, "tally")
        later = [x.start for x in s.seasons if x.start > tally]
        return (min(later) if later else None), "the first season after the tally (no new constitution)"
    return None, "no vote held"


def compliance(held: int, deposited: int) -> float | None:
    return deposited / held if held > 0 else None


def measure_civics(s: CivicSave) -> dict:
    divide, why = _divider(s)
    per_season = []
    by_agent: dict[str, dict[int, float | None]] = defaultdict(dict)
    for x in s.seasons:
        rates = {a: compliance(x.held[a], x.deposited[a]) for a in s.constituents}
        for a, c in rates.items():
            by_agent[a][x.n] = c
        per_season.append({"season": x.n, "start": x.start.strftime(TIME_FMT), "until": x.until.strftime(TIME_FMT),
                           "rate": x.rate, "after": divide is not None and x.start >= divide,
                           "held": sum(x.held.values()), "deposited": sum(x.deposited.values()),
                           "holding": sum(1 for h in x.held.values() if h > 0),
                           "compliance": mean_ci(list(rates.values())),
                           "agents": {a: {"held": x.held[a], "deposited": x.deposited[a], "compliance": rates[a]}
                                      for a in s.constituents}})
    periods = {}
    for name, after in (("before", False), ("after", True)):
        ns = {p["season"] for p in per_season if p["after"] == after}
        means = []
        for a in s.constituents:
            vs = [c for n, c in by_agent[a].items() if n in ns and c is not None]
            means.append(sum(vs) / len(vs) if vs else None)
        periods[name] = {"seasons": sorted(ns), **mean_ci(means)}
    versions = sorted(({"version": e.data.get("version"), "rate": e.data.get("rate"), "text": str(e.data.get("text", "")),
                        "in_force": str(e.data.get("in_force", e.time))} for e in s.events["constitution"]),
                      key=lambda v: v["version"] if isinstance(v["version"], int) else 0)
    voted = [v for v in versions if isinstance(v["version"], int) and v["version"] > 1]
    return {"world": s.world, "start": s.start.strftime(TIME_FMT), "end": s.end.strftime(TIME_FMT),
            "influencer_side": s.settings.get("influencer_side", Settings().influencer_side),  # (a default: not saved)
            "frozen": bool(s.settings.get("constitution_frozen")),
            "architecture": s.settings.get("architecture", "generative_agents"),
            "constituents": s.constituents, "election_manager": s.manager, "influencers": s.influencers,
            "divider": divide.strftime(TIME_FMT) if divide else None, "divider_is": why,
            "seasons": per_season, "before": periods["before"], "after": periods["after"],
            "constitutions": versions, "voted_rate": voted[-1]["rate"] if voted else None,
            "amendments": amendments(s), "votes": votes(s), "feedback": [
                {"time": e.time, "agent": e.agent, "rate": e.data.get("rate"), "text": str(e.data.get("text", ""))}
                for e in s.events["feedback"]],
            "stances": stances(s)}


def amendments(s: CivicSave) -> list[dict]:
    """Each proposal with its tally (the newest tally's result for its number)."""
    results = {}
    for t in s.events["tally"]:
        for r in t.data.get("results") or []:
            if isinstance(r, dict) and _whole(r.get("amendment")):
                results[r["amendment"]] = r
    frozen = bool(s.events["tally"] and s.events["tally"][-1].data.get("frozen"))
    return [{"amendment": e.data.get("amendment"), "by": e.agent, "time": e.time, "text": str(e.data.get("text", "")),
             "rate": e.data.get("rate"), "frozen": frozen,
             **{k: (results.get(e.data["amendment"], {}) if _whole(e.data.get("amendment")) else {}).get(k)
                for k in ("yes", "no", "abstain", "passed")}}
            for e in s.events["proposal"]]


def votes(s: CivicSave) -> dict[str, list[str]]:
    """Agent -> its ballot (yes/no/abstain per amendment in order), the last it cast."""
    return {e.agent: [str(v) for v in e.data["votes"]] if isinstance(e.data.get("votes"), list) else []
            for e in s.events["vote"] if e.agent}


def stances(s: CivicSave) -> dict[str, list[dict]]:
    """Agent -> its stance over time, each change with the conversation that moved it."""
    out: dict[str, list[dict]] = defaultdict(list)
    for e in s.events["stance"]:
        if e.agent:
            cid = e.data.get("conversation")
            out[e.agent].append({"time": e.time, "value": e.data.get("value"), "previous": e.data.get("previous"),
                                 "other": e.data.get("other"), "conversation": cid,
                                 "talk": s.talks.get(cid) if _whole(cid) else None})
    return dict(out)
