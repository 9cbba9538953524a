"""The engine's pieces: walking, perception, plans, place choice, objects, per-tick commits."""

from __future__ import annotations

import json
import sqlite3
from collections import deque

import numpy as np
import pytest
from datetime import datetime

from helpers import TINY
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Answer
from smalltown.scripted import ScriptedBackend
from smalltown.store.packing import unpack_text
from smalltown.llm.tasks import ChoosePlace, ChoosePlaceOut, PersonaCard
from smalltown.state.known import KnownTree
from smalltown.mind.places import choose_place
from smalltown.mind.plan import normalise_blocks
from smalltown.world.load import load_world
from smalltown.world.paths import Paths
from smalltown.world.perception import Body, perceive


@pytest.fixture(scope="module")
def tiny():
    return load_world(TINY)


def bfs_length(walkable: np.ndarray, a, b) -> int:
    seen, q = {a: 0}, deque([a])
    while q:
        x, y = q.popleft()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= n[1] < walkable.shape[0] and 0 <= n[0] < walkable.shape[1] and walkable[n[1], n[0]] and n not in seen:
                seen[n] = seen[(x, y)] + 1
                q.append(n)
    return seen[b]


def test_paths_are_shortest_and_go_around_walls(tiny):
    paths = Paths(tiny.map.walkable)
    start, goal = (1, 2), (37, 1)  # bedroom to the cafe kitchen's stove
    path = paths.path(start, goal)
    assert path[-1] == goal and len(path) == bfs_length(tiny.map.walkable, start, goal)
    prev = start
    for tile in path:
        assert tiny.map.is_walkable(tile)
        assert abs(tile[0] - prev[0]) + abs(tile[1] - prev[1]) == 1  # one tile per step
        prev = tile
    assert paths.path(goal, goal) == []
    assert paths.path(start, goal) == path  # cached field gives the same answer


def test_perception_sees_the_nearest_things_in_the_same_arena_only(tiny):
    objects = {a: o.initial_state for a, o in tiny.objects.items()}
    bedroom = tiny.arena("Willow Cottage:bedroom").index
    kitchen = tiny.arena("Willow Cottage:kitchen").index
    me = Body("A", (3, 2), bedroom, "reading")
    bodies = [me, Body("B", (4, 2), bedroom, "sleeping"), Body("C", (8, 2), kitchen, "cooking")]
    seen = perceive(tiny, me, bodies, objects, radius=4, bandwidth=3)
    assert [s.description for s in seen] == ["B is sleeping", "Maria's bed is idle", "Isabella's bed is idle"]
    assert all(s.subject != "C" for s in perceive(tiny, me, bodies, objects, radius=10, bandwidth=10))
    assert len(perceive(tiny, me, bodies, objects, radius=4, bandwidth=1)) == 1
    assert perceive(tiny, me, bodies, objects, radius=0, bandwidth=3) == []


def test_retention_skips_what_was_just_perceived(tiny_sim):
    ticks = 400
    for _ in range(ticks):
        tiny_sim.step()
    retention = tiny_sim.settings.retention
    for agent in ("Maria Lopez", "Klaus Mueller"):
        texts = [t for (t,) in tiny_sim.save.conn.execute(
            "select text from events where kind='perceived' and agent=? order by id", (agent,))]
        assert 0 < len(texts) < ticks / 4  # not the same things again every tick
        for i, t in enumerate(texts):
            assert t not in texts[max(0, i - retention):i]  # never one of its latest percepts


def test_a_plan_always_covers_the_whole_day():
    blocks = normalise_blocks([(7 * 60, 60, "a", "Home"), (9 * 60, 240, "b", "Work"), (8 * 60 + 30, 60, "overlap", "Home"),
                               (23 * 60, 300, "too long", "Home")], 7 * 60, sleep_until=7 * 60, home="Home")
    assert blocks[0].activity == "sleeping" and blocks[0].start == 0
    for prev, nxt in zip(blocks, blocks[1:]):
        assert prev.end == nxt.start  # no gaps, no overlaps
    assert blocks[-1].end == 24 * 60
    # level 2 is hour-long blocks: a 4-hour block is cut into hours; sleep is never cut
    assert [b.minutes for b in blocks if b.activity == "b"][:4] == [60, 60, 60, 60]
    assert all(b.minutes < 90 for b in blocks if b.activity != "sleeping")
    assert [b.place for b in blocks if b.activity == "b"][0] == "Work" and blocks[0].place == "Home"
    assert blocks[-1].runs_on == 23 * 60 + 300 - 24 * 60  # it goes on past midnight, and says so


