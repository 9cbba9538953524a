"""A spatial index for perception: who and what can be within sight of a tile, without looking at
every body and every object of the town. Gives the same percepts as `perception.perceive`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import count
from operator import itemgetter
from typing import NamedTuple

from smalltown.world.model import Object, Tile, World
from smalltown.world.perception import Body, Seen

Cell = tuple[int, int, int]  # (arena, column // size, row // size)
_Near = tuple[tuple[int, str, str, str], ...]  # (distance, address, name, initial state) of objects in sight
_serials = count(1)  # every state of every crowd has its own number: a remembered look names the one it saw


class _Look(NamedTuple):
    """A body's last look, and what it was taken from (`Sight._at`: the crowd state it holds for)."""

    me: Body
    radius: int
    bandwidth: int
    cells: tuple[Cell, ...]
    objects: _Near
    read: Callable[[dict[str, str]], tuple]  # the objects' states out of all states
    states: tuple[str, ...]
    seen: list[Seen]


class Sight:
    """Objects in sight of a tile, worked out once per (radius, arena, tile) for the whole run:
    objects never move, and agents stand on the same few tiles all day. And each body's last look:
    most bodies stand still among others who do, so the next tick's look is the same one again."""

    def __init__(self, world: World):
        self.world = world
        self._near: dict[tuple[int, int, Tile], list[tuple[int, Object]]] = {}
        self._rows: dict[tuple[int, int, Tile], tuple[_Near, Callable[[dict[str, str]], tuple]]] = {}
        self._address = {id(o): o.address for o in world.objects.values()}  # a property: built once
        self._last: dict[str, _Look] = {}  # by name
        self._at: dict[str, int] = {}  # by name: the crowd's state it last looked at (its look was then the same)
        self._crowd: Crowd | None = None

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

    def _objects(self, arena: int, tile: Tile, radius: int) -> tuple[_Near, Callable[[dict[str, str]], tuple]]:
        """The objects in sight as rows, and what reads their states out of the states (at C speed)."""
        key = (radius, arena, tile)
        got = self._rows.get(key)
        if got is None:
            rows = tuple((d, self._address[id(o)], o.name, o.initial_state)
                         for d, o in self.objects_near(arena, tile, radius)) if arena >= 0 else ()
            addrs = [addr for _, addr, _, _ in rows]
            read = (itemgetter(*addrs) if len(addrs) > 1 else
                    (lambda states, a=addrs[0]: (states[a],)) if addrs else (lambda states: ()))
            got = self._rows[key] = (rows, read)
        return got

    def perceive(self, me: Body, crowd: Crowd, object_states: dict[str, str],
                 radius: int, bandwidth: int) -> list[Seen]:
        """What `perceive` would give, looking only at nearby bodies and precomputed objects. The
        list returned may be the one returned for `me` last time: callers do not change it."""
        last = self._last.get(me.name)
        at = self._at.get(me.name)
        if (last is not None and (last.me is me or last.me == me) and last.radius == radius and last.bandwidth == bandwidth
                and at is not None and at >= crowd.start):
            cells, objects, read = last.cells, last.objects, last.read  # the same place in the same crowd
            states = read(object_states)
            if states == last.states and (at == crowd.serial or (crowd.dirty.isdisjoint(cells) if at == crowd.since
                                                                 else crowd.unchanged(cells, at))):
                self._at[me.name] = crowd.serial  # nothing it could see has changed since its last look
                return last.seen
            look = self._look(me, crowd, cells, objects, states, radius, bandwidth)
        else:
            cells = crowd.cells(me.arena, me.tile, radius)
            objects, read = self._objects(me.arena, me.tile, radius)
            states = read(object_states)
            look = self._look(me, crowd, cells, objects, states, radius, bandwidth)
        self._last[me.name] = _Look(me, radius, bandwidth, cells, objects, read, states, look)
        self._at[me.name] = crowd.serial
        return look

    def crowd(self, bodies: list[Body], size: int, whole: bool = True) -> Crowd:
        """The run's crowd brought to this tick's bodies (new when the cell size changed). `whole`:
        `bodies` are everyone's (those not among them are gone); else some of them (a group of the
        tick: the others stay where they were last put, out of the group's sight)."""
        if self._crowd is None or self._crowd.size != max(1, size):
            self._crowd = Crowd(bodies, size)
        else:
            self._crowd.update(bodies, whole)
        return self._crowd

    @staticmethod
    def _look(me: Body, crowd: Crowd, cells: tuple[Cell, ...], objects: _Near, states: tuple[str, ...],
              radius: int, bandwidth: int) -> list[Seen]:
        # (idle, distance, subject, description): sorted as `attend` sorts (subjects are unique)
        x, y = me.tile
        seen: list[tuple[bool, int, str, str]] = []
        for cell in cells:
            for b in crowd.in_cell(cell):
                if b.name == me.name:
                    continue
                d = max(abs(b.tile[0] - x), abs(b.tile[1] - y))
                if d <= radius:
                    seen.append((False, d, b.name, f"{b.name} is {b.doing}"))
        for (d, addr, name, initial), state in zip(objects, states):
            seen.append((state == initial, d, addr, f"{name} is {state}"))
        seen.sort()
        return [Seen(subject, text, d, idle) for idle, d, subject, text in seen[:bandwidth]]


