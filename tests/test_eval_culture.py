"""`eval culture`'s measures on a save written by hand (tests/culture_saves.py): each figure is
counted by hand from the rows the save holds, and asserted equal."""

from __future__ import annotations

import json

import pytest

from culture_runs import DOCTRINE_WORLDS, culture_measures
from culture_saves import ADA, ISABELLA, KLAUS, MARIA, NED, write_culture_save
from helpers import cli
from smalltown.eval.culture import measure_culture, read_culture
from smalltown.eval.culture_faith import area
from smalltown.store.save import open_reader


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict:
    path = write_culture_save(tmp_path_factory.mktemp("culture") / "culture.sqlite")
    reader = open_reader(path)
    try:
        s = read_culture(reader)
    finally:
        reader.close()
    return {"save": s, "r": measure_culture(s), "path": path}


def test_the_towns_are_those_of_the_agents_homes(measured):
    s = measured["save"]
    assert s.town == {ISABELLA: "Cottage", MARIA: "Cottage", KLAUS: "Cottage", ADA: "Cafe", NED: ""}
    assert measured["r"]["towns"] == {"Cottage": 3, "Cafe": 1} and measured["r"]["rural"] == 1
    assert s.hearing_radius == 2


def test_memes_per_agent_by_town_and_rural(measured):
    m = measured["r"]["memes"]
    # the summaries' keywords, each once whatever its case ("Garden" is "garden")
    assert m["memes"] == ["garden", "compost", "fish"]
    # goals: Isabella garden+compost, garden; Ned fish; Klaus compost. speech: Isabella garden, Maria fish
    assert (m["uses"], m["from_goals"], m["from_speech"]) == (7, 5, 2)
    cottage, cafe, rural = m["groups"]["Cottage"], m["groups"]["Cafe"], m["groups"]["(rural)"]
    assert (cottage["agents"], cottage["uses"], cottage["per_capita"]) == (3, 6, 2.0)
    assert cottage["distinct_per_agent"] == pytest.approx(4 / 3)  # Isabella 2, Maria 1, Klaus 1
    assert cottage["counts"] == {"garden": 3, "compost": 2, "fish": 1} and cottage["leading"] == "garden"
    assert (cafe["uses"], cafe["per_capita"], cafe["leading"]) == (0, 0.0, None)
    assert (rural["agents"], rural["uses"], rural["per_capita"], rural["leading"]) == (1, 1, 1.0, "fish")
    assert m["towns_per_capita"] == 6 / 4 and m["rural_per_capita"] == 1.0


def test_memes_over_time_per_town(measured):
    t = measured["r"]["memes"]["over_time"]["Cottage"]
    assert t["garden"] == [(1, 2), (2, 1), (3, 0)]  # goal + line in hour 1, goal in hour 2
    assert t["compost"] == [(1, 1), (2, 0), (3, 1)]
    assert t["fish"] == [(1, 0), (2, 1), (3, 0)]


def test_levels_rise_from_own_speech_never_down(measured):
    d = measured["r"]["doctrines"][0]
    assert d["doctrine"] == "Noodlism" and d["priests"] == [ADA]
    # Isabella said "noodle" (level 1) at tick 100, then "noodle" again: no change; Maria "Noodlist" (2)
    assert d["levels"] == {ISABELLA: 1, MARIA: 2, ADA: 2}
    assert [(x["agent"], x["was"], x["level"]) for x in d["rises"]] == [(ISABELLA, 0, 1), (MARIA, 0, 2)]
    assert d["converts"] == {"indirect": 1, "direct": 1} and d["converts_total"] == 2
    assert d["by_hour"] == [{"hour": 1, "indirect": 1, "direct": 0}, {"hour": 2, "indirect": 1, "direct": 1},
                            {"hour": 3, "indirect": 1, "direct": 1}]
    assert d["converts_by_town"] == {"Cottage": 2} and d["converts_outside_priests_towns"] == 2


