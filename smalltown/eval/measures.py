"""The measures `eval matrix` takes of each run's save, by name: a registry other parts of eval
add to (`register`), so a new experiment's measure (compliance, roles) plugs into the runner.

A measure is `fn(save, ctx) -> {"figures": {name: number or None}, "series": {name: [(x, y)]}}`,
optionally with "axes": {series: [x label, y label]} (default: game hours, the series' name).
Figures are what the report averages over seeds; series are drawn, a line per condition. `ctx`
gives what a measure may need beyond the file (a rater that asks the run's own backend); most
ignore it. Every measure reads the save only: the runs are never changed."""

from __future__ import annotations

from collections import Counter, defaultdict
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from smalltown.eval import EvalError

if TYPE_CHECKING:  # (the registry is read by every command's --help: it imports little)
    from smalltown.eval.social import Rater

Measured = dict  # {"figures": {...}, "series": {...}, "axes"?: {...}}


class Context(Protocol):
    def rater(self, save: Path) -> AbstractContextManager["Rater"]:
        """Ratings asked of the agents of `save` (on a copy), by the run's backend."""
        ...


@dataclass(frozen=True)
class Measure:
    name: str
    fn: Callable[[Path, Context], Measured]
    about: str  # one line for the report and --help


MEASURES: dict[str, Measure] = {}


def register(name: str, about: str) -> Callable:
    """Decorator: `fn(save, ctx)` is the measure `name`."""
    def add(fn: Callable[[Path, Context], Measured]) -> Callable[[Path, Context], Measured]:
        MEASURES[name] = Measure(name, fn, about)
        return fn
    return add


def measure_of(name: str) -> Measure:
    if name not in MEASURES:
        raise EvalError(f"unknown measure {name!r} (known: {', '.join(MEASURES)})")
    return MEASURES[name]


