"""`smalltown eval civics` (issue 17, "Measures"): compliance per season and constituent, its mean and
95% CI, before vs after the new constitution, the rate voted, the amendments with their tallies, votes
by agent and each stance's trail to its conversations — on saves written by hand (tests/civic_saves.py)
whose figures are worked out here from the rows written; on the market town and on the tiny town
given an economy. The report writes its files; a save without civics is told so; `--roles` still
measures roles; the matrix's `civics` measure reads the same figures."""

from __future__ import annotations

import json
import statistics

import pytest

from civic_saves import CHEST, CivicHand
from helpers import ROOT, TINY, cli
from smalltown.eval import EvalError
from smalltown.eval.civics import civic_roles, mean_ci, measure_civics, read_civics, t95
from smalltown.eval.matrix import gather, matrix_doc
from smalltown.eval.measures import MEASURES
from smalltown.store.save import open_reader

MARKET = ROOT / "worlds" / "market.toml"
TAMSIN, OSRIC, BEA, IVO, YSOLDE, LIO = ("Tamsin Wrenfield", "Osric Pellow", "Bea Quillon", "Ivo Ferrow",
                                        "Ysolde Thorsby", "Lio Corwin")
TINY_ECONOMY = """
[economy]
items = ["flowers", "coffee"]
chest = "Hobbs Cafe:cafe:cafe counter"
sources = [{ item = "flowers", at = "Johnson Park:park", qty = 1 }]
inventory = {"Maria Lopez" = {coffee = 1}, "Klaus Mueller" = {flowers = 2}}
"""


