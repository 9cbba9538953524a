"""`smalltown eval matrix` (issue 17): conditions × seeds as separate run processes, each its own
save, measured into one report; `run --world-seed` (a run of a world under another seed, kept
in the save); the report's mean and spread on hand-made figures."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path

import pytest

from helpers import ROOT, TINY, cli, save_info
from smalltown.eval import EvalError
from smalltown.eval.conditions import parse_condition
from smalltown.eval.matrix import gather, mean_series, summary
from smalltown.eval.measures import MEASURES, register, run_measure
from smalltown.state.saved import saved_at

LILA = ROOT / "worlds" / "lila.toml"


def _run(world: Path, save: Path, until: str, *extra: object) -> None:
    r = cli("run", "--headless", world, "--until", until, "--backend", "scripted", "--save", save, *extra)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("world", [TINY, LILA], ids=["tiny", "lila"])
def test_a_world_seed_changes_the_run_and_the_save_keeps_it(tmp_path, world):
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        _run(world, tmp_path / f"{name}.sqlite", "+2h", "--world-seed", seed)
    digest = {n: save_info(tmp_path / f"{n}.sqlite")["digest"] for n in "abc"}
    assert digest["a"] == digest["b"] != digest["c"]
    # continued without the flag, a save runs on under its own seed: as one run straight through
    _run(world, tmp_path / "d.sqlite", "+3h", "--world-seed", 8)
    r = cli("run", "--headless", tmp_path / "c.sqlite", "--until", "+1h", "--backend", "scripted")
    assert r.returncode == 0, r.stderr
    assert save_info(tmp_path / "c.sqlite")["digest"] == save_info(tmp_path / "d.sqlite")["digest"]
    r = cli("run", "--headless", tmp_path / "c.sqlite", "--until", "+1h", "--backend", "scripted", "--world-seed", 9)
    assert r.returncode == 2 and "runs under seed 8" in r.stderr


def _matrix(out: Path, world: Path, *conditions: str, until: str = "+3h", seeds=(1, 2), extra=()):
    args = ["eval", "matrix", world, *(a for c in conditions for a in ("--condition", c)),
            "--seeds", *seeds, "--until", until, "--jobs", 2, "--backend", "scripted", "--out", out, *extra]
    return cli(*args)


def test_two_conditions_two_seeds_and_a_bad_one(tmp_path):
    out = tmp_path / "m"
    (out / "runs").mkdir(parents=True)
    # a half-finished run (stopped at +1h) is continued, not started again
    _run(TINY, out / "runs" / "full-s2.sqlite", "+1h", "--world-seed", 2)
    r = _matrix(out, TINY, "full=", "social=social_awareness=true,commitments=true",
                "bad=social_awareness=maybe", extra=["--measure", "run", "--measure", "social"])
    assert r.returncode == 1, r.stderr  # a run failed; the others are measured
    assert "full-s2: started (continued)" in r.stderr
    saves = {(c, s): out / "runs" / f"{c}-s{s}.sqlite" for c in ("full", "social") for s in (1, 2)}
    assert all(p.exists() for p in saves.values())
    assert not (out / "runs" / "bad-s1.sqlite").exists()
    data = json.loads((out / "report.json").read_text())
    for (c, s), path in saves.items():
        run = data["runs"][c][str(s)]
        assert run["measures"]["run"] == json.loads(json.dumps(run_measure(path)))  # the figures of the save
        _, now, start = saved_at(path)
        assert now - start == timedelta(hours=3)  # every run reached the stop time, the continued one too
    for c in ("full", "social"):
        digests = {save_info(saves[(c, s)])["digest"] for s in (1, 2)}
        assert len(digests) == 2, "the seeds' runs differ"
        calls = [data["runs"][c][str(s)]["measures"]["run"]["figures"]["calls per agent-day"] for s in (1, 2)]
        g = data["gathered"][c]["figures"]["run"]["calls per agent-day"]
        assert g["mean"] == pytest.approx(sum(calls) / 2) and g["n"] == 2
    assert data["conditions"]["social"] == {"social_awareness": "true", "commitments": "true"}
    bad = data["runs"]["bad"]
    assert set(bad) == {"1", "2"} and all("social_awareness" in b["error"] for b in bad.values())
    assert "bad-s1: FAILED" in r.stderr
    md = (out / "report.md").read_text()
    assert "Runs that failed" in md and "plots/run-calls-per-agent-hour.svg" in md
    assert (out / "plots" / "run-calls-per-agent-hour.svg").read_text().startswith("<svg")
    # again: the finished runs are reused (their files untouched), the bad ones tried again
    stamps = {p: p.stat().st_mtime_ns for p in saves.values()}
    r = _matrix(out, TINY, "full=", "social=social_awareness=true,commitments=true", "bad=social_awareness=maybe")
    assert r.returncode == 1
    assert r.stderr.count(": reused") == 4 and "bad-s2: started (new)" in r.stderr
    assert {p: p.stat().st_mtime_ns for p in saves.values()} == stamps


def test_a_second_world_and_an_ablation_by_name(tmp_path):
    r = _matrix(tmp_path / "m", LILA, "full", "no-planning", until="+2h", seeds=(3, 4))
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "m" / "report.json").read_text())
    assert data["conditions"]["no-planning"] == {"reflection": "false", "planning": "false"}
    assert set(data["runs"]) == {"full", "no-planning"} and all(
        set(v) == {"3", "4"} for v in data["runs"].values())
    series = data["gathered"]["full"]["series"]["run"]["calls per agent-hour"]
    assert [p[0] for p in series["mean"]] == [1, 2]
    per_seed = [dict(map(tuple, s)) for s in series["seeds"].values()]
    assert series["mean"][0][1] == pytest.approx(sum(s[1] for s in per_seed) / 2)


def test_a_plugged_in_measure_is_taken_and_its_failure_said(tmp_path):
    @register("test-ticks", "a test's own measure")
    def ticks(save, ctx):
        info = save_info(save)
        if "s2" in save.name:
            raise ValueError("no ticks for seed 2")
        return {"figures": {"ticks": info["tick"]}, "series": {}}

    try:
        r = _matrix(tmp_path / "m", TINY, "only=", until="+1h", extra=["--measure", "test-ticks"])
    finally:
        del MEASURES["test-ticks"]
    assert r.returncode == 1 and "measure test-ticks failed" in r.stderr  # said, and the rest reported
    data = json.loads((tmp_path / "m" / "report.json").read_text())
    assert data["runs"]["only"]["1"]["measures"]["test-ticks"]["figures"]["ticks"] == 360  # (+1h of 10-second ticks)
    assert "no ticks for seed 2" in data["runs"]["only"]["2"]["measure_errors"]["test-ticks"]
    assert data["gathered"]["only"]["figures"]["test-ticks"]["ticks"]["n"] == 1


def test_the_report_math_on_hand_made_figures():
    s = summary([1.0, 2.0, 6.0, None])
    assert s["n"] == 3 and s["mean"] == 3.0 and s["min"] == 1.0 and s["max"] == 6.0
    assert s["sd"] == pytest.approx(math.sqrt(((1 - 3) ** 2 + (2 - 3) ** 2 + (6 - 3) ** 2) / 2))
    assert summary([4.0])["sd"] is None and summary([None])["mean"] is None
    assert mean_series([[(1, 2.0), (2, 4.0)], [(1, 4.0)]]) == [(1, 3.0), (2, 4.0)]
    runs = {"a": {1: {"measures": {"m": {"figures": {"x": 1.0, "y": None}, "series": {"s": [(1, 1.0)]}}}},
                  2: {"measures": {"m": {"figures": {"x": 3.0, "y": 5.0}, "series": {"s": [(1, 3.0)]}}}},
                  3: {"error": "exit 1"}}}
    g = gather(runs)["a"]
    assert g["figures"]["m"]["x"]["mean"] == 2.0 and g["figures"]["m"]["x"]["values"] == {1: 1.0, 2: 3.0}
    assert g["figures"]["m"]["y"]["n"] == 1 and g["figures"]["m"]["y"]["mean"] == 5.0
    assert g["series"]["m"]["s"]["mean"] == [(1, 2.0)]


def test_conditions_are_named_as_ablate_names_them_or_by_their_settings():
    assert parse_condition("no-memory")[1] == {"reflection": "false", "planning": "false",
                                               "observation_memory": "false"}
    assert parse_condition("q=social_awareness=false, reflection=false") == (
        "q", {"social_awareness": "false", "reflection": "false"})
    assert parse_condition("plain=") == ("plain", {})
    for bad in ("nosuch", "a/b=x=1", "q=social_awareness", "=x=1"):
        with pytest.raises(EvalError):
            parse_condition(bad)


def test_refused_before_anything_runs(tmp_path):
    r = _matrix(tmp_path / "m", TINY, "a=", "a=reflection=false")
    assert r.returncode == 2 and "one name" in r.stderr
    r = _matrix(tmp_path / "m", TINY, "a=", extra=["--measure", "nosuch"])
    assert r.returncode == 2 and "unknown measure" in r.stderr
    r = _matrix(tmp_path / "m", TINY, "a=", extra=["--seed", "3"])
    assert r.returncode == 2 and "--seeds" in r.stderr
    assert not (tmp_path / "m" / "runs").exists()


def test_a_model_matrix_shares_one_server_stopped_at_the_end(tmp_path):
    """--backend llama: one llama_cpp.server (the tests' tiny random-weight GGUF) for every run."""
    import re
    import urllib.request

    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server extra is not installed")
    pytest.importorskip("gguf", reason="the gguf package writes the tests' tiny model")
    from tinymodel import build_tiny_gguf

    model = build_tiny_gguf(tmp_path / "tiny.gguf")
    # (its tokens are bytes: a window the estimated prompts fit in whole)
    r = cli("eval", "matrix", TINY, "--condition", "a=", "--seeds", 1, 2, "--until", "+1m", "--jobs", 2,
            "--backend", "llama", "--model", model, "--ctx", 8192, "--threads", 1, "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    urls = set(re.findall(r"llama_cpp\.server for tiny at (\S+)", r.stderr))
    assert len(urls) == 1 and r.stderr.count("starting llama_cpp.server") == 1
    for s in (1, 2):
        info = save_info(tmp_path / "m" / "runs" / f"a-s{s}.sqlite")
        assert info["tick"] == 6 and info["backend"] == "openai" and info["model"] == "tiny" and info["llm_calls"]
    with pytest.raises(OSError):  # stopped once the runs were measured
        urllib.request.urlopen(f"{urls.pop()}/models", timeout=2)
