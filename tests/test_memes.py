"""Memes (mind/memes.py, sim/memes.py, scripted/memes.py): one meme summary per town and the rural
area each `meme_every_minutes`, asked by the town (the call log's "town <name>" / "rural area"),
never per agent; the stand-in's topics from the goals' typed needs, with keywords its own goals
use; with the culture modules on in a world without doctrines the town is the same (digest)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import pytest

from culture_world import culture_world
from helpers import TINY
from smalltown.config import Settings
from smalltown.llm.render import render
from smalltown.llm.tasks import PersonaCard
from smalltown.llm.tasks.memes import MAX_TOPICS, MemeSummary, MemeSummaryOut, Topic, TownGoal
from smalltown.mind import memes
from smalltown.scripted import ScriptedBackend
from smalltown.scripted.goals import PHRASES
from smalltown.scripted.memes import KEYWORDS, meme_summary
from smalltown.sim.open import create
from smalltown.store.save import open_reader
from smalltown.world.doctrines import keywords_in
from smalltown.world.load import load_world

NOW = datetime(2023, 2, 13, 9)
CARD = PersonaCard(name="town A", age=0, traits="", description="", home="A")


def _run(world, path, hours: float, settings: Settings | None = None):
    sim = create(world, path, ScriptedBackend(world.seed), overwrite=True, **({"settings": settings} if settings else {}))
    try:
        sim.run_until(world.start + timedelta(hours=hours))
    finally:
        sim.close()
    return open_reader(path)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("memes")
    world = load_world(culture_world(tmp))
    return world, _run(world, tmp / "s.sqlite", 5.5)


def test_one_summary_per_town_and_the_rural_area_each_period(run):
    world, reader = run
    rows = reader.memes()
    by_time = Counter(r.time for r in rows)
    assert sorted(by_time) == [f"2023-02-13 {h:02d}:00:00" for h in range(7, 12)]
    places = {"West End", "College Hill", ""}
    for t in sorted(by_time)[1:]:  # (the first hour: the rural people had no goal yet, and were not asked)
        assert {r.town for r in rows if r.time == t} == places
    assert all(len(r.topics) <= MAX_TOPICS and all(t["keywords"] for t in r.topics) for r in rows)
    assert any(r.topics for r in rows if r.town == "West End")


def test_the_summary_is_one_call_per_town_not_per_agent(run):
    world, reader = run
    agents = Counter(c.agent for c in reader.calls(task="meme_summary", limit=None))
    assert agents == Counter(memes.asker(r.town) for r in reader.memes())
    assert set(agents) <= {"town West End", "town College Hill", "rural area"}
    assert sum(agents.values()) == len(reader.memes())
    keys = {k for k, in reader.conn.execute("SELECT key FROM llm_calls WHERE task = 'meme_summary'")}
    assert {r.call for r in reader.memes()} == keys


def test_the_stand_in_counts_typed_needs_and_names_its_own_goals_words():
    goals = [TownGoal(agent=f"P{i}", goal="(text the stand-in never reads)", need=n)
             for i, n in enumerate(["food", "company", "food", "tools", "company", "food", "water"])]
    out = meme_summary(MemeSummary(persona=CARD, now=NOW, town="A", goals=goals))
    assert [t.topic for t in out.topics] == ["food", "company"]  # shared by two or more, most common first
    lone = meme_summary(MemeSummary(persona=CARD, now=NOW, town="A", goals=goals[-1:]))
    assert [t.topic for t in lone.topics] == ["water"]
    assert meme_summary(MemeSummary(persona=CARD, now=NOW, town="A", goals=[])).topics == []
    for need, words in KEYWORDS.items():  # a meme it names is found in the goal it writes for the need
        assert keywords_in(words, PHRASES[need]) == list(words), need


def test_the_answer_kept_is_stripped_and_its_lists_capped():
    out = MemeSummaryOut(topics=[Topic(topic=" eco ", keywords=["eco", " eco", "garden "]), Topic(topic="x", keywords=[" ", ","]), Topic(topic="ECO", keywords=["x"])])
    assert memes.topics(out) == [{"topic": "eco", "keywords": ["eco", "garden"]}]
    schema = MemeSummary(persona=CARD, now=NOW, town="A").schema()
    assert schema["properties"]["topics"]["maxItems"] == MAX_TOPICS


def test_the_prompt_shows_the_towns_goals():
    task = MemeSummary(persona=CARD, now=NOW, town="Woodhaven",
                       goals=[TownGoal(agent="Ana Cole", goal="plant an eco garden", need="food")])
    text = render(task)
    assert "in Woodhaven" in text and 'Ana Cole: "plant an eco garden"' in text and "$" not in text
    rural = render(task.model_copy(update={"town": ""}))
    assert "in the countryside" in rural


def test_culture_modules_leave_a_world_without_doctrines_as_it_was(tmp_path):
    world = load_world(TINY)
    piano = _run(world, tmp_path / "p.sqlite", 1.5, Settings().override(architecture="piano"))
    culture = _run(world, tmp_path / "c.sqlite", 1.5, Settings().override(architecture="culture"))
    assert piano.digest() == culture.digest()
    assert piano.memes() == [] and [r.town for r in culture.memes()] == [""]  # tiny: no towns, one rural question
