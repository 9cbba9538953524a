"""The serial decomposition: a tick run as its groups (sim/groups.py), one after another in a
seeded random order, is the lock-step tick (`step()`): the same digest and the same call log, in
order. Smallville (2 game hours), a generated town of 100 (the `culture` preset: goals, memes,
belief, promises and awareness, which read the public record, sim/public.py), and Sid's tax town
with an economy and civics (its barrier ticks run whole). Shrinking the reach to 0 breaks it (the
last test), so the grouping is what makes it hold."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from random import Random

import pytest

from helpers import ROOT, SMALLVILLE, cli
from smalltown.scripted import ScriptedBackend
from smalltown.sim.groups import groups
from smalltown.sim.open import create
from smalltown.world.load import load_world

SID_TAX = ROOT / "worlds" / "sid-tax.toml"
CALLS = "SELECT tick, agent, task, prompt, raw_answer, note FROM llm_calls ORDER BY id"


def _run(world, path: Path, minutes: int, sets: list[str], order: Random | None, reach: int | None = None,
         split: list[int] | None = None) -> tuple[str, list[tuple]]:
    sim = create(world, path, ScriptedBackend(world.seed), overwrite=True, sets=sets)
    try:
        if reach is not None:
            sim.reach = reach
        end = sim.now + timedelta(minutes=minutes)
        while sim.now < end:
            if split is not None and order is not None:  # (0: a civics barrier tick, run whole)
                barrier = sim.civics is not None and sim.civics.barrier(sim.now + timedelta(seconds=world.step_seconds))
                split.append(0 if barrier else len(groups(sim.agents, sim.reach, sim.boxes)))
            sim.step(order)
        sim.write_clock()
        digest = sim.save.digest()
    finally:
        sim.close()
    con = sqlite3.connect(path)
    try:
        return digest, con.execute(CALLS).fetchall()
    finally:
        con.close()


def _same(world, tmp_path: Path, minutes: int, sets: list[str], seed: int = 1) -> list[int]:
    """Lock-step and the groups in a shuffled order give the same run; returns the groups per tick."""
    split: list[int] = []
    lock = _run(world, tmp_path / "lock.sqlite", minutes, sets, None)
    grouped = _run(world, tmp_path / "grouped.sqlite", minutes, sets, Random(seed), split=split)
    assert grouped[0] == lock[0]
    assert len(grouped[1]) == len(lock[1]) and grouped[1] == lock[1]
    assert lock[1], "the run asked nothing: it tests nothing"
    return split


def _generated(tmp_path: Path):
    out = tmp_path / "gen.toml"
    cli("world", "generate", "--out", out, "--towns", 2, "--agents", 50, "--seed", 3, check=True)
    return load_world(out)


def _generated_economy(tmp_path: Path):
    """The generated town of 100 with an economy (grain gathered on each town's farm, made into bread
    or flour at the towns' bakeries, a chest at the first town's store, everyone holding some grain).
    (No civics: the manager's amendments would show 99 constituents' feedback, more than a prompt
    holds; Sid's tax town has them.)"""
    import json

    from smalltown.world.load import load_world_text

    _generated(tmp_path)
    world = load_world(tmp_path / "gen.toml")
    text = (tmp_path / "gen.toml").read_text()
    towns = [t.name for t in world.towns]
    sectors = {a.sector for a in world.arenas}
    farms = [a for a in world.arenas if a.sector in {f"{t} Farm" for t in towns}]
    bakeries = sorted(s for s in sectors if s in {f"{t} Bakery" for t in towns})
    store = next(a for a in world.arenas if a.sector == f"{towns[0]} General Store")
    names = [a.name for a in world.agents]
    held = ", ".join(f'{json.dumps(n)} = {{grain = 2}}' for n in names)
    table = f"""
[economy]
items = ["grain", "bread", "flour"]
chest = "{store.sector}:{store.name}:{next(iter(store.objects))}"
sources = [{", ".join(f'{{ item = "grain", at = "{a.sector}:{a.name}", qty = 1 }}' for a in farms)}]
recipes = [{", ".join(f'{{ output = "{o}", inputs = {{grain = 2}}, at = "{b}", minutes = 10 }}'
                     for o, b in zip(("bread", "flour"), bakeries))}]
inventory = {{{held}}}
"""
    i = text.index("[[agents]]")
    text = text[:i] + table + "\n" + text[i:]
    m = tmp_path / "gen-map.toml"
    return load_world_text("gen.toml", text, m.name, m.read_text())


def test_smallville_in_groups_is_lock_step(tmp_path):
    split = _same(load_world(SMALLVILLE), tmp_path, 120, [])
    assert max(split) > 5  # (the town was split, not run whole)


def test_a_generated_town_of_100_in_groups_is_lock_step(tmp_path):
    world = _generated(tmp_path)
    assert len(world.agents) >= 100
    split = _same(world, tmp_path, 60, ["architecture=culture", "meme_every_minutes=20"], seed=7)
    assert max(split) > 20


def test_a_town_with_an_economy_and_civics_in_groups_is_lock_step(tmp_path):
    world = load_world(SID_TAX)
    assert world.economy and world.civics
    split = _same(world, tmp_path, 120, ["civics_scale=6", "architecture=piano"], seed=3)
    assert max(split) >= 2  # (its sectors, widened by the reach, hold most of the town: it splits in two at most)
    assert split.count(0) >= 3  # the constitution, a tax season and a civics phase came: those ticks ran whole


def test_a_generated_town_of_100_with_an_economy_in_groups_is_lock_step(tmp_path):
    world = _generated_economy(tmp_path)
    assert world.economy and len(world.agents) >= 100
    split = _same(world, tmp_path, 120, ["architecture=piano"], seed=5)
    assert max(split) >= 5  # split, though those near one sector are one group


def test_groups_too_narrow_give_another_run(tmp_path):
    """The check that the test can fail: a reach of 0 puts agents within sight of each other in
    different groups, which then read each other mid-tick: the run differs from lock-step."""
    world = load_world(SMALLVILLE)
    lock = _run(world, tmp_path / "lock.sqlite", 120, [], None)
    narrow = _run(world, tmp_path / "narrow.sqlite", 120, [], Random(1), reach=0)
    assert narrow[0] != lock[0] or narrow[1] != lock[1]
