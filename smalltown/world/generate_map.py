"""The map of a generated world: buildings (one sector each, a row of rooms) laid out in towns,
towns in a grid joined by roads, rural homes in the strips between them; drawn as the tile and
arena layers of a map file. Open ground joins everything, so every room is walkable."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

HEIGHT = 5  # a building: a wall, three rows inside, a wall with the front door
PITCH = HEIGHT + 2  # a row of buildings, the street under their doors, a row of ground
GLYPHS = {"bed": "B", "stove": "S", "refrigerator": "F", "table": "t", "toilet": "W", "shower": "h",
          "sink": "k", "counter": "C", "bench": "n", "desk": "d", "shelves": "s", "bookshelves": "s"}
LEGEND = {"#": "wall", ".": "floor", "+": "door", ",": "ground", "=": "street", '"': "grass", "T": "tree",
          "o": "object", **{g: "object" for g in GLYPHS.values()}}


@dataclass
class Room:
    """An arena: its name and its objects' names (and states, when not idle)."""

    name: str
    objects: list[str]
    states: dict[str, str] = field(default_factory=dict)
    code: str = ""

    @property
    def width(self) -> int:
        return max(3, 2 * math.ceil(len(self.objects) / 2) - 1)


@dataclass
class Building:
    """A sector: indoors, a row of rooms joined by doors with the front door under the first;
    outdoors (a park, a farmyard), one grassy room without walls."""

    sector: str
    rooms: list[Room]
    outdoor: bool = False
    x: int = 0
    y: int = 0
    tiles: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (arena, object) -> [x, y]

    @property
    def width(self) -> int:
        return 1 + sum(r.width + 1 for r in self.rooms)

    def door(self) -> tuple[int, int]:
        return self.x + 1 + self.rooms[0].width // 2, self.y + HEIGHT - 1


def codes():
    """Arena codes, one character each: letters and digits, then letters beyond ASCII."""
    yield from "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    cp = 0x100
    while True:
        ch = chr(cp)
        if ch.isalpha() and ch.isprintable() and len(ch.upper()) == 1:
            yield ch
        cp += 1


def shelve(buildings: list[Building], width: int, gap: int = 1) -> tuple[int, int]:
    """Place buildings left to right in rows `width` wide (positions relative to 0, 0); the
    size of the block they fill."""
    x, y, right = 0, 0, 0
    for b in buildings:
        if x and x + b.width > width:
            x, y = 0, y + PITCH
        b.x, b.y = x, y
        x += b.width + gap
        right = max(right, x - gap)
    return right, (y + PITCH if buildings else 0)


def town_width(buildings: list[Building]) -> int:
    area = sum((b.width + 1) * PITCH for b in buildings)
    return max(max((b.width for b in buildings), default=1), int(math.sqrt(area * 1.6)))


@dataclass
class Layout:
    width: int
    height: int
    streets: list[tuple[int, int, int, int]]  # rectangles (x, y, w, h) of street


def lay_out(towns: list[list[Building]], rural: list[Building]) -> Layout:
    """Towns in a grid (a road round each cell), rural homes in a strip under each row of towns."""
    cols = max(1, math.ceil(math.sqrt(len(towns))))
    rows = math.ceil(len(towns) / cols)
    sizes = [shelve(t, town_width(t)) for t in towns]
    cell_w = max(w for w, _ in sizes) + 4
    cell_h = max(h for _, h in sizes) + 2
    strips = [rural[r::rows] for r in range(rows)]
    map_w = cols * cell_w + 1
    strip_h = [shelve(s, map_w - 4, gap=4)[1] + 1 if s else 0 for s in strips]
    streets: list[tuple[int, int, int, int]] = []
    y = 0
    for r in range(rows):
        streets.append((0, y, map_w, 1))
        for c in range(cols):
            i = r * cols + c
            streets.append((c * cell_w, y, 1, cell_h))
            if i < len(towns):
                x0, y0 = c * cell_w + 2, y + 2
                for b in towns[i]:
                    b.x, b.y = b.x + x0, b.y + y0
                streets.extend((x0 - 1, b_y + HEIGHT, cell_w - 2, 1) for b_y in {b.y for b in towns[i]})
        streets.append((cols * cell_w, y, 1, cell_h))
        y += cell_h
        for b in strips[r]:
            b.x, b.y = b.x + 2, b.y + y + 1
        y += strip_h[r]
    streets.append((0, y, map_w, 1))
    return Layout(map_w, y + 1, streets)


def draw(buildings: list[Building], layout: Layout) -> tuple[list[str], list[str]]:
    """The tile and arena layers, and each object's tile recorded in its building."""
    tiles = [[","] * layout.width for _ in range(layout.height)]
    arenas = [["."] * layout.width for _ in range(layout.height)]
    for x, y, w, h in layout.streets:
        for yy in range(y, y + h):
            for xx in range(x, x + w):
                tiles[yy][xx] = "="
    for b in buildings:
        _draw_building(b, tiles, arenas)
    return ["".join(r) for r in tiles], ["".join(r) for r in arenas]


def _draw_building(b: Building, tiles: list[list[str]], arenas: list[list[str]]) -> None:
    for yy in range(b.y, b.y + HEIGHT):
        for xx in range(b.x, b.x + b.width):
            edge = yy in (b.y, b.y + HEIGHT - 1) or xx in (b.x, b.x + b.width - 1)
            tiles[yy][xx] = '"' if b.outdoor else ("#" if edge else ".")
            if b.outdoor:
                arenas[yy][xx] = b.rooms[0].code
    if b.outdoor and b.width >= 7:
        tiles[b.y][b.x] = tiles[b.y][b.x + b.width - 1] = "T"
    x = b.x + 1
    for i, room in enumerate(b.rooms):
        for yy in range(b.y + 1, b.y + HEIGHT - 1):
            for xx in range(x, x + room.width):
                arenas[yy][xx] = room.code
        top = math.ceil(len(room.objects) / 2)
        for k, obj in enumerate(room.objects):
            ox, oy = x + 2 * (k % top), b.y + (1 if k < top else 3)
            tiles[oy][ox] = GLYPHS.get(obj.split()[-1], "o")
            b.tiles[room.name, obj] = (ox, oy)
        x += room.width
        if i + 1 < len(b.rooms) and not b.outdoor:
            tiles[b.y + 2][x] = "+"  # the door to the next room
        x += 1
    if not b.outdoor:
        dx, dy = b.door()
        tiles[dy][dx] = "+"
