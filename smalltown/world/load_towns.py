"""A world of many towns: its [[towns]] and [[doctrines]], checked against its map, places and
agents with file:line (each unknown name with a did-you-mean).

    [[towns]]
    name = "Ashford"
    centre = [120, 80]          # a tile of the map
    radius = 25                 # tiles: a tile within it is the town's (else rural)
    square = "Ashford market"   # a sector: the town's market / meeting place, where trips go

    [[doctrines]]
    name = "Lanternism"
    levels = [["lamp", "wick"], ["Lanternist", "Order of the Lantern"]]   # keywords, lowest level first
    level_names = ["indirect", "direct"]
    priests = ["Ann Lee"]       # agents at the top level from the start
    persona = ["You are a devoted Lanternist ..."]   # lines each priest carries
    gathering = "Ashford market"    # where believers meet (sector or sector:arena), or ""
    gathering_hours = "18:00-19:00"

Refused: two towns or doctrines of one name; a centre off the map; a square that is no sector; a
level without keywords, a keyword in two levels of one doctrine, as many level names as levels;
a priest who is no agent (or named twice); a gathering that is no place, hours without one."""

from __future__ import annotations

from smalltown.world.errors import Problem
from smalltown.world.model import Doctrine, Persona, Sector, TileMap, Town, parse_hours
from smalltown.world.names import clash_message, clashes, did_you_mean, name_key, places, suggestion
from smalltown.world.schema import DoctrineIn, WorldIn
from smalltown.world.toml_lines import TomlLines


def towns(source: str, doc: WorldIn, lines: TomlLines, tilemap: TileMap, sectors: dict[str, Sector],
          problems: list[Problem]) -> list[Town]:
    line = lines.line_of
    for i, j in clashes([t.name for t in doc.towns]):
        problems.append(Problem(source, line(("towns", i, "name")), clash_message(
            "town", doc.towns[i].name, doc.towns[j].name, line(("towns", j, "name")))))
    out: list[Town] = []
    for k, t in enumerate(doc.towns):
        where = ("towns", k)
        centre = (int(t.centre[0]), int(t.centre[1]))
        if not tilemap.in_bounds(centre):
            problems.append(Problem(source, line(where + ("centre",)), f"town {t.name!r}: centre {list(centre)} "
                                    f"is outside the map ({tilemap.width}x{tilemap.height})"))
        square = t.square.strip()
        if square not in sectors:
            problems.append(Problem(source, line(where + ("square",)), f"town {t.name!r}: square {t.square!r} "
                                    f"is not a sector" + suggestion(square, sectors)))
        out.append(Town(t.name, centre, t.radius, square))
    return out


def doctrines(source: str, doc: WorldIn, lines: TomlLines, agents: list[Persona], sectors: dict[str, Sector],
              problems: list[Problem]) -> list[Doctrine]:
    line = lines.line_of
    for i, j in clashes([d.name for d in doc.doctrines]):
        problems.append(Problem(source, line(("doctrines", i, "name")), clash_message(
            "doctrine", doc.doctrines[i].name, doc.doctrines[j].name, line(("doctrines", j, "name")))))
    names = [a.name for a in agents]
    known = set(names)
    everywhere = places(sectors)
    out: list[Doctrine] = []
    for k, d in enumerate(doc.doctrines):
        where = ("doctrines", k)
        said = f"doctrine {d.name!r}"
        for field, message in own_problems(d):
            problems.append(Problem(source, line(where + field), f"{said}: {message}"))
        priests: list[str] = []
        for i, p in enumerate(d.priests):
            if p not in known:
                guess = did_you_mean(p, names)
                problems.append(Problem(source, line(where + ("priests", i)),
                                        f"{said}: priest {p!r} is not an agent of this world"
                                        + (f'; did you mean "{guess}"?' if guess else "")))
            elif p in priests:
                problems.append(Problem(source, line(where + ("priests", i)), f"{said}: priest {p!r} is named twice"))
            priests.append(p)
        gathering = ":".join(part.strip() for part in d.gathering.split(":")) if d.gathering.strip() else ""
        if gathering and gathering not in everywhere:
            problems.append(Problem(source, line(where + ("gathering",)),
                                    f"{said}: gathering {d.gathering!r} is not a place (a sector, or "
                                    f"\"sector:arena\")" + suggestion(gathering, everywhere)))
        hours = d.gathering_hours.strip()
        if hours and not gathering:
            problems.append(Problem(source, line(where + ("gathering_hours",)),
                                    f"{said}: gathering_hours without a gathering (name the place)"))
        out.append(Doctrine(d.name, tuple(tuple(w.strip() for w in words) for words in d.levels),
                            tuple(d.level_names), tuple(priests), tuple(d.persona), gathering, hours))
    return out


def own_problems(d: DoctrineIn) -> list[tuple[tuple[str | int, ...], str]]:
    """What is wrong with a doctrine on its own (its levels, their names, its hours), each with
    the field it is in: one level name per level, no blank keyword, a keyword at one level only."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    if len(d.level_names) != len(d.levels):
        out.append((("level_names",), f"{len(d.level_names)} level names for {len(d.levels)} levels "
                                      f"(one name each, lowest first)"))
    seen: dict[str, int] = {}
    for lv, words in enumerate(d.levels, 1):
        for w in words:
            if not w.split():
                out.append((("levels", lv - 1), f"level {lv} has a blank keyword"))
                continue
            key = " ".join(name_key(w).split())
            if key in seen:
                out.append((("levels", lv - 1), f"keyword {w!r} is at level {seen[key]} and level {lv}: "
                                                f"a keyword belongs to one level"))
            seen.setdefault(key, lv)
    if d.gathering_hours.strip():
        try:
            parse_hours(d.gathering_hours.strip())
        except ValueError as e:
            out.append((("gathering_hours",), f"gathering_hours: {e}"))
    return out
