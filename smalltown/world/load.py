"""Load and validate a world file and its map, collecting every problem with its line."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np

from smalltown.config import Settings, SettingsError
from smalltown.world.economy import economy
from smalltown.world.civics import civics
from smalltown.world.errors import Problem, WorldError
from smalltown.world.load_news import news, scripted_lines
from smalltown.world.load_towns import doctrines, towns
from smalltown.world.load_text import (MAP_MAX_BYTES, MAP_MAX_SIDE, WORLD_MAX_BYTES, check_size, grid, parse_text,
                                       parse_toml, read_text_capped)
from smalltown.world.model import (
    BLOCKED_KINDS,
    Persona,
    home_beds,
    Arena,
    Object,
    RoutineItem,
    Sector,
    parse_hours,
    TileMap,
    World,
)
from smalltown.world.names import clash_message, clashes, suggestion
from smalltown.world.paths import components
from smalltown.world.routine import SLEEPING, derive, with_lengths
from smalltown.world.routine import problems as routine_problems
from smalltown.world.schema import PersonaIn, MapIn, WorldIn
from smalltown.world.toml_lines import TomlLines

# (what importers take from here: the loaders and the limits of a world's texts)
__all__ = ["MAP_MAX_BYTES", "WORLD_MAX_BYTES", "build_world", "load_world", "load_world_text", "parse_toml",
           "read_text_capped"]


def load_world(path: str | Path) -> World:
    """Read a world file (and the map it names) from disk."""
    path = Path(path)
    try:
        text = read_text_capped(path, WORLD_MAX_BYTES)
    except FileNotFoundError:
        raise WorldError([Problem(str(path), None, "file not found")]) from None
    except OSError as e:
        raise WorldError([Problem(str(path), None, f"cannot read: {e}")]) from None
    doc, lines = parse_text(str(path), text, WorldIn)
    map_path = path.parent / doc.map  # (not resolved: a link loop is told as a file that cannot be read)
    map_label = os.path.normpath(path.parent / doc.map)
    try:
        map_text = read_text_capped(map_path, MAP_MAX_BYTES, map_label)
    except FileNotFoundError:
        raise WorldError(
            [Problem(str(path), lines.line_of(("map",)), f"map file not found: {map_label}")]
        ) from None
    except OSError as e:
        raise WorldError([Problem(map_label, None, f"cannot read: {e}")]) from None
    return build_world(str(path), text, map_label, map_text, doc, lines)


def load_world_text(source: str, text: str, map_source: str, map_text: str) -> World:
    """Rebuild a world from texts stored in a save (or a world pack): bounded as files are."""
    check_size(source, text, WORLD_MAX_BYTES)
    check_size(map_source, map_text, MAP_MAX_BYTES)
    doc, lines = parse_text(source, text, WorldIn)
    return build_world(source, text, map_source, map_text, doc, lines)


def build_world(
    source: str, text: str, map_source: str, map_text: str, doc: WorldIn, lines: TomlLines
) -> World:
    problems: list[Problem] = []
    wline = lines.line_of

    # --- map ---
    mdoc, mlines = parse_text(map_source, map_text, MapIn)
    tile_rows = grid(mdoc.layers.tiles)
    arena_rows = grid(mdoc.layers.arenas)
    tiles_line = (mlines.line_of(("layers", "tiles")) or 0) + 1
    arenas_line = (mlines.line_of(("layers", "arenas")) or 0) + 1
    width = len(tile_rows[0]) if tile_rows else 0
    if not tile_rows or width == 0:
        problems.append(Problem(map_source, tiles_line - 1, "the tile layer is empty"))
        raise WorldError(problems)
    if max(width, len(tile_rows)) > MAP_MAX_SIDE:
        problems.append(Problem(map_source, tiles_line - 1, f"the tile layer is {width}x{len(tile_rows)} "
                                f"tiles: at most {MAP_MAX_SIDE} each way"))
        raise WorldError(problems)
    for i, row in enumerate(tile_rows):
        if len(row) != width:
            problems.append(Problem(map_source, tiles_line + i,
                f"ragged row: {len(row)} tiles wide, the first row is {width}"))
        for j, ch in enumerate(row):
            if ch not in mdoc.legend:
                problems.append(Problem(map_source, tiles_line + i,
                    f"unknown glyph {ch!r} (not in [legend])", j + 1))
    if len(arena_rows) != len(tile_rows):
        problems.append(Problem(map_source, arenas_line - 1,
            f"arena layer has {len(arena_rows)} rows, the tile layer {len(tile_rows)}"))
    for i, row in enumerate(arena_rows):
        if len(row) != width:
            problems.append(Problem(map_source, arenas_line + i,
                f"ragged row: {len(row)} tiles wide, the tile layer is {width}"))
    if problems:
        raise WorldError(problems)

    height = len(tile_rows)
    walkable = np.zeros((height, width), dtype=bool)
    for y, row in enumerate(tile_rows):
        walkable[y] = [mdoc.legend[ch] not in BLOCKED_KINDS for ch in row]
    arena_at = np.full((height, width), -1, dtype=np.int32)
    tilemap = TileMap(mdoc.name or Path(map_source).stem, tile_rows, dict(mdoc.legend), walkable, arena_at)

    # --- area tree ---
    sectors: dict[str, Sector] = {}
    arenas: list[Arena] = []
    by_code: dict[str, Arena] = {}
    duplicates: set[int] = set()  # arenas whose code another arena already has
    objects: dict[str, Object] = {}
    object_lines: dict[str, int | None] = {}
    _one_each(source, "sector", [(n, wline(("sectors", n))) for n in doc.sectors], problems)
    for sname, sdoc in doc.sectors.items():
        _one_each(source, "arena", [(n, wline(("sectors", sname, "arenas", n))) for n in sdoc.arenas], problems,
                  f" in {sname}")
        sector = Sector(sname, hours=parse_hours(sdoc.hours) if sdoc.hours else None)
        sectors[sname] = sector
        for aname, adoc in sdoc.arenas.items():
            apath = ("sectors", sname, "arenas", aname)
            if ":" in sname or ":" in aname:
                problems.append(Problem(source, wline(apath), "names cannot contain ':'"))
            arena = Arena(sname, aname, adoc.code, len(arenas), hours=parse_hours(adoc.hours) if adoc.hours else None)
            if adoc.code in by_code:
                duplicates.add(arena.index)
                other = by_code[adoc.code]
                problems.append(Problem(source, wline(apath + ("code",)),
                    f"duplicate arena code {adoc.code!r}: also used by {other.sector}: {other.name}"))
            else:
                by_code[adoc.code] = arena
            arenas.append(arena)
            sector.arenas[aname] = arena
            same = dict(clashes([o.name for o in adoc.objects]))
            for k, odoc in enumerate(adoc.objects):
                opath = apath + ("objects", k)
                if k in same:
                    first = adoc.objects[same[k]].name
                    problems.append(Problem(source, wline(opath), clash_message(
                        "object", odoc.name, first, wline(apath + ("objects", same[k])), f" in {sname}: {aname}")))
                    continue
                if ":" in odoc.name:
                    problems.append(Problem(source, wline(opath), "names cannot contain ':'"))
                obj = Object(sname, aname, odoc.name, [tuple(t) for t in odoc.tiles], odoc.state, odoc.capacity)
                arena.objects[odoc.name] = obj
                objects[obj.address] = obj
                object_lines[obj.address] = wline(opath)

    unknown_codes: dict[str, list[tuple[int, int]]] = {}
    for y, row in enumerate(arena_rows):
        for x, ch in enumerate(row):
            if ch == "." or ch.isspace():
                continue
            arena = by_code.get(ch)
            if arena is None:
                unknown_codes.setdefault(ch, []).append((x, y))
            elif walkable[y, x]:
                arena_at[y, x] = arena.index
                arena.tiles.append((x, y))

    for ch, where in unknown_codes.items():  # once per code, not once per tile
        x, y = where[0]
        more = f" (and {len(where) - 1} more tiles)" if len(where) > 1 else ""
        problems.append(Problem(map_source, arenas_line + y,
            f"unknown arena code {ch!r}: no arena in {source} has this code{more}", x + 1))

    comps = components(walkable)
    main = _main_component(comps, doc)
    for arena in arenas:
        apath = ("sectors", arena.sector, "arenas", arena.name)
        if not arena.tiles:
            if arena.index in duplicates:
                continue  # already reported as a duplicate code
            problems.append(Problem(source, wline(apath),
                f"arena {arena.sector}: {arena.name} has no tiles (code {arena.code!r} "
                f"marks no walkable tile in {map_source})"))
            continue
        if main is not None and not any(comps[y, x] == main for x, y in arena.tiles):
            x, y = arena.tiles[0]
            problems.append(Problem(source, wline(apath),
                f"arena {arena.sector}: {arena.name} is unreachable: no path from the rest of "
                f"the town reaches its tiles (first at [{x}, {y}]; a door missing?)"))
        for obj in arena.objects.values():
            oline = object_lines[obj.address]
            for t in obj.tiles:
                if not tilemap.in_bounds(t):
                    problems.append(Problem(source, oline,
                        f"object {obj.name!r}: tile {list(t)} is outside the map ({width}x{height})"))
                elif not walkable[t[1], t[0]]:
                    problems.append(Problem(source, oline,
                        f"object {obj.name!r}: tile {list(t)} is a blocked tile "
                        f"({tile_rows[t[1]][t[0]]!r}, {mdoc.legend[tile_rows[t[1]][t[0]]]})"))
                elif arena_at[t[1], t[0]] != arena.index:
                    inside = arenas[arena_at[t[1], t[0]]].address if arena_at[t[1], t[0]] >= 0 else "no arena"
                    problems.append(Problem(source, oline,
                        f"object {obj.name!r} is outside its arena {arena.sector}: {arena.name}: "
                        f"tile {list(t)} belongs to {inside.replace(':', ': ')}"))

    # --- settings ---
    for key, value in doc.settings.items():
        try:
            Settings().override(**{key: value})
        except SettingsError as e:
            problems.append(Problem(source, wline(("settings", key)), str(e)))

    # --- agents ---
    _one_each(source, "agent", [(a.name, wline(("agents", k, "name"))) for k, a in enumerate(doc.agents)], problems)
    agents: list[Persona] = []
    for k, adoc in enumerate(doc.agents):
        apath = ("agents", k)
        if adoc.home not in sectors:
            problems.append(Problem(source, wline(apath + ("home",)),
                f"agent {adoc.name!r}: unknown home {adoc.home!r} (no such sector)" + suggestion(adoc.home, sectors)))
        for s in adoc.knows:
            if s not in sectors:
                problems.append(Problem(source, wline(apath + ("knows",)),
                    f"agent {adoc.name!r} knows an unknown sector {s!r}" + suggestion(s, sectors)))
        spawn = tuple(adoc.spawn)
        if not tilemap.in_bounds(spawn):
            problems.append(Problem(source, wline(apath + ("spawn",)),
                f"agent {adoc.name!r}: spawn {list(spawn)} is outside the map ({width}x{height})"))
        elif not walkable[spawn[1], spawn[0]]:
            g = tile_rows[spawn[1]][spawn[0]]
            problems.append(Problem(source, wline(apath + ("spawn",)),
                f"agent {adoc.name!r}: spawn {list(spawn)} is in a {mdoc.legend[g]} ({g!r})"))
        elif main is not None and comps[spawn[1], spawn[0]] != main:
            problems.append(Problem(source, wline(apath + ("spawn",)),
                f"agent {adoc.name!r}: spawn {list(spawn)} is cut off from the town"))
        knows = tuple(dict.fromkeys([adoc.home, *adoc.knows]))
        routine = _routine(source, adoc, apath, lines, sectors, knows, problems)
        beds = tuple(":".join(p.strip() for p in b.split(":")) for b in adoc.beds)
        for i, b in enumerate(beds):
            if b not in objects:
                problems.append(Problem(source, wline(apath + ("beds", i)),
                    f"agent {adoc.name!r}: bed {adoc.beds[i]!r} is not an object (\"sector: arena: object\")"))
        agents.append(Persona(adoc.name, adoc.age, adoc.traits, adoc.description,
                                adoc.home, spawn, knows, routine, adoc.community_goal or doc.community_goal,
                                beds or home_beds(sectors.get(adoc.home))))
    facts, gatherings = news(source, doc, lines, agents, sectors, problems)
    said = scripted_lines(source, doc, lines, agents, problems)
    seen_needs: set[str] = set()
    for need in doc.needs:
        if need.strip().lower() in seen_needs or not need.strip():
            problems.append(Problem(source, wline(("needs",)),
                                    f"need {need!r} is {'blank' if not need.strip() else 'listed twice'}"))
        seen_needs.add(need.strip().lower())
    spec = economy(source, doc, lines, agents, sectors, objects, problems)
    civic = civics(source, doc, lines, agents, problems)
    places_of = towns(source, doc, lines, tilemap, sectors, problems)
    faiths = doctrines(source, doc, lines, agents, sectors, problems)
    if problems:
        raise WorldError(problems)
    return World(
        name=doc.name, source=source, text=text, map_source=map_source, map_text=map_text,
        map=tilemap, start=doc.start.replace(tzinfo=None), step_seconds=doc.step_seconds,
        seed=doc.seed, sectors=sectors, agents=agents, arenas=arenas, objects=objects,
        settings=dict(doc.settings), facts=facts, gatherings=gatherings, lines=said,
        community_goal=doc.community_goal, needs=tuple(n.strip() for n in doc.needs), economy=spec,
        civics=civic, towns=places_of, doctrines=faiths,
    )


def _routine(source: str, adoc: PersonaIn, apath: tuple[str | int, ...], lines: TomlLines,
             sectors: dict[str, Sector], knows: tuple[str, ...], problems: list[Problem]) -> tuple[RoutineItem, ...]:
    """The agent's routine: the file's (checked, each problem at its item's line), else one read
    from the description (world/routine.py)."""
    if adoc.routine is None:
        home = sectors.get(adoc.home)
        objects = [name for a in home.arenas.values() for name in a.objects] if home else None
        return derive(adoc.description, adoc.home, knows, objects)
    items = []
    for r in adoc.routine:
        activity = r.activity.strip()
        if (r.kind == "sleep" and not activity) or activity.lower() == SLEEPING:
            activity = SLEEPING
        place = "" if r.place == adoc.home else r.place
        items.append(RoutineItem(r.start, 0, activity, place, r.kind, tuple(s.strip() for s in r.steps)))
    found = routine_problems(items, adoc.home, knows, sectors)
    for i, message in found:
        where = apath + (("routine", i) if i is not None else ("routine",))
        problems.append(Problem(source, lines.line_of(where), f"agent {adoc.name!r}: {message}"))
    return with_lengths(items) if items and not found else ()


def _one_each(source: str, kind: str, named: list[tuple[str, int | None]], problems: list[Problem],
              where: str = "") -> None:
    """A problem for each name that is one with an earlier one (world/names.py: case, width and
    spacing aside, or looking the same), at its line."""
    for i, j in clashes([n for n, _ in named]):
        problems.append(Problem(source, named[i][1], clash_message(kind, named[i][0], named[j][0], named[j][1], where)))


def _main_component(comps: np.ndarray, doc: WorldIn) -> int | None:
    """The walkable region the town lives in: where most agents spawn, else the largest."""
    votes = Counter()
    for a in doc.agents:
        x, y = a.spawn
        if 0 <= y < comps.shape[0] and 0 <= x < comps.shape[1] and comps[y, x] >= 0:
            votes[int(comps[y, x])] += 1
    if votes:
        return votes.most_common(1)[0][0]
    labels, counts = np.unique(comps[comps >= 0], return_counts=True)
    return int(labels[np.argmax(counts)]) if len(labels) else None
