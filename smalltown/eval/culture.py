"""Culture measures (Project Sid §5.3, Figures 11-12) from a save alone: memes across towns and a
doctrine's spread. This module reads the save into a `CultureSave`; eval/culture_memes.py and
eval/culture_faith.py measure it, `measure_culture` gathers both.

What is read (store/ and world/ only):
- the world the save was started from: its towns (an agent's town is `World.town_of`, the town of
  its home; "" = the rural area), its doctrines, its map;
- the agents' goal histories: the "goal" events (each goal an agent took up, with its time);
- what each agent said: the conversations' lines, in order (tick, conversation, line); each
  line's listener is the other side, and anyone else standing within `hearing_radius` tiles of
  the speaker then (the larger of the x and y distances, as sight measures) overhears it; where
  they stood comes from the snapshots and the log (state/positions.py, as replay rebuilds them);
- the meme summaries (`Reader.memes()`): their topics' keywords are the memes;
- positions at each game hour's end (the area of influence)."""

from __future__ import annotations

from datetime import datetime, timedelta

from smalltown.config import Settings
from smalltown.eval import EvalError
from smalltown.store.reader import Reader
from smalltown.store.schema import TIME_FMT
from smalltown.eval.culture_save import CultureSave, Said
from smalltown.world.model import Doctrine, Tile, World


def _time(text: object, where: str) -> datetime:
    try:
        return datetime.strptime(str(text), TIME_FMT)
    except ValueError:
        raise EvalError(f"{where}: {str(text)[:40]!r} is not a time ({TIME_FMT})") from None


def world_of(reader: Reader) -> World:
    """The world the save was started from, as it recorded it, under its seed."""
    from smalltown.world.load import load_world_text

    world = load_world_text(*(reader.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")))
    if isinstance(seed := reader.meta("world_seed"), int):
        world.seed = seed
    return world


def hearing_radius(settings: dict) -> int:
    """The run's hearing radius (the saved settings hold those changed from the defaults)."""
    v = settings.get("hearing_radius", Settings().hearing_radius)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise EvalError(f"settings: hearing_radius {str(v)[:40]!r} is not a whole number of tiles")
    return v


def within(a: Tile, b: Tile, radius: int) -> bool:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1])) <= radius


def read_culture(reader: Reader, where: str = "save") -> CultureSave:
    from smalltown.state.positions import Positions

    world = world_of(reader)
    settings = reader.meta("settings") or {}
    settings = settings if isinstance(settings, dict) else {}
    radius = hearing_radius(settings)
    agents = [a.name for a in world.agents]
    tick = reader.meta("tick")
    if not isinstance(tick, int):
        raise EvalError(f"{where}: meta tick {str(tick)[:40]!r} is not a tick")
    step = world.step_seconds
    end = world.start + timedelta(seconds=tick * step)
    goals, known = [], set(agents)
    for e in reader.events(kinds=("goal",)):
        if e.agent in known:
            text = e.data.get("goal")
            if isinstance(text, str) and text:
                goals.append((_time(e.time, f"{where}: event {e.id} (goal)"), e.agent, text))
    raw = []
    for c in reader.conversations():
        t = _time(c.time, f"{where}: conversation {c.id}")
        for i, line in enumerate(c.lines):
            if line.speaker in (c.initiator, c.other):
                raw.append(Said(c.tick, t, c.id, i, line.speaker, c.other_side(line.speaker), line.text))
    raw.sort(key=lambda s: (s.tick, s.conversation, s.index))
    memes = [{"tick": m.tick, "time": m.time, "town": m.town, "topics": m.topics}
             for m in reader.memes()]
    places = Positions(reader, world)
    hour_ticks = _hour_ticks(tick, step)
    at_tick: dict[int, list[int]] = {}  # tick -> the lines of that tick worth finding the hearers of
    for i, x in enumerate(raw):
        if _matters(x, world.doctrines):
            at_tick.setdefault(x.tick, []).append(i)
    hours, kept = [], set(hour_ticks)
    for t in sorted(kept | set(at_tick)):  # (one tick's tiles at a time: a long run has many)
        tiles = places.at(t)
        for i in at_tick.get(t, ()):
            x = raw[i]
            if x.speaker in tiles:
                here = tiles[x.speaker]
                near = tuple(a for a in agents if a not in (x.speaker, x.listener) and within(tiles[a], here, radius))
                raw[i] = Said(x.tick, x.time, x.conversation, x.index, x.speaker, x.listener, x.text, near)
        if t in kept:
            hours.append((t, world.start + timedelta(seconds=t * step), tiles))
    return CultureSave(str(reader.meta("world") or world.name), world.start, end, step, settings, agents,
                       {a: world.town_of(a) for a in agents}, [t.name for t in world.towns], list(world.doctrines),
                       radius, (world.map.width, world.map.height), goals, raw, memes, hours)


def _matters(s: Said, doctrines: list[Doctrine]) -> bool:
    """A line whose hearers are worth finding: one that names a doctrine's keyword."""
    from smalltown.world.doctrines import level_in

    return any(level_in(d, s.text) for d in doctrines)


def _hour_ticks(tick: int, step: int) -> list[int]:
    """The last tick of each game hour of the run (and the run's last tick), from tick 0."""
    per = max(1, 3600 // step)
    return sorted({0, *range(per, tick + 1, per), tick})


def measure_culture(s: CultureSave) -> dict:
    from smalltown.eval.culture_faith import measure_faith
    from smalltown.eval.culture_memes import measure_memes

    return {"world": s.world, "start": s.start.strftime(TIME_FMT), "end": s.end.strftime(TIME_FMT),
            "architecture": s.settings.get("architecture", "generative_agents"),
            "travel": s.settings.get("travel", getattr(Settings(), "travel", None)),
            "agents": len(s.agents), "towns": {t: sum(1 for a in s.agents if s.town[a] == t) for t in s.towns},
            "rural": sum(1 for a in s.agents if not s.town[a]), "hearing_radius": s.hearing_radius,
            "memes": measure_memes(s), "doctrines": [measure_faith(s, d) for d in s.doctrines]}
