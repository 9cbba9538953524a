"""Civics (issue 17): the [civics] table checked with file:line; the timeline on the game clock at
a non-default scale; the engine's tally; a frozen constitution; taxes never more than held (a
hostile answer); a run stopped mid-vote resumes to the straight run's digest; influencers' sides
pull the amendments down or up. On the market town with a [civics] written here."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from smalltown.llm.backend import Answer
from smalltown.llm.tasks import Amendment, PayTax, PayTaxOut
from smalltown.scripted import ScriptedBackend
from smalltown.sim.civics import new_rate, tally
from smalltown.sim.open import create, resume
from smalltown.world.errors import WorldError

from helpers import civics_table, market_with, save_digest

ROOT = Path(__file__).resolve().parent.parent
MARKET = ROOT / "worlds" / "market.toml"
PEOPLE = ["Tamsin Wrenfield", "Osric Pellow", "Bea Quillon", "Ivo Ferrow", "Ysolde Thorsby"]
SCALE = 6  # game seconds per Sid second: the run is 2 game hours, a season every 12 minutes


def _world(influencers=("Tamsin Wrenfield",), edit: tuple[str, str] | None = None):
    return market_with(civics_table(influencers), edit)


def _run(path: Path, minutes: float, backend=None, sets=(), **kw):
    world, _ = _world(**kw)
    sim = create(world, path, backend or ScriptedBackend(world.seed), overwrite=True,
                 sets=[f"civics_scale={SCALE}", *sets])
    try:
        sim.run_until(world.start + timedelta(minutes=minutes))
    finally:
        sim.close()
    return world


def _events(path: Path, *kinds: str) -> list[tuple[str, str | None, dict]]:
    con = sqlite3.connect(path)
    try:
        return [(t, a, json.loads(d)) for t, a, d in con.execute(
            f"SELECT time, agent, data FROM events WHERE kind IN ({','.join('?' * len(kinds))}) ORDER BY id", kinds)]
    finally:
        con.close()



def test_bad_civics_are_told_at_their_line():
    with pytest.raises(WorldError) as e:
        _world(edit=('election_manager = "Lio Corwin"', 'election_manager = "Nobody Here"'))
    _, text = _world()
    line = next(i for i, x in enumerate(text.splitlines(), 1) if x.startswith("election_manager"))
    assert any(p.line == line and "Nobody Here" in p.message for p in e.value.problems)
    with pytest.raises(WorldError) as e:
        _world(edit=("tax_rate = 20\n", "tax_rate = 20\ntimeline = {vote = 100}\n"))
    assert any("out of order" in p.message for p in e.value.problems)
    text = MARKET.read_text()
    economy = text[text.index("\n[economy]"):text.index("\n[sectors")]
    inventories = [x for x in economy.splitlines() if False] + [x for x in text.splitlines() if x.startswith("inventory")]
    with pytest.raises(WorldError) as e:
        _world(edit=(economy, ""))
    assert any(p.message.startswith("[civics] needs an [economy]") for p in e.value.problems), inventories


def test_the_engine_tallies_hand_made_votes():
    amendments = [Amendment(text="a", rate=10), Amendment(text="b", rate=None), Amendment(text="c", rate=30)]
    ballots = [["yes", "yes", "yes"], ["yes", "no", "yes"], ["no", "abstain", "yes"], ["abstain", "no", "no"]]
    results = tally(amendments, ballots)
    assert [(r["yes"], r["no"], r["abstain"], r["passed"]) for r in results] == \
        [(2, 1, 1, True), (1, 2, 1, False), (3, 1, 0, True)]
    assert new_rate(amendments, results, 20) == 30  # the most yes votes wins
    tied = tally(amendments[:1] + amendments[2:], [["yes", "yes"], ["yes", "yes"]])
    assert new_rate(amendments[:1] + amendments[2:], tied, 20) == 10  # a tie: the first in order
    assert new_rate(amendments, tally(amendments, [["no", "no", "no"]]), 20) == 20  # nothing passed


def test_the_timeline_runs_on_the_game_clock_at_its_scale(tmp_path):
    path = tmp_path / "c.sqlite"
    world = _run(path, 125, influencers=PEOPLE[:4])
    at = lambda s: (world.start + timedelta(seconds=s * SCALE)).strftime("%Y-%m-%d %H:%M:%S")  # noqa: E731
    seasons = _events(path, "season")
    assert [d["season"] for _, _, d in seasons] == list(range(1, 10))  # 120 .. 1080 s, none at the end (1200)
    assert [t for t, _, _ in seasons] == [at(120 * n) for n in range(1, 10)]
    assert [d["until"] for _, _, d in seasons] == [at(120 * n + 20) for n in range(1, 10)]
    assert {t for t, _, _ in _events(path, "feedback")} == {at(300)}
    assert {t for t, _, _ in _events(path, "proposal")} == {at(360)}
    assert {t for t, _, _ in _events(path, "vote")} == {at(420)}
    (t, _, d), = _events(path, "tally")
    assert t == at(480) and not d["frozen"] and d["draft"]["rate"] == 10  # four anti influencers of five
    versions = _events(path, "constitution")
    assert [(d["version"], d["rate"]) for _, _, d in versions] == [(1, 20), (2, 10)]
    assert versions[1][0] == at(600) and versions[1][2]["text"] == d["draft"]["text"]
    # the seasons after the new constitution ask its rate; the election manager pays nothing, votes not
    assert [d["rate"] for _, _, d in seasons] == [20] * 4 + [10] * 5
    assert "Lio Corwin" not in {a for _, a, _ in _events(path, "vote", "feedback", "tax_due")}
    # every tax asked is paid or missed once (a 2-minute window at this scale: most are missed)
    asked = [(a, d["season"]) for _, a, d in _events(path, "tax_due") if d["items"]]
    assert asked and sorted(asked) == sorted((a, d["season"]) for _, a, d in _events(path, "tax_paid"))


def test_a_frozen_constitution_keeps_version_1(tmp_path):
    path = tmp_path / "f.sqlite"
    _run(path, 125, sets=["constitution_frozen=true"], influencers=PEOPLE[:4])
    (_, _, d), = _events(path, "tally")
    assert d["frozen"] and d["draft"] is None and any(r["passed"] for r in d["results"])  # held and tallied
    assert [x["version"] for _, _, x in _events(path, "constitution")] == [1]
    assert {x["rate"] for _, _, x in _events(path, "season")} == {20}


class Greedy(ScriptedBackend):
    """A hostile answer: pay a million of everything, and of an item not held."""

    def answer(self, task, prompt=""):
        if isinstance(task, PayTax):
            out = PayTaxOut(payments=[{"item": h.item, "qty": 10 ** 6} for h in task.holdings])
            return Answer(output=out, raw=out.model_dump_json())
        return super().answer(task, prompt)


def test_taxes_are_never_more_than_held(tmp_path):
    path = tmp_path / "g.sqlite"
    world = _run(path, 390, backend=Greedy(3), sets=["civics_scale=60"])  # 20-minute windows: time to walk
    due = _events(path, "tax_due")
    assert any(q == 10 ** 6 for _, _, d in due for q in d["items"].values())
    sim = resume(path, ScriptedBackend(world.seed))
    try:
        rows = sim.save.ledger()
        taxed = [r for r in rows if r[3] == "tax"]
        assert taxed and all(r[5] == "chest" and r[7] < 10 ** 6 for r in taxed)
        for a in world.agents:  # holdings are the ledger's, never below zero
            assert all(q > 0 for q in sim.economy.holdings(a.name).values())
    finally:
        sim.close()
    for _, _, d in _events(path, "tax_paid"):
        assert all(d["items"][i] <= d["asked"][i] for i in d["items"])


@pytest.mark.parametrize("stop", [40, 42.5, 55])  # before the vote, just after it, between tally and in force
def test_a_run_stopped_mid_vote_resumes_to_the_straight_run(tmp_path, stop):
    straight, half = tmp_path / "s.sqlite", tmp_path / "h.sqlite"
    world = _run(straight, 70, influencers=PEOPLE[:4])
    _run(half, stop, influencers=PEOPLE[:4])
    sim = resume(half, ScriptedBackend(world.seed))
    try:
        sim.run_until(world.start + timedelta(minutes=70))
    finally:
        sim.close()
    assert save_digest(half) == save_digest(straight)


def test_influencers_pull_the_amendments_down_or_up(tmp_path):
    rates = {}
    for side in ("anti", "pro"):
        path = tmp_path / f"{side}.sqlite"
        _run(path, 50, sets=[f"influencer_side={side}", "architecture=piano"], influencers=PEOPLE[:2])
        rates[side] = [d["rate"] for _, _, d in _events(path, "proposal")]
        wants = {a: d["rate"] for _, a, d in _events(path, "feedback")}
        assert wants["Tamsin Wrenfield"] == (10 if side == "anti" else 30)
        assert wants["Bea Quillon"] == 20  # a constituent who talked with no influencer
    assert max(rates["anti"]) < 20 < min(rates["pro"])
