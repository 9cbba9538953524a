"""Sid's layout for `world generate --layout sid` (Project Sid's many-town world): each town a
dense circle of buildings (rows of them, a street under each row's doors), the circles spread
over a rectangle of open ground, roads joining them, and the rural agents' farmhouses scattered
over the rest, every one outside every town's circle.

The scale: 3 of Sid's blocks a tile, so his 1000 x 1200 blocks are 333 x 400 tiles and a town's
radius of 50 blocks 17 tiles (AREA, TOWN_RADIUS). Each rural agent has a farmstead of its own (a
farmhouse and its farmyard, 19 tiles wide): Sid's 302, scattered at random, fit at 3 blocks a tile
and not at 4 (250 x 300: no room is left for the last of them). An agent walks a tile a step (10 game seconds): a walk between towns (some 130 tiles)
takes some 20 game minutes. Path searches (tcod, from the goal, stopping at the start), measured
over three scripted game hours of Sid's 500 agents (06:00-09:00, two shared cores, with the
households of before): 2 blocks a tile (500 x 600) spent 28.5 s of 112 s in 3,044 path searches,
3 blocks 12.6 s of 91 s, 4 blocks 7.6 s of 88 s; the grid layout 10.0 s of 122 s. At 1 block a
tile the map is over MAP_MAX_SIDE. Our towns are buildings, not spawn circles, so a town of 33
(its homes, shops and haunts) needs a radius of 26 to 28 tiles, more than the 17 asked; a town's
circle grows to what its buildings need, as its [[towns]] table then says. Within
its circle a town is packed as tightly as it goes, round the centre."""

from __future__ import annotations

import math
import random

import numpy as np

from smalltown.world.generate_map import HEIGHT, PITCH, Building, Layout

AREA = (333, 400)  # tiles, width x height: Sid's 1000 x 1200 blocks at 3 blocks a tile
TOWN_RADIUS = 17  # tiles: Sid's 50 blocks
TRIES = 20_000  # random places tried for one town or farmhouse before the area is said to be too small


class LayoutError(ValueError):
    """The towns or the farmhouses do not fit the area asked for."""


def _chord(radius: int, dy_max: int) -> int:
    """Half the width of the circle's tiles on a row `dy_max` from its centre (-1: none)."""
    inside = radius * radius - dy_max * dy_max
    return math.isqrt(inside) if inside >= 0 else -1


def pack(buildings: list[Building], radius: int) -> list[tuple[int, int, int, int]] | None:
    """Place a town's buildings in rows inside a circle of `radius` round (0, 0), each row centred
    on its chord with a street under its doors; the streets as rectangles, or None if they do
    not all fit. Positions are relative to the centre."""
    streets: list[tuple[int, int, int, int]] = []
    todo = list(buildings)
    y = -radius
    while todo:
        if y + PITCH - 1 > radius:
            return None
        top, street = y, y + HEIGHT  # a row of buildings, then its street
        half = _chord(radius, max(abs(top), abs(street)))  # (the band's row farthest from the centre)
        row: list[Building] = []
        used = -1
        while todo and half >= 0 and used + 1 + todo[0].width <= 2 * half + 1:
            used += 1 + todo[0].width
            row.append(todo.pop(0))
        if row:
            x = -half + (2 * half + 1 - used) // 2
            for b in row:
                b.x, b.y = x, top
                x += b.width + 1
            s_half = _chord(radius, abs(street))
            streets.append((-s_half, street, 2 * s_half + 1, 1))
            y += PITCH
        else:
            y += 1  # the circle is too narrow here: try a row lower
    return streets


def _outside(x: int, y: int, w: int, h: int, circles: list[tuple[int, int, int]], margin: int) -> bool:
    """Whether the rectangle lies wholly outside every circle (grown by `margin`)."""
    for cx, cy, r in circles:
        nx, ny = min(max(cx, x), x + w - 1), min(max(cy, y), y + h - 1)  # its tile nearest the centre
        if (nx - cx) ** 2 + (ny - cy) ** 2 <= (r + margin) ** 2:
            return False
    return True