def test_exposures_and_the_critical_graph(measured):
    d = measured["r"]["doctrines"][0]
    g = d["graph"]
    # Ada's first line: told Isabella, overheard by Maria (1 tile away; Klaus 3); Isabella's reply:
    # overheard by Maria; Isabella to Maria; Maria's reply: told Isabella, overheard by Klaus (at his
    # tile of tick 450); Ada to Ned. Ada herself is a priest: never exposed.
    assert (d["exposures"], d["overheard"]) == (7, 3)
    assert [(e["from"], e["to"], e["level"], e["how"]) for e in g["critical"]] == [
        (ADA, ISABELLA, 2, "told"), (ADA, MARIA, 2, "overheard")]
    assert (g["critical_edges"], g["noncritical_edges"], g["nodes"]) == (2, 5, 5)
    assert (g["max_depth"], g["mean_depth"]) == (1, 1.0)
    assert g["converts_per_priest"] == {ADA: 2} and g["mean_converts_per_priest"] == 2.0
    assert g["unexposed_converts"] == []


def test_area_of_influence_over_time(measured):
    d = measured["r"]["doctrines"][0]
    # cumulative: the tiles within hearing of every tile where a believer stood at a sampled moment
    # (the start, each hour's end) so far. Radius 2: a 5 x 5 square, cut at the map's edge.
    # Hour 0: Ada at her spawn (28,3): 25. Hour 1: and Ada at (2,3) (25, apart) and Isabella, indirect
    # since tick 100, at (1,2) (20 at the edge, 16 shared with Ada's): indirect 25 + 29, direct 25 + 25.
    # Hour 2: and Maria, direct since tick 500, at (3,2): she adds the column x = 5 (y 0-4) and the
    # row y = 0 (x 4) to the indirect area (+6); to the direct one (Ada's two squares) x = 5 and y = 0
    # (x 1-5): +9. Hour 3: and Ada at the park (11,10), away from all of them: +25 to each.
    assert [a["tiles"] for a in d["area"]] == [[25, 25], [54, 50], [60, 59], [85, 84]]
    assert [a["hour"] for a in d["area"]] == [0, 1, 2, 3]


def test_area_counts_the_union_of_squares_within_the_map():
    assert area([(0, 0)], 1, (10, 10)) == 4
    assert area([(5, 5), (5, 5)], 1, (10, 10)) == 9
    assert area([(5, 5), (6, 5)], 1, (10, 10)) == 12


def test_the_report_has_every_figure(measured, tmp_path):
    out = tmp_path / "report"
    p = cli("eval", "culture", measured["path"], "--json", "--out", out, check=True)
    data = json.loads(p.stdout)
    assert json.loads((out / "report.json").read_text()) == data
    assert data["doctrines"][0]["graph"]["critical_edges"] == 2
    md = (out / "report.md").read_text()
    for part in ("Memes", "Noodlism", "Exposure graph", "Project Sid", "uses per agent"):
        assert part in md
    # Sid's findings beside this save's: rural 1.00 < towns 1.50; converts at 2 h and at the end; the area
    assert "| rural agents use fewer memes per capita than town agents | yes, significantly (Fig. 11B) | " \
           "yes (rural 1.00, towns 1.50) |" in md
    assert "| Noodlism: direct converts keep rising after 2 h | yes, not saturated (Fig. 12B-C) | " \
           "1 at 2 h, 1 at the end (hour 3) |" in md
    assert "yes (25 → 85 tiles, indirect or above)" in md
    plots = {p.name for p in (out / "plots").iterdir()}
    assert {"memes-per-agent.svg", "memes-Cottage.svg", "Noodlism-converts.svg", "Noodlism-area.svg",
            "Noodlism-exposures.svg"} <= plots
    assert "<svg" in (out / "report.html").read_text()
    shown = cli("eval", "culture", measured["path"], check=True).stdout
    assert "Noodlism: converts" in shown and "1 indirect, 1 direct" in shown


