"""Influence that spreads (issue 17; Project Sid §5.2, Appendix D): the talk questions of a world
with civics carry the constitution in force and an influencer's beliefs (a constituent's react
question, whether to stop for someone, does not), an influencer's react question is `persuading`
(so it starts talks) until the vote, with each person once per constitution version, and a talk with an influencer moves a listener's
desired rate by the world's typed `persuasion_step` toward its side. From the saves, via
`eval civics`: anti-tax influencers lower the voted rate and the deposits after the vote, pro-tax
ones raise them, a frozen constitution keeps both; influencers start more talks than constituents.
On the market town and on the 30-agent role world, each given a [civics] here with a short
timeline (Sid's 1200 s cut to 700, the feedback at 300 as his, at civics_scale 60: 20-minute
tax windows)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from fakes import Asking
from helpers import ROOT, civics_table
from smalltown.eval.civics import measure_civics, read_civics
from smalltown.llm.render import render
from smalltown.llm.tasks import React, Utterance
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.store.save import open_reader
from smalltown.world.load import load_world_text

TIMELINE = "timeline = {season_every = 60, window = 20, feedback = 300, amendments = 320, vote = 340, tally = 360, in_force = 400, end = 700}\n"
WORLDS = {  # world -> (influencers, the manager of the vote)
    "market": (["Ivo Ferrow", "Ysolde Thorsby"], "Lio Corwin"),
    "roles": (["Otis Ashdown", "Quill Hollis", "Rhona Eskew"], "Xavi Kestrel"),
}
HOURS = 12  # the timeline's 700 s at 60 game seconds each, and a little more


def _world(name: str, step: int = 5):
    influencers, manager = WORLDS[name]
    text = (ROOT / "worlds" / f"{name}.toml").read_text()
    text += civics_table(influencers, manager, f"persuasion_step = {step}\n" + TIMELINE)
    m = ROOT / "maps" / f"{name}.toml"
    return load_world_text(f"{name}.toml", text, m.name, m.read_text())


def _run(path: Path, name: str, sets: list[str], hours: float = HOURS, backend=None, step: int = 5):
    world = _world(name, step)
    sim = create(world, path, backend or ScriptedBackend(world.seed), overwrite=True,
                 sets=["architecture=piano", "civics_scale=60", *sets])
    try:
        sim.run_until(world.start + timedelta(hours=hours))
    finally:
        sim.close()


def _measure(path: Path) -> tuple[dict, Counter]:
    reader = open_reader(path)
    try:
        return measure_civics(read_civics(reader, str(path))), Counter(c.initiator for c in reader.conversations())
    finally:
        reader.close()


@pytest.mark.parametrize("name", ["market", "roles"])
def test_influencers_move_the_vote_and_the_deposits_their_way(tmp_path, name):
    got = {}
    for label, sets in (("anti", ["influencer_side=anti"]), ("pro", ["influencer_side=pro"]),
                        ("frozen", ["influencer_side=anti", "constitution_frozen=true"])):
        _run(tmp_path / f"{label}.sqlite", name, sets)
        got[label] = _measure(tmp_path / f"{label}.sqlite")
    (anti, talks), (pro, _), (frozen, _) = got["anti"], got["pro"], got["frozen"]
    influencers, manager = WORLDS[name]
    assert sorted(anti["influencers"]) == sorted(influencers) and anti["election_manager"] == manager
    assert manager not in anti["constituents"] and not set(influencers) & set(anti["constituents"])
    assert anti["influencer_side"] == "anti" and pro["influencer_side"] == "pro"
    # the vote: down with anti-tax influencers, up with pro-tax ones; frozen keeps version 1
    assert anti["voted_rate"] < 20 < pro["voted_rate"]
    assert frozen["voted_rate"] is None and {s["rate"] for s in frozen["seasons"]} == {20}
    assert {s["rate"] for s in anti["seasons"] if s["after"]} == {anti["voted_rate"]}
    # what constituents deposit after the vote follows it: less than before under anti-tax influence,
    # less than under pro-tax influence, the frozen constitution's in between (the same seasons; a
    # share of what they held, as the runs' holdings part ways once the rates differ)
    after = {k: sum(s["deposited"] for s in r["seasons"] if s["after"]) / sum(s["held"] for s in r["seasons"] if s["after"])
             for k, r in (("anti", anti), ("pro", pro), ("frozen", frozen))}
    assert after["anti"] < after["frozen"] < after["pro"]
    assert anti["after"]["mean"] < anti["before"]["mean"] and anti["after"]["mean"] < pro["after"]["mean"]
    # influencers seek people out: each starts more talks than the constituents do on average
    per_constituent = sum(talks[a] for a in anti["constituents"]) / len(anti["constituents"])
    assert min(talks[a] for a in influencers) > per_constituent
    # the stances that formed came from talks with an influencer, each a step toward its side
    moved = [s for trail in anti["stances"].values() for s in trail]
    assert moved and all(s["other"] in influencers and s["value"] < (s["previous"] or 20) for s in moved)


def test_the_step_is_the_worlds_and_none_moves_nobody(tmp_path):
    _run(tmp_path / "s0.sqlite", "market", ["influencer_side=anti"], hours=2, step=0)
    _run(tmp_path / "s10.sqlite", "market", ["influencer_side=anti"], hours=2, step=10)
    zero, _ = _measure(tmp_path / "s0.sqlite")
    ten, _ = _measure(tmp_path / "s10.sqlite")
    assert all(s["value"] == 20 for trail in zero["stances"].values() for s in trail)
    values = [s["value"] for trail in ten["stances"].values() for s in trail]
    assert values and min(values) == 10  # one talk: 20 -> 10, never past what the side wants (10)


@pytest.mark.parametrize("name", ["market", "roles"])
def test_talk_questions_carry_the_constitution_and_an_influencers_beliefs(tmp_path, name):
    world = _world(name)
    backend = Asking(world.seed)
    _run(tmp_path / "t.sqlite", name, ["influencer_side=pro"], backend=backend)  # past the vote
    influencers, _ = WORLDS[name]
    stance = world.civics.stance("pro")
    vote = world.start + timedelta(seconds=340 * 60)  # the timeline's vote at civics_scale 60
    reacts = [t for t in backend.tasks if isinstance(t, React) and t.observed_is_agent]
    lines = [t for t in backend.tasks if isinstance(t, Utterance)]
    assert reacts and lines
    for t in lines:
        mine = t.persona.name in influencers
        assert t.constitution == world.civics.constitution or t.now >= vote  # (then the version voted)
        assert t.constitution and t.stance_text == (stance if mine else "")
        assert "The town's constitution in force" in render(t) and (stance in render(t)) == mine
    # an influencer seeks out each person once (no talk with them since version 1 began, at the start)
    # until the vote; every other react question (whether to stop for someone) carries no law
    for t in reacts:
        campaigning = (t.persona.name in influencers and t.now < vote
                       and (t.last_talk is None or t.last_talk.time < world.start))
        assert t.persuading == campaigning, (t.persona.name, t.observed, t.now, t.last_talk)
        if campaigning:
            assert t.constitution == world.civics.constitution and t.stance_text == stance
            assert "The town's constitution in force" in render(t) and stance in render(t)
        else:
            assert t.constitution == t.stance_text == "" and "The town's constitution in force" not in render(t)
    mine = [t for t in reacts if t.persona.name in influencers]
    assert {t.persuading for t in mine} == {True, False}  # (both cases were asked)
    assert [t for t in mine if t.now >= vote]
    assert [t for t in mine if t.last_talk and t.now < vote] or name == "market"  # (its few meet again after)


@pytest.mark.parametrize("name,talks", [("market", False), ("roles", True)])  # (the market's people seldom talk)
def test_without_civics_the_talk_questions_are_as_before(tmp_path, name, talks):
    m = ROOT / "maps" / f"{name}.toml"
    world = load_world_text(f"{name}.toml", (ROOT / "worlds" / f"{name}.toml").read_text(), m.name, m.read_text())
    backend = Asking(world.seed)
    sim = create(world, tmp_path / "plain.sqlite", backend, overwrite=True, sets=["architecture=piano"])
    try:
        sim.run_until(world.start + timedelta(hours=12))
    finally:
        sim.close()
    assert any(isinstance(t, React) for t in backend.tasks)
    assert any(isinstance(t, Utterance) for t in backend.tasks) == talks
    for t in backend.tasks:  # the fields are left out of the question (its key, a cassette's) and its prompt
        assert not {"constitution", "stance_text", "persuading"} & set(json.loads(t.model_dump_json()))
        assert "constitution" not in render(t) and not getattr(t, "persuading", False)
