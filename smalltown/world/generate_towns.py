"""What `world generate` writes of its towns and a faith: a [[towns]] table for each town (its
circle, its square), the doctrine file's [[doctrines]] table with the priests it picks and the
gathering at the first town's square."""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import Field

from smalltown.world.errors import Problem, WorldError
from smalltown.world.generate_map import HEIGHT, Building
from smalltown.world.generate_people import Person
from smalltown.world.load_text import parse_text, read_text_capped
from smalltown.world.load_towns import own_problems
from smalltown.world.schema import DoctrineIn, _Strict

DOCTRINE_MAX_BYTES = 100_000


class DoctrineFileIn(_Strict):
    doctrines: list[DoctrineIn] = Field(min_length=1, max_length=1)


def read_doctrine(path: Path) -> tuple[str, str]:
    """A doctrine file's (name, text), checked as a world's [[doctrines]] table is (less what the
    generator gives it: its priests and its gathering's place). WorldError names each problem."""
    try:
        text = read_text_capped(path, DOCTRINE_MAX_BYTES)
    except FileNotFoundError:
        raise WorldError([Problem(str(path), None, "file not found")]) from None
    except OSError as e:
        raise WorldError([Problem(str(path), None, f"cannot read: {e}")]) from None
    doc, lines = parse_text(str(path), text, DoctrineFileIn)
    problems: list[Problem] = []
    d = doc.doctrines[0]
    for field, what in (("priests", "--priests N picks them"), ("gathering", "it is the first town's square")):
        if getattr(d, field):
            problems.append(Problem(str(path), lines.line_of(("doctrines", 0, field)),
                                    f"doctrines.0.{field}: a doctrine file for `world generate` gives none ({what})"))
    for field, message in own_problems(d):
        problems.append(Problem(str(path), lines.line_of(("doctrines", 0, *field)), f"doctrine {d.name!r}: {message}"))
    if problems:
        raise WorldError(problems)
    return str(path), text


def doctrine_table(source: str, text: str, priests: list[str], square: str) -> dict:
    """The world's [[doctrines]] table: the file's, with its priests and its gathering at `square`."""
    doc, _ = parse_text(source, text, DoctrineFileIn)
    d = doc.doctrines[0]
    table = {"name": d.name, "levels": d.levels, "level_names": d.level_names, "priests": priests,
             "persona": d.persona}
    if d.gathering_hours:
        table |= {"gathering": square, "gathering_hours": d.gathering_hours}
    return table


def priests_of(people: list[Person], n: int) -> list[str]:
    """`n` of the town's `people` as priests, spread over its households: the first adult of each
    household in turn (in the order of the households), then each one's second adult, and so on,
    children last; fewer when the town has fewer. (A faith preached by one family reaches no further
    than its door: Sid's 20 priests are 20 separate agents.)"""
    houses: dict[int, list[Person]] = {}
    for p in people:
        houses.setdefault(p.household, []).append(p)
    chosen: list[str] = []
    for adults in (True, False):
        rows = [[p for p in h if (p.age >= 18) == adults] for h in houses.values()]
        for k in range(max(map(len, rows), default=0)):
            chosen += [row[k].name for row in rows if k < len(row)]
    return chosen[:n]


def grid_towns(towns: list[list[Building]]) -> list[tuple[int, int, int]]:
    """Each town of the grid layout as a circle (x, y, r) round its block of buildings: the
    centre of the block and the radius reaching its farthest corner (farmhouses in the strip
    beside a block may fall inside it: the sid layout keeps them apart)."""
    out = []
    for bs in towns:
        x0, y0 = min(b.x for b in bs), min(b.y for b in bs)
        x1, y1 = max(b.x + b.width - 1 for b in bs), max(b.y + HEIGHT - 1 for b in bs)
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        out.append((cx, cy, math.ceil(math.hypot(max(cx - x0, x1 - cx), max(cy - y0, y1 - cy)))))
    return out


def nearest(circles: list[tuple[int, int, int]], b: Building) -> int:
    """The index of the town whose centre is nearest the building's door."""
    dx, dy = b.door()
    return min(range(len(circles)), key=lambda i: (circles[i][0] - dx) ** 2 + (circles[i][1] - dy) ** 2)