def test_a_missing_save_is_refused(tmp_path):
    p = cli("eval", "culture", tmp_path / "none.sqlite")
    assert p.returncode == 2 and "no such save" in p.stderr


def test_the_matrix_culture_measure(measured):
    from smalltown.eval.measures import MEASURES

    m = MEASURES["culture"].fn(measured["path"], None)
    f = m["figures"]
    assert (f["meme uses per agent, towns"], f["meme uses per agent, rural"]) == (1.5, 1.0)
    assert (f["Noodlism: indirect converts"], f["Noodlism: direct converts"]) == (1.0, 1.0)
    assert (f["Noodlism: area, indirect or above (tiles)"], f["Noodlism: area, direct or above (tiles)"]) == (85.0, 84.0)
    assert f["Noodlism: critical exposures"] == 2.0 and f["Noodlism: converts per priest"] == 2.0
    assert m["series"]["Noodlism: direct converts"] == [(1.0, 0.0), (2.0, 1.0), (3.0, 1.0)]
    assert m["series"]["Noodlism: area, indirect or above"] == [(0, 25.0), (1, 54.0), (2, 60.0), (3, 85.0)]


def test_culture_conditions_for_the_matrix():
    from smalltown.eval import EvalError
    from smalltown.eval.conditions import parse_condition

    assert parse_condition("no-priests") == ("no-priests", {"priests": "false"})
    assert parse_condition("no-travel") == ("no-travel", {"travel": "false"})
    assert parse_condition("no-social-awareness") == ("no-social-awareness", {"social_awareness": "false"})
    assert parse_condition("alone=priests=false,travel=false") == ("alone", {"priests": "false", "travel": "false"})
    with pytest.raises(EvalError, match="priests is true or false"):
        parse_condition("x=priests=maybe")


def test_the_world_without_priests(tmp_path):
    from culture_saves import world_text
    from helpers import ROOT
    from smalltown.eval.culture_worlds import world_without_priests
    from smalltown.world.load import load_world

    src = tmp_path / "w" / "culture.toml"
    src.parent.mkdir()
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "tiny.toml").write_text((ROOT / "maps" / "tiny.toml").read_text())
    # the priests as a multi-line array; the map named from the world file's folder ("../maps/tiny.toml")
    src.write_text(world_text().replace('priests = ["Ada Brew"]', 'priests = [\n  "Ada Brew",\n]'))
    path = world_without_priests(src, tmp_path / "out")
    before, after = load_world(src), load_world(path)
    assert before.doctrines[0].priests == (ADA,) and after.doctrines[0].priests == ()
    assert after.doctrines[0].levels == before.doctrines[0].levels
    assert [a.name for a in after.agents] == [a.name for a in before.agents] and after.towns == before.towns
    assert path.parent == tmp_path / "out"