def test_scripted_answers_are_deterministic(tiny):
    persona = PersonaCard(name="Maria Lopez", age=21, traits="x", description="y", home="Willow Cottage")
    task = ChoosePlace(persona=persona, now=datetime(2023, 2, 13, 22), activity="sleeping", level="object",
                       within="in Willow Cottage: bedroom",
                       current="Willow Cottage: kitchen", options=["Isabella's bed", "Maria's bed", "Klaus's bed"])
    answers = {ScriptedBackend(1).answer(task, render(task)).output.choice for _ in range(3)}
    assert answers == {"Maria's bed"}  # her own bed, every time


class Stubborn:
    """A backend that names a place nobody knows: the mind must not trust it."""

    name = model = "stubborn"

    def answer(self, task, prompt):
        return Answer(ChoosePlaceOut(choice="the moon"), raw='{"choice": "the moon"}')


def test_an_unknown_place_falls_back_and_the_fallback_is_logged(tiny):
    calls = []
    asker = Asker(Stubborn(), calls.append)
    spec = tiny.agent("Klaus Mueller")
    persona = PersonaCard(name=spec.name, age=spec.age, traits=spec.traits, description=spec.description, home=spec.home)
    where = choose_place(asker, spec.name, persona, KnownTree.from_world(tiny, spec.knows), "sleeping",
                         "Willow Cottage:kitchen")
    sector, arena, obj = where.split(":")
    assert sector == "Willow Cottage" and arena == "kitchen"  # stays where it is
    assert obj in tiny.sectors[sector].arenas[arena].objects
    assert [c.task for c in calls] == ["choose_place"] * 3
    assert all("fallback: 'the moon'" in c.note for c in calls)


def test_each_tick_is_committed_and_visible_to_another_reader(tiny_sim):
    tiny_sim.step()
    tiny_sim.step()
    other = sqlite3.connect(tiny_sim.save.path)
    assert json.loads(other.execute("select value from meta where key='tick'").fetchone()[0]) == 2
    assert other.execute("select count(*) from llm_calls").fetchone()[0] > 0
    other.close()


def test_every_task_answered_is_logged_with_prompt_and_answer(tiny_sim):
    tiny_sim.step()
    rows = tiny_sim.save.conn.execute("select agent, task, prompt, parsed_answer, backend from llm_calls").fetchall()
    tasks = {r[1] for r in rows}
    assert {"daily_plan", "hourly_schedule", "choose_place"} <= tasks
    for agent, task, prompt, parsed, backend in rows:
        assert agent and backend == "scripted" and agent.split()[0] in unpack_text(prompt) and json.loads(unpack_text(parsed))


def test_using_an_object_sets_its_state_and_leaving_resets_it(tiny_sim):
    changes = []
    for _ in range(3000):
        changes += [e for e in tiny_sim.step() if e.kind == "object"]
    shower = [e.data["state"] for e in changes if e.data["address"] == "Willow Cottage:bathroom:shower"]
    assert shower[:2] == ["running", "idle"]  # used, then released when the action ended
    db_state = dict(tiny_sim.save.conn.execute("select address, state from objects"))
    assert db_state == tiny_sim.objects


def test_seed_memories_come_from_the_description(tiny_sim):
    rows = tiny_sim.save.conn.execute(
        "select description from memories where agent='Isabella Rodriguez' order by id").fetchall()
    spec = tiny_sim.world.agent("Isabella Rodriguez")
    assert [r[0] for r in rows] == spec.seed_memories and len(rows) == 4


def test_object_state_follows_the_activity():
    backend = ScriptedBackend(1)
    persona = PersonaCard(name="Ann Lee", age=30, traits="x", description="y", home="Home")
    from smalltown.llm.tasks import ObjectState

    def state(obj: str, activity: str) -> str:
        task = ObjectState(persona=persona, now=datetime(2023, 2, 13, 9), activity=activity, object=obj)
        return backend.answer(task, render(task)).output.state

    assert state("bed", "sleeping") == "being slept in"
    assert state("bed", "relax at home and read") == "in use"  # awake on the bed
    assert state("bedside table", "sleeping") != "being slept in"
    assert state("coffee machine", "open the cafe and serve customers") == "brewing coffee"
    assert state("pub tables", "have a drink with friends") == "in use"
    assert state("supply shelves", "browse the shelves") == "being browsed"
