"""The spatial index for perception (world/sight.py) sees exactly what the brute-force look at
every body and object (world/perception.perceive) sees, on random towns of bodies."""

from __future__ import annotations

import random

import numpy as np
import pytest

from helpers import GULLHAVEN, SMALLVILLE, TINY
from smalltown.world.load import load_world
from smalltown.world.model import World
from smalltown.world.perception import Body, perceive
from smalltown.world.sight import Crowd, Sight


def _bodies(world: World, rng: random.Random, n: int) -> list[Body]:
    """n bodies on random walkable tiles, crowded into a few spots so that many are in sight of
    each other (and some at the same tile)."""
    ys, xs = np.nonzero(world.map.walkable)
    spots = [(int(xs[i]), int(ys[i])) for i in rng.sample(range(len(xs)), 6)]
    bodies = []
    for i in range(n):
        if rng.random() < 0.6:  # near a spot
            sx, sy = rng.choice(spots)
            tile = (sx + rng.randint(-6, 6), sy + rng.randint(-6, 6))
            if not world.map.is_walkable(tile):
                tile = (sx, sy)
        else:
            j = rng.randrange(len(xs))
            tile = (int(xs[j]), int(ys[j]))
        bodies.append(Body(f"body {i}", tile, int(world.map.arena_at[tile[1], tile[0]]),
                           rng.choice(["idle", "reading", "cooking"])))
    return bodies


def _states(world: World, rng: random.Random) -> dict[str, str]:
    """Most objects in their initial state, some busy (busy ones win attention)."""
    return {a: (o.initial_state if rng.random() < 0.7 else "in use") for a, o in world.objects.items()}


@pytest.mark.parametrize("path", [TINY, SMALLVILLE, GULLHAVEN], ids=["tiny", "smallville", "gullhaven"])
def test_indexed_perception_equals_brute_force_on_random_positions(path):
    world = load_world(path)
    sight = Sight(world)
    rng = random.Random(15)
    compared = nonempty = 0
    for trial in range(12):
        bodies = _bodies(world, rng, rng.choice([3, 25, 120]))
        states = _states(world, rng)
        radius, bandwidth = rng.choice([0, 1, 2, 4, 7, 12]), rng.choice([1, 3, 8, 50])
        crowd = Crowd(bodies, radius)
        for me in bodies:
            want = perceive(world, me, bodies, states, radius, bandwidth)
            assert sight.perceive(me, crowd, states, radius, bandwidth) == want, (trial, me)
            compared += 1
            nonempty += bool(want)
    assert nonempty > compared // 3  # the comparison saw plenty of people and things


def test_a_crowd_built_for_one_radius_answers_for_another():
    """The cell size is a setting's value at the tick; a different radius still finds everyone."""
    world = load_world(SMALLVILLE)
    sight, rng = Sight(world), random.Random(3)
    bodies, states = _bodies(world, rng, 80), _states(world, rng)
    crowd = Crowd(bodies, 2)
    for me in bodies:
        assert sight.perceive(me, crowd, states, 9, 50) == perceive(world, me, bodies, states, 9, 50)


def test_the_crowd_offers_only_bodies_of_the_same_arena_and_nearby_cells():
    """The point of the index: a look does not go over the whole town."""
    outdoors = [Body(f"far {i}", (100 + i, 80), -1, "idle") for i in range(50)]
    here = [Body("near", (3, 3), -1, "idle"), Body("inside", (4, 3), 5, "idle")]
    crowd = Crowd(outdoors + here, 4)
    assert [b.name for b in crowd.near(-1, (2, 2), 4)] == ["near"]
    assert [b.name for b in crowd.near(5, (2, 2), 4)] == ["inside"]


def test_objects_in_sight_are_worked_out_once_per_tile():
    world = load_world(TINY)
    sight = Sight(world)
    arena = next(a for a in world.arenas if a.objects)
    tile = arena.tiles[0]
    first = sight.objects_near(arena.index, tile, 4)
    assert first and sight.objects_near(arena.index, tile, 4) is first
    assert all(d <= 4 for d, _ in first)
    assert sight.objects_near(arena.index, tile, 0) == [(d, o) for d, o in first if d == 0]