def test_levels_recomputed_from_a_run_equal_the_belief_modules_state(tmp_path):
    """A scripted run of a two-town world with a doctrine (the culture preset): the levels, rises
    and critical exposures eval recomputes from the save's lines equal what the belief module
    kept in each agent's state and said in its "converted" events."""
    from culture_world import culture_world
    from smalltown.state.saved import saved_at

    world, save = culture_world(tmp_path), tmp_path / "towns.sqlite"
    cli("run", world, "-o", save, "--headless", "--until", "+13h", check=True)
    assert saved_at(save)[1].hour == 19
    reader = open_reader(save)
    try:
        s = read_culture(reader)
        states = {a: (reader.agent_state(a).get("modules") or {}).get("belief", {}) for a in s.agents}
        converted = reader.events(kinds=("converted",))
    finally:
        reader.close()
    d = measure_culture(s)["doctrines"][0]
    kept = {a: b["Noodlism"] for a, b in states.items() if b.get("Noodlism", {}).get("level")}
    assert d["converts_total"] >= 3  # (the stand-in's doctrine words spread: else this checks little)
    assert d["levels"] == {a: e["level"] for a, e in kept.items()}
    last = {x["agent"]: x["time"] for x in d["rises"]}
    assert {a: e["since"] for a, e in kept.items() if a not in d["priests"]} == last
    assert [(e.agent, e.data["was"], e.data["level"], e.time) for e in converted] == \
        [(x["agent"], x["was"], x["level"], x["time"]) for x in d["rises"]]
    # the module's critical exposure of each first conversion is eval's critical edge
    module = {e.agent: e.data["exposure"]["from"] for e in converted if e.data["was"] == 0}
    assert module == {e["to"]: e["from"] for e in d["graph"]["critical"]}
    # and the spread the report shows: converts never fall, and the area where the faith is heard grows
    total = [sum(v for k, v in row.items() if k != "hour") for row in d["by_hour"]]
    assert total == sorted(total) and total[-1] > total[0]
    assert d["area"][-1]["tiles"][0] > d["area"][0]["tiles"][0]


def test_a_matrix_with_priests_and_without(tmp_path):
    """`eval matrix` runs the world as it is and its no-priests variant (written into OUT/worlds),
    and the culture measure tells them apart: without priests nobody holds the doctrine at the start."""
    from culture_world import culture_world
    from smalltown.world.load import load_world

    world, out = culture_world(tmp_path), tmp_path / "m"
    r = cli("eval", "matrix", world, "--condition", "with=", "--condition", "no-priests", "--seeds", 1,
            "--until", "+1h", "--measure", "culture", "--jobs", 2, "--json", "--out", out)
    assert r.returncode == 0, r.stderr
    (variant,) = (out / "worlds").iterdir()
    assert load_world(variant).doctrines[0].priests == () and load_world(world).doctrines[0].priests
    data = json.loads(r.stdout)
    assert data["conditions"]["no-priests"] == {"priests": "false"}
    got = {c: data["runs"][c]["1"]["measures"]["culture"] for c in ("with", "no-priests")}
    assert got["with"]["figures"]["Noodlism: converts per priest"] is not None
    assert got["no-priests"]["figures"]["Noodlism: converts per priest"] is None
    assert got["with"]["series"]["Noodlism: area, direct or above"][0][1] > 0
    assert got["no-priests"]["series"]["Noodlism: area, direct or above"][0][1] == 0


def test_odd_rows_are_refused_clearly(tmp_path):
    # a summary whose topics are not topics: the save is refused naming the row, before any measure
    p = cli("eval", "culture", write_culture_save(tmp_path / "odd.sqlite", odd_memes=True))
    assert p.returncode != 0 and "memes row 3: topics: not a list of topics" in p.stderr
    path = write_culture_save(tmp_path / "far.sqlite", settings={"hearing_radius": "far"})
    p = cli("eval", "culture", path)
    assert p.returncode == 2 and "hearing_radius 'far' is not a whole number of tiles" in p.stderr


@pytest.mark.parametrize("world", DOCTRINE_WORLDS)
def test_a_faith_spreads_on_the_bundled_many_town_worlds(world):
    """The stand-in's mechanism on both doctrines' worlds, as eval culture sees it from the save (the
    shared 12-hour runs, tests/culture_runs.py): converts appear and never fall, and the area within
    hearing of the faith grows (tests/test_faith_spread.py checks each level and travel off)."""
    r = culture_measures(world)
    (d,) = r["doctrines"]
    total = [sum(v for k, v in row.items() if k != "hour") for row in d["by_hour"]]
    assert len(total) == 12 and total == sorted(total) and total[-1] >= 2
    assert d["graph"]["critical_edges"] >= 1 and d["priests"]
    assert d["area"][-1]["tiles"][0] > d["area"][0]["tiles"][0]
    assert r["memes"]["memes"] and r["memes"]["towns_per_capita"] is not None