def _ci(values: list[float]) -> tuple[float, float]:
    m, half = statistics.mean(values), t95(len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return m - half, m + half


def _market(path) -> None:
    """Season 1 at the 20% constitution, a vote that lowers it to 10%, season 2 under it."""
    h = CivicHand(path, MARKET)
    h.at(1, events=[(None, "constitution", {"version": 1, "rate": 20, "text": "Each pays a fifth.",
                                            "in_force": h.time(1)})])
    h.at(5, ledger=[("gather", "", TAMSIN, "wheat", 2)])  # Tamsin: bread 1 + wheat 2 = 3 items
    h.at(10, events=[(None, "season", {"season": 1, "rate": 20, "until": "2023-03-06 06:20:00"})])
    h.at(20, ledger=[("tax", TAMSIN, CHEST, "wheat", 1), ("tax", OSRIC, CHEST, "wheat", 1),
                     ("tax", BEA, CHEST, "flour", 1), ("deposit", YSOLDE, CHEST, "ore", 2),
                     ("give", IVO, LIO, "bread", 1)])  # (a gift, not a deposit)
    h.at(200, ledger=[("gather", "", IVO, "wheat", 2), ("tax", IVO, CHEST, "wheat", 2)])  # after the window
    h.at(250, events=[(TAMSIN, "feedback", {"rate": 10, "text": "Too high."}),
                      (OSRIC, "feedback", {"rate": 25, "text": "Fair enough."})])
    h.at(260, events=[(LIO, "proposal", {"amendment": 1, "text": "Lower the tax to 10%.", "rate": 10}),
                      (LIO, "proposal", {"amendment": 2, "text": "Raise the tax to 30%.", "rate": 30})])
    one = h.at(280, talk=(TAMSIN, IVO))
    h.at(290, events=[(TAMSIN, "stance", {"value": 15, "previous": 20, "other": IVO, "conversation": one})])
    two = h.at(295, talk=(BEA, TAMSIN))
    h.at(300, events=[(TAMSIN, "stance", {"value": 10, "previous": 15, "other": BEA, "conversation": two})])
    ballots = {TAMSIN: ["yes", "no"], OSRIC: ["yes", "no"], BEA: ["no", "yes"], IVO: ["abstain", "abstain"],
               YSOLDE: ["yes", "no"]}
    h.at(320, events=[(a, "vote", {"votes": v}) for a, v in ballots.items()])
    h.at(340, events=[(None, "tally", {"frozen": False, "results": [
        {"amendment": 1, "yes": 3, "no": 1, "abstain": 1, "passed": True},
        {"amendment": 2, "yes": 1, "no": 3, "abstain": 1, "passed": False}]})])
    h.at(360, events=[(None, "constitution", {"version": 2, "rate": 10, "text": "Each pays a tenth.",
                                              "in_force": "2023-03-06 08:00:00"})])
    h.at(720, events=[(None, "season", {"season": 2, "rate": 10, "until": "2023-03-06 08:20:00"})])
    h.at(730, ledger=[("tax", TAMSIN, CHEST, "bread", 1), ("tax", BEA, CHEST, "flour", 1),
                      ("tax", YSOLDE, CHEST, "ore", 1)])
    h.at(800)
    h.close()


def _measure(path) -> dict:
    reader = open_reader(path)
    try:
        return measure_civics(read_civics(reader, str(path)))
    finally:
        reader.close()


def test_compliance_per_season_from_a_hand_made_ledger(tmp_path):
    _market(tmp_path / "m.sqlite")
    r = _measure(tmp_path / "m.sqlite")
    assert r["election_manager"] == LIO and r["constituents"] == [TAMSIN, OSRIC, BEA, IVO, YSOLDE]
    s1, s2 = r["seasons"]
    assert {a: (x["held"], x["deposited"]) for a, x in s1["agents"].items()} == {
        TAMSIN: (3, 1), OSRIC: (4, 1), BEA: (2, 1), IVO: (1, 0), YSOLDE: (4, 2)}
    one = [1 / 3, 1 / 4, 1 / 2, 0.0, 1 / 2]
    assert s1["compliance"]["n"] == 5 and s1["compliance"]["mean"] == pytest.approx(statistics.mean(one))
    assert (s1["compliance"]["lo"], s1["compliance"]["hi"]) == pytest.approx(_ci(one))
    assert s1["rate"] == 20 and not s1["after"] and s1["held"] == 14 and s1["deposited"] == 5
    # season 2: what each held after season 1's deposits, Ivo's gift and his late wheat (held nothing: left out)
    assert {a: (x["held"], x["deposited"]) for a, x in s2["agents"].items()} == {
        TAMSIN: (2, 1), OSRIC: (3, 0), BEA: (1, 1), IVO: (0, 0), YSOLDE: (2, 1)}
    assert s2["agents"][IVO]["compliance"] is None and s2["after"] and s2["rate"] == 10
    two = [1 / 2, 0.0, 1.0, 1 / 2]
    assert s2["compliance"]["n"] == 4 and s2["compliance"]["mean"] == pytest.approx(0.5)
    assert (s2["compliance"]["lo"], s2["compliance"]["hi"]) == pytest.approx(_ci(two))
    assert r["before"]["seasons"] == [1] and r["before"]["mean"] == pytest.approx(statistics.mean(one))
    assert r["after"]["seasons"] == [2] and r["after"]["n"] == 4 and r["after"]["mean"] == pytest.approx(0.5)
    assert r["divider"] == "2023-03-06 08:00:00" and r["divider_is"] == "constitution v2"


def test_the_vote_its_amendments_ballots_and_stance_trail(tmp_path):
    _market(tmp_path / "m.sqlite")
    r = _measure(tmp_path / "m.sqlite")
    assert r["voted_rate"] == 10 and [v["rate"] for v in r["constitutions"]] == [20, 10]
    assert [(a["amendment"], a["text"], a["rate"], a["yes"], a["no"], a["abstain"], a["passed"], a["by"])
            for a in r["amendments"]] == [(1, "Lower the tax to 10%.", 10, 3, 1, 1, True, LIO),
                                          (2, "Raise the tax to 30%.", 30, 1, 3, 1, False, LIO)]
    assert r["votes"][BEA] == ["no", "yes"] and r["votes"][IVO] == ["abstain", "abstain"] and len(r["votes"]) == 5
    assert [(f["agent"], f["rate"]) for f in r["feedback"]] == [(TAMSIN, 10), (OSRIC, 25)]
    trail = r["stances"][TAMSIN]
    assert [(s["previous"], s["value"], s["other"]) for s in trail] == [(20, 15, IVO), (15, 10, BEA)]
    assert trail[0]["talk"]["participants"] == [TAMSIN, IVO] and trail[1]["talk"]["participants"] == [BEA, TAMSIN]
    assert trail[0]["talk"]["time"] == "2023-03-06 06:46:40"  # tick 280 of 10 s
    assert set(r["stances"]) == {TAMSIN}


def test_a_second_world_frozen_vote_splits_at_the_first_season_after_the_tally(tmp_path):
    """The tiny town with an economy: no new constitution, so "after" begins at the next season."""
    h = CivicHand(tmp_path / "t.sqlite", TINY, TINY_ECONOMY, settings={"constitution_frozen": True})
    h.at(3, events=[(None, "season", {"season": 1, "rate": 20, "until": h.time(50)})])
    h.at(10, ledger=[("tax", "Klaus Mueller", CHEST, "flowers", 1)])
    h.at(60, events=[("Isabella Rodriguez", "proposal", {"amendment": 1, "text": "No tax.", "rate": 0})])
    h.at(70, events=[(None, "tally", {"frozen": True, "results": [
        {"amendment": 1, "yes": 2, "no": 0, "abstain": 0, "passed": True}]})])
    h.at(80, events=[(None, "season", {"season": 2, "rate": 20, "until": h.time(120)})])
    h.at(90, ledger=[("tax", "Maria Lopez", CHEST, "coffee", 1), ("deposit", "Klaus Mueller", CHEST, "flowers", 1)])
    h.close()
    r = _measure(tmp_path / "t.sqlite")
    assert r["election_manager"] == "Isabella Rodriguez" and sorted(r["constituents"]) == ["Klaus Mueller", "Maria Lopez"]
    assert r["frozen"] and r["voted_rate"] is None and r["amendments"][0]["frozen"]
    assert r["divider_is"].startswith("the first season after the tally")
    s1, s2 = r["seasons"]
    assert s1["compliance"]["mean"] == pytest.approx(0.25) and not s1["after"]  # Klaus 1 of 2, Maria 0 of 1
    assert s2["compliance"]["mean"] == pytest.approx(1.0) and s2["after"]  # both all they held
    assert r["before"]["mean"] == pytest.approx(0.25) and r["after"]["mean"] == pytest.approx(1.0)


def test_constituents_leave_out_the_worlds_influencers_unless_their_side_is_none():
    agents = ["A", "B", "C", "D"]
    doc = {"civics": {"influencers": ["B", "Z"], "election_manager": "D"}}
    assert civic_roles(doc, agents, [], {}) == (["A", "C"], "D", ["B"])
    assert civic_roles(doc, agents, [], {"influencer_side": "none"}) == (["A", "B", "C"], "D", ["B"])
    assert civic_roles({}, agents, [], {})[:2] == (["A", "B", "C", "D"], None)


def test_mean_and_ci_small_cases():
    assert mean_ci([]) == {"n": 0, "mean": None, "lo": None, "hi": None}
    assert mean_ci([0.5, None]) == {"n": 1, "mean": 0.5, "lo": None, "hi": None}
    assert mean_ci([0.2, 0.2, 0.2])["lo"] == pytest.approx(0.2)
    lo, hi = mean_ci([0.0, 1.0])["lo"], mean_ci([0.0, 1.0])["hi"]
    assert (lo, hi) == pytest.approx((0.5 - 12.706 * 0.5, 0.5 + 12.706 * 0.5))  # t(1) = 12.706, se = 0.5
    assert t95(35) == t95(30) and t95(500) == 1.96


def test_the_report_writes_its_files_and_two_saves_side_by_side(tmp_path):
    _market(tmp_path / "a.sqlite")
    _market(tmp_path / "b.sqlite")
    out = tmp_path / "rep"
    p = cli("eval", "civics", str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite"), "--json", "--out", str(out),
            check=True)
    data = json.loads(p.stdout)
    assert set(data["saves"]) == {"a", "b"} and data["saves"]["a"]["voted_rate"] == 10
    assert json.loads((out / "report.json").read_text()) == data
    md = (out / "report.md").read_text()
    assert "Lower the tax to 10%." in md and "Votes by agent" in md and "constitution v2" in md
    svg = (out / "plots" / "compliance.svg").read_text()
    assert svg.count('stroke-dasharray="5,4"') == 2 and "new constitution" in svg  # one mark per save
    assert (out / "plots" / "stances-a.svg").is_file() and "<svg" in (out / "report.html").read_text()
    shown = cli("eval", "civics", str(tmp_path / "a.sqlite"), check=True).stdout
    assert "compliance before" in shown and "31.7%" in shown


def test_a_save_without_civics_is_told_so(tmp_path):
    h = CivicHand(tmp_path / "plain.sqlite", MARKET)
    h.at(5, ledger=[("gather", "", TAMSIN, "wheat", 2)])
    h.close()
    p = cli("eval", "civics", str(tmp_path / "plain.sqlite"))
    assert p.returncode == 2 and "no tax seasons" in p.stderr and "plain.sqlite" in p.stderr
    with pytest.raises(EvalError, match="no tax seasons"):
        _measure(tmp_path / "plain.sqlite")
    assert cli("eval", "civics", str(tmp_path / "nothing.sqlite")).returncode == 2


def test_a_hostile_season_is_a_clear_error(tmp_path):
    h = CivicHand(tmp_path / "bad.sqlite", MARKET)
    h.at(3, events=[(None, "season", {"season": 1, "rate": "lots", "until": "2023-03-06 07:00:00"})])
    h.close()
    with pytest.raises(EvalError, match=r"event \d+ \(season\): rate 'lots' is not a number"):
        _measure(tmp_path / "bad.sqlite")


def test_the_matrix_civics_measure(tmp_path):
    _market(tmp_path / "m.sqlite")
    m = MEASURES["civics"].fn(tmp_path / "m.sqlite", None)
    assert m["figures"]["voted rate"] == 10 and m["figures"]["compliance after"] == pytest.approx(0.5)
    assert m["figures"]["compliance before"] == pytest.approx(statistics.mean([1 / 3, 1 / 4, 1 / 2, 0, 1 / 2]))
    assert [x for x, _ in m["series"]["compliance"]] == [1, 2] and m["axes"]["compliance"][0] == "tax season"
    # the matrix plots it: a line per condition over tax seasons
    runs = {"anti": {1: {"measures": {"civics": m}}}, "frozen": {1: {"measures": {"civics": {
        **m, "series": {"compliance": [(1, 0.2), (2, 0.2)]}}}}}}
    doc = matrix_doc({"world": "w", "until": "+20h", "backend": "scripted", "seeds": [1], "runs": runs,
                      "conditions": {"anti": {}, "frozen": {}}, "measures": {"civics": MEASURES["civics"].about},
                      "gathered": gather(runs)})
    (svg,) = [b[2] for b in doc.blocks if b[0] == "figure"]
    assert "tax season" in svg and svg.count("<path") == 2 and "frozen" in svg
