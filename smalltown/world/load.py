"""Load and validate a world file and its map, collecting every problem with its line."""

from __future__ import annotations

import os
import tomllib
from collections import Counter
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ValidationError

from smalltown.config import Settings, SettingsError
from smalltown.world.errors import Problem, WorldError
from smalltown.world.model import (
    BLOCKED_KINDS,
    AgentSpec,
    Arena,
    Fact,
    Gathering,
    Object,
    RoutineItem,
    Sector,
    TileMap,
    World,
)
from smalltown.world.paths import components
from smalltown.world.routine import SLEEPING, derive, with_lengths
from smalltown.world.routine import problems as routine_problems
from smalltown.world.schema import AgentIn, MapIn, WorldIn
from smalltown.world.toml_lines import MAX_NESTING, TomlLines, too_deep


# A world or map from a stranger is data of bounded size (the bundled ones are tens of kB).
WORLD_MAX_BYTES = 1_000_000
MAP_MAX_BYTES = 4_000_000
MAP_MAX_SIDE = 1000  # tiles, each way


def read_text_capped(path: Path, limit: int, label: str | None = None) -> str:
    """A file's text, refusing one over `limit` bytes without reading it all (nor waiting on a
    device or pipe named as a world)."""
    label = label or str(path)
    if path.exists() and not path.is_file():
        raise WorldError([Problem(label, None, "not a regular file")])
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise WorldError([Problem(label, None, f"too large: over {limit:,} bytes (the limit)")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WorldError([Problem(label, None, f"cannot read: not UTF-8 text ({e.reason} at byte {e.start})")]) from None


def _check_size(source: str, text: str, limit: int) -> None:
    if len(text.encode("utf-8")) > limit:
        raise WorldError([Problem(source, None, f"too large: over {limit:,} bytes (the limit)")])


def load_world(path: str | Path) -> World:
    """Read a world file (and the map it names) from disk."""
    path = Path(path)
    try:
        text = read_text_capped(path, WORLD_MAX_BYTES)
    except FileNotFoundError:
        raise WorldError([Problem(str(path), None, "file not found")]) from None
    except OSError as e:
        raise WorldError([Problem(str(path), None, f"cannot read: {e}")]) from None
    doc, lines = _parse(str(path), text, WorldIn)
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
    _check_size(source, text, WORLD_MAX_BYTES)
    _check_size(map_source, map_text, MAP_MAX_BYTES)
    doc, lines = _parse(source, text, WorldIn)
    return build_world(source, text, map_source, map_text, doc, lines)


def parse_toml(source: str, text: str) -> dict:
    """tomllib's reading of a world or map text, its errors as problems with their line; nesting
    is bounded first (tomllib recurses into each level: 2,000 would be a RecursionError)."""
    if text.startswith("\ufeff"):  # (tomllib says only "Invalid statement")
        raise WorldError([Problem(source, 1, "starts with a byte-order mark (U+FEFF): save it as UTF-8 "
                                             "without one", 1)])
    deep = too_deep(text)
    if deep is not None:
        raise WorldError([Problem(source, deep[0], f"nested too deeply: more than {MAX_NESTING} levels of "
                                                   f"arrays and inline tables", deep[1])])
    try:
        return tomllib.loads(text)
    except RecursionError:  # (too_deep should have found it)
        raise WorldError([Problem(source, None, f"nested too deeply: more than {MAX_NESTING} levels of arrays "
                                                f"and inline tables")]) from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        line = col = None
        # tomllib ends its messages with "(at line L, column C)"
        if "(at line " in msg:
            head, _, tail = msg.rpartition(" (at line ")
            nums = tail.rstrip(")").split(", column ")
            line, col = int(nums[0]), int(nums[1]) if len(nums) > 1 else None
            msg = head
        raise WorldError([Problem(source, line, f"TOML syntax: {msg}", col)]) from None


def _parse(source: str, text: str, schema: type[BaseModel]):
    raw = parse_toml(source, text)
    lines = TomlLines(text)
    try:
        return schema.model_validate(raw), lines
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = tuple(err["loc"])
            field = ".".join(str(p) for p in loc) or "(top level)"
            msg = err["msg"]
            if err["type"] == "missing":
                msg = "required field is missing"
            elif err["type"] == "extra_forbidden":
                msg = "unknown field"
            elif err["type"] == "value_error":
                msg = msg.removeprefix("Value error, ")
            problems.append(Problem(source, lines.line_of(loc) or 1, f"{field}: {msg}"))
        raise WorldError(problems) from None


def _grid(text: str) -> list[str]:
    rows = text.split("\n")
    while rows and rows[-1] == "":
        rows.pop()
    return [r.rstrip("\r") for r in rows]


def build_world(
    source: str, text: str, map_source: str, map_text: str, doc: WorldIn, lines: TomlLines
) -> World:
    problems: list[Problem] = []
    wline = lines.line_of

    # --- map ---
    mdoc, mlines = _parse(map_source, map_text, MapIn)
    tile_rows = _grid(mdoc.layers.tiles)
    arena_rows = _grid(mdoc.layers.arenas)
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
    for sname, sdoc in doc.sectors.items():
        sector = Sector(sname)
        sectors[sname] = sector
        for aname, adoc in sdoc.arenas.items():
            apath = ("sectors", sname, "arenas", aname)
            if ":" in sname or ":" in aname:
                problems.append(Problem(source, wline(apath), "names cannot contain ':'"))
            arena = Arena(sname, aname, adoc.code, len(arenas))
            if adoc.code in by_code:
                duplicates.add(arena.index)
                other = by_code[adoc.code]
                problems.append(Problem(source, wline(apath + ("code",)),
                    f"duplicate arena code {adoc.code!r}: also used by {other.sector}: {other.name}"))
            else:
                by_code[adoc.code] = arena
            arenas.append(arena)
            sector.arenas[aname] = arena
            first_line: dict[str, int | None] = {}
            for k, odoc in enumerate(adoc.objects):
                opath = apath + ("objects", k)
                if odoc.name in first_line:
                    problems.append(Problem(source, wline(opath),
                        f"duplicate object name {odoc.name!r} in {sname}: {aname} "
                        f"(first at line {first_line[odoc.name]})"))
                    continue
                first_line[odoc.name] = wline(opath)
                if ":" in odoc.name:
                    problems.append(Problem(source, wline(opath), "names cannot contain ':'"))
                obj = Object(sname, aname, odoc.name, [tuple(t) for t in odoc.tiles], odoc.state)
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
    names = Counter(a.name for a in doc.agents)
    agents: list[AgentSpec] = []
    for k, adoc in enumerate(doc.agents):
        apath = ("agents", k)
        if names[adoc.name] > 1:
            problems.append(Problem(source, wline(apath + ("name",)), f"duplicate agent name {adoc.name!r}"))
        if adoc.home not in sectors:
            problems.append(Problem(source, wline(apath + ("home",)),
                f"agent {adoc.name!r}: unknown home {adoc.home!r} (no such sector)"))
        for s in adoc.knows:
            if s not in sectors:
                problems.append(Problem(source, wline(apath + ("knows",)),
                    f"agent {adoc.name!r} knows an unknown sector {s!r}"))
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
        agents.append(AgentSpec(adoc.name, adoc.age, adoc.traits, adoc.description,
                                adoc.home, spawn, knows, routine))
    facts, gatherings = _news(source, doc, lines, agents, sectors, problems)
    if problems:
        raise WorldError(problems)
    return World(
        name=doc.name, source=source, text=text, map_source=map_source, map_text=map_text,
        map=tilemap, start=doc.start.replace(tzinfo=None), step_seconds=doc.step_seconds,
        seed=doc.seed, sectors=sectors, agents=agents, arenas=arenas, objects=objects,
        settings=dict(doc.settings), facts=facts, gatherings=gatherings,
    )


def _routine(source: str, adoc: AgentIn, apath: tuple[str | int, ...], lines: TomlLines,
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


def _news(source: str, doc: WorldIn, lines: TomlLines, agents: list[AgentSpec], sectors: dict[str, Sector],
          problems: list[Problem]) -> tuple[list[Fact], list[Gathering]]:
    """[[facts]] and [[gatherings]]: what `smalltown eval town` measures. A fact's keywords must
    find it in the seed memories of exactly the agents said to know it at the start, so a
    diffusion count never rests on keywords that miss (or over-reach)."""
    wline = lines.line_of
    by_name = {a.name: a for a in agents}
    facts: list[Fact] = []
    for k, fdoc in enumerate(doc.facts):
        fpath = ("facts", k)
        if any(f.name == fdoc.name for f in facts):
            problems.append(Problem(source, wline(fpath + ("name",)), f"duplicate fact name {fdoc.name!r}"))
        empty = [kw for kw in fdoc.keywords if any(not alt.strip() for alt in kw.split("|"))]
        for kw in empty:
            problems.append(Problem(source, wline(fpath + ("keywords",)),
                f"fact {fdoc.name!r}: keyword {kw!r} is blank or has a blank alternative"))
        subject = fdoc.subject
        if subject is None:  # the one who knows it and whose name starts it: "Ann Lee is hosting ..."
            subject = next((n for n in fdoc.known_by if fdoc.text.startswith(n)
                            and not fdoc.text[len(n):len(n) + 1].isalnum()), None)
        elif subject not in by_name:
            problems.append(Problem(source, wline(fpath + ("subject",)),
                f"fact {fdoc.name!r}: unknown subject {subject!r} (no such agent)"))
        fact = Fact(fdoc.name, fdoc.text, tuple(k.strip() for k in fdoc.keywords),
                    fdoc.question or f"Did you know that {fdoc.text.rstrip('.')}?", tuple(fdoc.known_by),
                    subject)
        facts.append(fact)
        for name in fdoc.known_by:
            if name not in by_name:
                problems.append(Problem(source, wline(fpath + ("known_by",)),
                    f"fact {fdoc.name!r}: unknown agent {name!r} in known_by"))
        for a in agents if not empty else ():
            seeded = any(fact.about(m) for m in a.seed_memories)
            if seeded and a.name not in fdoc.known_by:
                problems.append(Problem(source, wline(fpath + ("known_by",)),
                    f"fact {fdoc.name!r}: {a.name}'s description matches its keywords, but known_by "
                    f"does not list {a.name} (add the name, or make the keywords narrower)"))
            elif not seeded and a.name in fdoc.known_by:
                problems.append(Problem(source, wline(fpath + ("known_by",)),
                    f"fact {fdoc.name!r}: known_by lists {a.name}, but no phrase of {a.name}'s "
                    f"description matches the keywords {list(fact.keywords)}"))
    gatherings: list[Gathering] = []
    fact_names = {f.name for f in facts}
    for k, gdoc in enumerate(doc.gatherings):
        gpath = ("gatherings", k)
        place = gdoc.place.replace(": ", ":").strip()
        sector, _, arena = place.partition(":")
        if sector not in sectors or (arena and arena not in sectors[sector].arenas):
            problems.append(Problem(source, wline(gpath + ("place",)),
                f"gathering {gdoc.name!r}: unknown place {gdoc.place!r} (a sector, or 'sector:arena')"))
        start, end = gdoc.start.replace(tzinfo=None), gdoc.end.replace(tzinfo=None)
        if end <= start:
            problems.append(Problem(source, wline(gpath + ("end",)),
                f"gathering {gdoc.name!r}: end {end:%Y-%m-%d %H:%M} is not after start {start:%Y-%m-%d %H:%M}"))
        if gdoc.host is not None and gdoc.host not in by_name:
            problems.append(Problem(source, wline(gpath + ("host",)),
                f"gathering {gdoc.name!r}: unknown host {gdoc.host!r} (no such agent)"))
        if gdoc.fact is not None and gdoc.fact not in fact_names:
            problems.append(Problem(source, wline(gpath + ("fact",)),
                f"gathering {gdoc.name!r}: unknown fact {gdoc.fact!r} (declare it in [[facts]])"))
        if any(g.name == gdoc.name for g in gatherings):
            problems.append(Problem(source, wline(gpath + ("name",)), f"duplicate gathering name {gdoc.name!r}"))
        gatherings.append(Gathering(gdoc.name, place, start, end, gdoc.host, gdoc.fact))
    return facts, gatherings


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
