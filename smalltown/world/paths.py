"""Walking on the tile grid: connected regions and shortest paths around walls (tcod)."""

from __future__ import annotations

from collections import OrderedDict, deque

import numpy as np
import tcod.path

from smalltown.world.model import Tile


def components(walkable: np.ndarray) -> np.ndarray:
    """Label 4-connected walkable regions (-1 for blocked); run once when a world loads."""
    h, w = walkable.shape
    labels = np.full((h, w), -1, dtype=np.int32)
    label = 0
    for y0, x0 in zip(*np.nonzero(walkable)):
        if labels[y0, x0] >= 0:
            continue
        labels[y0, x0] = label
        queue = deque([(y0, x0)])
        while queue:
            y, x = queue.popleft()
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < h and 0 <= nx < w and walkable[ny, nx] and labels[ny, nx] < 0:
                    labels[ny, nx] = label
                    queue.append((ny, nx))
        label += 1
    return labels


class Paths:
    """Shortest 4-connected paths; one distance field per destination, kept in an LRU cache,
    because agents walk to the same few hundred object tiles all day."""

    def __init__(self, walkable: np.ndarray, cache_size: int = 512):
        self._cost = walkable.astype(np.int8)
        self._fields: OrderedDict[Tile, tcod.path.Pathfinder] = OrderedDict()
        self._cache_size = cache_size

    def path(self, start: Tile, goal: Tile) -> list[Tile]:
        """Tiles to step on from `start` (excluded) to `goal` (included); [] if already there
        or unreachable."""
        if start == goal:
            return []
        pf = self._fields.get(goal)
        if pf is None:
            graph = tcod.path.SimpleGraph(cost=self._cost, cardinal=1, diagonal=0)
            pf = tcod.path.Pathfinder(graph)
            pf.add_root((goal[1], goal[0]))
            pf.resolve()
            self._fields[goal] = pf
            if len(self._fields) > self._cache_size:
                self._fields.popitem(last=False)
        else:
            self._fields.move_to_end(goal)
        steps = pf.path_from((start[1], start[0]))
        if len(steps) < 2 or tuple(steps[-1]) != (goal[1], goal[0]):
            return []
        return [(int(x), int(y)) for y, x in steps[1:]]
