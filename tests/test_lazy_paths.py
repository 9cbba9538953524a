"""Lazy paths (world/paths.py): a search stops at the start instead of covering the map, and the
paths are step for step those of a full distance field per destination (what the engine used
before), so runs do not change."""

from __future__ import annotations

import random

import numpy as np
import pytest
import tcod.path

from helpers import GULLHAVEN, SMALLVILLE
from smalltown.world.load import load_world
from smalltown.world.model import Tile
from smalltown.world.paths import UNREACHED, Paths


def _full_field_path(cost: np.ndarray, start: Tile, goal: Tile) -> list[Tile]:
    """The reference: the whole map's distance field to the goal, then the path from the start."""
    pf = tcod.path.Pathfinder(tcod.path.SimpleGraph(cost=cost, cardinal=1, diagonal=0))
    pf.add_root((goal[1], goal[0]))
    pf.resolve()
    steps = pf.path_from((start[1], start[0]))
    if start == goal or len(steps) < 2 or tuple(steps[-1]) != (goal[1], goal[0]):
        return []
    return [(int(x), int(y)) for y, x in steps[1:]]


@pytest.mark.parametrize("path", [SMALLVILLE, GULLHAVEN], ids=["smallville", "gullhaven"])
def test_lazy_paths_are_the_full_fields_paths(path):
    world = load_world(path)
    walk = world.map.walkable
    cost = walk.astype(np.int8)
    paths = Paths(walk, cache_size=8)  # a small cache: searches are replaced and redone
    rng = random.Random(15)
    ys, xs = np.nonzero(walk)
    goals = sorted({t for o in world.objects.values() for t in o.tiles})
    goals = rng.sample(goals, 12)
    starts = [(int(xs[i]), int(ys[i])) for i in rng.sample(range(len(xs)), 40)] + [(0, 0)]
    # repeated goals, starts near and far in mixed order: cached searches are reused and outgrown
    for _ in range(300):
        start, goal = rng.choice(starts), rng.choice(goals)
        assert paths.path(start, goal) == _full_field_path(cost, start, goal), (start, goal)


def test_a_search_stops_at_the_start_and_is_reused():
    world = load_world(SMALLVILLE)
    walk = world.map.walkable
    paths = Paths(walk)
    goal = next(iter(world.objects.values())).tiles[0]
    near = next((goal[0] + dx, goal[1] + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if world.map.is_walkable((goal[0] + dx, goal[1] + dy)))
    assert paths.path(near, goal) == [goal]
    search = paths._searches[goal]
    reached = int((search.distance != UNREACHED).sum())
    assert reached < walk.sum() // 10  # nowhere near the whole map
    assert paths.path(near, goal) == [goal] and paths._searches[goal] is search  # reused as is
    ys, xs = np.nonzero(walk)
    far = max(zip(xs.tolist(), ys.tolist()), key=lambda t: abs(t[0] - goal[0]) + abs(t[1] - goal[1]))
    long = paths.path(far, goal)
    assert long and long[-1] == goal
    assert paths._searches[goal] is not search  # a farther start: a new search, reaching farther
    assert int((paths._searches[goal].distance != UNREACHED).sum()) > reached


def test_the_cache_is_bounded_by_memory_on_large_maps():
    assert Paths(np.ones((400, 600), bool))._cache_size < Paths(np.ones((92, 136), bool))._cache_size
    assert Paths(np.ones((92, 136), bool))._cache_size == (32 << 20) // (12 * 92 * 136)  # 223 searches, 32 MB
    assert Paths(np.ones((10, 10), bool))._cache_size == 512  # a small map: bounded by count
