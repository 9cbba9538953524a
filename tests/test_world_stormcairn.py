"""Stormcairn Pass (worlds/stormcairn.toml), a world unlike the tiny town (a mountain refuge, a
weather station, a goat dairy, a trail): it checks clean, and a scripted day runs on it in which
the four meet and talk, and each is asleep in its own bed at home at night."""

from __future__ import annotations

import json

from helpers import ROOT, cli, query
from smalltown.world.load import load_world

WORLD = ROOT / "worlds" / "stormcairn.toml"


def test_the_world_checks():
    out = json.loads(cli("world", "check", WORLD, "--json", check=True).stdout)
    assert out["agents"] == 4, out


def test_a_scripted_day_runs_they_talk_and_sleep_in_their_own_beds(tmp_path):
    save = tmp_path / "storm.sqlite"
    cli("run", WORLD, "--headless", "--backend", "scripted", "--until", "day 2 03:00", "--save", save, check=True)
    world = load_world(WORLD)
    homes = {a.name: a.home for a in world.agents}
    rows = query(save, "SELECT name, action, address FROM agents")
    assert {name for name, *_ in rows} == set(homes)
    for name, action, address in rows:  # 03:00: everyone's sleep item
        sector, _arena, obj = address.split(":")
        assert action.startswith("sleeping"), (name, action)
        assert sector == homes[name] and obj.endswith(("bed", "bunk")), (name, address)
        others = {n.split()[0] for n in homes if n != name}
        assert not any(obj.startswith(f"{o}'s") for o in others), (name, address)  # not another's bed
    speakers = {a for (a,) in query(save, "SELECT DISTINCT agent FROM events WHERE kind = 'said'")}
    assert len(speakers) >= 2, speakers
