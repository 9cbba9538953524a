"""Issue 16: the `architecture` setting, a preset of the module switches that a switch the user names
keeps through (world [settings], then `--set`, then a resume), recorded in the save."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from helpers import GULLHAVEN, TINY
from smalltown.config import ARCHITECTURES, CULTURE_MODULES, PIANO_MODULES, Settings, SettingsError
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create, resume
from smalltown.store.save import open_reader
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world


def switches(s: Settings) -> dict[str, bool | float]:
    return {k: getattr(s, k) for k in (*PIANO_MODULES, *CULTURE_MODULES, "reflection", "planning", "attention_minutes",
                                         "reflection_every_minutes")}


def test_each_preset_fills_the_switches_and_the_default_is_todays_mind():
    assert switches(Settings()) == {**ARCHITECTURES["generative_agents"], "planning": True}
    assert Settings().override(architecture="generative_agents").changes() == {}
    piano = Settings().override(architecture="piano")
    assert all(getattr(piano, k) for k in PIANO_MODULES) and piano.reflection and piano.planning
    base = Settings().override(architecture=" baseline ")  # (as `--set` may give it)
    assert not any(getattr(base, k) for k in PIANO_MODULES) and not base.reflection and base.planning
    assert base.changes() == {"architecture": "baseline"}
    assert not any(getattr(piano, k) for k in CULTURE_MODULES)  # the culture preset is piano and these
    culture = Settings().override(architecture="culture")
    assert switches(culture) == {**switches(piano), **{k: True for k in CULTURE_MODULES}}


def test_a_switch_the_user_names_stays_through_a_preset_in_either_order_and_a_save():
    world_first = Settings().override(goal_generation=False).override(architecture="piano")
    set_first = Settings().override(architecture="piano").override(goal_generation="false")
    for s in (world_first, set_first):
        assert not s.goal_generation and s.social_awareness and s.action_awareness
        assert s.changes() == {"architecture": "piano", "goal_generation": False}
    again = Settings().saved(json.loads(json.dumps(set_first.changes())))  # as a save's meta gives it back
    assert again == set_first
    # a resume's --set architecture keeps the switch the save names, fills the others
    base = again.override(architecture="baseline")
    assert not base.goal_generation and not base.social_awareness and not base.reflection
    flipped = Settings().override(architecture="piano", reflection=False)
    assert flipped.social_awareness and not flipped.reflection
    assert flipped.changes() == {"architecture": "piano", "reflection": False}


@pytest.mark.parametrize("value", ["sid", "", "PIANO", 3, True, ["piano"]])
def test_an_unknown_architecture_is_refused_naming_the_setting_and_the_choices(value):
    with pytest.raises(SettingsError, match="setting architecture: .* is not one of generative_agents, piano, "
                                            "baseline, culture"):
        Settings().override(architecture=value)


def test_a_world_file_names_a_bad_architecture_at_its_line(tmp_path):
    text = TINY.read_text().replace('"../maps/tiny.toml"', json.dumps(str(TINY.parent.parent / "maps" / "tiny.toml")))
    assert "[settings]" not in text
    (tmp_path / "w.toml").write_text(text + '\n[settings]\narchitecture = "sid"\n')
    with pytest.raises(WorldError) as e:
        load_world(tmp_path / "w.toml")
    line = len(text.splitlines()) + 3
    assert f"w.toml:{line}" in str(e.value) and "architecture: 'sid' is not one of" in str(e.value)
    (tmp_path / "w.toml").write_text(text + '\n[settings]\narchitecture = "piano"\n')
    assert load_world(tmp_path / "w.toml").settings == {"architecture": "piano"}


@pytest.mark.parametrize("world", [TINY, GULLHAVEN])
def test_a_run_with_a_preset_records_it_and_runs_the_modules_and_a_resume_keeps_them(world, tmp_path):
    w = load_world(world)
    path = tmp_path / "p.sqlite"
    sim = create(w, path, ScriptedBackend(w.seed), sets=["architecture=piano", "commitments=false"])
    try:
        sim.run_until(sim.now + timedelta(hours=2))
        assert sim.save.meta("settings") == {"architecture": "piano", "commitments": False}
    finally:
        sim.close()
    again = resume(path, ScriptedBackend(w.seed))
    try:
        s = again.settings
        assert s.social_awareness and s.controller_broadcast and s.goal_generation and not s.commitments
    finally:
        again.close()
    reader = open_reader(path)
    try:  # the modules ran: the controller decided, goals were set
        assert {"decided", "goal"} <= {e.kind for e in reader.events()}
    finally:
        reader.close()
