"""A tick's groups: the agents that could touch each other within one tick, as connected components.

Two agents are coupled for tick t when, at the end of tick t-1, their Chebyshev distance is at most
`reach` (any arena), or, in a world with an economy, both stand within `reach` of the same sector.
What couples agents within a tick, and how far it reaches:
- perception, reactions, talks, scripted lines: the same arena within `vision_radius`;
- lines heard (belief, goals heard): within `hearing_radius` of the speaker, in any arena;
- objects: written only by an agent standing on one (its users), read within sight; two agents
  arriving at one object this tick were within 2 tiles of each other (one step each) last tick,
  maybe in different arenas (one outdoors): hence distance in any arena, not only the same one;
- the economy: give and trade with someone in the same arena, the partners of a sector, the
  town chest: the sector (its bounding box widened by `reach`, so one who walks in this tick is in).
Walking is one tile a tick, so `reach` = max(vision, hearing) + 2 leaves a tile's margin each way.
The town-wide reads (the goal question's view of others, awareness of an absent partner, memes) read
the public record of the tick before (sim/public.py); civics phases and tax seasons are barriers:
their ticks run as one group (sim/simulation.py)."""

from __future__ import annotations

from collections.abc import Sequence

from smalltown.config import Settings
from smalltown.sim.agent import Agent
from smalltown.world.model import Tile, World

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (inclusive)


def reach(settings: Settings) -> int:
    """How far two agents may stand and still touch each other this tick (see the module's text)."""
    return max(settings.vision_radius, settings.hearing_radius) + 2


def sector_boxes(world: World) -> dict[str, Box]:
    """Each sector's bounding box (the tiles of its arenas), for the economy's coupling."""
    boxes: dict[str, Box] = {}
    for arena in world.arenas:
        sector = arena.address.split(":")[0]
        tiles = arena.tiles
        if not tiles:
            continue
        xs, ys = [t[0] for t in tiles], [t[1] for t in tiles]
        x0, y0, x1, y1 = boxes.get(sector, (min(xs), min(ys), max(xs), max(ys)))
        boxes[sector] = (min(x0, *xs), min(y0, *ys), max(x1, *xs), max(y1, *ys))
    return boxes


def partition(tiles: Sequence[Tile], r: int, boxes: dict[str, Box] | None = None) -> list[list[int]]:
    """The connected components of agents at `tiles` (indices, each in ascending order; the components
    ordered by their first index): coupled within Chebyshev distance `r`, or both within `r` of the
    same box of `boxes` (a sector)."""
    parent = list(range(len(tiles)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    size = max(1, r)  # cells of r tiles: one within r is in this cell or a neighbour
    cells: dict[tuple[int, int], list[int]] = {}
    for i, (x, y) in enumerate(tiles):
        cells.setdefault((x // size, y // size), []).append(i)
    for (cx, cy), members in cells.items():
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for j in cells.get((cx + dx, cy + dy), ()):
                    xj, yj = tiles[j]
                    for i in members:
                        if i < j and max(abs(tiles[i][0] - xj), abs(tiles[i][1] - yj)) <= r:
                            union(i, j)
    for x0, y0, x1, y1 in (boxes or {}).values():
        inside = [i for i, (x, y) in enumerate(tiles) if x0 - r <= x <= x1 + r and y0 - r <= y <= y1 + r]
        for i in inside[1:]:
            union(inside[0], i)
    out: dict[int, list[int]] = {}
    for i in range(len(tiles)):
        out.setdefault(find(i), []).append(i)
    return sorted(out.values(), key=lambda g: g[0])


def groups(agents: Sequence[Agent], r: int, boxes: dict[str, Box] | None = None) -> list[list[Agent]]:
    """`partition` of the agents by where they stand now (the end of the last tick), in agent order."""
    return [[agents[i] for i in g] for g in partition([a.tile for a in agents], r, boxes)]