def _hour(tick: int, step: float) -> int:
    """The game hour (1 = the first) a tick's time falls in: tick t ends t * step seconds in."""
    return max(1, -(-int(tick * step) // 3600))


@register("run", "model calls and uncached prompt tokens per agent-day (as the save logged them), "
                 "events by kind, and calls per agent by game hour")
def run_measure(save: Path, ctx: Context | None = None) -> Measured:
    from smalltown.state.saved import saved_at
    from smalltown.store.save import open_reader

    tick, now, start = saved_at(save)
    seconds = (now - start).total_seconds()
    reader = open_reader(save)
    try:
        agents = len(reader.agent_names())
        calls = reader.calls(limit=None)
        chars = sum(p for p, _ in reader.call_sizes([c.id for c in calls]).values())
        kinds = Counter(e.kind for e in reader.events())
    finally:
        reader.close()
    agent_days = agents * seconds / 86400
    per_day = (lambda v: v / agent_days) if agent_days else (lambda v: None)
    step = seconds / tick if tick else 0.0
    by_hour: dict[int, int] = defaultdict(int)
    for c in calls:
        by_hour[_hour(c.tick, step)] += 1
    hours = _hour(tick, step) if tick else 0
    figures: dict[str, float | None] = {
        "calls per agent-day": per_day(len(calls)),
        "uncached prompt tokens per agent-day": per_day(sum(c.prompt_tokens - c.cached_tokens for c in calls)),
        "completion tokens per agent-day": per_day(sum(c.completion_tokens for c in calls)),
        # what a backend that counts no tokens (the stand-in) would have sent: 4 characters a token
        "estimated prompt tokens per agent-day": per_day(chars / 4),
    }
    figures.update({f"events: {k}": float(n) for k, n in sorted(kinds.items())})
    return {"figures": figures,
            "series": {"calls per agent-hour": [(h, by_hour.get(h, 0) / agents if agents else 0.0)
                                                for h in range(1, hours + 1)]},
            "axes": {"calls per agent-hour": ["game hours", "calls per agent in the hour"]}}


MIN_OBSERVERS = 5  # as `eval social`'s default; a town of fewer agents asks all the others


@register("social", "perceived vs true likeability (r, slope), say-do (promises kept, contradicting the "
                    "speaker's plan), sentiment asymmetry; mean feeling by game hour (asks ratings: eval social)")
def social_measure(save: Path, ctx: Context) -> Measured:
    from smalltown.eval.social import measure_social, read_social
    from smalltown.store.save import Save

    db = Save.open(save, readonly=True)
    try:
        s = read_social(db)
    finally:
        db.close()
    with ctx.rater(save) as rater:
        r = measure_social(s, rater, pairs=[], min_observers=max(1, min(MIN_OBSERVERS, len(s.agents) - 1)))
    like, said = r["likeability"] or {}, r["say_do"]
    return {"figures": {"likeability r": like.get("r"), "likeability slope": like.get("slope"),
                        "promises made": float(said["made"]), "promises kept rate": said["rate"],
                        "contradiction rate": said["contradiction_rate"],
                        "sentiment asymmetry": r["asymmetry"]["mean"]},
            "series": {"mean feeling": feeling_curve(s.start, s.end, s.feelings)},
            "axes": {"mean feeling": ["game hours", "mean feeling (0-10) of pairs with one"]}}


def feeling_curve(start: datetime, end: datetime, feelings: list[tuple[datetime, str, str, int]]) -> list:
    """At the end of each game hour, the mean of every feeling held then (each pair's latest)."""
    held: dict[tuple[str, str], int] = {}
    out, i = [], 0
    ordered = sorted(feelings, key=lambda f: f[0])
    hours = int(-(-(end - start).total_seconds() // 3600))
    for h in range(1, hours + 1):
        cut = start.timestamp() + h * 3600
        while i < len(ordered) and ordered[i][0].timestamp() <= cut:
            held[(ordered[i][1], ordered[i][2])] = ordered[i][3]
            i += 1
        if held:
            out.append((h, sum(held.values()) / len(held)))
    return out



@register("civics", "tax compliance (items deposited / items held at a season's start, mean over constituents) "
                    "before and after the new constitution, the rate voted; compliance per tax season (eval civics)")
def civics_measure(save: Path, ctx: Context | None = None) -> Measured:
    from smalltown.eval.civics import measure_civics, read_civics
    from smalltown.store.save import open_reader

    reader = open_reader(save)
    try:
        r = measure_civics(read_civics(reader, str(save)))
    finally:
        reader.close()
    return {"figures": {"compliance before": r["before"]["mean"], "compliance after": r["after"]["mean"],
                        "voted rate": r["voted_rate"], "tax seasons": float(len(r["seasons"]))},
            "series": {"compliance": [(p["season"], p["compliance"]["mean"]) for p in r["seasons"]
                                      if p["compliance"]["mean"] is not None]},
            "axes": {"compliance": ["tax season", "share of holdings deposited (mean over constituents)"]}}


@register("roles", "roles that emerge (Sid 5.1): distinct roles K, normalised entropy, persistence, mean "
                   "run length; distinct roles held by game hour (as eval civics --roles)")
def roles_measure(save: Path, ctx: Context | None = None) -> Measured:
    from smalltown.eval.roles import distinct_by_hour, measure_roles, read_roles
    from smalltown.state.saved import saved_at
    from smalltown.store.save import open_reader

    _tick, _now, start = saved_at(save)
    reader = open_reader(save)
    try:
        s = read_roles(reader)
    finally:
        reader.close()
    r = measure_roles(s)
    return {"figures": {"roles K": float(r["roles"]), "entropy (normalised)": r["entropy_normalised"],
                        "effective roles": r["effective_roles"],
                        "persistence": r["persistence"], "mean run length (hours)": r["run_hours"],
                        "role changes": float(r["changes"])},
            "series": {"distinct roles": [(float(h), float(k)) for h, k in distinct_by_hour(s.changes, start, s.end)]},
            "axes": {"distinct roles": ["game hours", "distinct roles held at the hour's end"]}}


@register("culture", "memes and a doctrine's spread (Sid 5.3): meme uses per agent in towns and the rural area; "
                     "per doctrine the converts at each level, the area of influence, critical exposures, depth, "
                     "converts outside the priests' towns; converts and area by game hour (eval culture)")
def culture_measure(save: Path, ctx: Context | None = None) -> Measured:
    from smalltown.eval.culture import measure_culture, read_culture
    from smalltown.store.save import open_reader

    reader = open_reader(save)
    try:
        r = measure_culture(read_culture(reader, str(save)))
    finally:
        reader.close()
    m = r["memes"]
    figures: dict[str, float | None] = {"meme uses per agent, towns": m["towns_per_capita"],
                                        "meme uses per agent, rural": m["rural_per_capita"],
                                        "memes": float(len(m["memes"]))}
    series, axes = {}, {}
    for d in r["doctrines"]:
        name, g = d["doctrine"], d["graph"]
        for i, level in enumerate(d["level_names"]):
            figures[f"{name}: {level} converts"] = float(d["converts"][level])
            figures[f"{name}: area, {level} or above (tiles)"] = float(d["area"][-1]["tiles"][i]) if d["area"] else None
            series[f"{name}: {level} converts"] = [(float(row["hour"]), float(row[level])) for row in d["by_hour"]]
            axes[f"{name}: {level} converts"] = ["game hours", f"{level} converts at the hour's end"]
            series[f"{name}: area, {level} or above"] = [(a["hour"], float(a["tiles"][i])) for a in d["area"]]
            axes[f"{name}: area, {level} or above"] = ["game hours", "tiles within hearing"]
        figures.update({f"{name}: converts outside the priests' towns": float(d["converts_outside_priests_towns"]),
                        f"{name}: critical exposures": float(g["critical_edges"]),
                        f"{name}: depth (max)": None if g["max_depth"] is None else float(g["max_depth"]),
                        f"{name}: converts per priest": g["mean_converts_per_priest"]})
    return {"figures": figures, "series": series, "axes": axes}


@register("progression", "item progression (Sid 3): distinct item kinds each agent came to hold, mean and max at "
                         "the end; the mean by game hour (as eval progression)")
def progression_measure(save: Path, ctx: Context | None = None) -> Measured:
    from smalltown.eval.progression import measure_progression, read_progression
    from smalltown.store.save import open_reader

    reader = open_reader(save)
    try:
        r = measure_progression(read_progression(reader, str(save)))
    finally:
        reader.close()
    return {"figures": {"distinct items (mean)": r["mean"], "distinct items (max)": r["max"],
                        "agents holding every kind": float(r["all_kinds"]),
                        "gives and trades done": float(r["offers_done"]),
                        "gives and trades refused": float(r["offers_refused"])},
            "series": {"distinct items": [(float(h), v) for h, v in r["by_hour"]]},
            "axes": {"distinct items": ["game hours", "distinct item kinds held (mean over agents)"]}}
