"""The economy core (issue 17): the world file's [economy] checked with file:line, the ledger in the
save (schema 8), holdings = starting inventories + the ledger, ops checked when applied, on the
market town and on the tiny town given an economy here; resume and fork as a straight run."""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from smalltown.scripted import ScriptedBackend
from smalltown.sim.economy import Economy
from smalltown.state.ledger import Refused
from smalltown.sim.fork import fork
from smalltown.sim.open import create, resume
from smalltown.store.save import Save, SaveError
from smalltown.store.schema import SCHEMA_VERSION
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world, load_world_text

from helpers import TINY_ECONOMY, ledger_holdings, save_digest

ROOT = Path(__file__).resolve().parent.parent
MARKET = ROOT / "worlds" / "market.toml"
TINY = ROOT / "worlds" / "tiny.toml"
KINDS = {"gather", "craft", "craft_in", "give", "trade", "deposit"}



def _world(path: Path, extra: str = "", edit: tuple[str, str] | None = None):
    text = path.read_text()
    if edit:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1], 1)
    text += extra
    map_path = (path.parent / ("../maps/tiny.toml" if path == TINY else "../maps/market.toml")).resolve()
    return load_world_text(str(path.name), text, map_path.name, map_path.read_text()), text


def _problems(edit: tuple[str, str]) -> list[str]:
    with pytest.raises(WorldError) as e:
        _world(MARKET, edit=edit)
    return [str(p) for p in e.value.problems]


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _run(world, path: Path, hours: float):
    sim = create(world, path, ScriptedBackend(world.seed), overwrite=True)
    try:
        sim.run_until(world.start + timedelta(hours=hours))
    finally:
        sim.close()




# --- the world file -------------------------------------------------------------------------------


def test_market_world_loads_with_its_economy():
    world = load_world(MARKET)
    e = world.economy
    assert set(e.items) == {"wheat", "flour", "bread", "ore", "tools"}
    assert e.chest_arena == "Cobbet Hall:hall" and len(e.recipes) == 3 and len(e.sources) == 2
    assert load_world(TINY).economy is None


def test_unknown_item_is_told_at_its_line():
    text = MARKET.read_text()
    found = _problems(('inputs = {wheat = 2}', 'inputs = {rye = 2}'))
    line = _line(text, 'output = "flour"')
    assert any(f"market.toml:{line}" in p and "unknown item 'rye'" in p for p in found), found


def test_a_cycle_of_recipes_is_refused():
    found = _problems(('inputs = {ore = 2}, at = "Hollin Smithy"', 'inputs = {ore = 2}, at = "Hollin Smithy", qty = 1 },\n'
                       '  { output = "ore", inputs = {tools = 1}, at = "Hollin Smithy"'))
    assert any("recipes make a cycle" in p and "tools" in p and "ore" in p for p in found), found
    found = _problems(('inputs = {wheat = 2}', 'inputs = {wheat = 2, flour = 1}'))
    assert any("its output is among its inputs" in p for p in found), found


def test_bad_place_and_quantities_are_refused_with_lines():
    text = MARKET.read_text()
    found = _problems(('at = "Ashgrove Farm:field", qty = 2', 'at = "Ashgrove Farm:orchard", qty = -2'))
    line = _line(text, 'item = "wheat", at = "Ashgrove Farm:field"')
    assert any(f"market.toml:{line}" in p and "not an arena" in p for p in found), found
    assert any(f"market.toml:{line}" in p and "quantity -2" in p for p in found), found
    found = _problems(('chest = "Cobbet Hall:hall:town chest"', 'chest = "Cobbet Hall:hall:vault"'))
    line = _line(text, "chest = ")
    assert any(f"market.toml:{line}" in p and "not an object" in p for p in found), found
    found = _problems(('inventory = {bread = 1}\nroutine', 'inventory = {bread = 0}\nroutine'))
    assert any("inventory of Tamsin Wrenfield" in p and "quantity 0" in p for p in found), found
    found = _problems(('chest_inventory = {bread = 1}', 'chest_inventory = {bread = 1}\ninventory = {"Nobody" = {bread = 1}}'))
    assert any("unknown agent 'Nobody'" in p for p in found), found
    found = _problems(('items = ["wheat",', 'items = ["wheat", "wheat",'))
    assert any("listed twice" in p for p in found), found


# --- transfers: never from nothing, never below zero -------------------------------------------------


def test_transfers_are_checked_when_applied():
    world = load_world(MARKET)
    eco = Economy(world)
    with pytest.raises(Refused, match="nothing comes from nowhere"):
        eco.transfer(None, "give", "", "Tamsin Wrenfield", "bread", 5)
    with pytest.raises(Refused, match="holds 1 bread, not 2"):
        eco.transfer(None, "deposit", "Tamsin Wrenfield", eco.chest, "bread", 2)
    with pytest.raises(Refused, match="unknown item"):
        eco.transfer(None, "gather", "", "Tamsin Wrenfield", "gold", 1)
    with pytest.raises(Refused):
        eco.transfer(None, "give", "Tamsin Wrenfield", "Osric Pellow", "bread", -1)
    assert eco.holdings("Tamsin Wrenfield") == {"bread": 1} and eco.rows == 0
    assert eco.transfer(None, "deposit", "Tamsin Wrenfield", eco.chest, "bread", 1) == 1
    assert eco.holdings("Tamsin Wrenfield") == {} and eco.holdings(eco.chest) == {"bread": 2}


