"""`smalltown eval` as a user runs it: on hand-built saves with known answers, on short scripted
runs, and (once) on the two-day Smallville run the paper measured."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from helpers import TINY, cli, save_info
from handmade import ANN, BOB, CAL, DEE, make_town

def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_json(*args) -> dict:
    proc = cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def without_news(world: Path, to: Path) -> Path:
    """The world file with its [[facts]] and [[gatherings]] left out (a world that declares none)."""
    text = world.read_text().split("# News the town may pass on")[0]
    to.write_text(text.replace("../maps/", str(world.parent.parent / "maps") + "/"))
    return to


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """Three scripted hours of the tiny town, as if its world declared no news."""
    d = tmp_path_factory.mktemp("tiny")
    world = without_news(TINY, d / "tiny-quiet.toml")
    path = d / "tiny.sqlite"
    cli("run", world, "--headless", "--until", "+3h", "--save", path, "--backend", "scripted", check=True)
    return path


def test_town_measures_of_a_hand_built_save(tmp_path):
    r = run_json("eval", "town", make_town(tmp_path))
    party, candidacy = r["diffusion"]
    assert (party["start"], party["end"], party["never"]) == ([ANN], [ANN, CAL, DEE], [BOB])
    assert [(l["agent"], l["how"], l["from"]) for l in party["learned"]] == [
        (ANN, "start", None), (CAL, "told", ANN), (DEE, "saw", CAL)]
    assert (candidacy["start"], candidacy["end"]) == ([CAL], [CAL, ANN])  # in the order they learned it
    rel = r["relationships"]
    assert (rel["density_start"], rel["density_end"]) == (round(1 / 6, 4), round(1 / 3, 4))
    (party_turnout,) = r["coordination"]
    assert (party_turnout["invited"], party_turnout["attended"], party_turnout["came"]) == (
        [CAL, DEE], [ANN, CAL], [CAL])
    assert r["asked"] is False and r["notes"] == []


def test_asking_and_interviewing_leave_the_save_unchanged(tmp_path):
    path = make_town(tmp_path)
    digest, before = save_info(path)["digest"], sha(path)
    town = run_json("eval", "town", path, "--ask", "--backend", "scripted", "--copy", tmp_path / "kept.sqlite")
    iv = run_json("eval", "interview", path, "--agents", "cal,Dee", "--conditions", "full,no-memory",
                  "--backend", "scripted")
    assert sha(path) == before and save_info(path)["digest"] == digest
    assert town["asked"] and town["diffusion"][0]["interviews"]["knew"] >= 1
    assert town["relationships"]["interviews"]["asked"] == 12
    kept = save_info(tmp_path / "kept.sqlite")
    assert kept["llm_calls"] > save_info(path)["llm_calls"]  # the copy logged eval's model calls
    assert [a["agent"] for a in iv["agents"]] == [CAL, DEE] and iv["conditions"] == ["full", "no-memory"]
    for a in iv["agents"]:
        assert len(a["answers"]) == 25
        assert all(row["by_condition"]["no-memory"]["memories"] == [] for row in a["answers"])
    cal = iv["agents"][0]["answers"]
    assert cal[5]["question"] == "Who is Ann Lee?"  # someone Cal met, from memory


def test_report_files_open_and_carry_their_plots(tmp_path, tiny_run):
    out = tmp_path / "report"
    proc = cli("eval", "town", tiny_run, "--facts", TINY, "--out", out)  # the news it declares
    assert proc.returncode == 0, proc.stderr
    assert "diffusion: party" in proc.stdout and "relationship density" in proc.stdout
    html = (out / "report.html").read_text()
    assert html.count("<svg") == 3 and "<img" not in html  # diffusion, spread, relationships: inline
    md = (out / "report.md").read_text()
    for name in ("diffusion", "spread-party", "relationships"):
        assert f"(plots/{name}.svg)" in md
        assert (out / "plots" / f"{name}.svg").read_text().startswith("<svg")
    data = json.loads((out / "report.json").read_text())
    assert data["diffusion"][0]["start"] == ["Isabella Rodriguez"]


def test_a_save_without_facts_still_measures_relationships(tiny_run):
    r = run_json("eval", "town", tiny_run)
    assert r["diffusion"] == [] and r["coordination"] == []
    assert r["relationships"]["pairs"] == 6
    assert "declares no facts" in r["notes"][0] and "--facts" in r["notes"][0]


@pytest.mark.parametrize("args, message", [
    (["interview", "{save}", "--conditions", "full,no-dreams"], "unknown condition(s): no-dreams"),
    (["town", "{dir}/missing.sqlite"], "missing.sqlite: no such save"),
    (["town", "{world}"], "not a smalltown save"),
    (["town", "{save}", "--copy", "{save}"], "--copy must name another file"),
    (["town", "{save}", "--copy", "{world}"], "town.toml: a file is already there"),
])
def test_bad_input_is_named(tmp_path, args, message):
    save = make_town(tmp_path)
    fill = {"save": str(save), "dir": str(tmp_path), "world": str(tmp_path / "town.toml")}
    proc = cli("eval", *(a.format(**fill) for a in args))
    assert proc.returncode == 2
    assert message in proc.stderr, proc.stderr


def test_ablate_runs_each_condition_with_its_settings(tmp_path):
    out = tmp_path / "ablate"
    r = run_json("eval", "ablate", TINY, "--until", "+1h", "--conditions", "full,no-memory", "--out", out,
                 "--backend", "scripted")
    assert list(r["conditions"]) == ["full", "no-memory"]
    full, none = (save_info(out / f"{c}.sqlite") for c in ("full", "no-memory"))
    assert full["game_time"] == none["game_time"] == "2023-02-13 07:00:00"
    assert full["memories"] > none["memories"]  # no observations are kept without observation memory
    assert (out / "report.html").exists()
    again = cli("eval", "ablate", TINY, "--until", "+1h", "--conditions", "full", "--out", out)
    assert again.returncode == 2 and "--overwrite" in again.stderr


# --- the paper's run: Smallville, two game days (about 30 s, shared by the assertions below) ---------


@pytest.fixture(scope="module")
def smallville_report(tmp_path_factory, smallville_two_days) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("smallville-report") / "report"
    return run_json("eval", "town", smallville_two_days, "--out", out), out


def test_two_days_of_smallville(smallville_report):
    r, out = smallville_report
    facts = {d["fact"]: d for d in r["diffusion"]}
    assert sorted(facts["party"]["start"]) == ["Isabella Rodriguez"]
    assert sorted(facts["candidacy"]["start"]) == ["Jennifer Moore", "Sam Moore"]
    for d in facts.values():  # both spread, each learner traced to how it learned
        assert len(d["end"]) > len(d["start"])
        assert all(l["how"] in ("start", "told", "saw", "inner voice", "own") for l in d["learned"])
        assert any(l["how"] == "told" and l["from"] in r["agents"] for l in d["learned"])
    rel = r["relationships"]
    assert 0 < rel["density_start"] < rel["density_end"] <= 1
    (party,) = r["coordination"]
    assert party["attended"] and set(party["came"]) <= set(party["invited"]) <= set(r["agents"])
    assert "Isabella Rodriguez" in party["attended"]
    html = (out / "report.html").read_text()
    assert html.count("<svg") == 4  # diffusion, two spread graphs, relationships
