"""A spatial index for perception: who and what can be within sight of a tile, without looking at
every body and every object of the town. Gives the same percepts as `perception.perceive`."""

from __future__ import annotations

from collections import defaultdict

from smalltown.world.model import Object, Tile, World
from smalltown.world.perception import Body, Seen, attend

Cell = tuple[int, int, int]  # (arena, column // size, row // size)


class Sight:
    """Objects in sight of a tile, worked out once per (radius, arena, tile) for the whole run:
    objects never move, and agents stand on the same few tiles all day."""

    def __init__(self, world: World):
        self.world = world
        self._near: dict[tuple[int, int, Tile], list[tuple[int, Object]]] = {}
        self._address = {id(o): o.address for o in world.objects.values()}  # a property: built once

    def objects_near(self, arena: int, tile: Tile, radius: int) -> list[tuple[int, Object]]:
        """(distance, object) of the arena's objects within `radius` of the tile, in the arena's
        object order."""
        key = (radius, arena, tile)
        near = self._near.get(key)
        if near is None:
            x, y = tile
            near = []
            for obj in self.world.arenas[arena].objects.values():
                d = min(max(abs(tx - x), abs(ty - y)) for tx, ty in obj.tiles)
                if d <= radius:
                    near.append((d, obj))
            self._near[key] = near
        return near

    def perceive(self, me: Body, crowd: Crowd, object_states: dict[str, str],
                 radius: int, bandwidth: int) -> list[Seen]:
        """What `perceive` would give, looking only at nearby bodies and precomputed objects."""
        x, y = me.tile
        seen: list[Seen] = []
        for b in crowd.near(me.arena, me.tile, radius):
            if b.name == me.name:
                continue
            d = max(abs(b.tile[0] - x), abs(b.tile[1] - y))
            if d <= radius:
                seen.append(Seen(b.name, f"{b.name} is {b.doing}", d))
        idle: set[str] = set()
        if me.arena >= 0:
            for d, obj in self.objects_near(me.arena, me.tile, radius):
                addr = self._address[id(obj)]
                state = object_states[addr]
                seen.append(Seen(addr, f"{obj.name} is {state}", d))
                if state == obj.initial_state:
                    idle.add(addr)
        return attend(seen, idle, bandwidth)


class Crowd:
    """This tick's bodies by arena (outdoors is arena -1) and by grid cell of `size` tiles. Cells
    twice the vision radius wide: a square of sight overlaps at most four of them."""

    def __init__(self, bodies: list[Body], size: int):
        self.size = max(1, size)
        self._cells: dict[Cell, list[Body]] = defaultdict(list)
        for b in bodies:
            self._cells[self._cell(b.arena, b.tile)].append(b)

    def _cell(self, arena: int, tile: Tile) -> Cell:
        return arena, tile[0] // self.size, tile[1] // self.size

    def near(self, arena: int, tile: Tile, radius: int) -> list[Body]:
        """Bodies of the arena that may be within `radius` of the tile (a superset: callers
        measure the distance): those in the cells the square of sight overlaps."""
        x, y, size = tile[0], tile[1], self.size
        out: list[Body] = []
        for gx in range((x - radius) // size, (x + radius) // size + 1):
            for gy in range((y - radius) // size, (y + radius) // size + 1):
                out.extend(self._cells.get((arena, gx, gy), ()))
        return out
