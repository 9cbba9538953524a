"""Two game days, scripted, of two towns: Smallville (the paper's) and Gullhaven (one no code
names). Checked on the saves: the architecture leaves every kind of record, the town is
plausible to watch (no action restarted over and over, no object that contradicts its action,
no news told twice to the same listener in a day, no one speaking of itself in the third person),
every prompt fit its window, and each town's own news spreads and its gathering happens."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from helpers import cli
from smalltown.eval.behaviour import Started, Told, mismatched, most_common_line, repeats, self_named, told_twice

TIME = "%Y-%m-%d %H:%M:%S"


@pytest.fixture(scope="module", params=["smallville", "gullhaven"])
def town(request):
    path: Path = request.getfixturevalue(f"{request.param}_two_days")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    yield request.param, path, conn
    conn.close()


def started(conn) -> list[Started]:
    return [Started(agent, datetime.strptime(t, TIME), d["activity"], d.get("address") or "")
            for agent, t, d in ((a, t, json.loads(d)) for a, t, d in
                                conn.execute("select agent, time, data from events where kind='started' order by id"))]


def test_every_agent_reflects_plans_at_three_levels_and_talks(town):
    _, _, conn = town
    agents = {a for (a,) in conn.execute("select name from agents")}
    reflected = {a for (a,) in conn.execute("select distinct agent from memories where kind='reflection' "
                                            "and evidence != '[]'")}
    assert reflected == agents
    for agent in agents:
        plans = [d for (d,) in conn.execute("select description from memories where agent=? and kind='plan'", (agent,))]
        assert any("'s plan for" in p for p in plans) and any("'s schedule for" in p for p in plans), agent
        assert any(p.startswith("From ") for p in plans), agent
    talks = conn.execute("select count(*) from conversations").fetchone()[0]
    assert talks >= 10


def test_no_agent_restarts_its_actions_over_the_day(town):
    """At most 10% of an agent's non-talk actions in a day repeat an earlier one of that day."""
    _, _, conn = town
    per_day = repeats(started(conn))
    worst = max(per_day.items(), key=lambda kv: kv[1].share)
    assert worst[1].share <= 0.10, f"{worst[0]}: {worst[1].repeated} of {worst[1].actions} actions repeat"
    last = max(day for _, day in per_day)  # the run ends just after midnight: that day has hardly begun
    assert all(r.actions >= 15 for (_, day), r in per_day.items() if day != last)  # days full of actions


def test_no_object_contradicts_its_action(town):
    """Sleeping only at beds, showering only at showers, the toilet at a toilet, making the bed at
    a bed."""
    _, _, conn = town
    acts = started(conn)
    assert sum(1 for s in acts if s.activity == "sleeping") >= 2 * 10  # a night (or two) each
    assert mismatched(acts) == []


def test_no_fact_is_told_to_the_same_listener_twice_a_day(town):
    _, _, conn = town
    told = [Told(datetime.strptime(t, TIME), x["speaker"], other if x["speaker"] == ini else ini, f)
            for t, ini, other, lines in conn.execute("select time, initiator, other, lines from conversations")
            for x in json.loads(lines) for f in x["facts"]]
    assert len(told) >= 10  # news was told
    assert told_twice(told) == []


def test_no_one_names_itself_in_its_own_line_and_the_talk_varies(town):
    _, _, conn = town
    lines = [(x["speaker"], x["text"]) for (ls,) in conn.execute("select lines from conversations")
             for x in json.loads(ls)]
    assert len(lines) >= 40
    assert self_named(lines) == []
    text, share = most_common_line(lines)
    assert share < 0.05, (text, share)  # no line makes up more than a few percent of the talk
    # each speaks in the first person of itself (its own name, or its first name as the subject)
    firsts = [(who, t) for who, t in lines if t.startswith(who.split()[0] + " is ")]
    assert firsts == []


def test_every_prompt_fit_its_window_and_nothing_fell_back(town):
    _, path, conn = town
    notes = Counter(n for (n,) in conn.execute("select fallback from llm_calls"))
    assert set(notes) == {""}, notes  # the scripted run: no prompt too long, nothing answered elsewhere
    info = json.loads(cli("save", "info", path, "--json", check=True).stdout)
    assert info["calls"]["too_long"] == 0 and info["calls"]["fallbacks"] == 0


def test_the_towns_news_spreads_and_its_gathering_happens(town, tmp_path):
    name, path, _ = town
    r = json.loads(cli("eval", "town", path, "--json", check=True).stdout)
    for d in r["diffusion"]:
        told = [l for l in d["learned"] if l["how"] == "told"]
        assert len(d["end"]) >= len(d["start"]) + 3, (d["fact"], d["end"])  # it spread, by being told
        assert len(told) >= 3 and all(l["from"] in r["agents"] for l in told)
        assert d["share_end"] < 1.0 or len(r["agents"]) < 15  # plausibly: not to everyone in a big town
    assert r["relationships"]["density_end"] > r["relationships"]["density_start"]
    for g in r["coordination"]:
        assert g["host"] in g["attended"]  # the host hosted it
        assert len(g["came"]) >= 3, g  # and some of those who knew came
        assert set(g["came"]) <= set(g["planned"]) | {g["host"]} | set(g["attended"])
