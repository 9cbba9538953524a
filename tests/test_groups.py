"""A tick's groups (sim/groups.py): connected components of agents within reach of each other
(Chebyshev distance, any arena), or near the same sector when the world has an economy."""

from __future__ import annotations

from smalltown.config import Settings
from smalltown.sim.groups import partition, reach, sector_boxes
from smalltown.world.load import load_world

from helpers import SMALLVILLE


def test_reach_is_the_farther_of_sight_and_hearing_plus_a_step_each():
    s = Settings()
    assert reach(s) == max(s.vision_radius, s.hearing_radius) + 2
    assert reach(Settings(vision_radius=3, hearing_radius=9)) == 11


def test_agents_within_reach_chain_into_one_group_and_others_stand_apart():
    tiles = [(0, 0), (6, 0), (12, 6), (40, 40), (47, 40), (100, 0)]
    # 0-1 at 6, 1-2 at 6: a chain; 3-4 at 7 is one too far; 5 alone
    assert partition(tiles, 6) == [[0, 1, 2], [3], [4], [5]]
    assert partition(tiles, 7) == [[0, 1, 2], [3, 4], [5]]
    assert partition(tiles, 5) == [[0], [1], [2], [3], [4], [5]]


def test_the_distance_is_chebyshev_and_cells_do_not_hide_a_neighbour():
    # across a cell border (cells are r wide) and on a diagonal
    assert partition([(5, 5), (10, 10)], 5) == [[0, 1]]
    assert partition([(4, 4), (10, 10)], 5) == [[0], [1]]
    assert partition([(9, 0), (10, 0), (0, 50), (0, 45)], 5) == [[0, 1], [2, 3]]


def test_groups_are_in_agent_order_whatever_order_they_link_in():
    tiles = [(50, 50), (0, 0), (52, 50), (1, 1)]
    assert partition(tiles, 3) == [[0, 2], [1, 3]]


def test_a_sector_couples_those_within_reach_of_its_box():
    boxes = {"Market": (10, 10, 20, 20)}
    tiles = [(10, 10), (20, 20), (23, 15), (24, 15), (0, 0)]
    # 0 and 1 far apart (10) but in the same sector; 2 within 3 of its box; 3 one tile beyond; 4 far
    assert partition(tiles, 3, boxes) == [[0, 1, 2, 3], [4]]  # (3 is within 1 of 2)
    assert partition([(10, 10), (20, 20), (24, 15)], 3, boxes) == [[0, 1], [2]]


def test_every_sector_of_a_world_has_a_box_holding_its_arenas():
    world = load_world(SMALLVILLE)
    boxes = sector_boxes(world)
    for arena in world.arenas:
        if arena.tiles:
            x0, y0, x1, y1 = boxes[arena.sector]
            assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in arena.tiles)


def test_a_ticks_ledger_rows_are_in_phase_then_agent_order_whatever_order_groups_ran():
    from datetime import datetime

    from smalltown.sim.changes import Changes
    from smalltown.store.records import Transfer

    order = {"Ann": 0, "Bob": 1, "Cy": 2}
    changes = Changes(5, datetime(2023, 2, 13, 8))
    # Cy's group ran first (its economy phase 2, then its tax in phase 3), then Ann's and Bob's
    for phase, actor, kind in ((2, "Cy", "gather"), (3, "Cy", "tax"), (2, "Bob", "give"), (2, "Ann", "craft_in"),
                               (2, "Ann", "craft")):
        changes.ledger.append(Transfer(5, changes.stamp, kind, actor, "", "x", 1))
        changes.ledger_at.append((phase, actor))
    assert [(t.giver, t.kind) for t in changes.ledger_rows(order)] == [
        ("Ann", "craft_in"), ("Ann", "craft"), ("Bob", "give"), ("Cy", "gather"), ("Cy", "tax")]
