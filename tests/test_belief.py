"""Belief (mind/belief.py, sim/belief.py, scripted/belief.py) on a scripted run of a many-town
Smallville with a doctrine (tests/culture_world.py): priests hold the top level from the start,
lines naming the doctrine are heard (and overheard) as exposures, the stand-in's exposed agents
take the words up and so are converted, levels never fall, and the saved state agrees with the
conversation log read again with the one matcher (world/doctrines.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from culture_world import culture_world
from smalltown.mind import belief
from smalltown.scripted import ScriptedBackend
from smalltown.sim.breakpoints import BREAK_KINDS
from smalltown.sim.open import create
from smalltown.store.save import open_reader
from smalltown.world.doctrines import level_in
from smalltown.world.load import load_world

HOURS = 24


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("belief")
    world = load_world(culture_world(tmp))
    sim = create(world, tmp / "s.sqlite", ScriptedBackend(world.seed), overwrite=True)
    try:
        sim.run_until(world.start + timedelta(hours=HOURS))
    finally:
        sim.close()
    reader = open_reader(tmp / "s.sqlite")
    yield world, reader
    reader.close() if hasattr(reader, "close") else None


def _states(world, reader) -> dict[str, dict]:
    return {n: reader.agent_state(n).get("modules", {}).get("belief", {}) for n in reader.agent_names()}


def test_priests_hold_the_top_level_from_the_start_and_are_never_converted(run):
    world, reader = run
    (d,) = world.doctrines
    states = _states(world, reader)
    for p in d.priests:
        assert states[p][d.name]["level"] == len(d.levels) and states[p][d.name]["since"] == "2023-02-13 06:00:10"
    assert not [e for e in reader.events(kinds=("converted",)) if e.agent in d.priests]


def test_converts_of_both_levels_each_rise_once_per_level_and_never_fall(run):
    world, reader = run
    (d,) = world.doctrines
    converted = reader.events(kinds=("converted",))
    levels: dict[str, int] = {}
    for e in converted:  # oldest first
        assert e.data["doctrine"] == d.name and e.data["level"] > e.data["was"] == levels.get(e.agent, 0)
        levels[e.agent] = e.data["level"]
        name = d.level_names[e.data["level"] - 1]
        assert e.text == f"{e.agent} became {'an' if name[0] in 'aeiou' else 'a'} {name} convert of {d.name}"
    indirect = {a for a, lvl in levels.items() if lvl == 1}
    direct = {e.agent for e in converted if e.data["level"] == 2}
    assert indirect and direct, (indirect, direct)
    # converts by level over time never fall (a count of those at or above each level)
    for top in (1, 2):
        counts = [sum(1 for x in converted[:i + 1] if x.data["level"] >= top) for i in range(len(converted))]
        assert counts == sorted(counts)


def test_the_saved_levels_are_the_conversation_log_read_again(run):
    world, reader = run
    (d,) = world.doctrines
    said: dict[str, int] = {}
    for c in reader.conversations():
        for line in c.lines:
            said[line.speaker] = max(said.get(line.speaker, 0), level_in(d, line.text))
    states = _states(world, reader)
    for name in reader.agent_names():
        saved = states[name].get(d.name, {}).get("level", 0)
        assert saved == (len(d.levels) if name in d.priests else said.get(name, 0)), name


def test_each_conversion_names_a_critical_exposure_heard_before_it(run):
    world, reader = run
    (d,) = world.doctrines
    lines = [(c.tick, x.speaker, level_in(d, x.text)) for c in reader.conversations() for x in c.lines]
    for e in reader.events(kinds=("converted",)):
        x = e.data["exposure"]
        assert x is not None and x["tick"] <= e.tick and x["from"] != e.agent
        assert (x["tick"], x["from"], x["level"]) in lines
        kept = _states(world, reader)[e.agent][d.name]["exposures"]
        assert {"from": x["from"], "tick": x["tick"], "level": x["level"]} in [
            {k: k_ for k, k_ in y.items() if k != "time"} for y in kept]


def test_a_line_is_overheard_within_the_hearing_radius(run):
    """Some exposure came from a speaker who was not talking with the one who heard it."""
    world, reader = run
    pairs = {(c.tick, x.speaker, c.other if x.speaker == c.initiator else c.initiator)
             for c in reader.conversations() for x in c.lines}
    heard = [(y["tick"], y["from"], n) for n, s in _states(world, reader).items() for e in s.values()
             for y in e["exposures"]]
    assert heard and any(h not in pairs for h in heard)


def test_the_panel_shows_the_level_since_when_and_the_exposures(run):
    world, reader = run
    (d,) = world.doctrines
    e = reader.events(kinds=("converted",))[0]
    rows = belief.MODULE.panel.rows(_states(world, reader)[e.agent])
    assert rows[0][0] == d.name and rows[0][1].startswith(f"level {e.data['level']}") and "since" in rows[0][1]
    assert any(f"heard {e.data['exposure']['from']} at level" in text for _, text in rows[1:])
    assert belief.MODULE.panel.rows({}) == [("", "no doctrine heard yet")]


def test_converted_is_a_breakable_event_kind():
    assert "converted" in BREAK_KINDS
