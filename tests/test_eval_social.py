"""`smalltown eval social` (issue 16): the fit and its intervals, the rating task's stand-in, and
a generated town run a day with and without social awareness, measured from its saves."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from helpers import cli
from smalltown.eval.fit import fit, t_quantile
from smalltown.llm.render import render
from smalltown.llm.tasks import PersonaCard, RatePerson
from smalltown.scripted import ScriptedBackend

P = PersonaCard(name="Ann Lee", age=30, traits="shy, kind", description="a baker", home="Rose Cottage")
NOW = datetime(2023, 2, 13, 9)


def rating(**kw) -> int:
    task = RatePerson(persona=P, now=NOW, other="Bob Hall", **kw)
    return ScriptedBackend().answer(task, render(task)).output.rating


# --- the fit -------------------------------------------------------------------------------------


@pytest.mark.parametrize("p, df, table", [(0.975, 10, 2.228), (0.995, 4, 4.604), (0.975, 48, 2.011),
                                          (0.84, 30, 1.011)])
def test_t_quantiles_match_the_tables(p, df, table):
    assert t_quantile(p, df) == pytest.approx(table, abs=2e-3)


def test_a_fit_gives_the_slope_r_and_intervals_that_widen_with_the_level():
    x = [0, 1, 2, 3, 4, 5, 6, 7]
    y = [1.0, 1.4, 2.2, 2.3, 3.1, 3.4, 4.2, 4.4]
    f = fit(x, y)
    assert f.slope == pytest.approx(0.50238, abs=1e-4) and f.r == pytest.approx(0.99255, abs=1e-4)  # numpy polyfit, corrcoef
    widths = [hi - lo for lo, hi in f.slope_ci.values()]
    assert list(f.slope_ci) == ["68%", "95%", "99%"] and widths == sorted(widths) and widths[0] > 0
    lo, hi = f.slope_ci["95%"]
    assert lo < f.slope < hi and f.r_ci["95%"][1] <= 1
    flat = fit(x, [3.0] * 8)
    assert flat.slope == 0 and flat.r is None and flat.r_ci == {}  # no spread in y: r is undefined
    assert fit([1, 1, 1], [1, 2, 3]) is None and fit([1, 2], [1, 2]) is None


# --- the task's stand-in --------------------------------------------------------------------------


def test_the_stand_in_rates_traits_through_its_lexicons():
    assert rating(quality="likeable", traits="warm, generous, patient") == 10
    assert rating(quality="likeable", traits="blunt, stubborn, practical") == 1
    assert rating(quality="likeable", traits="practical, dreamy") == 5
    assert rating(quality="outgoing", traits="talkative, cheerful") == 9
    assert rating(quality="outgoing", traits="shy, reserved, quiet") == 0


def test_an_observers_view_is_its_kept_feeling_never_its_text():
    said = dict(quality="likeable", relationship="I adore Bob; he is the kindest man alive.")
    assert rating(**said, sentiment=3) == 3
    assert rating(**said) == 5  # no feeling kept (social awareness off): neutral, whatever the text says
    assert rating(quality="likeable", relationship="I can't stand Bob.", sentiment=3) == 3


def test_the_prompt_shows_the_text_and_not_the_stand_ins_feeling():
    task = RatePerson(persona=P, now=NOW, other="Bob Hall", quality="likeable", relationship="We get on.",
                      sentiment=9)
    prompt = render(task)
    assert "We get on." in prompt and "Ann Lee" in prompt and "9" not in prompt.split("Example")[1]
    traits = render(RatePerson(persona=P, now=NOW, other="Bob Hall", quality="outgoing", traits="loud"))
    assert '"loud"' in traits and "outgoing Bob Hall" in traits and "a baker" not in traits


# --- a generated town, a day with and without social awareness ----------------------------------


@pytest.fixture(scope="module")
def town(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("social")
    world = d / "w.toml"
    cli("world", "generate", "--agents", 14, "--seed", 4, "--out", world, check=True)
    saves = {}
    for name, on, until in (("with", "true", "+1d"), ("without", "false", "+1d"), ("half", "true", "+12h")):
        saves[name] = d / f"{name}.sqlite"
        cli("run", world, "--headless", "--until", until, "--save", saves[name], "--backend", "scripted",
            "--set", f"social_awareness={on}", check=True)
    return saves


def social(*saves: Path, out: Path | None = None) -> dict:
    args = ["eval", "social", *saves, "--min-observers", 3, "--backend", "scripted", "--json"]
    proc = cli(*args, *(["--out", out] if out else []))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_with_social_awareness_perceived_likeability_follows_the_true_one_more(town, tmp_path):
    both = social(town["with"], town["without"], out=tmp_path / "report")["saves"]
    on, off = both["with"], both["without"]
    assert on["social_awareness"] and not off["social_awareness"]
    assert on["likeability"]["n"] >= 5
    assert on["likeability"]["slope"] > off["likeability"]["slope"]
    assert on["likeability"]["r"] > 0.3
    assert on["asymmetry"]["pairs"] > 0 and off["asymmetry"]["pairs"] == 0
    assert on["pairs"] and on["pairs"][0]["points"][0][1] == 5  # a feeling starts neutral
    report = (tmp_path / "report" / "report.md").read_text()
    assert "Perceived against true likeability" in report and "0.807" in report
    assert {p.name for p in (tmp_path / "report" / "plots").iterdir()} >= {"likeability.svg", "in-degree.svg"}


def test_the_figures_are_the_saves(town):
    """Another save (the same town at noon) gives other figures: they are read, not fixed."""
    day, half = social(town["with"]), social(town["half"])
    assert day["end"] != half["end"]
    assert [a["observers"] for a in day["agents"]] != [a["observers"] for a in half["agents"]]
    assert day["likeability"] != half["likeability"]
    assert sum(a["in_degree"] for a in day["agents"]) > sum(a["in_degree"] for a in half["agents"])


def test_pairs_are_chosen_by_name_and_a_misspelt_one_is_refused(town):
    r = social(town["with"])
    a, b = r["pairs"][0]["agent"], r["pairs"][0]["other"]
    chosen = cli("eval", "social", town["with"], "--pairs", f"{a.lower()}:{b}", "--backend", "scripted", "--json")
    assert chosen.returncode == 0, chosen.stderr
    pairs = json.loads(chosen.stdout)["pairs"]
    assert [(p["agent"], p["other"]) for p in pairs] == [(a, b)] and len(pairs[0]["points"]) > 1
    assert cli("eval", "social", town["with"], "--pairs", f"Nobodyatall:{b}", "--backend", "scripted").returncode == 2


def test_the_lila_curve_kind_rude_kind_from_a_second_world(tmp_path):
    """Sid's Figure 6 on worlds/lila.toml: the listener's feeling toward one who is kind, rude, kind."""
    save = tmp_path / "lila.sqlite"
    cli("run", Path(__file__).resolve().parents[1] / "worlds" / "lila.toml", "--headless", "--until", "+12h",
        "--save", save, "--backend", "scripted", "--set", "social_awareness=true", check=True)
    proc = cli("eval", "social", save, "--pairs", "Nora Vance:Lilah Hart", "nora vance:victor crane",
               "--min-observers", 1, "--backend", "scripted", "--json", "--out", tmp_path / "r")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    lilah, victor = ([v for _, v in p["points"]] for p in r["pairs"])
    assert len(lilah) == 4 and lilah[0] == 5 and lilah[1] > 5 and lilah[2] < lilah[1] and lilah[3] > lilah[2]
    assert victor[0] == 5 and all(v < 5 for v in victor[1:])
    nora = next(a for a in r["agents"] if a["agent"] == "Nora Vance")
    assert nora["in_degree"] >= 3  # the three who came to talk to her
    svg = (tmp_path / "r" / "plots" / "sentiment-lila.svg").read_text()
    assert "Nora Vance → Lilah Hart" in svg
