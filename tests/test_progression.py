"""Item progression (Project Sid §3, `smalltown eval progression`, eval/progression.py): the distinct
item kinds each agent came to hold over game time — on a market-town save written by hand whose
figures are counted here from the rows written, on a real scripted run checked against holdings
replayed apart from the engine, the report's files, a world without an economy refused, and the
matrix's `progression` measure reading the same figures."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from civic_saves import CHEST, CivicHand
from helpers import ROOT, TINY, cli, ledger_holdings
from smalltown.eval import EvalError
from smalltown.eval.measures import MEASURES
from smalltown.eval.progression import measure_progression, read_progression
from smalltown.store.save import open_reader
from smalltown.world.load import load_world

MARKET = ROOT / "worlds" / "market.toml"
TAMSIN, OSRIC, BEA, IVO, YSOLDE, LIO = ("Tamsin Wrenfield", "Osric Pellow", "Bea Quillon", "Ivo Ferrow",
                                        "Ysolde Thorsby", "Lio Corwin")
START = datetime(2023, 3, 6, 6, 0)  # the market town's start; a tick is 10 s


def _hand(path, settings=None):
    """Each agent starts with one kind (the world file). Then, hand-counted (tick -> who gains a kind):
    6 Osric gathers wheat (he has it: no gain); 60 Bea is given wheat (2); 120 Bea crafts flour (has
    it); 240 Ivo is given flour (2); 400 Lio is given ore and crafts 2 tools (3); 500 Lio gives both
    tools away, to Tamsin (2) and the chest (not an agent); 700 the end (07:56:40). Refused (events,
    no ledger row): at 300 Ivo's give to Bea and trade with Osric, and a gather of Tamsin's (not an offer)."""
    h = CivicHand(path, MARKET, settings=settings)
    h.at(6, ledger=[("gather", "", OSRIC, "wheat", 2)])
    h.at(60, ledger=[("give", OSRIC, BEA, "wheat", 2)])
    h.at(120, ledger=[("craft_in", BEA, "", "wheat", 2), ("craft", "", BEA, "flour", 1)])
    h.at(240, ledger=[("give", BEA, IVO, "flour", 1)])
    h.at(300, events=[(IVO, "refused", {"op": f"give 1 flour to {BEA}", "why": f"{BEA} is not here"}),
                      (IVO, "refused", {"op": f"trade 1 flour with {OSRIC} for 1 wheat", "why": f"{OSRIC} holds 0 wheat, not 1"}),
                      (TAMSIN, "refused", {"op": "gather 1 wheat", "why": "no wheat to gather at this spot"})])
    h.at(400, ledger=[("give", YSOLDE, LIO, "ore", 2), ("craft_in", LIO, "", "ore", 2), ("craft", "", LIO, "tools", 2)])
    h.at(500, ledger=[("give", LIO, TAMSIN, "tools", 1), ("deposit", LIO, CHEST, "tools", 1)])
    h.at(700)
    h.close()


def _measure(path) -> dict:
    reader = open_reader(path)
    try:
        return measure_progression(read_progression(reader, str(path)))
    finally:
        reader.close()


def test_distinct_items_counted_by_hand(tmp_path):
    path = tmp_path / "hand.sqlite"
    _hand(path, {"action_awareness": True})
    r = _measure(path)
    per = {a["agent"]: a["distinct"] for a in r["per_agent"]}
    assert per == {TAMSIN: 2, OSRIC: 1, BEA: 2, IVO: 2, YSOLDE: 1, LIO: 3}  # Lio keeps "tools" though he gave them all
    assert (r["mean"], r["min"], r["max"], r["all_kinds"]) == (pytest.approx(11 / 6), 1, 3, 0)
    assert r["mean_at_30_minutes"] == pytest.approx(7 / 6)  # only Bea's wheat by 06:30
    assert r["by_hour"] == [(1, pytest.approx(8 / 6)), (2, pytest.approx(11 / 6))]
    assert (r["offers_done"], r["offers_refused"]) == (4, 2)  # 4 gives (the deposit is none); Ivo's two refused
    t = lambda tick: (START + timedelta(seconds=10 * tick)).strftime("%Y-%m-%d %H:%M:%S")  # noqa: E731
    assert r["mean_curve"] == [(t(0), 1.0), (t(60), pytest.approx(7 / 6)), (t(240), pytest.approx(8 / 6)),
                               (t(400), pytest.approx(10 / 6)), (t(500), pytest.approx(11 / 6))]
    lio = next(a for a in r["per_agent"] if a["agent"] == LIO)
    assert lio["first"] == {"bread": t(0), "ore": t(400), "tools": t(400)}
    assert r["action_awareness"] is True and r["items"] == ["wheat", "flour", "bread", "ore", "tools"]


def test_the_report_and_the_matrix_measure(tmp_path):
    path = tmp_path / "without.sqlite"
    _hand(path, {"action_awareness": False})
    out = tmp_path / "report"
    proc = cli("eval", "progression", path, "--out", out, check=True)
    assert "without action awareness" in proc.stdout and "1.83 of 5" in proc.stdout
    data = json.loads((out / "report.json").read_text())
    assert data["mean"] == pytest.approx(11 / 6) and data["action_awareness"] is False
    md = (out / "report.md").read_text()
    assert "Project Sid" in md and "17 distinct items" in md and "plots/progression.svg" in md
    svg = (out / "plots" / "progression.svg").read_text()
    assert svg.startswith("<svg") and "1.83 at the end" in svg
    m = MEASURES["progression"].fn(path, None)
    assert m["figures"]["distinct items (mean)"] == pytest.approx(11 / 6)
    assert m["figures"]["distinct items (max)"] == 3
    assert (m["figures"]["gives and trades done"], m["figures"]["gives and trades refused"]) == (4, 2)
    assert "gives and trades done / refused" in md
    assert m["series"]["distinct items"] == [(1.0, pytest.approx(8 / 6)), (2.0, pytest.approx(11 / 6))]


def test_a_world_without_an_economy_is_refused(tmp_path):
    path = tmp_path / "tiny.sqlite"
    CivicHand(path, TINY).close()
    with pytest.raises(EvalError, match="no \\[economy\\]"):
        _measure(path)
    proc = cli("eval", "progression", path)
    assert proc.returncode == 2 and "tiny.sqlite" in proc.stderr and "no [economy]" in proc.stderr
    assert cli("eval", "progression", tmp_path / "none.sqlite").returncode == 2


def test_a_real_run_agrees_with_holdings_replayed_apart(tmp_path):
    """The scripted market town for a few hours: each agent's distinct kinds are those whose replayed
    count (helpers.ledger_holdings, not the engine's arithmetic) was above zero after some row."""
    save = tmp_path / "market.sqlite"
    cli("run", MARKET, "--headless", "--until", "+6h", "--save", save, "--backend", "scripted", check=True)
    reader = open_reader(save)
    try:
        rows = reader.ledger()
    finally:
        reader.close()
    world = load_world(MARKET)
    ever = {a.name: {i for i, n in world.economy.starting().get(a.name, {}).items() if n > 0} for a in world.agents}
    for k in range(len(rows)):
        for holder, counts in ledger_holdings(world, rows[:k + 1]).items():
            if holder in ever:
                ever[holder] |= {i for i, n in counts.items() if n > 0}
    r = _measure(save)
    assert rows, "the scripted market town moved no items in 6 hours"
    assert {a["agent"]: a["distinct"] for a in r["per_agent"]} == {a: len(s) for a, s in ever.items()}
    assert r["max"] > 1  # someone came to hold a second kind
