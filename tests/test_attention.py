"""Attention (setting `attention_minutes`, mind/react.py `attending`): having weighed a person it
saw, an agent weighs no other person for that many game minutes, so walking through a crowd is not
a question per face. Not held back: an unusual object (a burning stove) and an influencer still
campaigning to the one it sees. From the saves' call logs, on the market town, Smallville and the
30-agent role world with a [civics]; off (0, the default) the run is as before, byte for byte."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from helpers import ROOT, SMALLVILLE, TINY, civics_table, query
from piano_worlds import scripted_digest
from smalltown.config import Settings, SettingsError
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create, resume
from smalltown.sim.shapes import state_problem
from smalltown.store.save import open_reader
from smalltown.world.load import load_world, load_world_text

MARKET = ROOT / "worlds" / "market.toml"
WINDOW = timedelta(minutes=5)
# (world, hours, the digest of the run without the setting: as before attention existed, but for
# the calls each action names, added since, and Smallville's outgoing agents starting more talks
# since the stand-in's chance to talk follows the speaker's extroversion: was "036a533e"; the
# market's since a decomposition's trade partners are read as the last tick ended: was "7076b8e9")
RUNS = {"market": (MARKET, 8, "f916887a"), "smallville": (SMALLVILLE, 4, "7db2822c")}


def person_questions(path: Path) -> dict[str, list[tuple[datetime, bool]]]:
    """Each agent's react questions about a person, in order: (game time, asked as a campaigning
    influencer). A question is about a person when its prompt has the last-talk line only those
    have; a campaigning one carries the influencer's aim (llm/render_talk.py)."""
    reader = open_reader(path)
    try:
        out: dict[str, list[tuple[datetime, bool]]] = {}
        for c in sorted(reader.calls(task="react", limit=None), key=lambda c: c.id):
            prompt = reader.call_detail(c.id)["prompt"]
            if "Last conversation with " in prompt:
                out.setdefault(c.agent, []).append((datetime.fromisoformat(c.time), "seeks people out" in prompt))
        return out
    finally:
        reader.close()


def too_soon(asked: dict[str, list[tuple[datetime, bool]]]) -> list[tuple[str, datetime, bool]]:
    """The person questions asked within the window of the same agent's previous one."""
    return [(name, t, campaigning) for name, qs in asked.items()
            for (prev, _), (t, campaigning) in zip(qs, qs[1:]) if t - prev < WINDOW]


def test_the_presets_fill_it_and_a_value_the_user_names_wins():
    assert Settings().attention_minutes == 0
    assert Settings().override(architecture="piano").attention_minutes == 5
    assert Settings().override(architecture="baseline").attention_minutes == 5
    assert Settings().override(architecture="piano").changes() == {"architecture": "piano"}
    for s in (Settings().override(attention_minutes="2").override(architecture="piano"),
              Settings().override(architecture="piano").override(attention_minutes=2)):
        assert s.attention_minutes == 2.0 and s.social_awareness
        assert s.changes() == {"architecture": "piano", "attention_minutes": 2.0}
    off = Settings().override(architecture="piano", attention_minutes=0)  # Sid's mind weighing every face
    assert off.changes() == {"architecture": "piano", "attention_minutes": 0.0}
    again = Settings().saved(json.loads(json.dumps(off.changes())))  # as a save gives it back
    assert again == off and again.override(architecture="baseline").attention_minutes == 0
    for bad in ("-1", "1441", "nan", "soon"):
        with pytest.raises(SettingsError, match="setting attention_minutes"):
            Settings().override(attention_minutes=bad)


def test_a_worlds_setting_wins_over_the_preset_given_on_the_command_line(tmp_path):
    text = MARKET.read_text().replace('map = "../maps/', f'map = "{ROOT / "maps"}/')
    (tmp_path / "w.toml").write_text(text + "\n[settings]\nattention_minutes = 2\n")
    world = load_world(tmp_path / "w.toml")
    sim = create(world, tmp_path / "w.sqlite", ScriptedBackend(world.seed), sets=["architecture=piano"])
    try:
        assert sim.settings.attention_minutes == 2 and sim.settings.goal_generation
        assert sim.save.meta("settings") == {"architecture": "piano", "attention_minutes": 2.0}
    finally:
        sim.close()