@pytest.mark.parametrize("path", [SMALLVILLE, GULLHAVEN], ids=["smallville", "gullhaven"])
def test_looks_kept_from_tick_to_tick_equal_brute_force_as_bodies_move_and_things_change(path):
    """The run's crowd is updated tick by tick and a body's last look is reused when nothing it
    could see changed: over ticks where a few walk, start doing something else, leave, or an
    object changes state, every look still equals the brute-force one."""
    world = load_world(path)
    sight, rng = Sight(world), random.Random(7)
    bodies, states = _bodies(world, rng, 60), _states(world, rng)
    ys, xs = np.nonzero(world.map.walkable)
    kept = 0
    for tick in range(30):
        for i in rng.sample(range(len(bodies)), 4):  # a few walk a step or jump elsewhere
            b = bodies[i]
            if rng.random() < 0.5:
                tile = (b.tile[0] + rng.choice([-1, 1]), b.tile[1])
                tile = tile if world.map.is_walkable(tile) else b.tile
            else:
                j = rng.randrange(len(xs))
                tile = (int(xs[j]), int(ys[j]))
            bodies[i] = Body(b.name, tile, int(world.map.arena_at[tile[1], tile[0]]), b.doing)
        for i in rng.sample(range(len(bodies)), 2):  # and some start doing something else
            bodies[i] = Body(bodies[i].name, bodies[i].tile, bodies[i].arena, rng.choice(["idle", "dancing"]))
        if tick % 7 == 3:
            bodies.pop(rng.randrange(len(bodies)))  # one leaves the town
        for addr in rng.sample(sorted(states), 40):
            states[addr] = rng.choice(["in use", world.objects[addr].initial_state])
        crowd = sight.crowd(bodies, 8)
        for me in bodies:
            last = sight._last.get(me.name)
            look = sight.perceive(me, crowd, states, 4, 3)
            kept += last is not None and look is last[-1]
            assert look == perceive(world, me, bodies, states, 4, 3), (tick, me)
    assert kept > 30 * 50 // 2  # most looks were kept: the comparison covered the reuse


def test_an_agents_body_is_kept_while_nothing_of_it_changes_and_is_always_what_others_see(tmp_path):
    """`Agent.body` gives the same Body object again while its tile, arena and action are as they
    were (the crowd and the last look then compare by identity), and a new one as soon as any of
    them changes, also when the action is changed in place."""
    from helpers import tiny_sim

    sim = tiny_sim(tmp_path, "07:00")
    try:
        last: dict[str, Body] = {}
        kept = made = 0
        for _ in range(200):
            sim.step()
            for a in sim.agents:
                body = a.body()
                assert body == Body(a.name, a.tile, a.arena, a.doing)
                if a.name in last:
                    same = last[a.name] == body
                    assert (body is last[a.name]) == same
                    kept, made = kept + same, made + (not same)
                last[a.name] = body
        assert kept > made > 10  # both ways were taken
        a = next(a for a in sim.agents if a.action is not None)
        before = a.body()
        a.action.activity = "juggling"
        assert a.body() is not before and a.body().doing == a.doing != before.doing
    finally:
        sim.close()


@pytest.mark.parametrize("retention", ["5", "1"])
def test_a_settled_look_is_skipped_only_when_looking_again_would_find_nothing_new(tmp_path, retention):
    """An agent whose look is the same as last tick's, all of it still among its latest percepts,
    is not gone over again (`Agent.settled`): the percepts are those of a run that goes over every
    look every tick, also when retention is shorter than the look (a percept added pushes out
    one seen before it, so the same look brings it back the next tick)."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create

    world = load_world(TINY)
    logs, skipped = [], 0
    for forget in (False, True):
        sim = create(world, tmp_path / f"{forget}.sqlite", ScriptedBackend(world.seed), sets=[f"retention={retention}"])
        try:
            for _ in range(700):
                for a in sim.agents:
                    skipped += not forget and a.settled is not None
                    if forget:
                        a.settled = None
                sim.step()
            logs.append(sim.save.conn.execute(
                "SELECT tick, agent, text FROM events WHERE kind = 'perceived' ORDER BY id").fetchall())
        finally:
            sim.close()
    assert logs[0] == logs[1] and len(logs[0]) > 20
    assert skipped > (100 if retention == "5" else 0)  # (retention 1: a look of two never settles)
