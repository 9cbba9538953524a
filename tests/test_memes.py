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


def _goals_shown(reader, call_id: int) -> str:
    """The goals a meme question showed (its prompt without the line of the time)."""
    prompt = reader.call_detail(call_id)["prompt"]
    return "\n".join(line for line in prompt.splitlines() if not line.startswith("It is "))


def test_one_summary_per_town_and_the_rural_area_each_period_their_goals_changed(run):
    world, reader = run
    rows = reader.memes()
    by_time = Counter(r.time for r in rows)
    assert sorted(by_time) == [f"2023-02-13 {h:02d}:00:00" for h in range(7, 12)]
    assert {r.town for r in rows} == {"West End", "College Hill", ""}
    assert all(len(r.topics) <= MAX_TOPICS and all(t["keywords"] for t in r.topics) for r in rows)
    assert any(r.topics for r in rows if r.town == "West End")
    # a group is asked again only when the goals its question shows changed: no row, no call else
    calls = reader.calls(task="meme_summary", limit=None)
    for town in ("West End", "College Hill", ""):
        shown = [_goals_shown(reader, c.id) for c in calls if c.agent == memes.asker(town)]
        assert all(a != b for a, b in zip(shown, shown[1:])), town
    assert len(rows) < 3 * 5 - 1  # (this run: College Hill's goals stood still for an hour or more)


def test_a_group_whose_goals_did_not_change_is_not_asked_again(tmp_path):
    from smalltown.sim.changes import Changes

    world = load_world(culture_world(tmp_path))
    sim = create(world, tmp_path / "g.sqlite", ScriptedBackend(world.seed), overwrite=True)
    try:
        sim.run_until(world.start + timedelta(hours=2.5))
        phase, now = sim.memes, sim.now
        hour = timedelta(minutes=phase.every)

        def asked_at(when: datetime) -> list[str]:
            changes = Changes(sim.tick, when)
            phase.step(when, changes)
            return sorted(r.town for r in changes.memes)

        first = asked_at(now + hour)
        assert first  # (goals changed since the run's last summary)
        assert asked_at(now + 2 * hour) == []  # no one took up a goal since: every summary stands
        west = next(a for a in sim.agents if world.town_of(a.name) == "West End" and a.mind.state.goals)
        west.mind.state.goals = [*west.mind.state.goals, "found a reading club"]
        assert asked_at(now + 3 * hour) == []  # memes read the goals as the last tick ended (sim/public.py)
        sim.public.refresh([west])  # (as the end of a tick in which its row changed does)
        assert asked_at(now + 4 * hour) == ["West End"]
        assert asked_at(now + 5 * hour) == []
    finally:
        sim.close()


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
    # SmolLM2's answers on a 3-town world: names, grammar words, runaway phrases and cut repeats
    # mark no topic; a town or a person named beside a real word still does not count the name alone
    said = MemeSummaryOut(topics=[
        Topic(topic="neighbours", keywords=["helping every neighbour", "in", "by", "each other"]),
        Topic(topic="stonemere", keywords=["stonemere", "in Stonemere", "stonemere-stonemere-ston", "stonemere_neighbours_in_"]),
        Topic(topic="Lila Sadiq", keywords=["Lila Sadiq", "fern_sadiq", "Sadiq"]),
        Topic(topic="garden", keywords=["garden", " Garden party ", "eco"])])
    names = frozenset({"stonemere", "lila", "fern", "sadiq"})
    assert memes.topics(said, names) == [{"topic": "garden", "keywords": ["garden", "Garden party", "eco"]}]
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


def test_a_resumed_run_asks_each_period_once(tmp_path):
    from smalltown.sim.open import resume

    world = load_world(culture_world(tmp_path))
    _run(world, tmp_path / "r.sqlite", 2.5).close()
    sim = resume(tmp_path / "r.sqlite", ScriptedBackend(world.seed))
    try:
        sim.run_until(world.start + timedelta(hours=4.5))
    finally:
        sim.close()
    rows = open_reader(tmp_path / "r.sqlite").memes()
    assert sorted({r.time[11:13] for r in rows}) == ["07", "08", "09", "10"]
    assert len({(r.time, r.town) for r in rows}) == len(rows)
