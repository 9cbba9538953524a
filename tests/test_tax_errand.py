"""The tax walk is a timed errand (issue 17's cost): an agent walking to pay its tax asks no react
question on the way; one stopped to talk walks on after the talk and pays; once it has paid, it goes
back to its day at once (it does not stand at the chest until the window closes). From the save's call log and events, on Sid's tax town and on the
market town with a [civics] written here."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.store.schema import TIME_FMT
from smalltown.world.load import load_world

from helpers import ROOT, civics_table, market_with


def _market():
    return market_with(civics_table(["Tamsin Wrenfield"]))[0]


def _run(tmp_path: Path, which: str) -> Path:
    world = _market() if which == "market" else load_world(ROOT / "worlds" / "sid-tax.toml")
    path = tmp_path / f"{which}.sqlite"
    sim = create(world, path, ScriptedBackend(world.seed), sets=["architecture=piano", "civics_scale=60"])
    try:
        sim.run_until(world.start + timedelta(hours=4, minutes=30))  # two tax seasons (08:00, 10:00)
    finally:
        sim.close()
    return path


def _t(s: str) -> datetime:
    return datetime.strptime(s, TIME_FMT)


@pytest.mark.parametrize("which", ["sid-tax", "market"])
def test_a_tax_walk_weighs_nothing_and_ends_when_paid(tmp_path, which):
    con = sqlite3.connect(_run(tmp_path, which))
    try:
        due = {(a, json.loads(d)["season"]): _t(t) for t, a, d in con.execute(
            "SELECT time, agent, data FROM events WHERE kind = 'tax_due'") if json.loads(d)["items"]}
        paid = [(a, _t(t), json.loads(d)) for t, a, d in con.execute(
            "SELECT time, agent, data FROM events WHERE kind = 'tax_paid'")]
        reacts = [(a, _t(t)) for a, t in con.execute("SELECT agent, time FROM llm_calls WHERE task = 'react'")]
        started = [(a, _t(t)) for a, t in con.execute("SELECT agent, time FROM events WHERE kind = 'started'")]
        talks = [(a, _t(t)) for a, t in con.execute("SELECT agent, time FROM events WHERE kind = 'started' AND "
                                                     "json_extract(data, '$.activity') LIKE 'talking with %'")]
    finally:
        con.close()
    walked = [(a, due[a, d["season"]], t) for a, t, d in paid if not d["missed"] and t > due[a, d["season"]]]
    assert len(walked) >= 3 and reacts  # walks were made, and people reacted elsewhere
    for agent, begun, done in walked:  # on the way: no question whether to stop for what it sees
        assert not [t for a, t in reacts if a == agent and begun <= t < done], (agent, begun, done)
    for agent, _, done in walked:  # paid: the next action starts at once, well before the window closes
        assert any(a == agent and done <= t <= done + timedelta(seconds=30) for a, t in started), (agent, done)
    # stopped on the way to talk: the walk goes on after the talk, and the tax is paid in the window
    stopped = [(a, d) for a, t, d in paid if [x for b, x in talks if b == a and due[a, d["season"]] <= x < t]]
    assert not [(a, d) for a, d in stopped if d["missed"]]
    assert stopped or which == "market"  # (the market's few people seldom meet on the way)
