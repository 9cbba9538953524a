"""A doctrine's spread (Project Sid §5.3.2, Figure 12) from a `CultureSave` (eval/culture.py).

- Level: an agent's level of a doctrine is the highest `level_in` (world/doctrines.py) of the
  lines it said so far, never down; the doctrine's priests hold the top level from the start.
  A convert is an agent other than a priest whose level is above 0.
- Converts by level over time: at the end of each game hour, the converts at each level.
- Exposure: a line naming a keyword of the doctrine (its level that of the line) heard by an
  agent other than a priest and the speaker: the listener, and those within `hearing_radius` of
  the speaker. A recipient's critical exposure is its first exposure before its conversion (the
  line order of the run); every other exposure is non-critical (later ones, and those of agents
  never converted).
- The graph: agents are nodes, exposures edges (from speaker to hearer). Its summary: nodes
  (agents with an edge, and the priests), critical and non-critical edges, the depth of each
  convert from the priests along critical edges (its critical exposure's speaker's depth + 1, a
  priest's 0), converts per priest (the converts whose chain of critical exposures leads back to
  it, mean over the priests), and the converts with no exposure before they converted.
- Area of influence (cumulative, as Sid's grows "as priests and converts travel"): at each game
  hour's end h, for each level, the tiles (of the map) within `hearing_radius` (the larger of the
  x and y distances) of any tile where an agent at that level or above stood at a sampled moment
  from its reaching that level up to h; the moments sampled are the run's start, each game hour's
  end and the run's last tick, a priest's from the start. The tiles where its words could have
  been heard so far: it never falls."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from smalltown.eval.culture_save import CultureSave, hour_of, hours
from smalltown.store.schema import TIME_FMT
from smalltown.world.model import Doctrine


def levels_over_run(s: CultureSave, d: Doctrine) -> tuple[list[str], dict[str, int], list[dict]]:
    """(priests, each agent's final level, every rise in order: {agent, time, tick, was, level, at})."""
    from smalltown.world.doctrines import level_in

    priests = [p for p in d.priests if p in s.town]
    level = {a: (len(d.levels) if a in priests else 0) for a in s.agents}
    rises = []
    for i, x in enumerate(s.lines):
        lv = level_in(d, x.text)
        if x.speaker in level and lv > level[x.speaker]:
            rises.append({"agent": x.speaker, "time": x.time.strftime(TIME_FMT), "tick": x.tick,
                          "was": level[x.speaker], "level": lv, "at": i})
            level[x.speaker] = lv
    return priests, level, rises


def exposures(s: CultureSave, d: Doctrine, priests: list[str]) -> list[dict]:
    """Every exposure, in the run's order: {at (the line's place in order), time, tick, from, to, level, how}."""
    from smalltown.world.doctrines import level_in

    out = []
    for i, x in enumerate(s.lines):
        lv = level_in(d, x.text)
        if not lv:
            continue
        for h in x.hearers:
            if h != x.speaker and h in s.town and h not in priests:
                out.append({"at": i, "time": x.time.strftime(TIME_FMT), "tick": x.tick, "from": x.speaker,
                            "to": h, "level": lv, "how": "told" if h == x.listener else "overheard"})
    return out


def graph(priests: list[str], rises: list[dict], seen: list[dict]) -> dict:
    converted = {}
    for r in rises:
        if r["was"] == 0 and r["agent"] not in priests:
            converted.setdefault(r["agent"], r["at"])
    critical: dict[str, dict] = {}
    for e in seen:
        if e["to"] in converted and e["at"] < converted[e["to"]] and e["to"] not in critical:
            critical[e["to"]] = e
    noncritical = [e for e in seen if critical.get(e["to"]) is not e]
    depth: dict[str, int | None] = {p: 0 for p in priests}
    root: dict[str, str | None] = {p: p for p in priests}

    def walk(a: str, trail: set[str]) -> None:
        if a in depth:
            return
        e = critical.get(a)
        if e is None or e["from"] in trail:
            depth[a], root[a] = None, None  # converted with no exposure before (or a loop: none can be)
            return
        walk(e["from"], trail | {a})
        up = depth[e["from"]]
        depth[a], root[a] = (None if up is None else up + 1), root[e["from"]]
    for a in converted:
        walk(a, set())
    reached = [depth[a] for a in converted if depth.get(a) is not None]
    per_priest = {p: sum(1 for a in converted if root.get(a) == p) for p in priests}
    nodes = set(priests) | {e["from"] for e in seen} | {e["to"] for e in seen}
    return {"nodes": len(nodes), "critical_edges": len(critical), "noncritical_edges": len(noncritical),
            "converts": len(converted), "unexposed_converts": sorted(a for a in converted if a not in critical),
            "max_depth": max(reached, default=None),
            "mean_depth": sum(reached) / len(reached) if reached else None,
            "depth": {a: depth.get(a) for a in sorted(converted)},
            "converts_per_priest": per_priest,
            "mean_converts_per_priest": sum(per_priest.values()) / len(priests) if priests else None,
            "critical": [{k: e[k] for k in ("time", "from", "to", "level", "how")}
                         for e in sorted(critical.values(), key=lambda e: e["at"])]}


def covered(tiles, radius: int, size: tuple[int, int], into: set | None = None) -> set[int]:
    """The tiles of the map within `radius` of any of `tiles` (the larger of the x and y
    distances), each as y * width + x (a big map's run covers many), added to `into` when given."""
    w, h = size
    out = set() if into is None else into
    for x, y in tiles:
        x0, x1 = max(0, x - radius), min(w - 1, x + radius) + 1
        for ty in range(max(0, y - radius), min(h - 1, y + radius) + 1):
            out.update(range(ty * w + x0, ty * w + x1))
    return out


def area(tiles: list[tuple[int, int]], radius: int, size: tuple[int, int]) -> int:
    """How many tiles of the map are within `radius` of any of `tiles`."""
    return len(covered(tiles, radius, size))


def measure_faith(s: CultureSave, d: Doctrine) -> dict:
    priests, final, rises = levels_over_run(s, d)
    top = len(d.levels)
    names = list(d.level_names) + [f"level {i + 1}" for i in range(len(d.level_names), top)]
    h = hours(s)
    by_hour = [[0] * top for _ in range(h)]  # converts at each level at each hour's end
    now = {a: 0 for a in s.agents if a not in priests}
    todo = sorted((r for r in rises if r["agent"] in now), key=lambda r: r["at"])
    j = 0
    for k in range(h):
        while j < len(todo) and hour_of(s, datetime.strptime(todo[j]["time"], TIME_FMT)) <= k + 1:
            now[todo[j]["agent"]] = todo[j]["level"]
            j += 1
        for lv in now.values():
            if lv:
                by_hour[k][lv - 1] += 1
    areas = []
    heard: list[set] = [set() for _ in range(top)]  # per level: the tiles within hearing so far
    for tick, t, tiles in s.hours:
        lv = {a: (top if a in priests else 0) for a in s.agents}
        for r in rises:
            if r["tick"] <= tick:
                lv[r["agent"]] = r["level"]
        for L in range(1, top + 1):
            covered([tiles[a] for a, v in lv.items() if v >= L and a in tiles], s.hearing_radius, s.size, heard[L - 1])
        areas.append({"hour": round((t - s.start).total_seconds() / 3600, 3), "time": t.strftime(TIME_FMT),
                      "tiles": [len(h) for h in heard]})
    seen = exposures(s, d, priests)
    converts = {a: v for a, v in final.items() if v and a not in priests}
    towns: dict[str, int] = defaultdict(int)
    for a in converts:
        towns[s.town.get(a) or ""] += 1
    priest_towns = sorted({s.town.get(p) or "" for p in priests})
    return {"doctrine": d.name, "level_names": names, "priests": priests, "priest_towns": priest_towns,
            "converts": {names[i]: sum(1 for v in converts.values() if v == i + 1) for i in range(top)},
            "converts_total": len(converts), "converts_by_town": dict(sorted(towns.items())),
            "converts_outside_priests_towns": sum(n for t, n in towns.items() if t not in priest_towns),
            "by_hour": [{"hour": k + 1, **{names[i]: row[i] for i in range(top)}} for k, row in enumerate(by_hour)],
            "area": areas, "rises": [{k: r[k] for k in ("agent", "time", "was", "level")} for r in rises],
            "levels": {a: final[a] for a in s.agents if final[a]},
            "exposures": len(seen), "overheard": sum(1 for e in seen if e["how"] == "overheard"),
            "graph": graph(priests, rises, seen)}
