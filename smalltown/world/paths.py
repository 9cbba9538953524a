"""Walking on the tile grid: connected regions and shortest paths around walls (tcod)."""

from __future__ import annotations

from collections import OrderedDict, deque

import numpy as np
import tcod.path

from smalltown.world.model import Tile


def components(walkable: np.ndarray) -> np.ndarray:
    """Label 4-connected walkable regions (-1 for blocked), numbered in the order their first tile
    comes row by row; run once when a world loads. Each row's runs of walkable tiles are joined
    to the runs they touch in the row above (union-find): work by runs, not tiles, so a map of
    open ground (Sid's 500 x 600 tiles) is labelled in a fraction of a second."""
    h, w = walkable.shape
    labels = np.full((h, w), -1, dtype=np.int32)
    padded = np.zeros((h, w + 2), dtype=np.int8)
    padded[:, 1:-1] = walkable
    edges = np.diff(padded, axis=1)
    rows, starts = np.nonzero(edges == 1)  # (row-major: the runs in reading order)
    _, ends = np.nonzero(edges == -1)  # each run's end (exclusive), in the same order
    n = len(starts)
    if n == 0:
        return labels
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first = np.searchsorted(rows, np.arange(h + 1)).tolist()
    s, e = starts.tolist(), ends.tolist()
    for y in range(1, h):
        i, i_end, j, j_end = first[y - 1], first[y], first[y], first[y + 1]
        while i < i_end and j < j_end:
            if s[i] < e[j] and s[j] < e[i]:  # they share a column
                a, b = root(i), root(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)  # the earlier run is the root: numbering by first tile
            if e[i] < e[j]:
                i += 1
            else:
                j += 1
    number: dict[int, int] = {}
    ys = rows.tolist()
    for k in range(n):
        label = number.setdefault(root(k), len(number))
        labels[ys[k], s[k]:e[k]] = label
    return labels


UNREACHED = np.iinfo(np.int32).max  # tcod's distance of a tile the search has not reached


class Paths:
    """Shortest 4-connected paths, searched lazily: a search from the destination stops at the
    start instead of covering the whole map, and is kept (an LRU cache) because agents walk to
    the same few hundred object tiles all day; a later start it already reached costs nothing.

    A search is only ever run once, from scratch, up to one start: what it has reached is then
    exactly what the full distance field holds (the same steps, the same tie-breaks), because a
    tile's step towards the destination is fixed when the search first reaches it. Resuming a
    search would reorder tcod's queue and change tie-breaks, so a farther start gets a new one."""

    def __init__(self, walkable: np.ndarray, cache_bytes: int = 32 << 20, cache_size: int = 512):
        self._cost = walkable.astype(np.int8)
        self._searches: OrderedDict[Tile, tcod.path.Pathfinder] = OrderedDict()
        # each search holds 12 bytes a tile (distance and step arrays): bound the cache by memory.
        # A lazy search costs little (~0.3 ms on a 25-agent town's map), so a small cache: 128 MB
        # held 48 MB of its RSS for ~20 fewer searches a day (benchmarks/RESULTS.md, "A week")
        self._cache_size = max(8, min(cache_size, cache_bytes // (12 * max(1, walkable.size))))

    def path(self, start: Tile, goal: Tile) -> list[Tile]:
        """Tiles to step on from `start` (excluded) to `goal` (included); [] if already there
        or unreachable."""
        if start == goal:
            return []
        sy, sx = start[1], start[0]
        pf = self._searches.get(goal)
        if pf is not None and pf.distance[sy, sx] != UNREACHED:
            self._searches.move_to_end(goal)
        else:
            pf = self._search(goal, (sy, sx))
        if pf.distance[sy, sx] == UNREACHED:
            return []  # not connected (walls all round)
        steps = pf.traversal  # (row, column) of the next tile towards the goal, per tile
        out: list[Tile] = []
        y, x = sy, sx
        while (y, x) != (goal[1], goal[0]):
            y, x = (int(v) for v in steps[y, x])
            out.append((x, y))
        return out

    def _search(self, goal: Tile, until: tuple[int, int]) -> tcod.path.Pathfinder:
        """A new search from `goal` that stops once it reaches `until` (row, column), cached in
        place of an earlier one for the same goal (which reached less far)."""
        graph = tcod.path.SimpleGraph(cost=self._cost, cardinal=1, diagonal=0)
        graph.set_heuristic(cardinal=0, diagonal=0)  # plain Dijkstra order: the full field's
        pf = tcod.path.Pathfinder(graph)
        pf.add_root((goal[1], goal[0]))
        pf.resolve(until)
        self._searches[goal] = pf
        self._searches.move_to_end(goal)
        if len(self._searches) > self._cache_size:
            self._searches.popitem(last=False)
        return pf