def _short_market(tmp_path: Path, name: str = "m.sqlite", hours: float = 12.25) -> Path:
    path = tmp_path / name
    _run(load_world(MARKET), path, hours)
    return path


def test_a_hostile_save_cannot_make_items(tmp_path):
    path = _short_market(tmp_path, hours=1.5)
    for row in (("give", "", "Tamsin Wrenfield", "bread", 50), ("give", "Tamsin Wrenfield", "Osric Pellow", "bread", 9),
                ("gather", "", "Tamsin Wrenfield", "gold", 1)):
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO ledger(tick, time, kind, giver, taker, item, qty, note) VALUES (1, ?, ?, ?, ?, ?, ?, '')",
                     ("2023-03-06 06:00:10", *row))
        conn.commit()
        with pytest.raises(SaveError, match="ledger row"):
            resume(path, ScriptedBackend(0)).close()
        conn.execute("DELETE FROM ledger WHERE id = (SELECT max(id) FROM ledger)")
        conn.commit()
        conn.close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO ledger(tick, time, kind, giver, taker, item, qty, note) VALUES (1, '2023-03-06 06:00:10', "
                 "'steal', 'Tamsin Wrenfield', 'Osric Pellow', 'bread', 1, '')")
    conn.commit()
    conn.close()
    with pytest.raises(SaveError, match="not a kind of transfer"):
        Save.open(path).close()


# --- a day in the market town, from the save ----------------------------------------------------


def test_a_scripted_morning_makes_every_kind_and_holdings_are_the_ledger(tmp_path):
    path = _short_market(tmp_path)
    world = load_world(MARKET)
    save = Save.open(path, readonly=True)
    try:
        rows = save.ledger()
        events = Counter(k for (k,) in save.conn.execute("SELECT kind FROM events"))
    finally:
        save.close()
    assert KINDS <= {r[3] for r in rows}, {r[3] for r in rows}
    assert all(events[k] for k in ("gather", "craft", "give", "trade", "deposit"))
    expected = ledger_holdings(world, rows)
    assert all(n >= 0 for inv in expected.values() for n in inv.values())
    sim = resume(path, ScriptedBackend(0))
    try:
        for holder, inv in expected.items():
            assert sim.economy.holdings(holder) == {i: n for i, n in inv.items() if n > 0}, holder
    finally:
        sim.close()


def test_resume_and_fork_mid_run_give_the_straight_runs_digest(tmp_path):
    straight = _short_market(tmp_path, "straight.sqlite")
    half = _short_market(tmp_path, "half.sqlite", hours=6.5)
    sim = resume(half, ScriptedBackend(load_world(MARKET).seed))
    try:
        sim.run_until(sim.world.start + timedelta(hours=12.25))
    finally:
        sim.close()
    assert save_digest(half) == save_digest(straight)
    forked = tmp_path / "fork.sqlite"
    fork(straight, sim.world.start + timedelta(hours=5), forked)
    sim = resume(forked, ScriptedBackend(load_world(MARKET).seed))
    try:
        assert sim.economy.rows == len(sim.save.ledger()) > 0
        sim.run_until(sim.world.start + timedelta(hours=12.25))
    finally:
        sim.close()
    assert save_digest(forked) == save_digest(straight)


# --- a second world: the tiny town with an economy written here ---------------------------------


def test_the_tiny_town_with_an_economy(tmp_path):
    world, _ = _world(TINY, TINY_ECONOMY)
    path = tmp_path / "tiny-eco.sqlite"
    _run(world, path, 6)
    save = Save.open(path, readonly=True)
    try:
        rows = save.ledger()
    finally:
        save.close()
    assert {"gather", "craft", "craft_in"} <= {r[3] for r in rows}
    expected = ledger_holdings(world, rows)
    assert all(n >= 0 for inv in expected.values() for n in inv.values())
    sim = resume(path, ScriptedBackend(0))
    try:
        for holder, inv in expected.items():
            assert sim.economy.holdings(holder) == {i: n for i, n in inv.items() if n > 0}
    finally:
        sim.close()


# --- the save: schema 8 ---------------------------------------------------------------------------


def test_a_schema_7_save_opens_with_an_empty_ledger(tmp_path):
    path = tmp_path / "old.sqlite"
    _run(load_world(TINY), path, 0.5)
    digest = save_digest(path)
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE ledger")
    conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert SCHEMA_VERSION >= 8
    save = Save.open(path)
    try:
        assert save.meta("schema_version") == SCHEMA_VERSION and save.ledger() == [] and save.digest() == digest
    finally:
        save.close()