@pytest.mark.parametrize("name", RUNS)
def test_no_agent_weighs_two_people_within_the_window_and_off_the_run_is_as_before(name, tmp_path):
    world_path, hours, before = RUNS[name]
    world = load_world(world_path)
    assert scripted_digest(world, tmp_path / "off.sqlite", hours, []).startswith(before)
    off = person_questions(tmp_path / "off.sqlite")
    assert too_soon(off)  # the crowd: faces weighed one after another
    scripted_digest(world, tmp_path / "on.sqlite", hours, ["attention_minutes=5"])
    on = person_questions(tmp_path / "on.sqlite")
    assert sum(map(len, on.values())) >= 10 and too_soon(on) == []
    assert any("weighed" in json.loads(s) for (s,) in _states(tmp_path / "on.sqlite"))
    assert not any("weighed" in json.loads(s) for (s,) in _states(tmp_path / "off.sqlite"))


def _states(path: Path) -> list[tuple[str]]:
    return query(path, "SELECT state FROM agents")


def test_an_influencer_still_campaigning_seeks_people_out_through_the_window(tmp_path):
    """The role world with a [civics] (three anti-tax influencers): within the window only an
    influencer's campaigning questions are asked; without attention constituents ask them too."""
    timeline = ("timeline = {season_every = 60, window = 20, feedback = 300, amendments = 320, vote = 340, "
                "tally = 360, in_force = 400, end = 700}\n")
    text = (ROOT / "worlds" / "roles.toml").read_text() + civics_table(
        ["Otis Ashdown", "Quill Hollis", "Rhona Eskew"], "Xavi Kestrel", "persuasion_step = 5\n" + timeline)
    m = ROOT / "maps" / "roles.toml"
    world = load_world_text("roles.toml", text, m.name, m.read_text())
    scripted_digest(world, tmp_path / "off.sqlite", 6, [])
    assert any(not campaigning for _, _, campaigning in too_soon(person_questions(tmp_path / "off.sqlite")))
    scripted_digest(world, tmp_path / "on.sqlite", 6, ["attention_minutes=5"])
    soon = too_soon(person_questions(tmp_path / "on.sqlite"))
    assert soon and all(campaigning for _, _, campaigning in soon), soon
    assert {name for name, _, _ in soon} <= {"Otis Ashdown", "Quill Hollis", "Rhona Eskew"}


def test_a_run_resumed_inside_the_window_is_the_straight_run(tmp_path):
    world = load_world(MARKET)
    sets = ["attention_minutes=5"]
    straight = scripted_digest(world, tmp_path / "straight.sqlite", 8, sets)
    path = tmp_path / "cut.sqlite"
    sim = create(world, path, ScriptedBackend(world.seed), sets=sets)
    end = sim.now + timedelta(hours=8)
    try:
        sim.run_until(end, stop=lambda: any(a.mind.state.weighed for a in sim.agents))
        cut = sim.now
        weighed = {a.name: a.mind.state.weighed for a in sim.agents if a.mind.state.weighed}
        assert weighed and all(cut - t < WINDOW for t in weighed.values())  # stopped inside the window
    finally:
        sim.close()
    again = resume(path, ScriptedBackend(world.seed))
    try:
        assert {a.name: a.mind.state.weighed for a in again.agents if a.mind.state.weighed} == weighed
        again.run_until(end)
        assert again.save.digest() == straight
    finally:
        again.close()


def test_a_burning_stove_is_still_weighed_by_one_who_just_weighed_someone(tmp_path):
    world = load_world(TINY)
    sim = create(world, tmp_path / "t.sqlite", ScriptedBackend(world.seed), sets=["attention_minutes=5"])
    stove = "Willow Cottage:kitchen:stove"
    kitchen = world.arena("Willow Cottage:kitchen").index
    try:
        for _ in range(2000):  # until someone is in the kitchen, awake
            sim.step()
            if any(a.arena == kitchen and not a.asleep and not a.path for a in sim.agents):
                break
        sim.edit_object(stove, "burning")
        events = []
        for _ in range(30):
            for a in sim.agents:  # every one has always just weighed a person
                a.mind.state.weighed = sim.now
            events += sim.step()
        assert any(e.kind == "reacted" and e.data["observed"] == stove for e in events)
    finally:
        sim.close()


def test_a_strangers_save_with_a_bad_time_is_refused_naming_the_field():
    assert state_problem('{"weighed": "2023-02-13 07:00:00"}') is None
    assert state_problem('{"weighed": "after lunch"}').startswith("weighed:")
    assert state_problem('{"weighed": 5}').startswith("weighed:")