class Crowd:
    """The bodies by arena (outdoors is arena -1) and by grid cell of `size` tiles. Cells twice the
    vision radius wide: a square of sight overlaps at most four of them. `update` brings it to the
    next tick's bodies (or some of them: a group's), noting for each cell the state (`serial`) at
    which anyone last came, went or changed there: a look taken at an older state of a cell none of
    whose cells changed since is the same look."""

    def __init__(self, bodies: list[Body], size: int):
        self.size = max(1, size)
        self._cells: dict[Cell, dict[str, Body]] = {}
        self._where: dict[str, tuple[Body, Cell]] = {}
        self.serial = self.start = next(_serials)  # start: no look older than this crowd holds
        self._changed: dict[Cell, int] = {}  # cell -> the serial it last changed at
        self.since, self.dirty = 0, set()  # the serial before the last update, the cells it changed
        self.update(bodies)

    def update(self, bodies: list[Body], whole: bool = True) -> None:
        self.since, self.serial = self.serial, next(_serials)
        serial, changed = self.serial, self._changed
        self.dirty = dirty = set()
        gone = set(self._where) if whole else set()
        for b in bodies:
            gone.discard(b.name)
            was = self._where.get(b.name)
            if was is not None and (was[0] is b or was[0] == b):
                continue
            cell = self._cell(b.arena, b.tile)
            if was is not None:
                del self._cells[was[1]][b.name]
                dirty.add(was[1])
            self._cells.setdefault(cell, {})[b.name] = b
            self._where[b.name] = (b, cell)
            dirty.add(cell)
        for name in gone:
            _, cell = self._where.pop(name)
            del self._cells[cell][name]
            dirty.add(cell)
        for cell in dirty:
            changed[cell] = serial

    def unchanged(self, cells: tuple[Cell, ...], since: int) -> bool:
        """Whether no body came, went or changed in `cells` after the state `since` (for the state
        before the last update, `dirty.isdisjoint(cells)` says it at C speed)."""
        changed = self._changed
        return all(changed.get(c, 0) <= since for c in cells)

    def _cell(self, arena: int, tile: Tile) -> Cell:
        return arena, tile[0] // self.size, tile[1] // self.size

    def cells(self, arena: int, tile: Tile, radius: int) -> tuple[Cell, ...]:
        """The cells the square of sight around the tile overlaps."""
        x, y, size = tile[0], tile[1], self.size
        return tuple((arena, gx, gy) for gx in range((x - radius) // size, (x + radius) // size + 1)
                     for gy in range((y - radius) // size, (y + radius) // size + 1))

    def in_cell(self, cell: Cell) -> Iterable[Body]:
        return self._cells.get(cell, {}).values()

    def near(self, arena: int, tile: Tile, radius: int) -> list[Body]:
        """Bodies of the arena that may be within `radius` of the tile (a superset: callers
        measure the distance): those in the cells the square of sight overlaps."""
        return [b for cell in self.cells(arena, tile, radius) for b in self.in_cell(cell)]