def lay_out_sid(rng: random.Random, towns: list[list[Building]], rural: list[Building], area: tuple[int, int],
                radius: int) -> tuple[Layout, list[tuple[int, int, int]]]:
    """Towns as circles over `area` (the smallest radius from `radius` up that holds each town),
    roads joining them, farmhouses scattered outside them; the layout and each town's (x, y, r)."""
    width, height = area
    shapes = []
    for bs in towns:
        # packed in the smallest circle that holds it (dense, round its centre); the town's circle
        # is the radius asked for, or that one where it is larger
        r = max(1, math.isqrt(sum((b.width + 1) * PITCH for b in bs)) // 2)
        while (streets := pack(bs, r)) is None:
            r += 1
            if 2 * r + 4 > min(width, height):
                raise LayoutError(f"a town of {len(bs)} buildings does not fit in a {width}x{height} area")
        shapes.append((max(r, radius), streets))
    circles = _centres(rng, [r for r, _ in shapes], width, height)
    taken = np.zeros((height, width), dtype=bool)
    out_streets: list[tuple[int, int, int, int]] = []
    for (cx, cy, r), bs, (_, streets) in zip(circles, towns, shapes):
        for b in bs:
            b.x, b.y = b.x + cx, b.y + cy
        out_streets += [(x + cx, y + cy, w, h) for x, y, w, h in streets]
    for x, y, w, h in _roads(circles):
        out_streets.append((x, y, w, h))
        taken[y:y + h, x:x + w] = True  # farmhouses keep off the roads
    for b in rural:
        for _ in range(TRIES):
            x, y = rng.randrange(1, width - b.width - 1), rng.randrange(1, height - PITCH)
            # a tile of ground all round (the door's step below it): every farmhouse reachable
            if not taken[y - 1:y + HEIGHT + 1, x - 1:x + b.width + 1].any() and \
                    _outside(x, y, b.width, HEIGHT, circles, 1):
                b.x, b.y = x, y
                taken[y - 1:y + HEIGHT + 1, x - 1:x + b.width + 1] = True
                break
        else:
            raise LayoutError(f"no room for {len(rural)} farmhouses outside the towns in a {width}x{height} area: "
                              f"give a larger --area")
    return Layout(width, height, out_streets), circles


def _centres(rng: random.Random, radii: list[int], width: int, height: int) -> list[tuple[int, int, int]]:
    """Town centres spread over the area: apart by their radii and a gap that shrinks (from a
    fair share of the area down to 4 tiles) until all fit."""
    gap = max(4, int(math.sqrt(width * height / max(1, len(radii))) / 2))
    while True:
        placed: list[tuple[int, int, int]] = []
        for r in radii:
            for _ in range(TRIES // 10):
                if width - r - 3 <= r + 2 or height - r - 3 <= r + 2:
                    break
                cx, cy = rng.randrange(r + 2, width - r - 2), rng.randrange(r + 2, height - r - 2)
                if all((cx - x) ** 2 + (cy - y) ** 2 >= (r + q + gap) ** 2 for x, y, q in placed):
                    placed.append((cx, cy, r))
                    break
            else:
                break
        if len(placed) == len(radii):
            return placed
        if gap == 4:
            raise LayoutError(f"{len(radii)} towns of radius {min(radii)} and more do not fit in a "
                              f"{width}x{height} area: give a larger --area")
        gap = max(4, gap * 3 // 4)


def _roads(circles: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Streets joining the towns' centres: each town to its nearest already joined (a spanning
    tree, Prim's), as an L of one horizontal and one vertical street."""
    if len(circles) < 2:
        return []
    joined, rest = [circles[0]], list(circles[1:])
    roads: list[tuple[int, int, int, int]] = []
    while rest:
        a, b = min(((a, b) for a in joined for b in rest),
                   key=lambda ab: (ab[0][0] - ab[1][0]) ** 2 + (ab[0][1] - ab[1][1]) ** 2)
        (ax, ay, _), (bx, by, _) = a, b
        roads.append((min(ax, bx), ay, abs(ax - bx) + 1, 1))
        roads.append((bx, min(ay, by), 1, abs(ay - by) + 1))
        joined.append(b)
        rest.remove(b)
    return roads
